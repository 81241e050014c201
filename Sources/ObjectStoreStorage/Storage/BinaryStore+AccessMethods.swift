import Foundation
import ObjectStoreModel

// Access methods: how a query reaches rows. Scans of an entity (its log rows and snapshot
// rows, with the columns' verdicts), the spans a schema index finds, and the ordered cut-off
// of an indexed attribute.
extension BinaryStore {
    package func readRows<T>(_ body: (any RowReader) throws -> T) throws -> T? {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try core.withLock { core in
                try core.refresh(fd)
                guard let codec = core.state.codec, let held = core.held else { throw StoreError.corrupt(path: path, reason: "no metadata record") }
                return try body(Reader(core: core, codec: codec, fd: held.fd, model: model, path: path))
            }
        }
    }

    /// The access methods over the state the store read under its lock (``readRows(_:)``).
    package struct Reader: RowReader {
        package let core: Core
        package let codec: RowCodec
        /// The held descriptor of the file the state was read from.
        package let fd: Int32
        package let model: ManagedObjectModel
        package let path: String

        package func snapshotRowCount(ofEntity entityName: String) -> Int {
            guard let snapshot = core.state.cache.snapshot, let table = codec.entityIndex[entityName], table < snapshot.entities.count else { return 0 }
            return snapshot.entities[table].rowCount
        }

        package func indexCandidates(ofEntity entityName: String, predicate: SlotPredicate, limit: Int) throws -> IndexCandidates? {
            guard let table = codec.entityIndex[entityName], let entity = model.entity(named: entityName),
                  let found = try core.indexedRows(table: table, entity: entity, predicate: predicate, limit: limit) else { return nil }
            return IndexCandidates(entityName: entityName, table: table, part: found.part, spans: found.spans, count: found.count, wholePredicate: found.decides)
        }

        package func indexedScan(_ candidates: IndexCandidates, alsoListing: Set<Int64>, leavingUnread: Bool) throws -> RowScan? {
            try core.indexedScan(candidates, alsoListing: alsoListing, leavingUnread: leavingUnread && candidates.wholePredicate)
        }

        package func columnDecisions(ofEntity entityName: String, predicate: SlotPredicate) throws -> [UInt8]? {
            guard let index = codec.entityIndex[entityName] else { return nil }
            // Before the part is read: a single-task command's CONTAINS over a million rows
            // reads them in pieces, not into memory.
            if let entity = model.entity(named: entityName), let snapshot = core.state.cache.snapshot, index < snapshot.entities.count,
               try predicate.requiredSubstrings.contains(where: { try noRow(of: entity, table: index, in: snapshot, holds: $0.needle, inSlot: $0.slot) }) {
                return [UInt8](repeating: 2, count: snapshot.entities[index].rowCount)
            }
            guard let loaded = try core.loadedEntity(index) else { return nil }
            return try predicate.decisions(try core.columns(ofEntity: index, slots: predicate.slots), rows: loaded.part.rowCount)
        }

        /// Whether no snapshot row of the entity holds a string containing `needle` in
        /// `slot` (a stored string attribute), seen without decoding a row: the needle is
        /// one that only its own bytes spell (``StringMatching/isFoundOnlyByItsBytes(_:)``),
        /// and neither the part's rows (their bytes, searched where the store holds them or
        /// read from the file a megabyte at a time), nor a string of the store's dictionary
        /// (which rows write by number), nor the attribute's initial value (which a row of
        /// another shape reads as) holds it. A `CONTAINS` that rare words such as a search
        /// or a field's name ask for then reads no row.
        func noRow(of entity: EntityDescription, table: Int, in snapshot: Snapshot, holds needle: String, inSlot slot: Int) throws -> Bool {
            guard slot < entity.properties.count, let attribute = entity.properties[slot].attribute, attribute.isStored,
                  attribute.type == .string, StringMatching.isFoundOnlyByItsBytes(needle) else { return false }
            if case .value(.string(let initial)) = SlotValue.initial(for: entity.properties[slot]),
               StringMatching.contains(initial, needle, []) { return false }
            if codec.strings.contains(where: { StringMatching.contains($0, needle, []) }) { return false }
            let pattern = Array(needle.utf8)
            if let loaded = core.state.cache.loaded[table] {
                return !loaded.bytes.withUnsafeBufferPointer { StringMatching.bytes($0, contain: pattern) }
            }
            return try !snapshot.rows(ofEntity: table, contain: pattern, fd: fd, path: path)
        }

        package func scan(ofEntity entityName: String, decisions: [UInt8]?, counting: Bool) throws -> RowScan {
            if counting, let decisions, let index = codec.entityIndex[entityName], let loaded = try core.loadedEntity(index) {
                return try core.countingScan(ofEntity: entityName, loaded: loaded, decisions: decisions, codec: codec)
            }
            var positions: [Int]? = decisions == nil ? nil : []
            let rows = try core.encodedRows(ofEntity: entityName, positions: &positions, unread: decisions)
            var decided: [UInt8] = []
            if let decisions, let positions {
                decided = positions.map { $0 < 0 ? 0 : decisions[$0] }
            }
            return RowScan(codec: codec, path: path, rows: rows, verdicts: decided, shape: codec.shape(entity: codec.entityIndex[entityName] ?? -1))
        }

        package func rejectedScan(ofEntity entityName: String, alsoListing: Set<Int64>) throws -> RowScan {
            try core.rejectedScan(ofEntity: entityName, alsoListing: alsoListing, codec: codec)
        }

        package func orderCutoff(ofEntity entityName: String, attribute: String, descending: Bool, rank: Int) throws -> (value: Value, indexed: Int)? {
            guard let entity = model.entity(named: entityName), let attributeDescription = entity.attribute(named: attribute),
                  let kind = Column.Kind(attributeDescription.type), rank >= 0,
                  let snapshot = core.state.cache.snapshot, let table = codec.entityIndex[entityName] else { return nil }
            let signature = BinaryStore.signature(ofIndexOn: attribute, kind: kind)
            for (number, index) in BinaryStore.schemaIndexes(of: entity, in: model).enumerated() where index.propertyNames.first == attribute {
                guard let part = snapshot.indexes.first(where: {
                    $0.owner == table && $0.constraint == Snapshot.schemaIndexFlag | number && $0.signature == signature
                }) else { continue }
                guard rank < part.count else { return nil }
                let bits = try snapshot.entryValue(part, at: descending ? part.count - 1 - rank : rank, fd: fd, path: path)
                switch kind {
                case .integer: return (.integer(Int64(bitPattern: bits)), part.count)
                case .double: return (.double(Double(bitPattern: bits)), part.count)
                case .date: return (.date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))), part.count)
                case .boolean: return (.bool(bits != 0), part.count)
                }
            }
            return nil
        }
    }
}

extension BinaryStore.Core {
    /// The scan of a count over an entity's snapshot whose rows `decisions` decided (per
    /// directory position): the accepted rows that the log does not supersede, counted;
    /// the undecided ones and the log's rows listed (verdict 0, in key order). The store
    /// holds the lock.
    package func countingScan(ofEntity name: String, loaded: Snapshot.Loaded, decisions: [UInt8], codec: RowCodec) throws -> RowScan {
        let logKeys = state.log.keysByEntity[name] ?? []
        let removed = state.log.removed[name] ?? []
        let skipping = !removed.isEmpty || !logKeys.isEmpty
        var counted = 0
        var rows: [(key: Int64, version: Int64, bytes: [UInt8], start: Int)] = []
        let keys = loaded.keys
        if skipping {
            try keys.forEachKey { position, key in
                guard position < decisions.count, !removed.contains(key), !logKeys.contains(key) else { return }
                switch decisions[position] {
                case 1: counted += 1
                case 2: return
                default:
                    let (entry, start) = try loaded.row(at: position, path: path)
                    rows.append((key, entry.version, loaded.bytes, start))
                }
            }
        } else {
            // Nothing in the log: only the undecided rows' keys are read.
            for position in 0..<min(decisions.count, keys.count) {
                switch decisions[position] {
                case 1: counted += 1
                case 2: continue
                default:
                    let (entry, start) = try loaded.row(at: position, path: path)
                    rows.append((entry.key, entry.version, loaded.bytes, start))
                }
            }
        }
        if !logKeys.isEmpty {
            rows += logRows(ofEntity: name, keys: logKeys)
            rows.sort { $0.key < $1.key }
        }
        var scan = RowScan(codec: codec, path: path, rows: rows, verdicts: [UInt8](repeating: 0, count: rows.count),
                           shape: codec.shape(entity: codec.entityIndex[name] ?? -1))
        scan.counted = counted
        return scan
    }

    /// The log's rows of an entity with `keys`, unordered.
    private func logRows(ofEntity name: String, keys: Set<Int64>) -> [(key: Int64, version: Int64, bytes: [UInt8], start: Int)] {
        let scope = ObjectID.Scope.of(entityName: name, storeIdentifier: state.metadata?.storeIdentifier ?? "")
        return keys.compactMap { key in
            state.log.entries[ObjectID(scope, key: .permanent(key))].map { entry in (key, entry.version, state.log.chunks[entry.chunk], entry.offset) }
        }
    }

    /// The scan of an entity whose snapshot rows a predicate rejects, every one: the log's
    /// rows and those of `alsoListing` (objects the caller holds, read one by one), verdict 0,
    /// in key order; the snapshot's part is not read. The store holds the lock.
    package func rejectedScan(ofEntity name: String, alsoListing: Set<Int64>, codec: RowCodec) throws -> RowScan {
        var rows = logRows(ofEntity: name, keys: state.log.keysByEntity[name] ?? [])
        let scope = ObjectID.Scope.of(entityName: name, storeIdentifier: state.metadata?.storeIdentifier ?? "")
        let logged = state.log.keysByEntity[name] ?? []
        for key in alsoListing where !logged.contains(key) {
            guard let (version, bytes, start) = try encodedRow(ObjectID(scope, key: .permanent(key))) else { continue }
            rows.append((key, version, bytes, start))
        }
        rows.sort { $0.key < $1.key }
        return RowScan(codec: codec, path: path, rows: rows, verdicts: [UInt8](repeating: 0, count: rows.count),
                       shape: codec.shape(entity: codec.entityIndex[name] ?? -1))
    }

    /// An entity's snapshot part, read whole once. The store holds the lock.
    package func loadedEntity(_ index: Int) throws -> Snapshot.Loaded? {
        if let loaded = state.cache.loaded[index] { return loaded }
        guard let snapshot = state.cache.snapshot, let held, index < snapshot.entities.count else { return nil }
        let loaded = try snapshot.load(entity: index, fd: held.fd, path: path)
        state.cache.loaded[index] = loaded
        state.cache.rowsRead[index] = nil
        return loaded
    }

    /// Every saved row of exactly one entity, in key order. The store holds the lock.
    package func encodedRows(ofEntity name: String) throws -> [(key: Int64, version: Int64, bytes: [UInt8], start: Int)] {
        var positions: [Int]?
        return try encodedRows(ofEntity: name, positions: &positions)
    }

    /// An entity's snapshot columns for `slots`, those it has, read once. The store holds the lock.
    package func columns(ofEntity index: Int, slots: Set<Int>) throws -> [Int: Column] {
        guard let snapshot = state.cache.snapshot, let held, let codec = state.codec, index < codec.entityNames.count,
              let entity = model.entity(named: codec.entityNames[index]) else { return [:] }
        var result: [Int: Column] = [:]
        for part in snapshot.columns where part.entity == index && slots.contains(part.slot) {
            // Only a column of the kind the model's attribute has (the rows decide otherwise).
            guard part.slot < entity.properties.count, let attribute = entity.properties[part.slot].attribute, attribute.isStored,
                  Column.Kind(attribute.type) == part.kind else { continue }
            if let column = state.cache.columns[index]?[part.slot] {
                result[part.slot] = column
                continue
            }
            let column = try snapshot.column(part, fd: held.fd, path: path)
            state.cache.columns[index, default: [:]][part.slot] = column
            result[part.slot] = column
        }
        return result
    }

    /// ``encodedRows(ofEntity:)``, and when `positions` is not nil, each row's position in
    /// the snapshot's directory (-1 for a row of the log).
    /// `unread[position] == 2` marks a snapshot row the caller will not read: it is listed
    /// without checking its checksum.
    package func encodedRows(ofEntity name: String, positions: inout [Int]?, unread: [UInt8]? = nil) throws -> [(key: Int64, version: Int64, bytes: [UInt8], start: Int)] {
        let logKeys = state.log.keysByEntity[name] ?? []
        let removed = state.log.removed[name] ?? []
        var result: [(key: Int64, version: Int64, bytes: [UInt8], start: Int)] = []
        let wantsPositions = positions != nil
        var snapshotPositions: [Int] = []
        if let index = state.codec?.entityIndex[name], let loaded = try loadedEntity(index) {
            result.reserveCapacity(loaded.part.rowCount + logKeys.count)
            if wantsPositions { snapshotPositions.reserveCapacity(loaded.part.rowCount + logKeys.count) }
            let skipping = !removed.isEmpty || !logKeys.isEmpty
            try loaded.keys.forEachKey { position, key in
                if skipping && (removed.contains(key) || logKeys.contains(key)) { return }
                let (entry, start) = try unread?[position] == 2 ? loaded.place(at: position, path: path) : loaded.row(at: position, path: path)
                result.append((key, entry.version, loaded.bytes, start))
                if wantsPositions { snapshotPositions.append(position) }
            }
        }
        guard !logKeys.isEmpty else {
            if wantsPositions { positions = snapshotPositions }
            return result
        }
        // The log's rows merged in by key (both lists are sorted), in place from the back: a
        // second list of a million-row table was 32 MB more at the scan's peak.
        let scope = ObjectID.Scope.of(entityName: name, storeIdentifier: state.metadata?.storeIdentifier ?? "")
        var logRows: [(key: Int64, version: Int64, bytes: [UInt8], start: Int)] = []
        for key in logKeys.sorted() {
            guard let entry = state.log.entries[ObjectID(scope, key: .permanent(key))] else { continue }
            logRows.append((key, entry.version, state.log.chunks[entry.chunk], entry.offset))
        }
        if let filler = logRows.first {
            var i = result.count - 1, j = logRows.count - 1
            result.append(contentsOf: repeatElement(filler, count: logRows.count))
            if wantsPositions { snapshotPositions.append(contentsOf: repeatElement(-1, count: logRows.count)) }
            var k = result.count - 1
            while j >= 0 {
                if i >= 0 && result[i].key > logRows[j].key {
                    result[k] = result[i]
                    if wantsPositions { snapshotPositions[k] = snapshotPositions[i] }
                    i -= 1
                } else {
                    result[k] = logRows[j]
                    if wantsPositions { snapshotPositions[k] = -1 }
                    j -= 1
                }
                k -= 1
            }
        }
        if wantsPositions { positions = snapshotPositions }
        return result
    }

    /// The rows of an entity table's snapshot a schema index finds for the range the
    /// predicate's ANDed comparisons of one indexed attribute leave (=, <, <=, >, >= with
    /// constants of its type, none that a nil passes; `!= nil`, every row with a value), or
    /// for the hashes its equalities of a hashed attribute or reference leave (`!= nil`, all
    /// of them) (the index that finds fewest rows): the index, the
    /// spans of its entries (one range, or one per hash; ``indexedScan(_:alsoListing:leavingUnread:)``
    /// reads them), how many entries they hold, and whether the found rows are decided (a
    /// range that is the whole predicate; never hashes). Nil when no index serves the
    /// predicate, or when it would list more than `limit` rows.
    package func indexedRows(table: Int, entity: EntityDescription, predicate: SlotPredicate, limit: Int) throws
        -> (part: Snapshot.IndexPart, spans: [Range<Int>], count: Int, decides: Bool)? {
        guard let snapshot = state.cache.snapshot, let held, !snapshot.indexes.isEmpty else { return nil }
        var conjuncts: [SlotPredicate] = []
        func flatten(_ p: SlotPredicate) {
            if case .and(let a, let b) = p { flatten(a); flatten(b) } else { conjuncts.append(p) }
        }
        flatten(predicate)
        // Per attribute, the range its comparisons leave (`a >= x AND a < y` is one range).
        var ranges: [Int: (name: String, kind: Column.Kind, lower: Snapshot.Bound?, upper: Snapshot.Bound?, conjuncts: Int)] = [:]
        // Per string or UUID attribute and to-one relationship, the hashes its equalities
        // leave (`s == x`, `s IN {x, y}`, strings with any options; ANDed ones intersect).
        var texts: [Int: (name: String, signature: UInt32, hashes: Set<UInt64>)] = [:]
        // Per string or UUID attribute compared `!= nil`: every entry of its index.
        var present: [Int: (name: String, signature: UInt32)] = [:]
        for conjunct in conjuncts {
            // `a != nil`, either way round: an index lists exactly the rows with a value (every
            // value the engine writes is of its attribute's type), so every entry of it: a
            // range without bounds, or every hash.
            if case .compare(let slot, .notEqual, _, .value(let constant), _, _) = conjunct, constant.isNull, slot < entity.properties.count,
               let attribute = entity.properties[slot].attribute, attribute.isStored {
                if BinaryStore.isHashed(attribute.type) {
                    present[slot] = (attribute.name, BinaryStore.hashedSignature(ofIndexOn: attribute.name, type: attribute.type))
                } else if let kind = Column.Kind(attribute.type) {
                    let known = ranges[slot]
                    ranges[slot] = (attribute.name, kind, known?.lower, known?.upper, (known?.conjuncts ?? 0) + 1)
                }
                continue
            }
            if case .compare(let slot, let op, _, let constant, _, _) = conjunct, slot < entity.properties.count,
               let attribute = entity.properties[slot].attribute, attribute.isStored, BinaryStore.isHashed(attribute.type) {
                guard let hashes = Self.indexHashes(op, constant, type: attribute.type) else { continue }
                texts[slot] = (attribute.name, BinaryStore.hashedSignature(ofIndexOn: attribute.name, type: attribute.type),
                               texts[slot].map { $0.hashes.intersection(hashes) } ?? hashes)
                continue
            }
            // A to-one relationship equal to objects: the rows filed under their keys (an
            // unsaved object has no row that refers to it).
            if case .reference(let slot, let targets) = conjunct, slot < entity.properties.count, let relationship = entity.properties[slot].relationship {
                let hashes = Set(targets.compactMap(BinaryStore.referenceHash))
                texts[slot] = (relationship.name, BinaryStore.referenceSignature(ofIndexOn: relationship.name),
                               texts[slot].map { $0.hashes.intersection(hashes) } ?? hashes)
                continue
            }
            guard case .compare(let slot, let op, let test, .value(let constant), let slotOnLeft, _) = conjunct, !constant.isNull,
                  slot < entity.properties.count, let attribute = entity.properties[slot].attribute, attribute.isStored,
                  let kind = Column.Kind(attribute.type), let bits = Column.bits(constant, kind: kind),
                  // The index lists no nil: only a comparison no nil passes can use it.
                  try !test(.null)
            else { continue }
            // With the constant on the left, `k < x` is `x > k`.
            let bound = Snapshot.Bound(bits: bits, inclusive: true), open = Snapshot.Bound(bits: bits, inclusive: false)
            let range: (lower: Snapshot.Bound?, upper: Snapshot.Bound?)
            switch (op, slotOnLeft) {
            case (.equal, _): range = (bound, bound)
            case (.less, true), (.greater, false): range = (nil, open)
            case (.lessOrEqual, true), (.greaterOrEqual, false): range = (nil, bound)
            case (.greater, true), (.less, false): range = (open, nil)
            case (.greaterOrEqual, true), (.lessOrEqual, false): range = (bound, nil)
            default: continue
            }
            guard let known = ranges[slot] else {
                ranges[slot] = (attribute.name, kind, range.lower, range.upper, 1)
                continue
            }
            // The tighter of two bounds: the higher lower one, the lower upper one; of equal
            // values the one that leaves the value out.
            let less = kind.less
            func tighter(_ a: Snapshot.Bound?, _ b: Snapshot.Bound?, lower: Bool) -> Snapshot.Bound? {
                guard let a else { return b }
                guard let b else { return a }
                if less(a.bits, b.bits) { return lower ? b : a }
                if less(b.bits, a.bits) { return lower ? a : b }
                return a.inclusive ? b : a
            }
            ranges[slot] = (known.name, kind, tighter(known.lower, range.lower, lower: true), tighter(known.upper, range.upper, lower: false), known.conjuncts + 1)
        }
        let indexes = BinaryStore.schemaIndexes(of: entity, in: model)
        func part(on attribute: String, signature: UInt32) -> Snapshot.IndexPart? {
            for (number, index) in indexes.enumerated() where index.propertyNames.first == attribute {
                if let part = snapshot.indexes.first(where: { $0.owner == table && $0.constraint == Snapshot.schemaIndexFlag | number && $0.signature == signature }) {
                    return part
                }
            }
            return nil
        }
        // The index that lists fewest rows: one range of a fixed-width attribute, or a hash
        // per string (whose rows are candidates, never decided: hashes collide, and the
        // comparison may fold less than the key).
        var best: (part: Snapshot.IndexPart, spans: [Range<Int>], count: Int, decides: Bool)?
        for slot in ranges.keys.sorted() {
            guard let range = ranges[slot], let part = part(on: range.name, signature: BinaryStore.signature(ofIndexOn: range.name, kind: range.kind)) else { continue }
            let span = try snapshot.span(part, kind: range.kind, from: range.lower, to: range.upper, fd: held.fd, path: path)
            if best == nil || span.count < best?.count ?? 0 { best = (part, [span], span.count, range.conjuncts == conjuncts.count) }
        }
        for slot in texts.keys.sorted() {
            guard let text = texts[slot], let part = part(on: text.name, signature: text.signature) else { continue }
            let spans = try text.hashes.sorted().map { hash in
                let bound = Snapshot.Bound(bits: hash, inclusive: true)
                return try snapshot.span(part, kind: .integer, from: bound, to: bound, fd: held.fd, path: path)
            }
            let count = spans.reduce(0) { $0 + $1.count }
            if best == nil || count < best?.count ?? 0 { best = (part, spans, count, false) }
        }
        // Equalities of the same attribute find fewer rows than its `!= nil`, which they imply.
        for slot in present.keys.sorted() where texts[slot] == nil {
            guard let attribute = present[slot], let part = part(on: attribute.name, signature: attribute.signature) else { continue }
            if best == nil || part.count < best?.count ?? 0 { best = (part, [0..<part.count], part.count, false) }
        }
        guard let best, best.count <= limit else { return nil }
        return best
    }

    /// The hashes a hashed index (on an attribute of `type`) files every value that `op`
    /// with `constant` accepts under (for a string, with any comparison options): one for
    /// `==` a value of the type, one per item of `IN` a list of them. Nil for any other
    /// comparison (`IN` a string tests for a substring; a nil or a value of another type in
    /// the list could match rows the index does not list or files otherwise).
    package static func indexHashes(_ op: PredicateComparison.Operator, _ constant: SlotConstant, type: AttributeType) -> Set<UInt64>? {
        switch (op, constant) {
        case (.equal, .value(let value)):
            return BinaryStore.indexHash(value, type: type).map { [$0] }
        case (.in, .list(let items)):
            var hashes = Set<UInt64>()
            for value in items {
                guard let hash = BinaryStore.indexHash(value, type: type) else { return nil }
                hashes.insert(hash)
            }
            return hashes
        default:
            return nil
        }
    }

    /// The scan of an entity's rows a schema index narrowed: the snapshot rows it found, the
    /// rows of `alsoListing` (objects the caller holds, which it tests itself) and every row
    /// of the log, in key order. The index's rows pass the indexed comparison, so they are
    /// decided when it is the whole predicate (verdict 1) and tested otherwise (0).
    /// `leavingUnread`: the caller reads no decided row (a count): those come without bytes.
    package func indexedScan(_ candidates: IndexCandidates, alsoListing: Set<Int64>, leavingUnread: Bool) throws -> RowScan? {
        guard let codec = state.codec, let snapshot = state.cache.snapshot, let held else { return nil }
        let name = candidates.entityName, table = candidates.table, wholePredicate = candidates.wholePredicate
        let logKeys = state.log.keysByEntity[name] ?? []
        let removed = state.log.removed[name] ?? []
        let identifier = state.metadata?.storeIdentifier ?? ""
        let scope = ObjectID.Scope.of(entityName: name, storeIdentifier: identifier)
        if leavingUnread && alsoListing.isEmpty {
            // A count whose caller holds none of the entity's objects: the index's rows are
            // counted, the log's listed to be tested. Without log rows of the entity the
            // spans' sizes are the answer; otherwise their keys are read to leave out the
            // rows the log deleted or wrote again.
            var counted = 0
            if logKeys.isEmpty && removed.isEmpty {
                counted = candidates.count
            } else {
                for span in candidates.spans {
                    for (_, key) in try snapshot.entries(candidates.part, span, fd: held.fd, path: path) where !removed.contains(key) && !logKeys.contains(key) {
                        counted += 1
                    }
                }
            }
            var rows: [(key: Int64, version: Int64, bytes: [UInt8], start: Int)] = []
            for key in logKeys.sorted() {
                guard let (version, bytes, start) = try encodedRow(ObjectID(scope, key: .permanent(key))) else { continue }
                rows.append((key, version, bytes, start))
            }
            var scan = RowScan(codec: codec, path: path, rows: rows, verdicts: [UInt8](repeating: 0, count: rows.count),
                               shape: codec.shape(entity: codec.entityIndex[name] ?? -1))
            scan.counted = counted
            return scan
        }
        var found: [(position: Int, key: Int64)] = []
        for span in candidates.spans { found += try snapshot.entries(candidates.part, span, fd: held.fd, path: path) }
        found.sort { $0.key < $1.key }
        var rows: [(key: Int64, version: Int64, bytes: [UInt8], start: Int, verdict: UInt8)] = []
        rows.reserveCapacity(found.count + logKeys.count + alsoListing.count)
        var listed = Set<Int64>()
        // Many rows: read the entity's part whole (once per process); a few (up to 1 in 32):
        // row by row.
        let loaded = leavingUnread || found.count <= max(256, snapshot.entities[table].rowCount / 32) ? state.cache.loaded[table] : try loadedEntity(table)
        for (position, key) in found where !removed.contains(key) && !logKeys.contains(key) {
            if leavingUnread {
                // Decided: listed by key alone (an object the caller holds is tested as it is).
                rows.append((key, 0, [], 0, 1))
            } else if let loaded {
                guard position < loaded.keys.count, loaded.keys[position] == key else {
                    throw StoreError.corrupt(path: path, reason: "a snapshot index of \(name) does not match its rows; compact the store to rebuild it")
                }
                let (entry, start) = try loaded.row(at: position, path: path)
                rows.append((key, entry.version, loaded.bytes, start, wholePredicate ? 1 : 0))
            } else if let row = state.cache.rowsRead[table]?[key] {
                rows.append((key, row.version, row.bytes, 0, wholePredicate ? 1 : 0))
            } else {
                guard let (entry, bytes) = try snapshot.row(at: position, entity: table, fd: held.fd, path: path), entry.key == key else {
                    throw StoreError.corrupt(path: path, reason: "a snapshot index of \(name) does not match its rows; compact the store to rebuild it")
                }
                try remember(bytes, key: key, version: entry.version, table: table)
                rows.append((key, entry.version, bytes, 0, wholePredicate ? 1 : 0))
            }
            listed.insert(key)
        }
        let indexedCount = rows.count
        for key in logKeys.union(alsoListing) where !listed.contains(key) {
            guard let (version, bytes, start) = try encodedRow(ObjectID(scope, key: .permanent(key))) else { continue }
            rows.append((key, version, bytes, start, 0))
        }
        // The index's rows are in key order already.
        if rows.count > indexedCount { rows.sort { $0.key < $1.key } }
        return RowScan(codec: codec, path: path, rows: rows.map { ($0.key, $0.version, $0.bytes, $0.start) }, verdicts: rows.map(\.verdict),
                       shape: codec.shape(entity: codec.entityIndex[name] ?? -1))
    }
}

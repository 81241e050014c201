import Foundation
import ObjectStoreModel

// Index keys and building the snapshot's indexes: the hashes values are filed under, the
// signatures that tie an index to what it covers, and the entries a compaction writes.
extension BinaryStore {
    /// The hash an index files a constraint's values under (values as the constraint
    /// compares them, encoded as in rows).
    /// Strings are hashed canonically decomposed: `==` finds canonically equivalent strings
    /// equal ("caf\u{E9}" and "cafe\u{301}"), so they must share a hash.
    package static func indexHash(_ comparable: [SlotValue], codec: RowCodec) -> UInt64 {
        var writer = ByteWriter()
        return indexHash(comparable, codec: codec, scratch: &writer)
    }

    /// ``indexHash(_:codec:)``, encoding into `scratch` (emptied first), so a compaction
    /// hashing every row's values allocates no buffer per row.
    package static func indexHash(_ comparable: [SlotValue], codec: RowCodec, scratch writer: inout ByteWriter) -> UInt64 {
        let needsMapping = { (slot: SlotValue) -> Bool in
            guard case .value(.string(let text)) = slot else { return false }
            return !text.utf8.allSatisfy { $0 < 0x80 }
        }
        let canonical = !comparable.contains(where: needsMapping) ? comparable : comparable.map { slot -> SlotValue in
            guard case .value(.string(let text)) = slot, needsMapping(slot) else { return slot }
            return .value(.string(text.decomposedStringWithCanonicalMapping))
        }
        writer.bytes.removeAll(keepingCapacity: true)
        try? codec.encode(canonical, into: &writer)
        return Snapshot.hash(writer.bytes)
    }

    /// What an index was built for: the constraint's attributes and how they compare (and,
    /// for one with a string, that strings are hashed decomposed). An index whose signature
    /// differs (the model changed its constraints) is not used.
    package static func signature(of constraint: [String], in entity: EntityDescription) -> UInt32 {
        let hasString = constraint.contains { entity.attribute(named: $0)?.type == .string }
        return legacySignature(of: constraint, in: entity) ^ (hasString ? 0x4E46_4400 : 0)
    }

    /// The signature of a uniqueness index written before strings were hashed decomposed
    /// (ninth session): such an index is not used, and the next compaction replaces it.
    package static func legacySignature(of constraint: [String], in entity: EntityDescription) -> UInt32 {
        let text = constraint.map { "\($0):\(entity.attribute(named: $0)?.isCaseInsensitive == true ? "ci" : "")" }.joined(separator: ",")
        return UInt32(truncatingIfNeeded: Snapshot.hash(Array(text.utf8)))
    }

    /// What a schema index was built for: its first attribute and the column kind it
    /// orders. An index whose signature differs (the model changed) is not used.
    package static func signature(ofIndexOn attribute: String, kind: Column.Kind) -> UInt32 {
        UInt32(truncatingIfNeeded: Snapshot.hash(Array("index:\(attribute):\(kind.rawValue)".utf8)))
    }

    /// What a hashed index on an attribute was built for: its name and type (`uuid`), or for
    /// a string (a text index) the index keys this platform gives a few strings whose case
    /// or diacritics fold in uncommon ways, so that a file whose keys were folded otherwise
    /// (another Unicode or Foundation version) is not used.
    package static func hashedSignature(ofIndexOn attribute: String, type: AttributeType = .string) -> UInt32 {
        guard type == .string else { return UInt32(truncatingIfNeeded: Snapshot.hash(Array("index:\(attribute):uuid".utf8))) }
        return UInt32(truncatingIfNeeded: Snapshot.hash(Array("index:\(attribute):text:".utf8) + foldedProbe))
    }

    /// What a reference index (on a to-one relationship) was built for.
    package static func referenceSignature(ofIndexOn relationship: String) -> UInt32 {
        UInt32(truncatingIfNeeded: Snapshot.hash(Array("index:\(relationship):ref".utf8)))
    }

    /// The hash a reference index files a row under: its destination's entity name and key
    /// (nil for a temporary ID, which no saved row refers to).
    package static func referenceHash(_ id: ObjectID) -> UInt64? {
        guard let key = id.primaryKey else { return nil }
        return withUnsafeBytes(of: key.littleEndian) { Snapshot.hash(Array(id.entityName.utf8) + [0] + Array($0)) }
    }

    /// Whether a schema index on an attribute of this type files values by hash (a string's
    /// index key, a UUID's 16 bytes) rather than ordering them in a column's terms.
    package static func isHashed(_ type: AttributeType) -> Bool { type == .string || type == .uuid }

    /// The hash a hashed index files a value of an attribute of `type` under; nil for a
    /// value of another type (an index never holds one).
    package static func indexHash(_ value: Value, type: AttributeType) -> UInt64? {
        switch (value, type) {
        case (.string(let text), .string): return textHash(text)
        case (.uuid(let uuid), .uuid): return withUnsafeBytes(of: uuid.uuid) { Snapshot.hash(Array($0)) }
        default: return nil
        }
    }

    /// The index keys of the strings ``hashedSignature(ofIndexOn:)`` probes (folded once).
    package static let foldedProbe = StringMatching.foldedIndexKey(
        "Aa \u{C1}\u{E9}e\u{301} \u{130}\u{131} \u{3A3}\u{3C2} \u{DF}\u{1E9E} \u{212A} \u{1C5} \u{152}\u{F8}")

    /// The hash a text index files a string under (FNV-1a of its index key).
    package static func textHash(_ text: String) -> UInt64 {
        Snapshot.hash(StringMatching.indexKey(text))
    }

    /// The schema's `indexes` that apply to an entity: its ancestors' (from the root) and
    /// its own; a schema index's number is its place in this list.
    package static func schemaIndexes(of entity: EntityDescription, in model: ManagedObjectModel) -> [IndexDescription] {
        (entity.ancestorNames.reversed().compactMap { model.entity(named: $0) } + [entity]).flatMap(\.indexes)
    }
}

extension BinaryStore.Core {
    /// The index entries of the snapshot's rows (the rows of a snapshot part as read).
    package func indexes(of snapshot: Snapshot, codec: RowCodec) throws -> [Snapshot.Index] {
        var rows: [[Snapshot.Row]] = []
        for index in codec.entityNames.indices {
            guard let loaded = try loadedEntity(index) else { return [] }
            rows.append(try (0..<loaded.part.rowCount).map { position in
                let (entry, start) = try loaded.row(at: position, path: path)
                return Snapshot.Row(key: entry.key, version: entry.version, source: loaded.bytes, start: start, length: entry.size)
            })
        }
        var derived = DerivedParts(model: model, codec: codec, rowCounts: rows.map(\.count))
        for table in rows.indices {
            let slots = derived.slots(ofTable: table)
            guard !slots.isEmpty else { continue }
            var position = 0
            try forEachRow(rows[table], entity: table, slots: slots, codec: codec) { key, decoded in
                derived.add(table: table, position: position, key: key, decoded: decoded)
                position += 1
            }
        }
        return derived.finish(rows: rows).indexes
    }
}

/// The columns and indexes a snapshot derives from its rows (the fixed-width columns, an
/// index per uniqueness constraint, the schema's indexes), gathered in one pass over the
/// rows: each table's rows are handed to ``add(table:position:key:decoded:)`` in directory order,
/// with the slots ``wanted`` names decoded. A compaction hands them over as it writes each
/// row again (the rows were read once for every column and index before).
package struct DerivedParts {
    /// A uniqueness constraint: its owner's table and number, its slots, and per table of
    /// the owner's tree (the owner's first) the entries of that table's rows.
    private struct Constraint {
        var owner: Int
        var number: Int
        var slots: [Int]
        var folding: [AttributeDescription?]
        var signature: UInt32
        var entries: [[(hash: UInt64, entity: Int, key: Int64)]]
    }

    /// A hashed schema index of one table's slot (a string or UUID attribute's, or a
    /// to-one relationship's): its rows' hashes with their positions.
    private struct Hashed {
        var table: Int
        var slot: Int
        var number: Int
        var signature: UInt32
        var hash: (SlotValue) -> UInt64?
        var entries: [(hash: Int64, position: Int)]

        init(table: Int, slot: Int, number: Int, signature: UInt32, rows: Int, hash: @escaping (SlotValue) -> UInt64?) {
            (self.table, self.slot, self.number, self.signature, self.hash) = (table, slot, number, signature, hash)
            entries = []
            entries.reserveCapacity(rows)
        }
    }

    /// Per entity table, the slots a row of it is read for (`wanted[table][slot]`).
    package private(set) var wanted: [[Bool]]
    private let codec: RowCodec
    private let model: ManagedObjectModel
    private var columnSlots: [[Int]]
    private var builders: [[Column.Builder]]
    private var constraints: [Constraint] = []
    /// Per table, the constraints (index in `constraints`, place in its `tables`) its rows
    /// are entries of.
    private var constraintsOfTable: [[(constraint: Int, place: Int)]]
    private var hashed: [Hashed] = []
    private var hashedOfTable: [[Int]]
    /// One array of values and one buffer for every row's uniqueness hash.
    private var values: [SlotValue] = []
    private var scratch = ByteWriter()

    /// What a snapshot of `model`'s entities, in `codec`'s table order, derives from its
    /// rows; `rowCounts[i]`: how many rows table i has.
    package init(model: ManagedObjectModel, codec: RowCodec, rowCounts: [Int]) {
        self.model = model
        self.codec = codec
        let tables = codec.entityNames.count
        let rowCounts = (0..<tables).map { $0 < rowCounts.count ? rowCounts[$0] : 0 }
        var wanted = [[Bool]](repeating: [], count: tables)
        func want(_ slot: Int, _ table: Int) {
            if wanted[table].count <= slot { wanted[table] += [Bool](repeating: false, count: slot + 1 - wanted[table].count) }
            wanted[table][slot] = true
        }
        columnSlots = [[Int]](repeating: [], count: tables)
        builders = [[Column.Builder]](repeating: [], count: tables)
        constraintsOfTable = [[(constraint: Int, place: Int)]](repeating: [], count: tables)
        hashedOfTable = [[Int]](repeating: [], count: tables)
        for (table, name) in codec.entityNames.enumerated() {
            guard let entity = model.entity(named: name) else { continue }
            // The columns of the entity's fixed-width stored attributes.
            if rowCounts[table] > 0 {
                for slot in entity.properties.indices where entity.kind(ofSlot: slot) == .attribute {
                    guard let attribute = entity.properties[slot].attribute, attribute.isStored, let kind = Column.Kind(attribute.type) else { continue }
                    columnSlots[table].append(slot)
                    builders[table].append(Column.Builder(kind: kind, capacity: rowCounts[table]))
                    want(slot, table)
                }
            }
            // An index per uniqueness constraint, over the rows of the owner's tree.
            for (number, constraint) in entity.uniquenessConstraints.enumerated() {
                let slots = constraint.compactMap { entity.slot(of: $0) }
                guard slots.count == constraint.count else { continue }
                let trees = model.entityAndDescendants(of: name).compactMap { codec.entityIndex[$0.name] }
                for (place, kindTable) in trees.enumerated() {
                    constraintsOfTable[kindTable].append((constraints.count, place))
                    for slot in slots { want(slot, kindTable) }
                }
                let entries = trees.map { kindTable -> [(hash: UInt64, entity: Int, key: Int64)] in
                    var entries: [(hash: UInt64, entity: Int, key: Int64)] = []
                    entries.reserveCapacity(kindTable < rowCounts.count ? rowCounts[kindTable] : 0)
                    return entries
                }
                constraints.append(Constraint(owner: table, number: number, slots: slots, folding: UniquenessCheck.folding(constraint, in: entity),
                                              signature: BinaryStore.signature(of: constraint, in: entity), entries: entries))
            }
            // The schema's hashed indexes.
            for (number, index) in BinaryStore.schemaIndexes(of: entity, in: model).enumerated() {
                guard let first = index.propertyNames.first, let slot = entity.slot(of: first) else { continue }
                if let attribute = entity.properties[slot].attribute, attribute.isStored, BinaryStore.isHashed(attribute.type) {
                    let type = attribute.type
                    hashedOfTable[table].append(hashed.count)
                    hashed.append(Hashed(table: table, slot: slot, number: number,
                                         signature: BinaryStore.hashedSignature(ofIndexOn: attribute.name, type: type), rows: rowCounts[table]) {
                        guard case .value(let value) = $0 else { return nil }
                        return BinaryStore.indexHash(value, type: type)
                    })
                    want(slot, table)
                } else if let relationship = entity.properties[slot].relationship, !relationship.isToMany, !relationship.isTransient {
                    hashedOfTable[table].append(hashed.count)
                    hashed.append(Hashed(table: table, slot: slot, number: number, signature: BinaryStore.referenceSignature(ofIndexOn: relationship.name),
                                         rows: rowCounts[table]) {
                        guard case .toOne(let id?) = $0 else { return nil }
                        return BinaryStore.referenceHash(id)
                    })
                    want(slot, table)
                }
            }
        }
        self.wanted = wanted
    }

    /// The slots a row of table `table` is read for, in order.
    package func slots(ofTable table: Int) -> [Int] {
        wanted[table].indices.filter { wanted[table][$0] }
    }

    /// The next row of table `table` (in directory order, `position` its place): `decoded`
    /// holds the slots ``wanted`` names (null past the row's last slot).
    package mutating func add(table: Int, position: Int, key: Int64, decoded: [SlotValue]) {
        let slots = columnSlots[table]
        for i in slots.indices { builders[table][i].append(decoded[slots[i]]) }
        for (c, place) in constraintsOfTable[table] {
            values.removeAll(keepingCapacity: true)
            var complete = true
            for slot in constraints[c].slots {
                let value = decoded[slot]
                if case .value(.null) = value {
                    complete = false
                    break
                }
                values.append(value)
            }
            guard complete else { continue }
            let comparable = UniquenessCheck.comparable(values, folding: constraints[c].folding)
            constraints[c].entries[place].append((BinaryStore.indexHash(comparable, codec: codec, scratch: &scratch), table, key))
        }
        for h in hashedOfTable[table] {
            guard let hash = hashed[h].hash(decoded[hashed[h].slot]) else { continue }
            hashed[h].entries.append((Int64(bitPattern: hash), position))
        }
    }

    /// Takes what `part` gathered of table `table`'s rows that follow the ones added here
    /// (a compaction's part of a large table written on another core). What nothing was
    /// added to yet is taken whole, not copied (the first part's, reserved for the whole
    /// table, so the later parts are appended in place).
    package mutating func merge(_ part: DerivedParts, table: Int) {
        for i in builders[table].indices where i < part.builders[table].count {
            if builders[table][i].isEmpty { builders[table][i] = part.builders[table][i] } else { builders[table][i].append(contentsOf: part.builders[table][i]) }
        }
        for (c, place) in constraintsOfTable[table] {
            if constraints[c].entries[place].isEmpty {
                constraints[c].entries[place] = part.constraints[c].entries[place]
            } else {
                constraints[c].entries[place] += part.constraints[c].entries[place]
            }
        }
        for h in hashedOfTable[table] {
            if hashed[h].entries.isEmpty { hashed[h].entries = part.hashed[h].entries } else { hashed[h].entries += part.hashed[h].entries }
        }
    }

    /// The columns (`[i]`: table i's, except those with a value a column cannot hold) and
    /// the indexes (uniqueness indexes, then schema indexes) of the rows added; `rows[i]`
    /// are table i's rows, in the order they were added.
    package func finish(rows: [[Snapshot.Row]]) -> (columns: [[(slot: Int, column: Column)]], indexes: [Snapshot.Index]) {
        let columns = codec.entityNames.indices.map { table in
            columnSlots[table].indices.compactMap { i -> (slot: Int, column: Column)? in
                guard let column = builders[table][i].column else { return nil }
                return (columnSlots[table][i], column)
            }
        }
        var indexes = constraints.map { constraint in
            Snapshot.Index(owner: constraint.owner, constraint: constraint.number, signature: constraint.signature,
                           entries: Array(constraint.entries.joined()))
        }
        var nextHashed = 0
        for (table, name) in codec.entityNames.enumerated() where table < rows.count {
            guard let entity = model.entity(named: name) else { continue }
            for (number, index) in BinaryStore.schemaIndexes(of: entity, in: model).enumerated() {
                if nextHashed < hashed.count, hashed[nextHashed].table == table, hashed[nextHashed].number == number {
                    var entries = hashed[nextHashed].entries
                    nextHashed += 1
                    entries.sort { ($0.hash, $0.position) < ($1.hash, $1.position) }
                    indexes.append(Snapshot.Index(owner: table, constraint: Snapshot.schemaIndexFlag | number, signature: hashed[nextHashed - 1].signature,
                                                  entries: entries.map { (UInt64(bitPattern: $0.hash), table, rows[table][$0.position].key) },
                                                  positions: entries.map(\.position)))
                    continue
                }
                guard let first = index.propertyNames.first, let slot = entity.slot(of: first),
                      let column = columns[table].first(where: { $0.slot == slot })?.column, column.rows == rows[table].count else { continue }
                let values = column.values, kind = column.kind
                // Positions follow the keys (the directory is sorted by key): ties in key order.
                let order = (0..<column.rows).filter { !column.isNull($0) }.sorted { a, b in
                    kind.less(values[a], values[b]) || (!kind.less(values[b], values[a]) && a < b)
                }
                indexes.append(Snapshot.Index(
                    owner: table, constraint: Snapshot.schemaIndexFlag | number,
                    signature: BinaryStore.signature(ofIndexOn: first, kind: column.kind),
                    entries: order.map { (values[$0], table, rows[table][$0].key) }, positions: order, kind: kind))
            }
        }
        return (columns, indexes)
    }
}

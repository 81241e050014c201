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
        return try indexes(of: rows, codec: codec) + schemaIndexes(of: rows, columns: try columns(of: rows, codec: codec), codec: codec)
    }

    /// A schema index per entity table and `indexes` entry of the model (the entity's own
    /// and its ancestors') whose first property has a column: the rows with a value, by
    /// value then key, with their directory positions. `columns[i]` are table i's columns
    /// of `rows[i]`.
    /// An entry whose first property is a stored string or UUID attribute, or a to-one
    /// relationship, gets a hashed index instead: each row with a value under
    /// ``BinaryStore/indexHash(_:type:)`` of it (``BinaryStore/referenceHash(_:)`` of the
    /// object it refers to), then key.
    package func schemaIndexes(of rows: [[Snapshot.Row]], columns: [[(slot: Int, column: Column)]], codec: RowCodec) throws -> [Snapshot.Index] {
        var result: [Snapshot.Index] = []
        for (table, name) in codec.entityNames.enumerated() where table < columns.count {
            guard let entity = model.entity(named: name) else { continue }
            for (number, index) in BinaryStore.schemaIndexes(of: entity, in: model).enumerated() {
                guard let first = index.propertyNames.first, let slot = entity.slot(of: first) else { continue }
                if let attribute = entity.properties[slot].attribute, attribute.isStored, BinaryStore.isHashed(attribute.type) {
                    result.append(try hashedIndex(of: rows[table], table: table, slot: slot, number: number,
                                                  signature: BinaryStore.hashedSignature(ofIndexOn: attribute.name, type: attribute.type), codec: codec) {
                        guard case .value(let value) = $0 else { return nil }
                        return BinaryStore.indexHash(value, type: attribute.type)
                    })
                    continue
                }
                if let relationship = entity.properties[slot].relationship, !relationship.isToMany, !relationship.isTransient {
                    result.append(try hashedIndex(of: rows[table], table: table, slot: slot, number: number,
                                                  signature: BinaryStore.referenceSignature(ofIndexOn: relationship.name), codec: codec) {
                        guard case .toOne(let id?) = $0 else { return nil }
                        return BinaryStore.referenceHash(id)
                    })
                    continue
                }
                guard let column = columns[table].first(where: { $0.slot == slot })?.column, column.rows == rows[table].count else { continue }
                let values = column.values, kind = column.kind
                // Positions follow the keys (the directory is sorted by key): ties in key order.
                let order = (0..<column.rows).filter { !column.isNull($0) }.sorted { a, b in
                    kind.less(values[a], values[b]) || (!kind.less(values[b], values[a]) && a < b)
                }
                result.append(Snapshot.Index(
                    owner: table, constraint: Snapshot.schemaIndexFlag | number,
                    signature: BinaryStore.signature(ofIndexOn: first, kind: column.kind),
                    entries: order.map { (values[$0], table, rows[table][$0].key) }, positions: order, kind: kind))
            }
        }
        return result
    }

    /// A hashed index of an entity table's slot: for every row whose value `hash` files (a
    /// string's index key, a UUID, a reference), that hash as the entry's value (compared as
    /// a signed integer), sorted by hash then key (positions follow keys).
    package func hashedIndex(of rows: [Snapshot.Row], table: Int, slot: Int, number: Int, signature: UInt32, codec: RowCodec,
                     hash: (SlotValue) -> UInt64?) throws -> Snapshot.Index {
        var hashed: [(hash: Int64, position: Int)] = []
        hashed.reserveCapacity(rows.count)
        // Through one array for every row (an ID, a shape looked up by its entity's name and
        // two arrays per row were half of the index's time).
        var position = 0
        try forEachRow(rows, entity: table, slots: [slot], codec: codec) { _, decoded in
            defer { position += 1 }
            guard let hash = hash(decoded[slot]) else { return }
            hashed.append((Int64(bitPattern: hash), position))
        }
        hashed.sort { ($0.hash, $0.position) < ($1.hash, $1.position) }
        return Snapshot.Index(owner: table, constraint: Snapshot.schemaIndexFlag | number, signature: signature,
                              entries: hashed.map { (UInt64(bitPattern: $0.hash), table, rows[$0.position].key) }, positions: hashed.map(\.position))
    }

    /// An index per uniqueness constraint of the model over rows (`rows[i]`: entity i's).
    package func indexes(of rows: [[Snapshot.Row]], codec: RowCodec) throws -> [Snapshot.Index] {
        var indexes: [Snapshot.Index] = []
        for (ownerIndex, ownerName) in codec.entityNames.enumerated() {
            guard let owner = model.entity(named: ownerName) else { continue }
            for (number, constraint) in owner.uniquenessConstraints.enumerated() {
                let slots = constraint.compactMap { owner.slot(of: $0) }
                guard slots.count == constraint.count else { continue }
                let folding = UniquenessCheck.folding(constraint, in: owner)
                var entries: [(hash: UInt64, entity: Int, key: Int64)] = []
                // One array of values and one buffer for every row's hash.
                var values: [SlotValue] = []
                values.reserveCapacity(slots.count)
                var scratch = ByteWriter()
                for kind in model.entityAndDescendants(of: ownerName) {
                    guard let kindIndex = codec.entityIndex[kind.name] else { continue }
                    entries.reserveCapacity(entries.count + rows[kindIndex].count)
                    try forEachRow(rows[kindIndex], entity: kindIndex, slots: slots, codec: codec) { key, decoded in
                        values.removeAll(keepingCapacity: true)
                        for slot in slots {
                            let value = decoded[slot]
                            if value == .value(.null) { return }
                            values.append(value)
                        }
                        let comparable = UniquenessCheck.comparable(values, folding: folding)
                        entries.append((BinaryStore.indexHash(comparable, codec: codec, scratch: &scratch), kindIndex, key))
                    }
                }
                indexes.append(Snapshot.Index(owner: ownerIndex, constraint: number, signature: BinaryStore.signature(of: constraint, in: owner), entries: entries))
            }
        }
        return indexes
    }
}

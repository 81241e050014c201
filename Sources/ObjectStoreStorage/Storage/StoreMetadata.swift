import ObjectStoreModel

/// What a store file records about itself: its identity and the model it was written with,
/// whole, so a migration never lacks its source model.
public struct StoreMetadata: Sendable, Hashable {
    /// The store's UUID, part of every object ID.
    public var storeIdentifier: String
    /// The model version name the store was written with, when known.
    public var modelVersionName: String?
    /// Each entity's version hash in the model the store was written with.
    public var entityVersionHashes: [String: VersionHash]
    /// The schema text of that model.
    public var schemaText: String
    /// The next primary key to hand out, per entity: each entity numbers its objects 1, 2,
    /// 3... and a key is never reused.
    public var nextKeys: [String: Int64]

    /// The metadata of a store of `model` with the UUID `storeIdentifier`.
    public init(storeIdentifier: String, model: ManagedObjectModel, nextKeys: [String: Int64] = [:]) {
        self.storeIdentifier = storeIdentifier
        self.modelVersionName = model.versionName
        self.entityVersionHashes = model.entityVersionHashes
        self.schemaText = model.schemaText
        self.nextKeys = nextKeys
    }

    package init(storeIdentifier: String, modelVersionName: String?, entityVersionHashes: [String: VersionHash], schemaText: String, nextKeys: [String: Int64]) {
        self.storeIdentifier = storeIdentifier
        self.modelVersionName = modelVersionName
        self.entityVersionHashes = entityVersionHashes
        self.schemaText = schemaText
        self.nextKeys = nextKeys
    }

    /// The largest primary key or row version a store reads or hands out (2^53 - 1, the
    /// largest integer every JSON reader keeps exact). A file claiming more is refused when
    /// read, so that no later save can overflow counting past it.
    public static let maxKey: Int64 = (1 << 53) - 1

    /// The next key of an entity.
    public func nextKey(for entityName: String) -> Int64 { max(1, nextKeys[entityName] ?? 1) }

    /// Entities whose hashes differ from `model`'s (added, removed or changed), sorted.
    public func incompatibleEntities(with model: ManagedObjectModel) -> [String] {
        let mine = entityVersionHashes, theirs = model.entityVersionHashes
        return Set(mine.keys).union(theirs.keys).filter { mine[$0] != theirs[$0] }.sorted()
    }

    /// Throws ``StoreError/incompatibleModel(path:entities:)`` unless the store was written
    /// with `model`'s entity hashes.
    package func requireCompatible(with model: ManagedObjectModel, path: String) throws {
        let differing = incompatibleEntities(with: model)
        if !differing.isEmpty { throw StoreError.incompatibleModel(path: path, entities: differing) }
    }

    /// The model the store was written with, loaded from the stored schema.
    public func storedModel() throws(SchemaError) -> ManagedObjectModel {
        try ManagedObjectModel(schema: schemaText, file: "<model stored in \(storeIdentifier)>", versionName: modelVersionName)
    }
}

extension StoreChanges {
    /// Gives inserted rows with temporary IDs permanent keys (per entity, from `nextKeys`),
    /// and replaces those IDs wherever the changes refer to them. Returns the new changes,
    /// the mapping and the next free keys.
    package func assigningKeys(from nextKeys: [String: Int64]) -> (changes: StoreChanges, mapping: [ObjectID: ObjectID], nextKeys: [String: Int64]) {
        let (mapping, keys) = keyAssignment(from: nextKeys)
        guard !mapping.isEmpty else { return (self, [:], keys) }
        var result = self
        result.inserted = inserted.map { $0.remapped(mapping) }
        result.updated = updated.map { ($0.row.remapped(mapping), $0.expectedVersion) }
        return (result, mapping, keys)
    }

    /// The permanent ID of each row inserted with a temporary one (keys per entity, from
    /// `nextKeys`), and the next free keys: ``assigningKeys(from:)`` without the new rows,
    /// for a store that remaps each row as it writes it (an import's rows are then not
    /// copied a second time).
    package func keyAssignment(from nextKeys: [String: Int64]) -> (mapping: [ObjectID: ObjectID], nextKeys: [String: Int64]) {
        var keys = nextKeys
        var mapping: [ObjectID: ObjectID] = [:]
        mapping.reserveCapacity(inserted.count)
        for row in inserted where row.objectID.isTemporary {
            let entity = row.objectID.entityName
            let key = max(1, keys[entity] ?? 1)
            mapping[row.objectID] = row.objectID.withKey(.permanent(key))
            keys[entity] = key + 1
        }
        // Rows inserted with permanent IDs (from obtainPermanentIDs) keep the sequence ahead.
        for row in inserted where !row.objectID.isTemporary {
            if let key = row.objectID.primaryKey, key >= (keys[row.objectID.entityName] ?? 1) { keys[row.objectID.entityName] = key + 1 }
        }
        return (mapping, keys)
    }
}

extension StoredRow {
    /// The row with the IDs `mapping` replaces replaced: its own and those its slots refer to.
    package func remapped(_ mapping: [ObjectID: ObjectID]) -> StoredRow {
        guard !mapping.isEmpty else { return self }
        var copy = self
        copy.objectID = mapping[objectID] ?? objectID
        copy.slots = slots.map { slot in
            switch slot {
            case .value: return slot
            case .toOne(let id): return .toOne(id.map { mapping[$0] ?? $0 })
            case .toMany(let ids): return .toMany(ids.map { mapping[$0] ?? $0 })
            }
        }
        return copy
    }
}

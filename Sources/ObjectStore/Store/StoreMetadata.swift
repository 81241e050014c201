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
    /// The next primary key to hand out.
    public var nextKey: Int64

    public init(storeIdentifier: String, model: ManagedObjectModel, nextKey: Int64 = 1) {
        self.storeIdentifier = storeIdentifier
        self.modelVersionName = model.versionName
        self.entityVersionHashes = model.entityVersionHashes
        self.schemaText = model.schemaText
        self.nextKey = nextKey
    }

    init(storeIdentifier: String, modelVersionName: String?, entityVersionHashes: [String: VersionHash], schemaText: String, nextKey: Int64) {
        self.storeIdentifier = storeIdentifier
        self.modelVersionName = modelVersionName
        self.entityVersionHashes = entityVersionHashes
        self.schemaText = schemaText
        self.nextKey = nextKey
    }

    /// Entities whose hashes differ from `model`'s (added, removed or changed), sorted.
    public func incompatibleEntities(with model: ManagedObjectModel) -> [String] {
        let mine = entityVersionHashes, theirs = model.entityVersionHashes
        return Set(mine.keys).union(theirs.keys).filter { mine[$0] != theirs[$0] }.sorted()
    }

    /// The model the store was written with, loaded from the stored schema.
    public func storedModel() throws(SchemaError) -> ManagedObjectModel {
        try ManagedObjectModel(schema: schemaText, file: "<model stored in \(storeIdentifier)>", versionName: modelVersionName)
    }
}

extension StoreChanges {
    /// Gives inserted rows with temporary IDs permanent keys from `nextKey` on, and replaces
    /// those IDs wherever the changes refer to them. Returns the new changes, the mapping
    /// and the next free key.
    func assigningKeys(from nextKey: Int64) -> (changes: StoreChanges, mapping: [ObjectID: ObjectID], nextKey: Int64) {
        var key = nextKey
        var mapping: [ObjectID: ObjectID] = [:]
        for row in inserted where row.objectID.isTemporary {
            mapping[row.objectID] = ObjectID(entityName: row.objectID.entityName, storeIdentifier: row.objectID.storeIdentifier, key: .permanent(key))
            key += 1
        }
        guard !mapping.isEmpty else { return (self, [:], key) }
        func map(_ row: StoredRow) -> StoredRow {
            var copy = row
            copy.objectID = mapping[row.objectID] ?? row.objectID
            copy.slots = row.slots.map { slot in
                switch slot {
                case .value: return slot
                case .toOne(let id): return .toOne(id.map { mapping[$0] ?? $0 })
                case .toMany(let ids): return .toMany(ids.map { mapping[$0] ?? $0 })
                }
            }
            return copy
        }
        var result = self
        result.inserted = inserted.map(map)
        result.updated = updated.map { (map($0.row), $0.expectedVersion) }
        return (result, mapping, key)
    }
}

import Foundation

/// A checked, immutable data model: entities, their properties and fetch request templates,
/// loaded from a schema file.
///
/// ```swift
/// let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: "Models/Tasks/v1.json"))
/// for entity in model.entities {
///     print(entity.name, entity.versionHash)
/// }
/// ```
///
/// Loading reports every problem of a file at once as a ``SchemaError``. The JSON format is
/// documented in ObjectStore's Schema guide.
public struct ManagedObjectModel: Sendable, Hashable {
    /// The model's version name, when it was loaded from a model directory.
    public let versionName: String?
    /// The entities, sorted by name.
    public let entities: [EntityDescription]
    /// Named fetch requests, in file order.
    public let fetchRequestTemplates: [FetchRequestTemplate]
    /// The schema text this model was loaded from; stores keep it so a later migration
    /// always has its source model.
    public let schemaText: String
    /// The model's version hash: a digest of every entity's name and version hash.
    public let versionHash: VersionHash
    private let entityIndex: [String: Int]

    init(versionName: String?, entities: [EntityDescription], fetchRequestTemplates: [FetchRequestTemplate], schemaText: String) {
        self.versionName = versionName
        self.entities = entities.sorted { $0.name < $1.name }
        self.fetchRequestTemplates = fetchRequestTemplates
        self.schemaText = schemaText
        var index: [String: Int] = [:]
        for (i, entity) in self.entities.enumerated() { index[entity.name] = i }
        self.entityIndex = index
        var encoder = CanonicalEncoder()
        encoder.field("model")
        for entity in self.entities {
            encoder.field(entity.name)
            encoder.field(entity.versionHash.bytes)
        }
        self.versionHash = encoder.digest
    }

    /// The entity named `name`.
    public func entity(named name: String) -> EntityDescription? {
        entityIndex[name].map { entities[$0] }
    }

    /// The fetch request template named `name`.
    public func fetchRequestTemplate(named name: String) -> FetchRequestTemplate? {
        fetchRequestTemplates.first { $0.name == name }
    }

    /// Each entity's version hash by entity name.
    public var entityVersionHashes: [String: VersionHash] {
        Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0.versionHash) })
    }

    /// The entity and all its descendants, the entity first.
    public func entityAndDescendants(of name: String) -> [EntityDescription] {
        guard let root = entity(named: name) else { return [] }
        var result = [root]
        var i = 0
        while i < result.count {
            result.append(contentsOf: result[i].subentityNames.compactMap { entity(named: $0) })
            i += 1
        }
        return result
    }

    public static func == (lhs: ManagedObjectModel, rhs: ManagedObjectModel) -> Bool {
        lhs.versionName == rhs.versionName && lhs.entities == rhs.entities
            && lhs.fetchRequestTemplates == rhs.fetchRequestTemplates
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(versionHash)
    }
}

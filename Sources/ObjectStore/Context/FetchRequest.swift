import ObjectStoreModel

/// What to fetch: an entity (with its sub-entities unless turned off), an optional filter,
/// sort order, offset and limit.
///
/// ```swift
/// var request = FetchRequest(entityName: "Task")
/// request.fetchLimit = 10
/// let tasks = try context.fetch(request)
/// ```
public struct FetchRequest {
    /// The entity to fetch.
    public var entityName: String
    /// Whether objects of sub-entities are included (default `true`).
    public var includesSubentities = true
    /// Whether this context's unsaved inserts, updates and deletes are taken into account
    /// (default `true`).
    public var includesPendingChanges = true
    /// A filter applied to each candidate object.
    public var filter: ((ManagedObject) throws -> Bool)?
    /// Orders the results; ties keep object-ID order, so results are deterministic.
    public var sort: ((ManagedObject, ManagedObject) throws -> Bool)?
    /// Results to skip.
    public var fetchOffset = 0
    /// The most results returned (`0`: no limit).
    public var fetchLimit = 0

    public init(entityName: String) {
        self.entityName = entityName
    }
}

/// Runs a fetch request in a context: saved objects overlaid with pending changes.
struct FetchExecutor {
    let context: ManagedObjectContext
    let request: FetchRequest

    func candidates() throws -> [ManagedObject] {
        let model = context.model
        guard model.entity(named: request.entityName) != nil else {
            throw ObjectStoreError.unknownEntity(request.entityName, suggestion: NameSuggestion.closest(to: request.entityName, in: model.entities.map(\.name)))
        }
        context.processPendingChanges()
        let entities = request.includesSubentities ? model.entityAndDescendants(of: request.entityName) : model.entity(named: request.entityName).map { [$0] } ?? []
        let names = Set(entities.map(\.name))
        var objects: [ManagedObject] = []
        for entity in entities {
            for id in try context.savedObjectIDs(ofEntity: entity.name) {
                if request.includesPendingChanges && context.deletedSet.contains(id) { continue }
                objects.append(try context.object(with: id))
            }
        }
        if request.includesPendingChanges {
            objects.append(contentsOf: context.insertedObjects.filter { names.contains($0.entity.name) })
        }
        return objects
    }

    func objects() throws -> [ManagedObject] {
        var objects = try candidates()
        if let filter = request.filter {
            objects = try objects.filter { object in
                guard (try? object.fireFault()) != nil else { return false }
                return try filter(object)
            }
        }
        if let sort = request.sort {
            objects = try objects.sorted(by: sort)
        }
        if request.fetchOffset > 0 { objects = Array(objects.dropFirst(request.fetchOffset)) }
        if request.fetchLimit > 0 { objects = Array(objects.prefix(request.fetchLimit)) }
        return objects
    }

    func count() throws -> Int {
        try objects().count
    }
}

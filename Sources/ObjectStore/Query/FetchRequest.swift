import ObjectStoreModel
import ObjectStoreStorage

/// What to fetch: an entity (with its sub-entities unless turned off), a predicate, sort
/// keys, offset and limit.
///
/// ```swift
/// var request = FetchRequest(entityName: "Task", predicate: try ObjectPredicate("priority >= 2"))
/// request.sortDescriptors = [SortKey("dueDate")]
/// request.fetchLimit = 10
/// let tasks = try context.fetch(request)
/// ```
public struct FetchRequest: Sendable, Hashable {
    /// The entity to fetch.
    public var entityName: String
    /// Which objects match; all when `nil`. `$VARIABLES` must be substituted first.
    public var predicate: ObjectPredicate?
    /// Sort keys, applied in order; remaining ties keep object-ID order, so results are
    /// deterministic.
    public var sortDescriptors: [SortKey] = []
    /// Whether objects of sub-entities are included (default `true`).
    public var includesSubentities = true
    /// Whether this context's unsaved inserts, updates and deletes are taken into account
    /// (default `true`).
    public var includesPendingChanges = true
    /// Results to skip.
    public var fetchOffset = 0
    /// The most results returned (`0`: no limit).
    public var fetchLimit = 0
    /// When above 0, results come back as faults and touching one loads its whole batch of
    /// this many objects at once.
    public var fetchBatchSize = 0
    /// Relationship key paths (`location`, `location.tasks`) whose destinations are loaded
    /// with the results, instead of one by one on first access.
    public var relationshipKeyPathsForPrefetching: [String] = []

    /// A request for objects of an entity, optionally filtered and sorted.
    public init(entityName: String, predicate: ObjectPredicate? = nil, sortDescriptors: [SortKey] = []) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }

    /// A request from a model's fetch request template, with its `$VARIABLES` substituted.
    ///
    /// ```swift
    /// let request = try FetchRequest(template: "tasksDueSooner", in: model, variables: ["DUE_DATE": .date(friday)])
    /// ```
    ///
    /// - Throws: `ObjectStoreError.unknownFetchRequestTemplate(_:suggestion:)` for a name the
    ///   model does not have; `PredicateVariableError` for a variable not given.
    public init(template name: String, in model: ManagedObjectModel, variables: [String: Value] = [:]) throws {
        try self.init(template: name, in: model, placeholders: variables.mapValues(PlaceholderValue.value))
    }

    /// A request from a template with its `$VARIABLES` replaced by values or lists.
    init(template name: String, in model: ManagedObjectModel, placeholders: [String: PlaceholderValue]) throws {
        guard let template = model.fetchRequestTemplate(named: name) else {
            throw ObjectStoreError.unknownFetchRequestTemplate(name, suggestion: NameSuggestion.closest(to: name, in: model.fetchRequestTemplates.map(\.name)))
        }
        self.init(entityName: template.entityName, predicate: try ObjectPredicate(template.predicate).substituting(placeholders: placeholders))
        sortDescriptors = template.sortDescriptors.map { SortKey($0.keyPath, ascending: $0.ascending) }
    }
}

/// A named fetch request stored in the model, with `$VARIABLES` substituted when it is used.
public struct FetchRequestTemplate: Sendable, Hashable {
    /// The template name, unique in the model.
    public var name: String
    /// The entity the request fetches.
    public var entityName: String
    /// The predicate text, in the predicate language.
    public var predicate: String
    /// Sort keys in order.
    public var sortDescriptors: [SortKey] = []

    /// A template fetching `entityName` objects that match `predicate`.
    public init(name: String, entityName: String, predicate: String) {
        self.name = name
        self.entityName = entityName
        self.predicate = predicate
    }

    /// One sort key of a template: a key path and a direction.
    public struct SortKey: Sendable, Hashable {
        /// The key path to sort by.
        public var keyPath: String
        /// Whether smaller values come first.
        public var ascending: Bool

        /// A sort key.
        public init(keyPath: String, ascending: Bool = true) {
            self.keyPath = keyPath
            self.ascending = ascending
        }
    }
}

/// A named fetch request stored in the model, with `$VARIABLES` substituted when it is used.
public struct FetchRequestTemplate: Sendable, Hashable {
    public var name: String
    /// The entity the request fetches.
    public var entityName: String
    /// The predicate text, in the predicate language.
    public var predicate: String
    /// Sort keys in order.
    public var sortDescriptors: [SortKey] = []

    public init(name: String, entityName: String, predicate: String) {
        self.name = name
        self.entityName = entityName
        self.predicate = predicate
    }

    /// One sort key of a template: a key path and a direction.
    public struct SortKey: Sendable, Hashable {
        public var keyPath: String
        public var ascending: Bool

        public init(keyPath: String, ascending: Bool = true) {
            self.keyPath = keyPath
            self.ascending = ascending
        }
    }
}

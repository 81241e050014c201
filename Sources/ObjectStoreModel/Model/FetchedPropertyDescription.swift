/// A fetched property: a lazily evaluated fetch of another entity's objects, defined by a
/// predicate that may refer to the source object as `$FETCH_SOURCE`.
public struct FetchedPropertyDescription: Sendable, Hashable {
    /// The property name, in the entity's property namespace.
    public var name: String
    /// The entity the fetch returns.
    public var destinationEntityName: String
    /// The predicate text, in the predicate language.
    public var predicate: String
    /// Free-form key/value strings for the application.
    public var userInfo: [String: String] = [:]

    /// A fetched property of `destination` objects matching `predicate`.
    public init(name: String, destination: String, predicate: String) {
        self.name = name
        self.destinationEntityName = destination
        self.predicate = predicate
    }
}

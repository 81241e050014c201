/// A relationship from one entity to another: to-one or to-many, with an inverse and a
/// delete rule.
public struct RelationshipDescription: Sendable, Hashable {
    /// What happens to the destination objects when the source object is deleted.
    public enum DeleteRule: String, Sendable, CaseIterable {
        /// Remove the deleted object from the destination's inverse (the default).
        case nullify
        /// Delete the destination objects too.
        case cascade
        /// Refuse the delete (the save fails) while the relationship has destination objects.
        case deny
        /// Do nothing: the destination keeps a reference to the deleted object.
        case noAction
    }

    /// The property name, unique within the entity and its ancestors.
    public var name: String
    /// The name of the entity at the other end.
    public var destinationEntityName: String
    /// The name of the relationship at the other end that points back, if any.
    public var inverseName: String?
    /// Whether the relationship holds a collection of objects.
    public var isToMany: Bool = false
    /// Whether a to-many relationship keeps its objects in order.
    public var isOrdered: Bool = false
    /// Whether the relationship may be empty when saved (schema default: `true`).
    public var isOptional: Bool = true
    /// The fewest destination objects a to-many relationship may hold when saved.
    public var minCount: Int?
    /// The most destination objects a to-many relationship may hold when saved.
    public var maxCount: Int?
    /// What a delete of the source object does to the destination.
    public var deleteRule: DeleteRule = .nullify
    /// Whether the relationship lives only in memory.
    public var isTransient: Bool = false
    /// Whether a to-many relationship is not stored with its object but read from its
    /// inverse, the relationship that is (schema key `derivedFromInverse`): its objects are
    /// those whose inverse refers to this object, looked up when read. Adding an object to
    /// it, or removing one, writes only that object's side, so a save's cost does not grow
    /// with the size of the list (the tasks of a tag shared by a million tasks). Reading it
    /// costs a lookup in the store instead of a read of the object's own row.
    public var isDerivedFromInverse: Bool = false
    /// The name of this relationship in an earlier model version, for inferred migrations.
    public var renamingIdentifier: String?
    /// Folded into the version hash to mark a change the hash would not otherwise see.
    public var versionHashModifier: String?
    /// Free-form key/value strings for the application.
    public var userInfo: [String: String] = [:]

    /// An optional to-one relationship without inverse, nullified on delete.
    public init(name: String, destination: String) {
        self.name = name
        self.destinationEntityName = destination
    }
}

/// A property of an entity that occupies a slot in each object: an attribute or a
/// relationship.
public enum PropertyDescription: Sendable, Hashable {
    /// An attribute: a value.
    case attribute(AttributeDescription)
    /// A relationship: other objects.
    case relationship(RelationshipDescription)

    /// The property's name.
    public var name: String {
        switch self {
        case .attribute(let a): return a.name
        case .relationship(let r): return r.name
        }
    }

    /// The attribute, when this is one.
    public var attribute: AttributeDescription? {
        if case .attribute(let a) = self { return a }
        return nil
    }

    /// The relationship, when this is one.
    public var relationship: RelationshipDescription? {
        if case .relationship(let r) = self { return r }
        return nil
    }

    /// The name of this property in an earlier model version.
    public var renamingIdentifier: String? {
        switch self {
        case .attribute(let a): return a.renamingIdentifier
        case .relationship(let r): return r.renamingIdentifier
        }
    }
}

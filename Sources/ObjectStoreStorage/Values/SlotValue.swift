import ObjectStoreModel

/// What one slot of an object holds: an attribute value, a to-one reference or a to-many
/// collection of references. Relationships hold object IDs, never objects, so inverses make
/// no retain cycles.
public enum SlotValue: Sendable, Hashable {
    /// An attribute's value.
    case value(Value)
    /// The object of a to-one relationship, or none.
    case toOne(ObjectID?)
    /// The objects of a to-many relationship, in order.
    case toMany([ObjectID])

    /// The empty slot for a property: the default value, no object, or no objects.
    package static func initial(for property: PropertyDescription) -> SlotValue {
        switch property {
        case .attribute(let attribute): return .value(attribute.defaultValue)
        case .relationship(let relationship): return relationship.isToMany ? .toMany([]) : .toOne(nil)
        }
    }

    /// What a slot holds when it holds nothing: nil, no object, or no objects (a sparse row
    /// of the binary store leaves such slots out).
    package static func blank(for property: PropertyDescription) -> SlotValue {
        switch property {
        case .attribute: return .value(.null)
        case .relationship(let relationship): return relationship.isToMany ? .toMany([]) : .toOne(nil)
        }
    }

    /// The attribute value, or null for a relationship slot.
    @inlinable public var value: Value {
        if case .value(let v) = self { return v }
        return .null
    }

    /// The IDs this slot refers to (none for an attribute).
    @inlinable public var referencedIDs: [ObjectID] {
        switch self {
        case .value: return []
        case .toOne(let id): return id.map { [$0] } ?? []
        case .toMany(let ids): return ids
        }
    }
}

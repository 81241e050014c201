import ObjectStoreModel

/// A misuse of the object graph that a caller can fix: an unknown entity or key, a value of
/// the wrong type, an object that does not exist. Messages name the entity and key.
public enum ObjectStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No entity of that name in the model (with the closest name, if one is close).
    case unknownEntity(String, suggestion: String?)
    /// An insert of an abstract entity: insert one of its sub-entities.
    case abstractEntity(String)
    /// No property of that name in the entity (with the closest name, if one is close).
    case unknownKey(entity: String, key: String, suggestion: String?)
    /// A value or an object of another type than the property holds.
    case wrongType(entity: String, key: String, expected: String, given: String)
    /// A write to a derived or otherwise read-only property.
    case readOnly(entity: String, key: String)
    /// An object of an entity the relationship does not lead to.
    case wrongDestination(entity: String, key: String, expected: String, given: String)
    /// No object with that ID (deleted, or never saved).
    case objectNotFound(ObjectID)
    /// An object of another context or store where this context's is needed.
    case foreignObject(ObjectID)
    /// A Swift class whose typed properties do not match its entity (each problem named).
    case classMismatch(entity: String, problems: [String])
    /// A Swift class no entity was registered with.
    case unregisteredClass(String)
    /// A fetch request that cannot run (a negative offset, say).
    case invalidFetchRequest(String)
    /// No fetch request template of that name in the model.
    case unknownFetchRequestTemplate(String, suggestion: String?)
    /// A batch request that cannot run as asked (a relationship to set, a child context).
    case invalidBatchRequest(String)
    /// A transformable attribute whose transformer is not registered (or not for this type).
    case unknownTransformer(String, entity: String, key: String, reason: String)
    /// A value that could not be turned into its stored form or back: a transformer or a
    /// Codable value's JSON failed, a stored raw value that is no case of an enum.
    case unconvertibleValue(entity: String, key: String, reason: String)

    public var description: String {
        func hint(_ s: String?) -> String { s.map { " (did you mean '\($0)'?)" } ?? "" }
        switch self {
        case .unknownEntity(let name, let suggestion):
            return "unknown entity '\(name)'\(hint(suggestion))"
        case .abstractEntity(let name):
            return "entity \(name) is abstract: insert one of its sub-entities instead"
        case .unknownKey(let entity, let key, let suggestion):
            return "\(entity) has no property '\(key)'\(hint(suggestion))"
        case .wrongType(let entity, let key, let expected, let given):
            return "\(entity).\(key) expects \(expected), got \(given)"
        case .readOnly(let entity, let key):
            return "\(entity).\(key) is derived and cannot be set"
        case .wrongDestination(let entity, let key, let expected, let given):
            return "\(entity).\(key) relates to \(expected) objects, got a \(given)"
        case .objectNotFound(let id):
            return "no object with ID \(id): it was deleted or never saved, or it is a fault whose context no longer exists (keep a reference to the context while you read its objects)"
        case .foreignObject(let id):
            return "object \(id) belongs to another context"
        case .classMismatch(let entity, let problems):
            return "class does not match entity \(entity): " + problems.joined(separator: "; ")
        case .unregisteredClass(let name):
            return "class \(name) is not registered with the coordinator (call register(_:forEntityName:))"
        case .invalidFetchRequest(let reason):
            return "invalid fetch request: \(reason)"
        case .invalidBatchRequest(let reason):
            return "invalid batch request: \(reason)"
        case .unknownTransformer(let name, let entity, let key, let reason):
            return "\(entity).\(key) is transformed by '\(name)', \(reason)"
        case .unconvertibleValue(let entity, let key, let reason):
            return "\(entity).\(key): \(reason)"
        case .unknownFetchRequestTemplate(let name, let suggestion):
            return "the model has no fetch request template '\(name)'\(hint(suggestion))"
        }
    }
}

/// How to turn the objects of one model version into the next: per destination entity,
/// where its objects come from and how each property gets its value. Made by
/// ``MappingModel/infer(from:to:)`` (lightweight migration), from a custom mapping file, or
/// both (the file wins for what it names).
public struct MappingModel: Sendable, Hashable {
    /// The version the objects come from.
    public let source: ManagedObjectModel
    /// The version the objects go to.
    public let destination: ManagedObjectModel
    /// One mapping per destination entity that receives objects.
    public var entityMappings: [EntityMapping]

    /// A mapping from its parts; usually made by `infer(from:to:)` or `custom(_:file:from:to:)`.
    public init(source: ManagedObjectModel, destination: ManagedObjectModel, entityMappings: [EntityMapping]) {
        self.source = source
        self.destination = destination
        self.entityMappings = entityMappings
    }
}

/// Where a destination entity's objects come from.
public struct EntityMapping: Sendable, Hashable {
    /// The entity made.
    public var destinationEntity: String
    /// The source entity; each of its objects (of exactly that entity) becomes one
    /// destination object with the same key, unless ``distinctBy`` is set.
    public var sourceEntity: String
    /// When set, one destination object is made per distinct non-nil value of this
    /// expression over the source objects (turning a text field into an entity), with new keys.
    public var distinctBy: ObjectExpression?
    /// How each destination attribute gets its value; attributes not listed keep their
    /// default.
    public var attributes: [String: ValueMapping]
    /// How each destination relationship gets its destinations.
    public var relationships: [String: RelationshipMapping]

    /// An entity mapping from its parts.
    public init(destinationEntity: String, sourceEntity: String, distinctBy: ObjectExpression? = nil, attributes: [String: ValueMapping] = [:], relationships: [String: RelationshipMapping] = [:]) {
        self.destinationEntity = destinationEntity
        self.sourceEntity = sourceEntity
        self.distinctBy = distinctBy
        self.attributes = attributes
        self.relationships = relationships
    }
}

/// Where one attribute's value comes from.
public enum ValueMapping: Sendable, Hashable {
    /// A source attribute, converted when the type widened.
    case copy(String)
    /// An expression over `$source`, the source object.
    case expression(ObjectExpression)
}

/// Where one relationship's destinations come from.
public enum RelationshipMapping: Sendable, Hashable {
    /// The destinations of a source relationship, each mapped to its migrated object.
    case copy(String)
    /// The destination objects of `entity` whose `key` equals `value` evaluated over `$source`.
    case lookup(entity: String, key: String, value: ObjectExpression)
}

/// A mapping that cannot be inferred: each problem names entity.property and why; a custom
/// mapping file is needed.
public struct MappingInferenceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One line per entity.property that needs a custom mapping, with why.
    public var problems: [String]
    public var description: String {
        "cannot infer a mapping (write a custom mapping file for these; see ObjectStore's Migration guide):\n" + problems.map { "  " + $0 }.joined(separator: "\n")
    }
}

extension MappingModel {
    /// Infers a lightweight mapping: added and removed attributes, relationships and
    /// entities; renames through `renamingIdentifier`; optional to required when a default
    /// exists; required to optional; to-one and to-many; ordered and unordered; properties
    /// moving within an inheritance hierarchy; widening numeric types. Anything else is
    /// refused with a problem per entity.property.
    public static func infer(from source: ManagedObjectModel, to destination: ManagedObjectModel) throws(MappingInferenceError) -> MappingModel {
        let (mappings, problems) = inferParts(from: source, to: destination)
        guard problems.isEmpty else { throw MappingInferenceError(problems: problems.map(\.message)) }
        return MappingModel(source: source, destination: destination, entityMappings: mappings)
    }

    /// A problem of inference, with the entity and property (nil for the entity) it is about,
    /// so a custom mapping that covers them can set it aside.
    struct InferenceProblem {
        var entity: String
        var property: String?
        var message: String
    }

    static func inferParts(from source: ManagedObjectModel, to destination: ManagedObjectModel) -> ([EntityMapping], [InferenceProblem]) {
        var problems: [InferenceProblem] = []
        var mappings: [EntityMapping] = []
        var claimed: [String: String] = [:]
        // Entities that keep their name claim their source first, so a rename that takes an
        // entity another one still uses is the one reported.
        let ordered = destination.entities.filter { $0.renamingIdentifier == nil } + destination.entities.filter { $0.renamingIdentifier != nil }
        for entity in ordered {
            let match = source.entity(named: entity.renamingIdentifier ?? entity.name) ?? source.entity(named: entity.name)
            guard let sourceEntity = match else { continue }  // a new entity starts empty
            if let other = claimed[sourceEntity.name] {
                problems.append(InferenceProblem(entity: entity.name, property: nil, message: "\(entity.name): takes its objects from \(sourceEntity.name), which \(other) already does (splitting an entity is not inferred)"))
                continue
            }
            claimed[sourceEntity.name] = entity.name
            var mapping = EntityMapping(destinationEntity: entity.name, sourceEntity: sourceEntity.name)
            for property in entity.properties {
                let old = sourceEntity.property(named: property.renamingIdentifier ?? property.name) ?? sourceEntity.property(named: property.name)
                let qualified = "\(entity.name).\(property.name)"
                func problem(_ message: String) {
                    problems.append(InferenceProblem(entity: entity.name, property: property.name, message: message))
                }
                switch (property, old) {
                case (.attribute(let attribute), _) where !attribute.isStored:
                    continue
                case (.attribute(let attribute), nil):
                    if !attribute.isOptional && attribute.defaultValue.isNull {
                        problem("\(qualified): a new required attribute without a default value has nothing to start from")
                    }
                case (.attribute(let attribute), .attribute(let before)?):
                    if !before.isStored {
                        if !attribute.isOptional && attribute.defaultValue.isNull {
                            problem("\(qualified): was not stored before and is required without a default")
                        }
                        continue
                    }
                    if let reason = conversionProblem(from: before.type, to: attribute.type) {
                        problem("\(qualified): \(reason)")
                        continue
                    }
                    // Bytes one transformer wrote mean nothing to another: copying them would
                    // make every value unreadable.
                    if before.valueTransformerName != attribute.valueTransformerName {
                        let name = { (transformer: String?) in transformer.map { "the transformer '\($0)'" } ?? "no transformer" }
                        problem("\(qualified): its bytes were written by \(name(before.valueTransformerName)) and are read by \(name(attribute.valueTransformerName)); convert them in a mapping file")
                        continue
                    }
                    if before.isOptional && !attribute.isOptional && attribute.defaultValue.isNull {
                        problem("\(qualified): optional -> required without a default value for the objects that have none")
                        continue
                    }
                    mapping.attributes[attribute.name] = .copy(before.name)
                case (.attribute, .relationship?):
                    problem("\(qualified): was a relationship and is now an attribute")
                case (.relationship(let relationship), nil):
                    if !relationship.isOptional {
                        problem("\(qualified): a new required relationship has nothing to start from")
                    }
                case (.relationship, .attribute?):
                    problem("\(qualified): was an attribute and is now a relationship")
                case (.relationship(let relationship), .relationship(let before)?):
                    guard let beforeDestination = source.entity(named: before.destinationEntityName),
                        let destinationEntity = destination.entity(named: relationship.destinationEntityName),
                        (destinationEntity.renamingIdentifier ?? destinationEntity.name) == beforeDestination.name || destinationEntity.name == beforeDestination.name
                    else {
                        problem("\(qualified): now relates to \(relationship.destinationEntityName) instead of \(before.destinationEntityName)")
                        continue
                    }
                    if before.isOptional && !relationship.isOptional {
                        problem("\(qualified): optional -> required, but some objects may have none")
                        continue
                    }
                    mapping.relationships[relationship.name] = .copy(before.name)
                }
            }
            mappings.append(mapping)
        }
        return (mappings, problems)
    }

    /// Why values of one attribute type cannot be converted to another, or `nil` when they
    /// can (the same type, or a widening).
    static func conversionProblem(from before: AttributeType, to after: AttributeType) -> String? {
        if before == after { return nil }
        let widening: [AttributeType: Set<AttributeType>] = [
            .int16: [.int32, .int64, .double, .decimal],
            .int32: [.int64, .double, .decimal],
            .int64: [.double, .decimal],
            .float: [.double],
        ]
        if widening[before]?.contains(after) == true { return nil }
        return "\(before.rawValue) -> \(after.rawValue) is not a widening conversion"
    }

    /// The mapping for a destination entity.
    public func mapping(forDestination name: String) -> EntityMapping? {
        entityMappings.first { $0.destinationEntity == name }
    }
}

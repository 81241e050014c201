/// An entity of a model: its properties laid out in fixed slots, inherited ones first.
///
/// Entities are built by loading a schema file (see ``ManagedObjectModel``). Each object of an
/// entity stores its property values in an array indexed by ``slot(of:)``; a sub-entity's
/// layout extends its parent's, so a slot index found on a parent is valid for every
/// descendant.
///
/// ```swift
/// let task = model.entity(named: "Task")!
/// task.slot(of: "priority")           // 1
/// task.attribute(named: "text")?.type // .string
/// ```
public struct EntityDescription: Sendable, Hashable {
    /// The entity name, unique within the model.
    public let name: String
    /// The parent entity's name, for a sub-entity.
    public let parentName: String?
    /// Whether the entity has no objects of its own (only its sub-entities do).
    public let isAbstract: Bool
    /// Free-form key/value strings for the application.
    public let userInfo: [String: String]
    /// The name of this entity in an earlier model version, for inferred migrations.
    public let renamingIdentifier: String?
    /// Folded into the version hash to mark a change the hash would not otherwise see.
    public let versionHashModifier: String?
    /// Sets of attribute names whose values together must be unique among the entity's objects.
    public let uniquenessConstraints: [[String]]
    /// Indexes a store may keep to speed up fetches.
    public let indexes: [IndexDescription]
    /// Every property in slot order: the inherited ones first (in the parent's order), then
    /// this entity's own, sorted by name.
    public let properties: [PropertyDescription]
    /// How many of ``properties`` come from ancestors.
    public let inheritedPropertyCount: Int
    /// Fetched properties, inherited ones included.
    public let fetchedProperties: [FetchedPropertyDescription]
    /// Ancestors' names, the parent first.
    public let ancestorNames: [String]
    /// Direct sub-entities' names, sorted.
    public let subentityNames: [String]
    /// The entity's version hash (see docs/schema.md).
    public let versionHash: VersionHash
    private let slots: [String: Int]

    init(
        name: String, parentName: String?, isAbstract: Bool, userInfo: [String: String], renamingIdentifier: String?,
        versionHashModifier: String?, uniquenessConstraints: [[String]], indexes: [IndexDescription],
        properties: [PropertyDescription], inheritedPropertyCount: Int, fetchedProperties: [FetchedPropertyDescription],
        ancestorNames: [String], subentityNames: [String]
    ) {
        self.name = name
        self.parentName = parentName
        self.isAbstract = isAbstract
        self.userInfo = userInfo
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.uniquenessConstraints = uniquenessConstraints
        self.indexes = indexes
        self.properties = properties
        self.inheritedPropertyCount = inheritedPropertyCount
        self.fetchedProperties = fetchedProperties
        self.ancestorNames = ancestorNames
        self.subentityNames = subentityNames
        var slots: [String: Int] = [:]
        for (index, property) in properties.enumerated() { slots[property.name] = index }
        self.slots = slots

        var encoder = CanonicalEncoder()
        encoder.field("entity")
        encoder.field(name)
        encoder.field(parentName ?? "")
        encoder.field(isAbstract)
        encoder.field(versionHashModifier ?? "")
        for property in properties.sorted(by: { $0.name < $1.name }) {
            encoder.field(property.versionHash.bytes)
        }
        self.versionHash = encoder.digest
    }

    /// The slot index of a property, or `nil` when the entity has no property of that name.
    public func slot(of propertyName: String) -> Int? {
        slots[propertyName]
    }

    /// The property named `name` (attribute or relationship).
    public func property(named name: String) -> PropertyDescription? {
        slots[name].map { properties[$0] }
    }

    /// The attribute named `name`.
    public func attribute(named name: String) -> AttributeDescription? {
        property(named: name)?.attribute
    }

    /// The relationship named `name`.
    public func relationship(named name: String) -> RelationshipDescription? {
        property(named: name)?.relationship
    }

    /// The fetched property named `name`.
    public func fetchedProperty(named name: String) -> FetchedPropertyDescription? {
        fetchedProperties.first { $0.name == name }
    }

    /// All attributes in slot order.
    public var attributes: [AttributeDescription] { properties.compactMap(\.attribute) }

    /// All relationships in slot order.
    public var relationships: [RelationshipDescription] { properties.compactMap(\.relationship) }

    /// The properties this entity declares itself (not inherited).
    public var ownProperties: ArraySlice<PropertyDescription> { properties[inheritedPropertyCount...] }

    /// Whether this entity is `entityName` or one of its descendants.
    public func isKind(of entityName: String) -> Bool {
        name == entityName || ancestorNames.contains(entityName)
    }
}

/// An index over one or more properties of an entity.
public struct IndexDescription: Sendable, Hashable {
    /// The index name (defaults to the entity name and the property names joined by `_`).
    public var name: String
    /// The indexed property names, in order.
    public var propertyNames: [String]

    /// An index over properties in order.
    public init(name: String, propertyNames: [String]) {
        self.name = name
        self.propertyNames = propertyNames
    }
}

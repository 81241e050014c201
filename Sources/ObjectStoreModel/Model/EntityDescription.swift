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
    /// The description itself, shared: an entity is one reference (8 bytes) wherever it is
    /// held, in every managed object among others, and copying it retains one object.
    private final class Storage: Sendable {
        let name: String
        let parentName: String?
        let isAbstract: Bool
        let userInfo: [String: String]
        let renamingIdentifier: String?
        let versionHashModifier: String?
        let uniquenessConstraints: [[String]]
        let indexes: [IndexDescription]
        let properties: [PropertyDescription]
        let inheritedPropertyCount: Int
        let fetchedProperties: [FetchedPropertyDescription]
        let ancestorNames: [String]
        let subentityNames: [String]
        let versionHash: VersionHash
        let slots: [String: Int]
        let kinds: [SlotKind]

        init(name: String, parentName: String?, isAbstract: Bool, userInfo: [String: String], renamingIdentifier: String?,
             versionHashModifier: String?, uniquenessConstraints: [[String]], indexes: [IndexDescription],
             properties: [PropertyDescription], inheritedPropertyCount: Int, fetchedProperties: [FetchedPropertyDescription],
             ancestorNames: [String], subentityNames: [String], versionHash: VersionHash, slots: [String: Int]) {
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
            self.versionHash = versionHash
            self.slots = slots
            self.kinds = properties.map { property in
                switch property {
                case .attribute(let attribute): return attribute.isDerived ? .derivedAttribute : .attribute
                case .relationship(let relationship): return relationship.isToMany ? .toMany : .toOne
                }
            }
        }
    }

    /// What a slot holds, without copying its property's description.
    package enum SlotKind: Sendable {
        case attribute, derivedAttribute, toOne, toMany
    }

    /// The kind of the property in a slot (the runtime's hot paths ask this per value).
    package func kind(ofSlot index: Int) -> SlotKind { storage.kinds[index] }

    private let storage: Storage

    /// The entity name, unique within the model.
    public var name: String { storage.name }
    /// The parent entity's name, for a sub-entity.
    public var parentName: String? { storage.parentName }
    /// Whether the entity has no objects of its own (only its sub-entities do).
    public var isAbstract: Bool { storage.isAbstract }
    /// Free-form key/value strings for the application.
    public var userInfo: [String: String] { storage.userInfo }
    /// The name of this entity in an earlier model version, for inferred migrations.
    public var renamingIdentifier: String? { storage.renamingIdentifier }
    /// Folded into the version hash to mark a change the hash would not otherwise see.
    public var versionHashModifier: String? { storage.versionHashModifier }
    /// Sets of attribute names whose values together must be unique among the entity's objects.
    public var uniquenessConstraints: [[String]] { storage.uniquenessConstraints }
    /// Indexes a store may keep to speed up fetches.
    public var indexes: [IndexDescription] { storage.indexes }
    /// Every property in slot order: the inherited ones first (in the parent's order), then
    /// this entity's own, sorted by name.
    public var properties: [PropertyDescription] { storage.properties }
    /// How many of ``properties`` come from ancestors.
    public var inheritedPropertyCount: Int { storage.inheritedPropertyCount }
    /// Fetched properties, inherited ones included.
    public var fetchedProperties: [FetchedPropertyDescription] { storage.fetchedProperties }
    /// Ancestors' names, the parent first.
    public var ancestorNames: [String] { storage.ancestorNames }
    /// Direct sub-entities' names, sorted.
    public var subentityNames: [String] { storage.subentityNames }
    /// The entity's version hash (see docs/schema.md).
    public var versionHash: VersionHash { storage.versionHash }
    private var slots: [String: Int] { storage.slots }

    init(
        name: String, parentName: String?, isAbstract: Bool, userInfo: [String: String], renamingIdentifier: String?,
        versionHashModifier: String?, uniquenessConstraints: [[String]], indexes: [IndexDescription],
        properties: [PropertyDescription], inheritedPropertyCount: Int, fetchedProperties: [FetchedPropertyDescription],
        ancestorNames: [String], subentityNames: [String]
    ) {
        var slots: [String: Int] = [:]
        for (index, property) in properties.enumerated() { slots[property.name] = index }
        var encoder = CanonicalEncoder()
        encoder.field("entity")
        encoder.field(name)
        encoder.field(parentName ?? "")
        encoder.field(isAbstract)
        encoder.field(versionHashModifier ?? "")
        for property in properties.sorted(by: { $0.name < $1.name }) {
            encoder.field(property.versionHash.bytes)
        }
        storage = Storage(
            name: name, parentName: parentName, isAbstract: isAbstract, userInfo: userInfo, renamingIdentifier: renamingIdentifier,
            versionHashModifier: versionHashModifier, uniquenessConstraints: uniquenessConstraints, indexes: indexes,
            properties: properties, inheritedPropertyCount: inheritedPropertyCount, fetchedProperties: fetchedProperties,
            ancestorNames: ancestorNames, subentityNames: subentityNames, versionHash: encoder.digest, slots: slots)
    }

    /// Entities are equal when every part of their description is.
    public static func == (a: EntityDescription, b: EntityDescription) -> Bool {
        if a.storage === b.storage { return true }
        let x = a.storage, y = b.storage
        return x.name == y.name && x.parentName == y.parentName && x.isAbstract == y.isAbstract && x.userInfo == y.userInfo
            && x.renamingIdentifier == y.renamingIdentifier && x.versionHashModifier == y.versionHashModifier
            && x.uniquenessConstraints == y.uniquenessConstraints && x.indexes == y.indexes && x.properties == y.properties
            && x.inheritedPropertyCount == y.inheritedPropertyCount && x.fetchedProperties == y.fetchedProperties
            && x.ancestorNames == y.ancestorNames && x.subentityNames == y.subentityNames && x.versionHash == y.versionHash
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.name)
        hasher.combine(storage.versionHash)
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

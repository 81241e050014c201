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
        /// The relationships among `properties` (a delete walks them for every object).
        let relationships: [RelationshipDescription]
        let inheritedPropertyCount: Int
        let fetchedProperties: [FetchedPropertyDescription]
        let ancestorNames: [String]
        let subentityNames: [String]
        let versionHash: VersionHash
        let kinds: [SlotKind]
        /// Each slot's attribute type (nil for a relationship).
        let attributeTypes: [AttributeType?]
        let saveChecks: [SaveCheck]
        /// Slots stores do not write (transient and derived attributes, transient
        /// relationships and those derived from their inverse): rows hold their initial values.
        let unstoredSlots: [Int]
        /// Per slot, whether it is a to-many relationship derived from its inverse.
        let derivedToMany: [Bool]
        /// The others, in order; and the attributes that keep their value in a deletion's
        /// history record (`preserveValueOnDeletion`).
        let storedSlots: [Int]
        let preservedSlots: [Int]
        /// The slots its own and its ancestors' uniqueness constraints name, ascending.
        let constrainedSlots: [Int]
        /// Slot numbers by ``NameTable/hash(_:)`` of the property's name, open addressing
        /// (-1: empty); the names in slot order, to confirm a hit.
        let nameTable: [Int32]
        let names: [String]

        init(name: String, parentName: String?, isAbstract: Bool, userInfo: [String: String], renamingIdentifier: String?,
             versionHashModifier: String?, uniquenessConstraints: [[String]], indexes: [IndexDescription],
             properties: [PropertyDescription], inheritedPropertyCount: Int, fetchedProperties: [FetchedPropertyDescription],
             ancestorNames: [String], subentityNames: [String], inheritedUniquenessConstraints: [[String]], versionHash: VersionHash) {
            self.name = name
            self.parentName = parentName
            self.isAbstract = isAbstract
            self.userInfo = userInfo
            self.renamingIdentifier = renamingIdentifier
            self.versionHashModifier = versionHashModifier
            self.uniquenessConstraints = uniquenessConstraints
            self.indexes = indexes
            self.properties = properties
            self.relationships = properties.compactMap(\.relationship)
            self.inheritedPropertyCount = inheritedPropertyCount
            self.fetchedProperties = fetchedProperties
            self.ancestorNames = ancestorNames
            self.subentityNames = subentityNames
            self.versionHash = versionHash
            self.names = properties.map(\.name)
            var size = 8
            while size < properties.count * 4 { size *= 2 }
            var table = [Int32](repeating: -1, count: size)
            for (index, property) in properties.enumerated() {
                var position = NameTable.hash(property.name) & (size - 1)
                while table[position] >= 0 { position = (position + 1) & (size - 1) }
                table[position] = Int32(index)
            }
            self.nameTable = table
            self.kinds = properties.map { property in
                switch property {
                case .attribute(let attribute): return attribute.isDerived ? .derivedAttribute : .attribute
                case .relationship(let relationship): return relationship.isToMany ? .toMany : .toOne
                }
            }
            self.attributeTypes = properties.map { $0.attribute?.type }
            self.derivedToMany = properties.map { $0.relationship.map { $0.isToMany && $0.isDerivedFromInverse } ?? false }
            self.unstoredSlots = properties.indices.filter { index in
                switch properties[index] {
                case .attribute(let attribute): return !attribute.isStored
                case .relationship(let relationship): return relationship.isTransient || relationship.isDerivedFromInverse
                }
            }
            let unstored = Set(self.unstoredSlots)
            self.storedSlots = properties.indices.filter { !unstored.contains($0) }
            self.preservedSlots = properties.indices.filter { properties[$0].attribute?.preservesValueOnDeletion == true }
            let names = self.names
            self.constrainedSlots = Set((uniquenessConstraints + inheritedUniquenessConstraints).joined().compactMap { names.firstIndex(of: $0) }).sorted()
            self.saveChecks = properties.enumerated().compactMap { index, property in
                switch property {
                case .attribute(let attribute):
                    guard !attribute.isDerived else { return nil }
                    return SaveCheck(slot: index, name: attribute.name, isOptional: attribute.isOptional,
                                     rules: attribute.validation.isEmpty ? nil : attribute.validation, relationship: nil)
                case .relationship(let relationship):
                    return SaveCheck(slot: index, name: relationship.name, isOptional: relationship.isOptional, rules: nil,
                                     relationship: (relationship.isToMany, relationship.minCount, relationship.maxCount))
                }
            }
        }
    }

    /// What a save checks of one stored or transient property of every changed object, made
    /// once per entity: copying each property's description per object was a tenth of an
    /// import's work.
    /// A class, so walking an entity's checks at every save retains one reference per
    /// check instead of copying its name and rules.
    package final class SaveCheck: Sendable {
        package let slot: Int
        package let name: String
        package let isOptional: Bool
        /// The attribute's rules, `nil` when it has none (or is a relationship).
        package let rules: ValidationRules?
        /// A relationship's cardinality; `nil` for an attribute.
        package let relationship: (isToMany: Bool, minCount: Int?, maxCount: Int?)?
        /// The attribute's broken rules for a value (the rules read where they are kept:
        /// binding them to a variable copied every field at each check).
        package func ruleFailures(for value: Value, clock: MatchClock) -> [ValidationRules.RuleFailure] {
            rules?.failures(for: value, clock: clock) ?? []
        }

        init(slot: Int, name: String, isOptional: Bool, rules: ValidationRules?, relationship: (isToMany: Bool, minCount: Int?, maxCount: Int?)?) {
            self.slot = slot
            self.name = name
            self.isOptional = isOptional
            self.rules = rules
            self.relationship = relationship
        }
    }

    /// The checks of ``SaveCheck``, in slot order (derived attributes have none).
    package var saveChecks: [SaveCheck] { storage.saveChecks }

    /// The slots stores do not write (transient and derived attributes, derived and transient
    /// relationships), in order: a saved row holds their initial values.
    package var unstoredSlots: [Int] { storage.unstoredSlots }

    /// Whether the slot holds a to-many relationship derived from its inverse (nothing is
    /// stored in it; its objects are looked up): worked out once, asked on every read of a
    /// to-many slot.
    package func isDerivedToMany(slot index: Int) -> Bool {
        index >= 0 && index < storage.derivedToMany.count && storage.derivedToMany[index]
    }

    /// The slots stores write, in order.
    package var storedSlots: [Int] { storage.storedSlots }

    /// The attributes whose values a deletion's history record keeps, in slot order.
    package var preservedSlots: [Int] { storage.preservedSlots }

    /// The slots that its own and its ancestors' uniqueness constraints name, ascending (an
    /// ancestor's slot is the same in every descendant). A save checks an updated object's
    /// uniqueness only when one of them changed.
    package var constrainedSlots: [Int] { storage.constrainedSlots }

    /// What a slot holds, without copying its property's description.
    package enum SlotKind: Sendable {
        case attribute, derivedAttribute, toOne, toMany
    }

    /// The type of the attribute in a slot, nil for a relationship's (without copying the
    /// attribute's description).
    package func attributeType(ofSlot index: Int) -> AttributeType? { storage.attributeTypes[index] }

    /// How many slots (properties) the entity has.
    package var slotCount: Int { storage.kinds.count }

    /// The identity of this description (shared by its copies): a cheap cache key.
    package var identity: ObjectIdentifier { ObjectIdentifier(storage) }

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
    /// The entity's version hash (see ObjectStore's Schema guide).
    public var versionHash: VersionHash { storage.versionHash }

    init(
        name: String, parentName: String?, isAbstract: Bool, userInfo: [String: String], renamingIdentifier: String?,
        versionHashModifier: String?, uniquenessConstraints: [[String]], indexes: [IndexDescription],
        properties: [PropertyDescription], inheritedPropertyCount: Int, fetchedProperties: [FetchedPropertyDescription],
        ancestorNames: [String], subentityNames: [String], inheritedUniquenessConstraints: [[String]]
    ) {
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
            ancestorNames: ancestorNames, subentityNames: subentityNames,
            inheritedUniquenessConstraints: inheritedUniquenessConstraints, versionHash: encoder.digest)
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
        // Every value read and written by key asks this: a few bytes hashed and one name
        // compared, not SipHash over the name and a dictionary probe.
        let table = storage.nameTable
        let mask = table.count - 1
        var position = NameTable.hash(propertyName) & mask
        while true {
            let slot = Int(table[position])
            if slot < 0 { return nil }
            if storage.names[slot] == propertyName { return slot }
            position = (position + 1) & mask
        }
    }

    /// The property named `name` (attribute or relationship).
    public func property(named name: String) -> PropertyDescription? {
        slot(of: name).map { properties[$0] }
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
    public var relationships: [RelationshipDescription] { storage.relationships }

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

/// The hash of property names for ``EntityDescription/slot(of:)``: FNV-1a over the UTF-8
/// bytes (names are short; no per-process seed is needed for a table of one entity's names;
/// measured, this beat iterating `utf8` or reading its count, first and last byte).
enum NameTable {
    static func hash(_ name: String) -> Int {
        var name = name
        return name.withUTF8 { bytes in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return Int(truncatingIfNeeded: hash ^ (hash >> 29))
        }
    }
}

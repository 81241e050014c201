import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// The typed property wrappers, as reflection sees them.
protocol TypedPropertyWrapper {
    var site: PropertySite { get }
    var declaration: TypedPropertyRegistry.Declaration { get }
}

/// Ties typed property wrappers to property names, and checks a class against its entity.
///
/// A property wrapper does not know the name of the property it wraps. Each wrapper records
/// where it was declared (file, line, column, from default arguments); reflecting one
/// instance of a class once maps those sites to the property names (`_text` -> `text`).
enum TypedPropertyRegistry {
    enum Declaration {
        case attribute(Set<AttributeType>, acceptsNull: Bool)
        case derived(Set<AttributeType>)
        case relationship(toMany: Bool, destination: ManagedObject.Type)
    }

    /// Property names by class and declaration site, found once per class by reflection.
    private static let cache = Locked([ObjectIdentifier: [PropertySite: String]]())

    /// The property name of a wrapper declared at `site` in `object`'s class.
    static func key(for site: PropertySite, in object: ManagedObject) -> String {
        if let key = site.key { return key }
        let type = ObjectIdentifier(Swift.type(of: object))
        if let name = cache.withLock({ $0[type]?[site] }) { return name }
        var names: [PropertySite: String] = [:]
        for (name, wrapper) in declarations(of: object) { names[wrapper.site] = name }
        cache.withLock { $0[type] = names }
        return names[site] ?? "?"
    }

    /// Every typed property of an object's class and superclasses, by property name.
    static func declarations(of object: ManagedObject) -> [(String, any TypedPropertyWrapper)] {
        var result: [(String, any TypedPropertyWrapper)] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            for child in current.children {
                guard let label = child.label, label.hasPrefix("_"), let wrapper = child.value as? any TypedPropertyWrapper else { continue }
                result.append((wrapper.site.key ?? String(label.dropFirst()), wrapper))
            }
            mirror = current.superclassMirror
        }
        return result
    }

    /// Problems that make a class unfit for an entity: unknown names, wrong types or
    /// optionality, relationships of the wrong cardinality.
    static func check(_ type: ManagedObject.Type, against entity: EntityDescription) -> [String] {
        let prototype = type.init(entity: entity, objectID: ObjectID(entityName: entity.name, storeIdentifier: "", key: .temporary(TemporaryID.next())))
        var problems: [String] = []
        for (name, wrapper) in declarations(of: prototype) {
            guard let property = entity.property(named: name) else {
                problems.append("\(entity.name) has no property '\(name)'\(NameSuggestion.hint(for: name, in: entity.properties.map(\.name)))")
                continue
            }
            switch (wrapper.declaration, property) {
            case (.attribute(let types, let acceptsNull), .attribute(let attribute)):
                if attribute.isDerived {
                    problems.append("\(name) is derived: declare it with @Derived")
                } else if !types.contains(attribute.type) {
                    problems.append("\(name) is a \(attribute.type.rawValue) attribute; the Swift type does not hold it")
                } else if attribute.isOptional && !acceptsNull && attribute.defaultValue.isNull {
                    problems.append("\(name) is optional with no default: declare it as an optional Swift type")
                }
            case (.derived(let types), .attribute(let attribute)):
                if !attribute.isDerived {
                    problems.append("\(name) is not derived: declare it with @Attribute")
                } else if !types.contains(attribute.type) {
                    problems.append("\(name) is a \(attribute.type.rawValue) attribute; the Swift type does not hold it")
                }
            case (.relationship(let toMany, _), .relationship(let relationship)):
                if toMany != relationship.isToMany {
                    problems.append("\(name) is a \(relationship.isToMany ? "to-many" : "to-one") relationship: declare it as \(relationship.isToMany ? "[\(relationship.destinationEntityName)]" : "\(relationship.destinationEntityName)?")")
                }
            case (.relationship, .attribute):
                problems.append("\(name) is an attribute: declare it with @Attribute")
            case (_, .relationship):
                problems.append("\(name) is a relationship: declare it with @Relationship")
            }
        }
        return problems
    }
}

/// Where a typed property was declared: the key that ties a wrapper instance to its
/// property name, found once per class by reflection.
struct PropertySite: Hashable, Sendable {
    var key: String?
    var file: String
    var line: UInt
    var column: UInt
}

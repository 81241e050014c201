import ObjectStoreModel
import ObjectStoreStorage

/// A typed attribute property of a ``ManagedObject`` subclass, without macros.
///
/// ```swift
/// final class Task: ManagedObject {
///     @Attribute var text: String
///     @Attribute var priority: Int16
///     @Attribute var dueDate: Date?
///     @Derived var isOverdue: Bool?
///     @Relationship var location: Location?
/// }
/// try coordinator.register(Task.self, forEntityName: "Task")
/// let task = try context.insert(Task.self)
/// task.priority = 3
/// ```
///
/// The property's name is the attribute's name (pass one to `@Attribute("name")` to differ).
/// Registration checks every typed property against the entity: the name must exist and the
/// Swift type must suit the attribute type and optionality.
@propertyWrapper
public struct Attribute<T: AttributeValue>: TypedPropertyWrapper {
    let site: PropertySite
    var declaration: TypedPropertyRegistry.Declaration { .attribute(T.compatibleTypes, acceptsNull: T.acceptsNull) }

    /// A typed property; `key` names the model's property when the Swift name differs (the
    /// other parameters are where the property is declared, filled in by the compiler: they
    /// tie the wrapper to its property's name).
    public init(_ key: String? = nil, file: StaticString = #fileID, line: UInt = #line, column: UInt = #column) {
        site = PropertySite(key: key, file: "\(file)", line: line, column: column)
    }

    @available(*, unavailable, message: "@Attribute is only available on ManagedObject subclasses")
    public var wrappedValue: T {
        get { T.placeholder }
        set {}  // swiftlint:disable:this unused_setter_value
    }

    public static subscript<Owner: ManagedObject>(
        _enclosingInstance object: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, T>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, Attribute<T>>
    ) -> T {
        get {
            let key = TypedPropertyRegistry.key(for: object[keyPath: storageKeyPath].site, in: object)
            // A getter cannot throw: the error (a deleted row, say) goes to lastAccessError.
            guard let value = object.recordAccessError({ try object.value(forKey: key) }) else { return T.placeholder }
            // A value that fits but is not one of T (JSON that does not decode) says why.
            if let decoded = object.recordAccessError({ try T.decoding(value) }) {
                if let typed = decoded { return typed }
            } else {
                return T.placeholder
            }
            // A non-optional Swift property of an optional attribute with a default (as the
            // plugin writes one) reads a stored nil as the default.
            if value.isNull, let fallback = object.entity.attribute(named: key).flatMap({ T(storedValue: $0.defaultValue) }) { return fallback }
            return T.placeholder
        }
        set {
            let key = TypedPropertyRegistry.key(for: object[keyPath: storageKeyPath].site, in: object)
            object.recordAccessError {
                let type = object.entity.attribute(named: key)?.type ?? .string
                try object.setValue(try newValue.encodedValue(as: type), forKey: key)
            }
        }
    }
}

/// A read-only typed property for a derived attribute.
@propertyWrapper
public struct Derived<T: AttributeValue>: TypedPropertyWrapper {
    let site: PropertySite
    var declaration: TypedPropertyRegistry.Declaration { .derived(T.compatibleTypes) }

    /// A typed property; `key` names the model's property when the Swift name differs (the
    /// other parameters are where the property is declared, filled in by the compiler: they
    /// tie the wrapper to its property's name).
    public init(_ key: String? = nil, file: StaticString = #fileID, line: UInt = #line, column: UInt = #column) {
        site = PropertySite(key: key, file: "\(file)", line: line, column: column)
    }

    @available(*, unavailable, message: "@Derived is only available on ManagedObject subclasses")
    public var wrappedValue: T { T.placeholder }

    public static subscript<Owner: ManagedObject>(
        _enclosingInstance object: Owner,
        wrapped wrappedKeyPath: KeyPath<Owner, T>,
        storage storageKeyPath: KeyPath<Owner, Derived<T>>
    ) -> T {
        let key = TypedPropertyRegistry.key(for: object[keyPath: storageKeyPath].site, in: object)
        guard let value = object.recordAccessError({ try object.value(forKey: key) }) else { return T.placeholder }
        return (object.recordAccessError { try T.decoding(value) } ?? nil) ?? T.placeholder
    }
}

/// A Swift type a typed relationship property can have: `Destination?` for to-one,
/// `[Destination]` for to-many.
public protocol RelationshipValue {
    /// Whether the relationship is to-many.
    static var isToMany: Bool { get }
    /// nil for to-one, `[]` for to-many.
    static var empty: Self { get }
    /// The class of the objects related.
    static var destinationClass: ManagedObject.Type { get }
    /// The value holding `objects`, or nil when one is not of the destination class.
    init?(objects: [ManagedObject])
    /// The objects the value holds.
    var objects: [ManagedObject] { get }
}

extension Optional: RelationshipValue where Wrapped: ManagedObject {
    public static var isToMany: Bool { false }
    public static var empty: Wrapped? { nil }
    public static var destinationClass: ManagedObject.Type { Wrapped.self }
    public init?(objects: [ManagedObject]) {
        guard let first = objects.first else {
            self = .none
            return
        }
        guard let typed = first as? Wrapped else { return nil }
        self = .some(typed)
    }
    public var objects: [ManagedObject] { self.map { [$0] } ?? [] }
}

extension Array: RelationshipValue where Element: ManagedObject {
    public static var isToMany: Bool { true }
    public static var empty: [Element] { [] }
    public static var destinationClass: ManagedObject.Type { Element.self }
    public init?(objects: [ManagedObject]) {
        let typed = objects.compactMap { $0 as? Element }
        guard typed.count == objects.count else { return nil }
        self = typed
    }
    public var objects: [ManagedObject] { self }
}

/// A typed relationship property of a ``ManagedObject`` subclass: `Destination?` for a
/// to-one relationship, `[Destination]` for a to-many one. Setting it maintains inverses.
@propertyWrapper
public struct Relationship<T: RelationshipValue>: TypedPropertyWrapper {
    let site: PropertySite
    var declaration: TypedPropertyRegistry.Declaration { .relationship(toMany: T.isToMany, destination: T.destinationClass) }

    /// A typed property; `key` names the model's property when the Swift name differs (the
    /// other parameters are where the property is declared, filled in by the compiler: they
    /// tie the wrapper to its property's name).
    public init(_ key: String? = nil, file: StaticString = #fileID, line: UInt = #line, column: UInt = #column) {
        site = PropertySite(key: key, file: "\(file)", line: line, column: column)
    }

    @available(*, unavailable, message: "@Relationship is only available on ManagedObject subclasses")
    public var wrappedValue: T {
        get { T.empty }
        set {}  // swiftlint:disable:this unused_setter_value
    }

    public static subscript<Owner: ManagedObject>(
        _enclosingInstance object: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, T>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, Relationship<T>>
    ) -> T {
        get {
            let key = TypedPropertyRegistry.key(for: object[keyPath: storageKeyPath].site, in: object)
            let objects = object.recordAccessError {
                T.isToMany ? try object.objects(forKey: key) : try object.object(forKey: key).map { [$0] } ?? []
            }
            return T(objects: objects ?? []) ?? T.empty
        }
        set {
            let key = TypedPropertyRegistry.key(for: object[keyPath: storageKeyPath].site, in: object)
            object.recordAccessError {
                if T.isToMany {
                    try object.setObjects(newValue.objects, forKey: key)
                } else {
                    try object.setObject(newValue.objects.first, forKey: key)
                }
            }
        }
    }
}

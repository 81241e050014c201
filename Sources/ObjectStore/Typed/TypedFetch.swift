import Foundation
import ObjectStoreModel
import ObjectStoreStorage

extension ManagedObjectContext {
    /// The objects of a registered subclass's entity that match a predicate, as that class.
    ///
    /// ```swift
    /// let urgent = try context.fetch(TaskItem.self, where: "priority >= %d", 2, sortedBy: [SortKey("dueDate")])
    /// ```
    ///
    /// - Parameters:
    ///   - type: the registered subclass, whose entity is fetched.
    ///   - predicate: predicate text with `%@`/`%d`/`%K` placeholders for `arguments`; `nil`
    ///     for every object. Objects and object IDs are accepted as arguments
    ///     (`location == %@`), and arrays and sets of arguments as lists
    ///     (`ANY tags.name IN %@` with `["home", "shop"]`).
    ///   - arguments: the values of the placeholders, in order.
    ///   - sortKeys: the order of the results.
    ///   - limit: the most objects returned (`0`: all).
    /// - Throws: `ObjectStoreError.unregisteredClass(_:)` for a class no entity was
    ///   registered with; syntax, type and store errors.
    public func fetch<T: ManagedObject>(_ type: T.Type, where predicate: String? = nil, _ arguments: any PredicateArgument..., sortedBy sortKeys: [SortKey] = [], limit: Int = 0) throws -> [T] {
        guard let name = coordinator.entityName(for: type) else { throw ObjectStoreError.unregisteredClass(String(describing: type)) }
        var request = FetchRequest(entityName: name, sortDescriptors: sortKeys)
        if let predicate {
            request.predicate = try ObjectPredicate.parsing(predicate, arguments)
        }
        request.fetchLimit = limit
        return try fetch(request).compactMap { $0 as? T }
    }
}

/// A Swift value a predicate's `%@` or `%d` (or a template's `$VARIABLE`) can stand for: the
/// attribute types' Swift values, `Value`, objects (``ManagedObject``, `ObjectID`), which
/// compare as their ID's URI, and arrays and sets of them, which stand for a constant list.
///
/// ```swift
/// let tagged = try context.fetch(Note.self, where: "ANY tags.name IN %@", ["home", "shop"])
/// ```
public protocol PredicateArgument {
    /// The value the predicate compares with (`.null` for a list, which has none).
    var predicateValue: Value { get }
    /// What a placeholder stands for: ``predicateValue``, or the list of an array or set.
    var placeholderValue: PlaceholderValue { get }
}

extension PredicateArgument {
    public var placeholderValue: PlaceholderValue { .value(predicateValue) }
}

extension Array: PredicateArgument where Element: PredicateArgument {
    public var predicateValue: Value { .null }
    /// The elements' values in order (a list among them adds its values).
    public var placeholderValue: PlaceholderValue { .list(flatMap(\.placeholderValue.values)) }
}

extension Set: PredicateArgument where Element: PredicateArgument {
    public var predicateValue: Value { .null }
    /// The elements' values, ordered by their text (a set has no order of its own, and a
    /// predicate's text should not change from one run to the next).
    public var placeholderValue: PlaceholderValue {
        .list(flatMap(\.placeholderValue.values).map { ("\($0)", $0) }.sorted { $0.0 < $1.0 }.map(\.1))
    }
}

extension PlaceholderValue {
    /// The values it stands for: one, or the list's.
    var values: [Value] {
        switch self {
        case .value(let value): return [value]
        case .list(let values): return values
        }
    }
}

extension Value: PredicateArgument {
    public var predicateValue: Value { self }
}

extension ObjectID: PredicateArgument {
    public var predicateValue: Value { .uri(uriRepresentation) }
}

extension ManagedObject: PredicateArgument {
    public var predicateValue: Value { .uri(objectID.uriRepresentation) }
}

extension String: PredicateArgument { public var predicateValue: Value { .string(self) } }
extension Int: PredicateArgument { public var predicateValue: Value { .integer(Int64(self)) } }
extension Int64: PredicateArgument { public var predicateValue: Value { .integer(self) } }
extension Int32: PredicateArgument { public var predicateValue: Value { .integer(Int64(self)) } }
extension Int16: PredicateArgument { public var predicateValue: Value { .integer(Int64(self)) } }
extension Double: PredicateArgument { public var predicateValue: Value { .double(self) } }
extension Bool: PredicateArgument { public var predicateValue: Value { .bool(self) } }
extension Decimal: PredicateArgument { public var predicateValue: Value { .decimal(self) } }
extension Date: PredicateArgument { public var predicateValue: Value { .date(self) } }
extension UUID: PredicateArgument { public var predicateValue: Value { .uuid(self) } }

extension ManagedObject {
    /// Sets an attribute from a Swift value (`String`, `Int16`, `Date?`, ...), without
    /// wrapping it in a `Value`.
    ///
    /// ```swift
    /// let title: String = readLine() ?? ""
    /// try task.setValue(title, forKey: "title")
    /// ```
    public func setValue<T: AttributeValue>(_ value: T, forKey key: String) throws {
        try setValue(value.storedValue, forKey: key)
    }
}

extension FetchRequest {
    /// A request from a model's fetch request template, with its `$VARIABLES` substituted by
    /// Swift values, arrays and sets among them (`name IN $NAMES`).
    ///
    /// ```swift
    /// let request = try FetchRequest(template: "tasksAt", in: model, arguments: ["PLACES": ["Home", "Office"]])
    /// ```
    ///
    /// - Throws: as ``init(template:in:variables:)``.
    public init(template name: String, in model: ManagedObjectModel, arguments: [String: any PredicateArgument]) throws {
        try self.init(template: name, in: model, placeholders: arguments.mapValues(\.placeholderValue))
    }
}

extension ObjectPredicate {
    /// Parses predicate text with Swift values as format arguments, as
    /// ``ManagedObjectContext/fetch(_:where:_:sortedBy:limit:)`` takes them: values,
    /// objects and object IDs, arrays and sets of them for `IN %@`.
    ///
    /// ```swift
    /// let predicate = try ObjectPredicate(format: "priority >= %d AND location IN %@", 2, [home, office])
    /// ```
    public init(format: String, _ arguments: any PredicateArgument...) throws(PredicateSyntaxError) {
        self = try Self.parsing(format, arguments)
    }

    /// Predicate text with Swift arguments (what every typed API's `where:` takes).
    static func parsing(_ format: String, _ arguments: [any PredicateArgument]) throws(PredicateSyntaxError) -> ObjectPredicate {
        try ObjectPredicate(format: format, placeholders: arguments.map(\.placeholderValue))
    }
}

/// A fetch request whose results are objects of a registered subclass, as Core Data's
/// `NSFetchRequest<ResultType>`: fetched, counted and kept (it is a value) as such.
///
/// ```swift
/// let urgent = try TypedFetchRequest(Note.self, where: "priority >= %d", 2, sortedBy: [SortKey("title")])
/// let notes: [Note] = try context.fetch(urgent)
/// let howMany = try context.count(for: urgent)
/// ```
public struct TypedFetchRequest<Object: ManagedObject>: Sendable, Hashable {
    /// Which objects match (all when nil).
    public var predicate: ObjectPredicate?
    /// The order of the results.
    public var sortDescriptors: [SortKey]
    /// How many matches to skip.
    public var fetchOffset = 0
    /// The most objects returned (`0`: all).
    public var fetchLimit: Int
    /// Whether objects of the entity's sub-entities match too.
    public var includesSubentities = true
    /// Whether the context's unsaved changes count.
    public var includesPendingChanges = true

    /// A request for the objects of `type`'s entity (the entity it was registered for).
    ///
    /// - Parameters:
    ///   - type: the registered subclass.
    ///   - predicate: predicate text with `%@`/`%d`/`%K` placeholders; `nil` for every object.
    ///   - arguments: the values of the placeholders, in order (as for
    ///     ``ManagedObjectContext/fetch(_:where:_:sortedBy:limit:)``).
    ///   - sortKeys: the order of the results.
    ///   - limit: the most objects returned (`0`: all).
    /// - Throws: `PredicateSyntaxError` for predicate text that does not parse.
    public init(_ type: Object.Type, where predicate: String? = nil, _ arguments: any PredicateArgument..., sortedBy sortKeys: [SortKey] = [], limit: Int = 0) throws {
        self.predicate = try predicate.map { try ObjectPredicate.parsing($0, arguments) }
        self.sortDescriptors = sortKeys
        self.fetchLimit = limit
    }

    /// The untyped request for `entityName`.
    func request(entityName: String) -> FetchRequest {
        var request = FetchRequest(entityName: entityName, predicate: predicate, sortDescriptors: sortDescriptors)
        request.fetchOffset = fetchOffset
        request.fetchLimit = fetchLimit
        request.includesSubentities = includesSubentities
        request.includesPendingChanges = includesPendingChanges
        return request
    }
}

extension ManagedObjectContext {
    /// The entity a registered subclass stands for.
    private func entityName<T: ManagedObject>(of type: T.Type) throws -> String {
        guard let name = coordinator.entityName(for: type) else { throw ObjectStoreError.unregisteredClass(String(describing: type)) }
        return name
    }

    /// The objects a typed request matches, as its class.
    ///
    /// - Throws: `ObjectStoreError.unregisteredClass(_:)`; type and store errors.
    public func fetch<T: ManagedObject>(_ request: TypedFetchRequest<T>) throws -> [T] {
        try fetch(request.request(entityName: entityName(of: T.self))).compactMap { $0 as? T }
    }

    /// How many objects a typed request matches (its offset and limit apply).
    ///
    /// - Throws: `ObjectStoreError.unregisteredClass(_:)`; type and store errors.
    public func count<T: ManagedObject>(for request: TypedFetchRequest<T>) throws -> Int {
        try count(for: request.request(entityName: entityName(of: T.self)))
    }

    /// How many objects of a registered subclass's entity match a predicate.
    ///
    /// ```swift
    /// let open = try context.count(Note.self, where: "done == NO")
    /// ```
    ///
    /// - Parameters:
    ///   - type: the registered subclass.
    ///   - predicate: predicate text with placeholders for `arguments`; `nil` for every object.
    ///   - arguments: the values of the placeholders, in order.
    /// - Throws: `ObjectStoreError.unregisteredClass(_:)`; syntax, type and store errors.
    public func count<T: ManagedObject>(_ type: T.Type, where predicate: String? = nil, _ arguments: any PredicateArgument...) throws -> Int {
        var request = FetchRequest(entityName: try entityName(of: type))
        request.predicate = try predicate.map { try ObjectPredicate.parsing($0, arguments) }
        return try count(for: request)
    }

    /// The objects a model's fetch request template matches, as a registered subclass (the
    /// template's entity must be the class's, or one of its sub-entities').
    ///
    /// ```swift
    /// let soon = try context.fetch(Note.self, template: "notesDueBefore", arguments: ["DATE": friday])
    /// ```
    ///
    /// - Parameters:
    ///   - type: the registered subclass.
    ///   - name: the template's name in the model.
    ///   - arguments: values for the template's `$VARIABLES` (arrays and sets for lists).
    /// - Throws: `ObjectStoreError.unregisteredClass(_:)`,
    ///   `ObjectStoreError.unknownFetchRequestTemplate(_:suggestion:)`; store errors.
    public func fetch<T: ManagedObject>(_ type: T.Type, template name: String, arguments: [String: any PredicateArgument] = [:]) throws -> [T] {
        _ = try entityName(of: type)
        return try fetch(try FetchRequest(template: name, in: model, arguments: arguments)).compactMap { $0 as? T }
    }
}

/// A ``FetchedResultsController`` over a typed request: the same tracking, its objects as
/// the request's class.
///
/// ```swift
/// let controller = try TypedFetchedResultsController(TypedFetchRequest(Note.self, sortedBy: [SortKey("title")]), context: context)
/// try controller.performFetch()
/// let first: Note? = controller.fetchedObjects.first
/// ```
public final class TypedFetchedResultsController<Object: ManagedObject> {
    /// The untyped controller that does the tracking (its `onChange` reports changes).
    public let controller: FetchedResultsController

    /// Results of `request` in `context`, in sections by `sectionKeyPath`; call
    /// ``performFetch()``.
    ///
    /// - Throws: `ObjectStoreError.unregisteredClass(_:)` for a class no entity was
    ///   registered with.
    public init(_ request: TypedFetchRequest<Object>, context: ManagedObjectContext, sectionKeyPath: String? = nil) throws {
        guard let name = context.coordinator.entityName(for: Object.self) else { throw ObjectStoreError.unregisteredClass(String(describing: Object.self)) }
        controller = FetchedResultsController(request: request.request(entityName: name), context: context, sectionKeyPath: sectionKeyPath)
    }

    /// Fetches and starts tracking the context's changes.
    public func performFetch() throws { try controller.performFetch() }

    /// Called after the results changed because the context changed.
    public var onChange: ((FetchedResultsController.Change) -> Void)? {
        get { controller.onChange }
        set { controller.onChange = newValue }
    }

    /// Every fetched object, in section order.
    public var fetchedObjects: [Object] { controller.fetchedObjects.compactMap { $0 as? Object } }

    /// The sections: their names and objects.
    public var sections: [(name: String, objects: [Object])] {
        controller.sections.map { ($0.name, $0.objects.compactMap { $0 as? Object }) }
    }

    /// The object at a position.
    public func object(at indexPath: FetchedResultsController.IndexPath) -> Object? {
        controller.object(at: indexPath) as? Object
    }
}

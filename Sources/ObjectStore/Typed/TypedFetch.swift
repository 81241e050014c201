import Foundation
import ObjectStoreModel

extension ManagedObjectContext {
    /// The objects of a registered subclass's entity that match a predicate, as that class.
    ///
    /// ```swift
    /// let urgent = try context.fetch(TaskItem.self, where: "priority >= %d", 2, sortedBy: [SortKey("dueDate")])
    /// ```
    ///
    /// - Parameters:
    ///   - predicate: predicate text with `%@`/`%d`/`%K` placeholders for `arguments`; `nil`
    ///     for every object. Objects and object IDs are accepted as arguments
    ///     (`location == %@`).
    ///   - limit: the most objects returned (`0`: all).
    /// - Throws: ``ObjectStoreError/unregisteredClass(_:)`` for a class no entity was
    ///   registered with; syntax, type and store errors.
    public func fetch<T: ManagedObject>(_ type: T.Type, where predicate: String? = nil, _ arguments: any PredicateArgument..., sortedBy sortKeys: [SortKey] = [], limit: Int = 0) throws -> [T] {
        guard let name = coordinator.entityName(for: type) else { throw ObjectStoreError.unregisteredClass(String(describing: type)) }
        var request = FetchRequest(entityName: name, sortDescriptors: sortKeys)
        if let predicate {
            request.predicate = try ObjectPredicate(format: predicate, arguments: arguments.map(\.predicateValue))
        }
        request.fetchLimit = limit
        return try fetch(request).compactMap { $0 as? T }
    }
}

/// A Swift value a predicate's `%@` or `%d` can stand for: the attribute types' Swift
/// values, ``Value``, and objects (``ManagedObject``, ``ObjectID``), which compare as their
/// ID's URI.
public protocol PredicateArgument {
    /// The value the predicate compares with.
    var predicateValue: Value { get }
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
    /// wrapping it in a ``Value``.
    ///
    /// ```swift
    /// let title: String = readLine() ?? ""
    /// try task.setValue(title, forKey: "title")
    /// ```
    public func setValue<T: AttributeValue>(_ value: T, forKey key: String) throws {
        try setValue(value.storedValue, forKey: key)
    }
}

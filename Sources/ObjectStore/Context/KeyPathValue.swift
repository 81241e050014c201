import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// What a key path yields: one value, one object (or none), or a collection of either.
public enum KeyPathValue: CustomStringConvertible {
    /// An attribute's value.
    case value(Value)
    /// The object of a to-one relationship (or none).
    case object(ManagedObject?)
    /// The objects of a to-many relationship.
    case objects([ManagedObject])
    /// The values a key path through a to-many relationship collects.
    case values([Value])

    /// The single value, or `nil` for objects and collections.
    public var value: Value? {
        if case .value(let v) = self { return v }
        return nil
    }

    public var description: String {
        switch self {
        case .value(let v): return v.description
        case .object(let o): return o.map(\.description) ?? "nil"
        case .objects(let os): return "[" + os.map(\.description).joined(separator: ", ") + "]"
        case .values(let vs): return "[" + vs.map(\.description).joined(separator: ", ") + "]"
        }
    }
}

extension ManagedObject {
    /// Follows a dotted key path through relationships: `location.name`, `tasks.text` (a
    /// collection), and collection operators on to-many paths: `tasks.@count`,
    /// `tasks.@sum.priority`, `@avg`, `@min`, `@max`, `tasks.@distinctUnionOfObjects.priority`.
    /// Key paths are read exactly as predicates read them.
    ///
    /// ```swift
    /// try home.value(forKeyPath: "tasks.@count")          // .value(3)
    /// try task.value(forKeyPath: "location.name")         // .value("Home")
    /// ```
    public func value(forKeyPath keyPath: String) throws -> KeyPathValue {
        let context = try context()
        let cacheKey = entity.name + "|" + keyPath
        let reader: ExpressionClosure
        if let cached = context.compiledKeyPaths[cacheKey] {
            reader = cached
        } else {
            let expression: ObjectExpression
            do {
                expression = try ObjectExpression(keyPath)
            } catch {
                throw KeyPathError(path: keyPath, message: error.message)
            }
            guard case .keyPath = expression else { throw KeyPathError(path: keyPath, message: "not a key path") }
            reader = context.compiler.compile(expression, entity: entity)
            if context.compiledKeyPaths.count > 512 { context.compiledKeyPaths.removeAll() }
            context.compiledKeyPaths[cacheKey] = reader
        }
        let operand: Operand
        do {
            operand = try reader(self, context.evaluationScope(perQuery: false))
        } catch let error as PredicateEvaluationError {
            throw KeyPathError(path: keyPath, message: error.message)
        }
        switch operand {
        case .value(let v): return .value(v)
        case .object(let o): return .object(o)
        case .collection(let items):
            let objects = items.compactMap { item -> ManagedObject? in
                if case .object(let o?) = item { return o }
                return nil
            }
            return objects.count == items.count && !items.isEmpty ? .objects(objects) : .values(items.map(\.sortValue))
        }
    }
}

/// A key path that cannot be followed.
public struct KeyPathError: Error, Sendable, CustomStringConvertible {
    /// The key path.
    public var path: String
    /// What is wrong with it.
    public var message: String
    public var description: String { "key path '\(path)': \(message)" }
}

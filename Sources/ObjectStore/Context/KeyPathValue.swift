import Foundation
import ObjectStoreModel

/// What a key path yields: one value, one object (or none), or a collection of either.
public enum KeyPathValue: CustomStringConvertible {
    case value(Value)
    case object(ManagedObject?)
    case objects([ManagedObject])
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
    ///
    /// ```swift
    /// try home.value(forKeyPath: "tasks.@count")          // .value(3)
    /// try task.value(forKeyPath: "location.name")         // .value("Home")
    /// ```
    public func value(forKeyPath keyPath: String) throws -> KeyPathValue {
        let components = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return try Self.follow(.object(self), components[...], path: keyPath)
    }

    private static func follow(_ current: KeyPathValue, _ components: ArraySlice<String>, path: String) throws -> KeyPathValue {
        guard let component = components.first else { return current }
        let rest = components.dropFirst()
        if component.hasPrefix("@") {
            let items: [ManagedObject]
            switch current {
            case .objects(let objects): items = objects
            case .values(let values): return try aggregate(component, values.map { .value($0) }, rest, path: path)
            default: throw KeyPathError(path: path, message: "\(component) needs a to-many key path before it")
            }
            let results = try items.map { try follow(.object($0), rest, path: path) }
            return try aggregate(component, results, rest, path: path, objects: items)
        }
        switch current {
        case .object(let object):
            guard let object else { return rest.isEmpty ? .value(.null) : try follow(.object(nil), rest, path: path) }
            return try follow(object.step(component), rest, path: path)
        case .objects(let objects):
            var values: [Value] = []
            var found: [ManagedObject] = []
            for object in objects {
                switch try object.step(component) {
                case .value(let v): values.append(v)
                case .object(let o): if let o { found.append(o) }
                case .objects(let os): found.append(contentsOf: os)
                case .values(let vs): values.append(contentsOf: vs)
                }
            }
            return try follow(found.isEmpty && !values.isEmpty ? .values(values) : (values.isEmpty ? .objects(found) : .values(values)), rest, path: path)
        case .value, .values:
            throw KeyPathError(path: path, message: "'\(component)' follows an attribute; only relationships can be followed")
        }
    }

    private func step(_ key: String) throws -> KeyPathValue {
        let index = try slotIndex(key)
        switch entity.properties[index] {
        case .attribute: return .value(try value(forKey: key))
        case .relationship(let r): return r.isToMany ? .objects(try objects(forKey: key)) : .object(try object(forKey: key))
        }
    }

    private static func aggregate(_ op: String, _ results: [KeyPathValue], _ rest: ArraySlice<String>, path: String, objects: [ManagedObject] = []) throws -> KeyPathValue {
        if op == "@count" { return .value(.integer(Int64(objects.isEmpty ? results.count : objects.count))) }
        let values: [Value] = results.compactMap(\.value).filter { !$0.isNull }
        switch op {
        case "@sum", "@avg":
            var integerSum: Int64 = 0
            var decimalSum = Decimal(0)
            var allIntegers = true
            var anyDecimal = false
            var doubleSum = 0.0
            for value in values {
                switch value {
                case .integer(let i):
                    let (sum, overflow) = integerSum.addingReportingOverflow(i)
                    if overflow { allIntegers = false } else { integerSum = sum }
                    decimalSum += Decimal(i)
                    doubleSum += Double(i)
                case .double(let d):
                    allIntegers = false
                    doubleSum += d
                    decimalSum += Decimal(d)
                case .decimal(let d):
                    allIntegers = false
                    anyDecimal = true
                    decimalSum += d
                    doubleSum += value.doubleValue ?? 0
                default:
                    throw KeyPathError(path: path, message: "\(op) needs numbers, found a \(value.typeName)")
                }
            }
            if op == "@sum" {
                if allIntegers { return .value(.integer(integerSum)) }
                return .value(anyDecimal ? .decimal(decimalSum) : .double(doubleSum))
            }
            guard !values.isEmpty else { return .value(.null) }
            return .value(anyDecimal ? .decimal(decimalSum / Decimal(values.count)) : .double(doubleSum / Double(values.count)))
        case "@min", "@max":
            var best: Value?
            for value in values {
                guard let current = best else {
                    best = value
                    continue
                }
                guard let order = value.compare(to: current) else {
                    throw KeyPathError(path: path, message: "\(op) cannot compare a \(value.typeName) with a \(current.typeName)")
                }
                if (op == "@min" && order == .orderedAscending) || (op == "@max" && order == .orderedDescending) { best = value }
            }
            return .value(best ?? .null)
        case "@distinctUnionOfObjects":
            if rest.isEmpty && !objects.isEmpty {
                var seen = Set<ObjectID>()
                return .objects(objects.filter { seen.insert($0.objectID).inserted })
            }
            var seen = Set<Value>()
            return .values(values.filter { seen.insert($0).inserted })
        default:
            throw KeyPathError(path: path, message: "unknown collection operator \(op); known: @count, @sum, @avg, @min, @max, @distinctUnionOfObjects")
        }
    }
}

/// A key path that cannot be followed.
public struct KeyPathError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var message: String
    public var description: String { "key path '\(path)': \(message)" }
}

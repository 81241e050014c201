import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// What an expression evaluates to: a value, an object (or none), or a collection.
enum Operand {
    case value(Value)
    case object(ManagedObject?)
    case collection([Operand])

    static var null: Operand { .value(.null) }

    var isNull: Bool {
        switch self {
        case .value(let v): return v.isNull
        case .object(let o): return o == nil
        case .collection: return false
        }
    }

    var elements: [Operand]? {
        if case .collection(let items) = self { return items }
        return nil
    }

    var scalar: Value? {
        if case .value(let v) = self { return v }
        return nil
    }

    /// The value of a sort key or dictionary result: objects become their IDs' URIs.
    var sortValue: Value {
        switch self {
        case .value(let v): return v
        case .object(let o): return o.map { .uri($0.objectID.uriRepresentation) } ?? .null
        case .collection(let items): return .integer(Int64(items.count))
        }
    }
}

/// Variables and the clock an evaluation sees.
struct EvaluationScope {
    var now: Date
    var variables: [String: Operand] = [:]
    /// The time MATCHES may still take: one clock per scope, so per query (copies of the
    /// scope share it); nil where a scope is made per object (a derived attribute), whose
    /// MATCHES then has the bound of one value.
    var matchClock: MatchClock? = MatchClock()
}

/// A predicate or expression that could not be evaluated: a missing variable, a bad
/// argument to a function.
public struct PredicateEvaluationError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    public var description: String { message }
}

import Foundation

/// The functions predicate expressions may call, and `CAST` targets.
package enum PredicateFunctions {
    struct Signature {
        var name: String
        var arity: ClosedRange<Int>
        var arityDescription: String {
            arity.lowerBound == arity.upperBound
                ? "\(arity.lowerBound) argument\(arity.lowerBound == 1 ? "" : "s")"
                : arity.upperBound == Int.max ? "at least \(arity.lowerBound) argument\(arity.lowerBound == 1 ? "" : "s")" : "\(arity.lowerBound) to \(arity.upperBound) arguments"
        }
    }

    private static let table: [Signature] = [
        Signature(name: "now", arity: 0...0),
        Signature(name: "abs", arity: 1...1), Signature(name: "sqrt", arity: 1...1), Signature(name: "floor", arity: 1...1),
        Signature(name: "ceiling", arity: 1...1), Signature(name: "round", arity: 1...1), Signature(name: "trunc", arity: 1...1),
        Signature(name: "ln", arity: 1...1), Signature(name: "log", arity: 1...1), Signature(name: "exp", arity: 1...1),
        Signature(name: "min", arity: 1...Int.max), Signature(name: "max", arity: 1...Int.max), Signature(name: "sum", arity: 1...Int.max),
        Signature(name: "average", arity: 1...Int.max), Signature(name: "count", arity: 1...1),
        Signature(name: "lowercase", arity: 1...1), Signature(name: "uppercase", arity: 1...1), Signature(name: "length", arity: 1...1),
        Signature(name: "trim", arity: 1...1), Signature(name: "concat", arity: 1...Int.max),
        Signature(name: "daysFromNow", arity: 1...1), Signature(name: "startOfDay", arity: 1...1),
        Signature(name: "uuid", arity: 0...0), Signature(name: "coalesce", arity: 1...Int.max),
    ]

    /// Every function name, for error messages and ObjectStore's Predicates guide.
    public static var names: [String] { table.map(\.name) }

    static func signature(_ name: String) -> Signature? {
        table.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// `CAST(value, 'TYPE')` targets.
    public static let castTypes: Set<String> = ["NSDate", "NSNumber", "NSString", "NSDecimalNumber", "NSUUID", "NSURL", "NSData"]

    /// Core Data's reference date: `CAST(n, 'NSDate')` counts seconds from it.
    public static let referenceDate = Date(timeIntervalSinceReferenceDate: 0)
}

extension PredicateFunctions {
    /// Converts a value for `CAST(value, type)`; `nil` when it cannot be converted.
    public static func cast(_ value: Value, to type: String) -> Value? {
        if value.isNull { return .null }
        switch type {
        case "NSDate":
            switch value {
            case .date: return value
            case .string(let s): return ISO8601.parse(s).map(Value.date)
            default: return value.doubleValue.map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
            }
        case "NSNumber":
            switch value {
            case .integer, .double, .decimal: return value
            case .bool(let b): return .integer(b ? 1 : 0)
            case .date(let d): return .double(d.timeIntervalSinceReferenceDate)
            case .string(let s):
                if let i = Int64(s) { return .integer(i) }
                return Double(s).map(Value.double)
            default: return nil
            }
        case "NSString":
            if case .string = value { return value }
            if case .date(let d) = value { return .string(ISO8601.format(d)) }
            if case .uuid(let u) = value { return .string(u.uuidString) }
            if case .uri(let u) = value { return .string(u.absoluteString) }
            if case .decimal(let d) = value { return .string(d.description) }
            if case .integer(let i) = value { return .string(String(i)) }
            if case .double(let d) = value { return .string(String(d)) }
            if case .bool(let b) = value { return .string(b ? "true" : "false") }
            return nil
        case "NSDecimalNumber":
            if case .string(let s) = value { return DecimalText.parse(s).map(Value.decimal) }
            return value.decimalValue.map(Value.decimal)
        case "NSUUID":
            if case .uuid = value { return value }
            if case .string(let s) = value { return UUID(uuidString: s).map(Value.uuid) }
            return nil
        case "NSURL":
            if case .uri = value { return value }
            if case .string(let s) = value { return URL(string: s).map(Value.uri) }
            return nil
        case "NSData":
            if case .data = value { return value }
            if case .string(let s) = value { return Data(base64Encoded: s).map(Value.data) }
            return nil
        default:
            return nil
        }
    }
}

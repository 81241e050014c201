import Foundation

/// One attribute value: every type a schema can declare maps to one case.
///
/// Values are what contexts, stores and predicates pass around; attribute storage is an
/// array of `Value` slots per object, never a `[String: Any]`. A decimal never passes
/// through `Double`.
///
/// ```swift
/// let priority: Value = 3
/// let text: Value = "Buy milk"
/// priority.compare(to: .double(2.5))   // .orderedDescending
/// ```
public enum Value: Sendable, Hashable {
    /// No value.
    case null
    /// A boolean attribute's value.
    case bool(Bool)
    /// An integer attribute's value (16, 32 or 64 bits).
    case integer(Int64)
    /// A double or float attribute's value.
    case double(Double)
    /// A decimal attribute's value, never passed through a Double.
    case decimal(Decimal)
    /// A string attribute's value.
    case string(String)
    /// A date attribute's value.
    case date(Date)
    /// A binary attribute's value.
    case data(Data)
    /// A UUID attribute's value.
    case uuid(UUID)
    /// A URI attribute's value (and an object's ID, as its URI, in predicates).
    case uri(URL)

    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// A short name of the value's type for error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .integer: return "integer"
        case .double: return "double"
        case .decimal: return "decimal"
        case .string: return "string"
        case .date: return "date"
        case .data: return "binary"
        case .uuid: return "uuid"
        case .uri: return "uri"
        }
    }

    /// Whether the value is a number (integer, double or decimal).
    public var isNumber: Bool {
        switch self {
        case .integer, .double, .decimal: return true
        default: return false
        }
    }

    /// The value as a `Double`, for numbers.
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): return Double(i)
        case .double(let d): return d
        case .decimal(let d): return NSDecimalNumber(decimal: d).doubleValue
        default: return nil
        }
    }

    /// The text of a string value, else `nil`.
    ///
    /// ```swift
    /// let title = task["title"].stringValue ?? "untitled"
    /// ```
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The integer of an integer value, else `nil`.
    public var integerValue: Int64? {
        if case .integer(let i) = self { return i }
        return nil
    }

    /// The truth of a boolean value, else `nil`.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The date of a date value, else `nil`.
    public var dateValue: Date? {
        if case .date(let d) = self { return d }
        return nil
    }

    /// The bytes of a binary value, else `nil`.
    public var dataValue: Data? {
        if case .data(let d) = self { return d }
        return nil
    }

    /// The UUID of a UUID value, else `nil`.
    public var uuidValue: UUID? {
        if case .uuid(let u) = self { return u }
        return nil
    }

    /// The URL of a URI value, else `nil`.
    public var uriValue: URL? {
        if case .uri(let u) = self { return u }
        return nil
    }

    /// The value as a `Decimal`, for numbers; `nil` for doubles that are not finite.
    public var decimalValue: Decimal? {
        switch self {
        case .integer(let i): return Decimal(i)
        case .double(let d): return d.isFinite ? Decimal(d) : nil
        case .decimal(let d): return d
        default: return nil
        }
    }

    /// Whether the value can be stored in an attribute of `type` (null is always accepted here;
    /// optionality is a validation rule, checked at save).
    public func fits(_ type: AttributeType) -> Bool {
        switch (self, type) {
        case (.null, _): return true
        case (.integer(let i), _) where type.isInteger:
            return type.integerBounds?.contains(i) ?? false
        case (.double, .double), (.double, .float): return true
        case (.decimal, .decimal): return true
        case (.bool, .boolean), (.string, .string), (.date, .date), (.data, .binary), (.uuid, .uuid), (.uri, .uri):
            return true
        default:
            return false
        }
    }

    /// Orders two values of comparable kinds: numbers by value across integer, double and
    /// decimal; strings by their unicode scalars; dates, booleans (false < true), UUIDs and
    /// URIs by their natural order; data bytewise. Returns `nil` for values that have no common
    /// order (including any comparison with null).
    public func compare(to other: Value) -> ComparisonResult? {
        switch (self, other) {
        case (.integer(let a), .integer(let b)):
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        case (.decimal(let a), .decimal(let b)):
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        case (.integer, .decimal), (.decimal, .integer):
            guard let a = decimalValue, let b = other.decimalValue else { return nil }
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        case (.integer, .double), (.double, .integer), (.double, .double), (.double, .decimal), (.decimal, .double):
            guard let a = doubleValue, let b = other.doubleValue, !a.isNaN, !b.isNaN else { return nil }
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        case (.string(let a), .string(let b)):
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        case (.date(let a), .date(let b)):
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        case (.bool(let a), .bool(let b)):
            return a == b ? .orderedSame : (!a ? .orderedAscending : .orderedDescending)
        case (.uuid(let a), .uuid(let b)):
            // The order of their text (`uuidString`: the bytes in hexadecimal, in order), read
            // from the bytes without making the text.
            return withUnsafeBytes(of: a.uuid) { x in
                withUnsafeBytes(of: b.uuid) { y in
                    for i in 0..<16 where x[i] != y[i] { return x[i] < y[i] ? .orderedAscending : .orderedDescending }
                    return .orderedSame
                }
            }
        case (.uri(let a), .uri(let b)):
            return Value.string(a.absoluteString).compare(to: .string(b.absoluteString))
        case (.data(let a), .data(let b)):
            return a.lexicographicallyPrecedes(b) ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        default:
            return nil
        }
    }
}

extension Value: CustomStringConvertible {
    /// A readable rendering used in error messages: strings quoted, dates in ISO-8601.
    public var description: String {
        switch self {
        case .null: return "nil"
        case .bool(let b): return b ? "true" : "false"
        case .integer(let i): return String(i)
        case .double(let d): return String(d)
        case .decimal(let d): return d.description
        case .string(let s): return "\"\(s)\""
        case .date(let d): return ISO8601.format(d)
        case .data(let d): return "<\(d.count) bytes>"
        case .uuid(let u): return u.uuidString
        case .uri(let u): return u.absoluteString
        }
    }
}

extension Value: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
}

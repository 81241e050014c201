/// The type of an attribute, as written in a schema file.
///
/// Each type stores its values as one case of ``Value``: the three integer types as
/// ``Value/integer(_:)`` (checked against their bounds), `float` and `double` as
/// ``Value/double(_:)``.
public enum AttributeType: String, Sendable, CaseIterable, Codable {
    /// Integers of 16, 32 and 64 bits.
    case int16, int32, int64
    /// Floating-point numbers (a float is kept as a Double).
    case double, float
    /// Exact decimal numbers.
    case decimal
    /// Text.
    case string
    /// True or false.
    case boolean
    /// A point in time.
    case date
    /// Bytes.
    case binary
    /// A UUID.
    case uuid
    /// An absolute URL.
    case uri

    /// Whether values of this type are numbers (integers, floating point or decimal).
    public var isNumeric: Bool {
        switch self {
        case .int16, .int32, .int64, .double, .float, .decimal: return true
        default: return false
        }
    }

    /// Whether values of this type are integers.
    public var isInteger: Bool {
        switch self {
        case .int16, .int32, .int64: return true
        default: return false
        }
    }

    /// The range an integer type holds, `nil` for the other types.
    public var integerBounds: ClosedRange<Int64>? {
        switch self {
        case .int16: return Int64(Int16.min)...Int64(Int16.max)
        case .int32: return Int64(Int32.min)...Int64(Int32.max)
        case .int64: return Int64.min...Int64.max
        default: return nil
        }
    }

    /// Whether `min`/`max` validation rules apply to this type.
    public var isOrdered: Bool { isNumeric || self == .date }

    /// Whether `minLength`/`maxLength` validation rules apply to this type.
    public var hasLength: Bool { self == .string || self == .binary }
}

import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// A Swift type a typed attribute property can have (`String`, `Int16`, `Date?`, ...).
public protocol AttributeValue {
    /// The attribute types whose values convert to this type.
    static var compatibleTypes: Set<AttributeType> { get }
    /// Whether nil is representable (optional Swift types).
    static var acceptsNull: Bool { get }
    /// What a typed getter returns when the value cannot be read (the object was deleted by
    /// someone else); ``ManagedObject/value(forKey:)`` throws in that case instead.
    static var placeholder: Self { get }
    /// Converts a stored value, or returns `nil` when it does not fit.
    init?(storedValue: Value)
    /// The stored form of the value.
    var storedValue: Value { get }
    /// The value of a stored value: nil when it does not fit, an error saying why when it
    /// fits the attribute but is not a value of this type (a Codable value's JSON that does
    /// not decode, a raw value that is no case). Typed properties read through it.
    static func decoding(_ stored: Value) throws -> Self?
    /// The stored form for an attribute of `type`, or an error saying why there is none.
    /// Typed properties write through it.
    func encodedValue(as type: AttributeType) throws -> Value
}

extension AttributeValue {
    public static var acceptsNull: Bool { false }
    public static func decoding(_ stored: Value) throws -> Self? { Self(storedValue: stored) }
    public func encodedValue(as type: AttributeType) throws -> Value { storedValue }
}

extension String: AttributeValue {
    public static var compatibleTypes: Set<AttributeType> { [.string] }
    public static var placeholder: String { "" }
    public init?(storedValue: Value) {
        guard case .string(let s) = storedValue else { return nil }
        self = s
    }
    public var storedValue: Value { .string(self) }
}

extension Bool: AttributeValue {
    public static var compatibleTypes: Set<AttributeType> { [.boolean] }
    public static var placeholder: Bool { false }
    public init?(storedValue: Value) {
        guard case .bool(let b) = storedValue else { return nil }
        self = b
    }
    public var storedValue: Value { .bool(self) }
}

/// Integer Swift types map to the integer attribute types they can hold.
public protocol IntegerAttributeValue: AttributeValue, FixedWidthInteger {}

extension IntegerAttributeValue {
    public static var placeholder: Self { 0 }
    public init?(storedValue: Value) {
        guard case .integer(let i) = storedValue, let v = Self(exactly: i) else { return nil }
        self = v
    }
    public var storedValue: Value { .integer(Int64(self)) }
}

extension Int16: IntegerAttributeValue {
    public static var compatibleTypes: Set<AttributeType> { [.int16] }
}
extension Int32: IntegerAttributeValue {
    public static var compatibleTypes: Set<AttributeType> { [.int16, .int32] }
}
extension Int64: IntegerAttributeValue {
    public static var compatibleTypes: Set<AttributeType> { [.int16, .int32, .int64] }
}
extension Int: IntegerAttributeValue {
    public static var compatibleTypes: Set<AttributeType> { [.int16, .int32, .int64] }
}

extension Double: AttributeValue {
    public static var compatibleTypes: Set<AttributeType> { [.double, .float] }
    public static var placeholder: Double { 0 }
    public init?(storedValue: Value) {
        guard case .double(let d) = storedValue else { return nil }
        self = d
    }
    public var storedValue: Value { .double(self) }
}

extension Float: AttributeValue {
    public static var compatibleTypes: Set<AttributeType> { [.float] }
    public static var placeholder: Float { 0 }
    public init?(storedValue: Value) {
        guard case .double(let d) = storedValue else { return nil }
        self = Float(d)
    }
    public var storedValue: Value { .double(Double(self)) }
}

extension Decimal: AttributeValue {
    public static var compatibleTypes: Set<AttributeType> { [.decimal] }
    public static var placeholder: Decimal { 0 }
    public init?(storedValue: Value) {
        guard case .decimal(let d) = storedValue else { return nil }
        self = d
    }
    public var storedValue: Value { .decimal(self) }
}

extension Date: AttributeValue {
    public static var compatibleTypes: Set<AttributeType> { [.date] }
    public static var placeholder: Date { Date(timeIntervalSince1970: 0) }
    public init?(storedValue: Value) {
        guard case .date(let d) = storedValue else { return nil }
        self = d
    }
    public var storedValue: Value { .date(self) }
}

extension Data: AttributeValue {
    public static var compatibleTypes: Set<AttributeType> { [.binary] }
    public static var placeholder: Data { Data() }
    public init?(storedValue: Value) {
        guard case .data(let d) = storedValue else { return nil }
        self = d
    }
    public var storedValue: Value { .data(self) }
}

extension UUID: AttributeValue {
    public static var compatibleTypes: Set<AttributeType> { [.uuid] }
    public static var placeholder: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
    public init?(storedValue: Value) {
        guard case .uuid(let u) = storedValue else { return nil }
        self = u
    }
    public var storedValue: Value { .uuid(self) }
}

extension URL: AttributeValue {
    public static var compatibleTypes: Set<AttributeType> { [.uri] }
    public static var placeholder: URL { URL(fileURLWithPath: "/") }
    public init?(storedValue: Value) {
        guard case .uri(let u) = storedValue else { return nil }
        self = u
    }
    public var storedValue: Value { .uri(self) }
}

extension Optional: AttributeValue where Wrapped: AttributeValue {
    public static var compatibleTypes: Set<AttributeType> { Wrapped.compatibleTypes }
    public static var acceptsNull: Bool { true }
    public static var placeholder: Wrapped? { nil }
    public init?(storedValue: Value) {
        if storedValue.isNull {
            self = .none
            return
        }
        guard let wrapped = Wrapped(storedValue: storedValue) else { return nil }
        self = .some(wrapped)
    }
    public var storedValue: Value { self?.storedValue ?? .null }
    public static func decoding(_ stored: Value) throws -> Wrapped?? {
        if stored.isNull { return .some(.none) }
        return try Wrapped.decoding(stored).map { .some($0) }
    }
    public func encodedValue(as type: AttributeType) throws -> Value {
        guard let self else { return .null }
        return try self.encodedValue(as: type)
    }
}

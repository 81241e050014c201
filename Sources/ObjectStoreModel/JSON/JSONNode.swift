/// A parsed JSON value that remembers where it came from.
///
/// Schema files, mapping files and the JSON store are read through this type rather than
/// `JSONSerialization` because errors must name a line and column, object keys must keep
/// their order and duplicates must be noticed, and numbers must keep their exact text
/// (an `int64` default or a `decimal` must never pass through `Double`).
public struct JSONNode: Sendable, Equatable {
    /// The kinds of JSON value.
    public enum Kind: Sendable, Equatable {
        /// `null`.
        case null
        /// `true` or `false`.
        case bool(Bool)
        /// A number, kept as the exact text it was written with.
        case number(String)
        /// A string, unescaped.
        case string(String)
        /// An array's elements in order.
        case array([JSONNode])
        /// Members in the order they were written.
        case object([Member])
    }

    /// One `"key": value` pair of an object, with the position of its key.
    public struct Member: Sendable, Equatable {
        /// The member's key.
        public var key: String
        /// Where the key starts.
        public var keyLocation: SourceLocation
        /// The member's value.
        public var value: JSONNode
    }

    /// What the value is.
    public var kind: Kind
    /// Where the value starts in its text.
    public var location: SourceLocation

    /// A value at a location.
    public init(_ kind: Kind, at location: SourceLocation = SourceLocation(line: 0, column: 0)) {
        self.kind = kind
        self.location = location
    }

    /// The object's members, or `nil` when this is not an object.
    public var members: [Member]? {
        if case .object(let members) = kind { return members }
        return nil
    }

    /// The array's elements, or `nil` when this is not an array.
    public var elements: [JSONNode]? {
        if case .array(let elements) = kind { return elements }
        return nil
    }

    /// The string, or `nil` when this is not a string.
    public var stringValue: String? {
        if case .string(let s) = kind { return s }
        return nil
    }

    /// The boolean, or `nil` when this is not a boolean.
    public var boolValue: Bool? {
        if case .bool(let b) = kind { return b }
        return nil
    }

    /// The number's text, or `nil` when this is not a number.
    public var numberText: String? {
        if case .number(let text) = kind { return text }
        return nil
    }

    /// The first member named `key`, when this is an object.
    public subscript(key: String) -> JSONNode? {
        members?.first(where: { $0.key == key })?.value
    }

    /// A short name of the value's kind for error messages ("a string", "an array").
    public var kindDescription: String {
        switch kind {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// A line and column (both 1-based) in a text.
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    /// The line, from 1.
    public var line: Int
    /// The column in characters, from 1.
    public var column: Int

    /// A location.
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "\(line):\(column)" }
}

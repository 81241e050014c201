import Foundation

/// Writing JSON text, and converting attribute values to and from JSON, as the JSON store
/// and schema files write them (docs/store-format.md, ObjectStore's Schema guide).
package enum JSONText {
    /// A JSON string literal.
    public static func quote(_ s: String) -> String {
        var s = s
        return s.withUTF8 { bytes in
            // Most texts need no escape: one copy between the quotes.
            guard bytes.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else {
                return String(unsafeUninitializedCapacity: bytes.count + 2) { out in
                    out[0] = 0x22
                    if let base = bytes.baseAddress, let target = out.baseAddress { (target + 1).update(from: base, count: bytes.count) }
                    out[bytes.count + 1] = 0x22
                    return bytes.count + 2
                }
            }
            var text: [UInt8] = [0x22]
            text.reserveCapacity(bytes.count + 16)
            let hex = Array("0123456789abcdef".utf8)
            for byte in bytes {
                switch byte {
                case 0x22: text += [0x5C, 0x22]
                case 0x5C: text += [0x5C, 0x5C]
                case 0x0A: text += [0x5C, 0x6E]
                case 0x0D: text += [0x5C, 0x72]
                case 0x09: text += [0x5C, 0x74]
                case ..<0x20: text += [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 15)]]
                default: text.append(byte)  // UTF-8 of other scalars, as they are
                }
            }
            text.append(0x22)
            return String(decoding: text, as: UTF8.self)
        }
    }

    /// The JSON text of a value: numbers exactly (doubles in their shortest round-trip form,
    /// non-finite ones as "NaN"/"Infinity"), decimals as strings, dates as ISO-8601 when that
    /// is exact and as seconds since 1970 otherwise, binary as base64.
    public static func encode(_ value: Value) -> String {
        switch value {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .integer(let i): return String(i)
        case .double(let d):
            if d.isNaN { return "\"NaN\"" }
            if d.isInfinite { return d > 0 ? "\"Infinity\"" : "\"-Infinity\"" }
            return String(d)
        case .decimal(let d): return quote(d.description)
        case .string(let s): return quote(s)
        case .date(let d):
            let iso = ISO8601.format(d)
            if ISO8601.parse(iso) == d { return quote(iso) }
            return secondsSince1970(d)
        case .data(let d): return quote(d.base64EncodedString())
        case .uuid(let u): return quote(u.uuidString)
        case .uri(let u): return quote(u.absoluteString)
        }
    }

    /// The offset of Date's own epoch (2001) from 1970, in seconds.
    private static let referenceOffset = Decimal(978_307_200)

    /// Seconds since 1970 in decimal, exact: a `Date` holds seconds since 2001 in a Double,
    /// which the same Double since 1970 cannot always express, so the sum is done in decimal
    /// (the shortest text of the Double plus the offset) and read back the same way.
    static func secondsSince1970(_ date: Date) -> String {
        let sinceReference = date.timeIntervalSinceReferenceDate
        guard sinceReference.isFinite, let decimal = Decimal(string: String(sinceReference)) else { return String(date.timeIntervalSince1970) }
        return (decimal + referenceOffset).description
    }

    static func date(secondsSince1970 text: String) -> Date? {
        guard let decimal = Decimal(string: text), let sinceReference = Double((decimal - referenceOffset).description) else { return nil }
        return Date(timeIntervalSinceReferenceDate: sinceReference)
    }

    /// Reads a JSON value as a value of an attribute type, or says what was expected.
    public static func decode(_ node: JSONNode, as type: AttributeType) -> Result<Value, DecodingProblem> {
        if type == .date, let text = node.numberText {
            guard let seconds = Double(text), seconds.isFinite, abs(seconds) < 1e12, let date = date(secondsSince1970: text) else {
                return .failure(DecodingProblem(message: "'\(text)' is not a usable number of seconds since 1970"))
            }
            return .success(.date(date))
        }
        switch SchemaValueDecoder.decode(node, as: type) {
        case .value(let value): return .success(value)
        case .problem(let message): return .failure(DecodingProblem(message: message))
        }
    }

    /// Why a JSON value is not a value of the expected type.
    public struct DecodingProblem: Error, Sendable, Hashable {
        /// What was expected.
        public var message: String
    }
}

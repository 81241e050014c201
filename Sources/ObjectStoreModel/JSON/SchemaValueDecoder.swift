import Foundation

/// Turns JSON written in a schema file (defaults, `min`/`max`, allowed values) into a
/// ``Value`` of an attribute type, or says what was expected.
enum SchemaValueDecoder {
    enum Decoded {
        case value(Value)
        case problem(String)
    }

    static func decode(_ node: JSONNode, as type: AttributeType) -> Decoded {
        if case .null = node.kind { return .value(.null) }
        switch type {
        case .int16, .int32, .int64:
            guard let text = node.numberText else { return .problem("expected an integer for type \(type.rawValue), found \(node.kindDescription)") }
            guard let number = Int64(text) else {
                if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
                    return .problem("\(text) is out of range for type \(type.rawValue)")
                }
                return .problem("expected an integer for type \(type.rawValue), found \(text)")
            }
            guard let bounds = type.integerBounds, bounds.contains(number) else {
                return .problem("\(text) is out of range for type \(type.rawValue) (\(type.integerBounds.map { "\($0.lowerBound)...\($0.upperBound)" } ?? ""))")
            }
            return .value(.integer(number))
        case .double, .float:
            if let text = node.numberText, let number = Double(text) { return .value(.double(number)) }
            switch node.stringValue {
            case "NaN": return .value(.double(.nan))
            case "Infinity", "+Infinity": return .value(.double(.infinity))
            case "-Infinity": return .value(.double(-.infinity))
            default: return .problem("expected a number for type \(type.rawValue) (or \"NaN\", \"Infinity\", \"-Infinity\"), found \(node.kindDescription)")
            }
        case .decimal:
            guard let text = node.stringValue ?? node.numberText else {
                return .problem("expected a decimal written as a string such as \"12.50\", found \(node.kindDescription)")
            }
            guard let decimal = DecimalText.parse(text) else { return .problem("'\(text)' is not a decimal number") }
            return .value(.decimal(decimal))
        case .string:
            guard let text = node.stringValue else { return .problem("expected a string, found \(node.kindDescription)") }
            return .value(.string(text))
        case .boolean:
            guard let flag = node.boolValue else { return .problem("expected true or false, found \(node.kindDescription)") }
            return .value(.bool(flag))
        case .date:
            guard let text = node.stringValue else { return .problem("expected an ISO-8601 date string such as \"2026-12-01T14:30:00Z\", found \(node.kindDescription)") }
            guard let date = ISO8601.parse(text) else { return .problem("'\(text)' is not an ISO-8601 date (such as \"2026-12-01\" or \"2026-12-01T14:30:00Z\")") }
            return .value(.date(date))
        case .binary:
            guard let text = node.stringValue else { return .problem("expected base64 text, found \(node.kindDescription)") }
            guard let data = Data(base64Encoded: text) else { return .problem("'\(text)' is not valid base64") }
            return .value(.data(data))
        case .uuid:
            guard let text = node.stringValue else { return .problem("expected a UUID string, found \(node.kindDescription)") }
            guard let uuid = UUID(uuidString: text) else { return .problem("'\(text)' is not a UUID") }
            return .value(.uuid(uuid))
        case .uri:
            guard let text = node.stringValue else { return .problem("expected a URI string, found \(node.kindDescription)") }
            guard !text.isEmpty, let url = URL(string: text), url.scheme != nil else { return .problem("'\(text)' is not an absolute URI") }
            return .value(.uri(url))
        }
    }
}

/// Exact decimal text parsing: `Decimal(string:)` accepts trailing garbage ("1.5abc"), so the
/// text is checked first.
package enum DecimalText {
    /// Parses `-12.50`, `3`, `1e-3`; `nil` for anything else.
    public static func parse(_ text: String) -> Decimal? {
        var sawDigit = false
        var i = text.startIndex
        if i < text.endIndex, text[i] == "-" || text[i] == "+" { i = text.index(after: i) }
        var sawDot = false
        var sawExponent = false
        while i < text.endIndex {
            let c = text[i]
            if c.isASCII && c.isNumber {
                sawDigit = true
            } else if c == "." && !sawDot && !sawExponent {
                sawDot = true
            } else if (c == "e" || c == "E") && sawDigit && !sawExponent {
                sawExponent = true
                let next = text.index(after: i)
                if next < text.endIndex, text[next] == "-" || text[next] == "+" { i = next }
                sawDigit = false
            } else {
                return nil
            }
            i = text.index(after: i)
        }
        guard sawDigit else { return nil }
        return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
    }
}

/// A malformed JSON text: what was wrong and where.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where the problem is.
    public var location: SourceLocation
    /// What was found and what was expected.
    public var message: String

    public var description: String { "\(location): \(message)" }
}

/// A strict RFC 8259 JSON parser over UTF-8 bytes that records the position of every value.
///
/// Nesting is limited (``maximumDepth``) so that hostile input cannot exhaust the stack.
package struct JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    public static let maximumDepth = 512

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    /// Parses one JSON document; anything but whitespace after it is an error.
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONNode {
        try parse(Array(text.utf8))
    }

    /// Parses one JSON document from UTF-8 bytes.
    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONNode {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let node = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.index < parser.bytes.count {
            throw parser.error("unexpected text after the end of the JSON document")
        }
        return node
    }

    /// Parses a JSON document that is an array, handing `body` each element in turn (its
    /// index and node) and keeping none: an array of a million objects costs one element's
    /// nodes at a time, not a tree of them all. Returns false, having read nothing, when the
    /// document is not an array. Syntax errors throw ``JSONSyntaxError``, as `parse` does,
    /// once the elements before them have been handed over; `body`'s errors propagate.
    package static func forEachElement(ofArrayIn bytes: [UInt8], _ body: (Int, JSONNode) throws -> Void) throws -> Bool {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "[") else { return false }
        parser.index += 1
        parser.skipWhitespace()
        var count = 0
        if parser.index < bytes.count && bytes[parser.index] == UInt8(ascii: "]") {
            parser.index += 1
        } else {
            while true {
                parser.skipWhitespace()
                try body(count, try parser.parseValue(depth: 1))
                count += 1
                parser.skipWhitespace()
                guard parser.index < bytes.count else { throw parser.error("unexpected end of input inside an array, expected ',' or ']'") }
                if bytes[parser.index] == UInt8(ascii: ",") {
                    parser.index += 1
                    continue
                }
                if bytes[parser.index] == UInt8(ascii: "]") {
                    parser.index += 1
                    break
                }
                throw parser.error("expected ',' or ']' after an array element")
            }
        }
        parser.skipWhitespace()
        if parser.index < parser.bytes.count {
            throw parser.error("unexpected text after the end of the JSON document")
        }
        return true
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
        // A UTF-8 byte order mark is tolerated, as editors on some systems write one.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            index = 3
            lineStart = 3
        }
    }

    /// Column bookkeeping: the last position whose column is known on the current line, so
    /// long lines (a whole export on one line) cost linear time, not quadratic.
    private var knownLineStart = -1
    private var knownPosition = 0
    private var knownColumn = 1

    private mutating func currentLocation() -> SourceLocation {
        if knownLineStart != lineStart || index < knownPosition {
            knownLineStart = lineStart
            knownPosition = lineStart
            knownColumn = 1
        }
        while knownPosition < index && knownPosition < bytes.count {
            if bytes[knownPosition] & 0xC0 != 0x80 { knownColumn += 1 }
            knownPosition += 1
        }
        return SourceLocation(line: line, column: knownColumn)
    }

    /// The location for an error message (rare, so computed from the line start).
    private var location: SourceLocation {
        SourceLocation(line: line, column: column(of: index))
    }

    private func column(of position: Int) -> Int {
        // Columns count characters, not bytes: skip UTF-8 continuation bytes.
        var column = 1
        var i = lineStart
        while i < position && i < bytes.count {
            if bytes[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        return column
    }

    private func error(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(location: location, message: message)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D:
                index += 1
            case 0x0A:
                index += 1
                line += 1
                lineStart = index
            default:
                return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONNode {
        guard index < bytes.count else { throw error("unexpected end of input, expected a value") }
        let start = currentLocation()
        switch bytes[index] {
        case UInt8(ascii: "{"):
            return JSONNode(.object(try parseObject(depth: depth + 1)), at: start)
        case UInt8(ascii: "["):
            return JSONNode(.array(try parseArray(depth: depth + 1)), at: start)
        case UInt8(ascii: "\""):
            return JSONNode(.string(try parseString()), at: start)
        case UInt8(ascii: "t"):
            try expectWord("true")
            return JSONNode(.bool(true), at: start)
        case UInt8(ascii: "f"):
            try expectWord("false")
            return JSONNode(.bool(false), at: start)
        case UInt8(ascii: "n"):
            try expectWord("null")
            return JSONNode(.null, at: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONNode(.number(try parseNumber()), at: start)
        default:
            throw error("unexpected character \(describe(bytes[index])), expected a value")
        }
    }

    private func describe(_ byte: UInt8) -> String {
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16, uppercase: true)
    }

    private mutating func expectWord(_ word: String) throws(JSONSyntaxError) {
        let utf8 = Array(word.utf8)
        guard index + utf8.count <= bytes.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
            throw error("invalid literal, expected '\(word)'")
        }
        index += utf8.count
    }

    private mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> [JSONNode.Member] {
        guard depth <= Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth) levels") }
        index += 1  // {
        var members: [JSONNode.Member] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return members
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error(index < bytes.count ? "expected a string key in double quotes" : "unexpected end of input inside an object")
            }
            let keyLocation = currentLocation()
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after the key \"\(key)\"")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            members.append(JSONNode.Member(key: key, keyLocation: keyLocation, value: value))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input inside an object, expected ',' or '}'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return members
            }
            throw error("expected ',' or '}' after an object member")
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> [JSONNode] {
        guard depth <= Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth) levels") }
        index += 1  // [
        var elements: [JSONNode] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input inside an array, expected ',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return elements
            }
            throw error("expected ',' or ']' after an array element")
        }
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        index += 1  // opening quote
        // Runs of bytes without escapes are validated and appended whole: a string without
        // escapes (most of them) is made from its bytes in one step.
        var scalars = ""
        var runStart = index
        func flush(_ parser: JSONParser, upTo end: Int, into scalars: inout String) throws(JSONSyntaxError) {
            guard runStart < end else { return }
            // ASCII is UTF-8 as it is: made directly (the generic validation went byte by
            // byte); other text is validated.
            let start = runStart
            let run: String? = parser.bytes.withUnsafeBufferPointer { buffer in
                let bytes = UnsafeBufferPointer(rebasing: buffer[start..<end])
                return bytes.allSatisfy({ $0 < 0x80 }) ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
            }
            guard let run else { throw parser.error("invalid UTF-8 in a string") }
            if scalars.isEmpty { scalars = run } else { scalars += run }
        }
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                try flush(self, upTo: index, into: &scalars)
                index += 1
                return scalars
            }
            if byte < 0x20 {
                throw error("control character \(describe(byte)) in a string; write it as an escape such as \\n")
            }
            if byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            try flush(self, upTo: index, into: &scalars)
            index += 1
            guard index < bytes.count else { throw error("unterminated string") }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                let first = try parseHex4()
                if (0xD800...0xDBFF).contains(first) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw error("unpaired surrogate \\u\(String(first, radix: 16)) in a string")
                    }
                    index += 2
                    let second = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(second) else {
                        throw error("invalid low surrogate \\u\(String(second, radix: 16)) in a string")
                    }
                    let value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                    guard let scalar = Unicode.Scalar(value) else { throw error("invalid unicode escape") }
                    scalars.unicodeScalars.append(scalar)
                } else {
                    guard let scalar = Unicode.Scalar(first) else {
                        throw error("unpaired surrogate \\u\(String(first, radix: 16)) in a string")
                    }
                    scalars.unicodeScalars.append(scalar)
                }
            default:
                index -= 1
                throw error("invalid escape \\\(Character(Unicode.Scalar(escape)))")
            }
            runStart = index
        }
    }

    private mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("incomplete \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in a \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> String {
        let start = index
        func isDigit(_ i: Int) -> Bool {
            i < bytes.count && bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "9")
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard isDigit(index) else { throw error("invalid number: expected a digit") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if isDigit(index) { throw error("invalid number: leading zeros are not allowed") }
        } else {
            while isDigit(index) { index += 1 }
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard isDigit(index) else { throw error("invalid number: expected a digit after '.'") }
            while isDigit(index) { index += 1 }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) { index += 1 }
            guard isDigit(index) else { throw error("invalid number: expected a digit in the exponent") }
            while isDigit(index) { index += 1 }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }
}

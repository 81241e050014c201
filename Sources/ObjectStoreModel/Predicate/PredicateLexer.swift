import Foundation

/// One token of predicate text, with the column (1-based, in characters) it starts at.
struct PredicateToken: Equatable {
    enum Kind: Equatable {
        case identifier(String)
        /// A `#`-escaped name: never a keyword.
        case escapedIdentifier(String)
        case integer(Int64)
        case float(Double)
        /// Integer text too large for Int64, kept for decimals.
        case bigNumber(String)
        case string(String)
        case variable(String)
        case formatArgument(Character)
        case collectionOperator(String)
        case symbol(String)
        case end
    }

    var kind: Kind
    var column: Int

    /// The identifier's text in upper case, for keyword matching, or `nil`.
    var keyword: String? {
        if case .identifier(let name) = kind { return name.uppercased() }
        return nil
    }
}

/// Splits predicate text into tokens.
struct PredicateLexer {
    private let characters: [Character]
    private var index = 0

    init(_ text: String) {
        characters = Array(text)
    }

    static func tokenize(_ text: String) throws(PredicateSyntaxError) -> [PredicateToken] {
        var lexer = PredicateLexer(text)
        var tokens: [PredicateToken] = []
        while true {
            let token = try lexer.next(text: text)
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func peek(_ offset: Int = 0) -> Character? {
        index + offset < characters.count ? characters[index + offset] : nil
    }

    // ASCII answered without Unicode's property tables (a lookup per character was most of
    // tokenizing a model's predicates at every process's start); the rest asks them.
    private static func isIdentifierStart(_ c: Character) -> Bool {
        if let a = c.asciiValue { return a == 0x5F || (a | 0x20) >= 0x61 && (a | 0x20) <= 0x7A }
        return c.isLetter
    }
    private static func isIdentifierPart(_ c: Character) -> Bool {
        if let a = c.asciiValue { return a == 0x5F || (a | 0x20) >= 0x61 && (a | 0x20) <= 0x7A || a >= 0x30 && a <= 0x39 }
        return c.isLetter || c.isNumber
    }
    private static func isWhitespace(_ c: Character) -> Bool {
        if let a = c.asciiValue { return a == 0x20 || a >= 0x09 && a <= 0x0D }
        return c.isWhitespace
    }

    private mutating func identifier() -> String {
        var name = ""
        while let c = peek(), Self.isIdentifierPart(c) {
            name.append(c)
            index += 1
        }
        return name
    }

    private mutating func next(text: String) throws(PredicateSyntaxError) -> PredicateToken {
        while let c = peek(), Self.isWhitespace(c) { index += 1 }
        let start = index + 1
        func token(_ kind: PredicateToken.Kind) -> PredicateToken { PredicateToken(kind: kind, column: start) }
        func fail(_ message: String) -> PredicateSyntaxError { PredicateSyntaxError(text: text, column: start, message: message) }
        guard let c = peek() else { return token(.end) }

        if Self.isIdentifierStart(c) { return token(.identifier(identifier())) }
        if c.isNumber { return token(try number(fail: fail)) }

        switch c {
        case "\"", "'":
            return token(.string(try string(quote: c, text: text)))
        case "$":
            index += 1
            guard let first = peek(), Self.isIdentifierStart(first) else { throw fail("expected a variable name after '$'") }
            return token(.variable(identifier()))
        case "#":
            index += 1
            guard let first = peek(), Self.isIdentifierStart(first) else { throw fail("expected a name after '#'") }
            return token(.escapedIdentifier(identifier()))
        case "@":
            index += 1
            guard let first = peek(), Self.isIdentifierStart(first) else { throw fail("expected a collection operator such as @count after '@'") }
            return token(.collectionOperator(identifier()))
        case "%":
            index += 1
            guard let spec = peek(), "@KdifDI".contains(spec) else { throw fail("unknown format specifier; expected %@, %K, %d, %i or %f") }
            index += 1
            return token(.formatArgument(spec))
        default:
            break
        }
        let twoCharacter = ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||", "**"]
        if let next = peek(1), twoCharacter.contains(String([c, next])) {
            index += 2
            return token(.symbol(String([c, next])))
        }
        if "()[]{},.=<>!+-*/".contains(c) {
            index += 1
            return token(.symbol(String(c)))
        }
        throw fail("unexpected character '\(c)'")
    }

    private mutating func number(fail: (String) -> PredicateSyntaxError) throws(PredicateSyntaxError) -> PredicateToken.Kind {
        if peek() == "0", let prefix = peek(1), "xXoObB".contains(prefix) {
            index += 2
            let radix: Int
            switch prefix.lowercased() {
            case "x": radix = 16
            case "o": radix = 8
            default: radix = 2
            }
            var digits = ""
            while let c = peek(), c.isHexDigit || c == "_" {
                digits.append(c)
                index += 1
            }
            guard !digits.isEmpty, let value = Int64(digits, radix: radix) else {
                throw fail("invalid base-\(radix) integer '0\(prefix)\(digits)'")
            }
            return .integer(value)
        }
        var text = ""
        var isFloat = false
        while let c = peek(), c.isNumber {
            text.append(c)
            index += 1
        }
        if peek() == ".", let after = peek(1), after.isNumber {
            isFloat = true
            text.append(".")
            index += 1
            while let c = peek(), c.isNumber {
                text.append(c)
                index += 1
            }
        }
        if let e = peek(), e == "e" || e == "E" {
            var lookahead = 1
            if let sign = peek(1), sign == "+" || sign == "-" { lookahead = 2 }
            if let digit = peek(lookahead), digit.isNumber {
                isFloat = true
                for _ in 0..<lookahead {
                    text.append(characters[index])
                    index += 1
                }
                while let c = peek(), c.isNumber {
                    text.append(c)
                    index += 1
                }
            }
        }
        if let c = peek(), Self.isIdentifierStart(c) { throw fail("invalid number '\(text)\(c)'") }
        if isFloat {
            guard let value = Double(text) else { throw fail("invalid number '\(text)'") }
            return .float(value)
        }
        // Leading zero means octal, as in Apple's grammar (also written 0o17).
        if text.count > 1, text.hasPrefix("0") {
            guard let value = Int64(text.dropFirst(), radix: 8) else { throw fail("invalid octal integer '\(text)'") }
            return .integer(value)
        }
        if let value = Int64(text) { return .integer(value) }
        return .bigNumber(text)
    }

    private mutating func string(quote: Character, text: String) throws(PredicateSyntaxError) -> String {
        let start = index + 1
        index += 1
        var result = ""
        while let c = peek() {
            index += 1
            if c == quote { return result }
            if c == "\\" {
                guard let escaped = peek() else { break }
                index += 1
                switch escaped {
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "r": result.append("\r")
                case "0": result.append("\0")
                case "u":
                    var hex = ""
                    while hex.count < 4, let h = peek(), h.isHexDigit {
                        hex.append(h)
                        index += 1
                    }
                    guard hex.count == 4, let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
                        throw PredicateSyntaxError(text: text, column: index, message: "invalid \\u escape: expected four hex digits")
                    }
                    result.unicodeScalars.append(scalar)
                case "\\", "'", "\"": result.append(escaped)
                default:
                    // Kept, so LIKE (\*) and MATCHES (\d) see their own escapes.
                    result.append("\\")
                    result.append(escaped)
                }
                continue
            }
            result.append(c)
        }
        throw PredicateSyntaxError(text: text, column: start, message: "unterminated string: missing closing \(quote)")
    }
}

import Foundation

/// The canonical text of predicates and expressions: parsing it gives the same value back.
/// Parentheses appear wherever precedence could mislead (`a OR (b AND c)`, nested
/// arithmetic), keywords used as keys get `#`, and constants that have no literal form print
/// as `CAST` (dates as seconds since 2001-01-01, as Core Data does).
extension ObjectPredicate: CustomStringConvertible {
    public var description: String {
        switch self {
        case .constant(let b): return b ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .not(let p):
            switch p {
            case .comparison, .constant, .not: return "NOT " + p.description
            default: return "NOT (" + p.description + ")"
            }
        case .and(let a, let b):
            return operand(a, in: "AND", right: false) + " AND " + operand(b, in: "AND", right: true)
        case .or(let a, let b):
            return operand(a, in: "OR", right: false) + " OR " + operand(b, in: "OR", right: true)
        case .comparison(let c): return c.description
        }
    }

    private func operand(_ p: ObjectPredicate, in op: String, right: Bool) -> String {
        switch (p, op) {
        case (.or, "AND"), (.and, "OR"): return "(" + p.description + ")"
        case (.and, "AND") where right, (.or, "OR") where right: return "(" + p.description + ")"
        default: return p.description
        }
    }
}

extension PredicateComparison: CustomStringConvertible {
    public var description: String {
        var text = quantifier == .direct ? "" : quantifier.rawValue + " "
        text += lhs.description + " " + op.rawValue
        if !options.isEmpty {
            text += "["
            if options.contains(.caseInsensitive) { text += "c" }
            if options.contains(.diacriticInsensitive) { text += "d" }
            if options.contains(.normalized) { text += "n" }
            text += "]"
        }
        return text + " " + rhs.description
    }
}

extension ObjectExpression: CustomStringConvertible {
    public var description: String {
        switch self {
        case .constant(let value): return Self.literal(value)
        case .array(let items): return "{" + items.map(\.description).joined(separator: ", ") + "}"
        case .evaluatedObject: return "SELF"
        case .variable(let name): return "$" + name
        case .keyPath(let base, let path):
            let keys = path.map(Self.key).joined(separator: ".")
            if case .evaluatedObject = base { return keys }
            return Self.wrapped(base) + "." + keys
        case .arithmetic(let op, let a, let b):
            return Self.wrapped(a) + " " + op.rawValue + " " + Self.wrapped(b)
        case .negate(let e): return "-" + Self.wrapped(e)
        case .function(let name, let args): return name + "(" + args.map(\.description).joined(separator: ", ") + ")"
        case .index(let e, let index):
            let inner: String
            switch index {
            case .first: inner = "FIRST"
            case .last: inner = "LAST"
            case .size: inner = "SIZE"
            case .expression(let ix): inner = ix.description
            }
            return Self.wrapped(e) + "[" + inner + "]"
        case .subquery(let collection, let variable, let predicate):
            return "SUBQUERY(" + collection.description + ", $" + variable + ", " + predicate.description + ")"
        case .cast(let e, let type): return "CAST(" + e.description + ", " + Self.quote(type) + ")"
        }
    }

    private static func wrapped(_ e: ObjectExpression) -> String {
        switch e {
        case .arithmetic, .negate: return "(" + e.description + ")"
        case .constant(.integer(let i)) where i < 0: return "(" + e.description + ")"
        case .constant(.double(let d)) where d < 0: return "(" + e.description + ")"
        default: return e.description
        }
    }

    private static func key(_ component: String) -> String {
        if component.hasPrefix("@") { return component }
        return PredicateParser.reservedWords.contains(component.uppercased()) ? "#" + component : component
    }

    /// String literals are written as JSON writes them; the lexer reads those escapes.
    static func quote(_ s: String) -> String { JSONText.quote(s) }

    static func literal(_ value: Value) -> String {
        switch value {
        case .null: return "nil"
        case .bool(let b): return b ? "TRUE" : "FALSE"
        case .integer(let i): return String(i)
        case .double(let d):
            if d.isNaN || d.isInfinite { return "CAST(" + quote(String(d)) + ", \"NSNumber\")" }
            let text = String(d)
            return text.contains(".") || text.contains("e") ? text : text + ".0"
        case .decimal(let d): return "CAST(" + quote(d.description) + ", \"NSDecimalNumber\")"
        case .string(let s): return quote(s)
        case .date(let d):
            let seconds = literal(.double(d.timeIntervalSinceReferenceDate))
            return "CAST(" + seconds + ", \"NSDate\")"
        case .data(let d): return "CAST(" + quote(d.base64EncodedString()) + ", \"NSData\")"
        case .uuid(let u): return "CAST(" + quote(u.uuidString) + ", \"NSUUID\")"
        case .uri(let u): return "CAST(" + quote(u.absoluteString) + ", \"NSURL\")"
        }
    }
}

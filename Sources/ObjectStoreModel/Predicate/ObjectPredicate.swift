import Foundation

/// A parsed predicate in Core Data's predicate format language.
///
/// ```swift
/// let predicate = try ObjectPredicate("priority >= 2 AND location.name ==[c] 'home'")
/// print(predicate)   // priority >= 2 AND location.name ==[c] "home"
/// let bound = try ObjectPredicate(format: "dueDate < %@ AND %K == %d", .date(now), "priority", 3)
/// ```
///
/// (`Predicate` and `NSPredicate` are Foundation's names; this one is ours.) The grammar is
/// in ObjectStore's Predicates guide. Parsing a predicate's ``description`` gives the same predicate.
public indirect enum ObjectPredicate: Sendable, Hashable {
    /// `TRUEPREDICATE` or `FALSEPREDICATE`.
    case constant(Bool)
    /// `NOT p`.
    case not(ObjectPredicate)
    /// `a AND b`.
    case and(ObjectPredicate, ObjectPredicate)
    /// `a OR b`.
    case or(ObjectPredicate, ObjectPredicate)
    /// A comparison.
    case comparison(PredicateComparison)

    /// Parses predicate text. `$VARIABLES` stay in the predicate until
    /// ``substituting(_:)``.
    public init(_ text: String) throws(PredicateSyntaxError) {
        self = try PredicateParser.parsePredicate(text, arguments: [])
    }

    /// Parses predicate text with format arguments: `%@` (a value), `%K` (a key path, given
    /// as a string value), `%d`/`%i` (an integer), `%f` (a double).
    public init(format: String, _ arguments: Value...) throws(PredicateSyntaxError) {
        self = try PredicateParser.parsePredicate(format, arguments: arguments.map(PlaceholderValue.value))
    }

    /// Parses predicate text with an array of format arguments.
    public init(format: String, arguments: [Value]) throws(PredicateSyntaxError) {
        self = try PredicateParser.parsePredicate(format, arguments: arguments.map(PlaceholderValue.value))
    }

    /// Parses predicate text with format arguments that may be lists: a list stands for
    /// `%@` as the constant list of its values (`tag IN %@` with `.list(["a", "b"])` is
    /// `tag IN {"a", "b"}`).
    ///
    /// ```swift
    /// let predicate = try ObjectPredicate(format: "ANY tags.name IN %@", placeholders: [.list([.string("home"), .string("shop")])])
    /// ```
    public init(format: String, placeholders: [PlaceholderValue]) throws(PredicateSyntaxError) {
        self = try PredicateParser.parsePredicate(format, arguments: placeholders)
    }

    /// Replaces `$VARIABLES` with values.
    ///
    /// - Throws: ``PredicateVariableError`` naming a variable that has no value.
    public func substituting(_ variables: [String: Value]) throws(PredicateVariableError) -> ObjectPredicate {
        try substituting(placeholders: variables.mapValues(PlaceholderValue.value))
    }

    /// Replaces `$VARIABLES` with values or lists of values (`name IN $NAMES`).
    ///
    /// - Throws: ``PredicateVariableError`` naming a variable that has no value.
    public func substituting(placeholders variables: [String: PlaceholderValue]) throws(PredicateVariableError) -> ObjectPredicate {
        switch self {
        case .constant: return self
        case .not(let p): return .not(try p.substituting(placeholders: variables))
        case .and(let a, let b): return .and(try a.substituting(placeholders: variables), try b.substituting(placeholders: variables))
        case .or(let a, let b): return .or(try a.substituting(placeholders: variables), try b.substituting(placeholders: variables))
        case .comparison(var c):
            c.lhs = try c.lhs.substituting(variables, bound: [])
            c.rhs = try c.rhs.substituting(variables, bound: [])
            return .comparison(c)
        }
    }

    /// The `$VARIABLES` the predicate uses (not counting SUBQUERY's own variables).
    public var variableNames: Set<String> {
        switch self {
        case .constant: return []
        case .not(let p): return p.variableNames
        case .and(let a, let b), .or(let a, let b): return a.variableNames.union(b.variableNames)
        case .comparison(let c): return c.lhs.variableNames(bound: []).union(c.rhs.variableNames(bound: []))
        }
    }
}

/// What a format specifier (`%@`) or a `$VARIABLE` stands for: one value, or a list of
/// values, which becomes the constant list `{a, b, ...}` (`name IN %@`, `ANY tags.name IN
/// $NAMES`).
public enum PlaceholderValue: Sendable, Hashable {
    /// One value.
    case value(Value)
    /// A list of values.
    case list([Value])

    /// The expression the placeholder becomes.
    var expression: ObjectExpression {
        switch self {
        case .value(let value): return .constant(value)
        case .list(let values): return .array(values.map(ObjectExpression.constant))
        }
    }
}

/// One comparison: `lhs op rhs`, optionally with ANY/ALL/NONE and string options.
public struct PredicateComparison: Sendable, Hashable {
    /// The comparison operators.
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        /// `==` and `!=`.
        case equal = "==", notEqual = "!="
        /// `<`, `<=`, `>` and `>=`.
        case less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
        /// `BETWEEN {low, high}`, bounds included.
        case between = "BETWEEN"
        /// `IN` a list or collection (or a substring of a string).
        case `in` = "IN"
        /// `CONTAINS`, `BEGINSWITH` and `ENDSWITH` of strings (and `CONTAINS` of collections).
        case contains = "CONTAINS", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH"
        /// `LIKE` with `*` and `?` wildcards.
        case like = "LIKE"
        /// `MATCHES` a regular expression, whole string.
        case matches = "MATCHES"

        /// Whether the operator compares strings (and so takes `[cdn]` options).
        public var isStringOperator: Bool {
            switch self {
            case .contains, .beginsWith, .endsWith, .like, .matches: return true
            default: return false
            }
        }
    }

    /// How the left side's collection is quantified.
    public enum Quantifier: String, Sendable, Hashable {
        /// No quantifier: the left side as it is.
        case direct = ""
        /// `ANY`: some element passes.
        case any = "ANY"
        /// `ALL`: every element passes.
        case all = "ALL"
        /// `NONE`: no element passes.
        case none = "NONE"
    }

    /// `[c]` case-insensitive, `[d]` diacritic-insensitive, `[n]` normalized (no
    /// transformation: the strings are compared as given, which our comparisons do anyway).
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let caseInsensitive = Options(rawValue: 1)
        public static let diacriticInsensitive = Options(rawValue: 2)
        public static let normalized = Options(rawValue: 4)
    }

    /// ANY, ALL, NONE or none.
    public var quantifier: Quantifier
    /// The left side.
    public var lhs: ObjectExpression
    /// The operator.
    public var op: Operator
    /// String options.
    public var options: Options
    /// The right side.
    public var rhs: ObjectExpression

    /// A comparison.
    public init(_ lhs: ObjectExpression, _ op: Operator, _ rhs: ObjectExpression, quantifier: Quantifier = .direct, options: Options = []) {
        self.lhs = lhs
        self.op = op
        self.rhs = rhs
        self.quantifier = quantifier
        self.options = options
    }
}

/// An expression of the predicate language: constants, key paths, variables, arithmetic,
/// functions, aggregates and subqueries.
public indirect enum ObjectExpression: Sendable, Hashable {
    /// A constant value.
    case constant(Value)
    /// `{a, b, c}`.
    case array([ObjectExpression])
    /// `SELF`: the object evaluated.
    case evaluatedObject
    /// `$NAME`.
    case variable(String)
    /// A key path followed from a base expression (`SELF` for a bare key path). Components
    /// may be collection operators such as `@count`.
    case keyPath(ObjectExpression, [String])
    /// `+ - * / **`.
    case arithmetic(ArithmeticOperator, ObjectExpression, ObjectExpression)
    /// Unary minus.
    case negate(ObjectExpression)
    /// `name(args)`: `now()`, `abs(x)`, `lowercase(s)`...
    case function(String, [ObjectExpression])
    /// `collection[FIRST]`, `[LAST]`, `[SIZE]` or `[n]`.
    case index(ObjectExpression, PredicateIndex)
    /// `SUBQUERY(collection, $x, predicate)`.
    case subquery(ObjectExpression, variable: String, ObjectPredicate)
    /// `CAST(expr, 'NSDate')`: numbers as seconds since 2001-01-01 (Core Data's reference date).
    case cast(ObjectExpression, String)

    /// The arithmetic operators.
    public enum ArithmeticOperator: String, Sendable, Hashable {
        /// `+`, `-`, `*` and `/`.
        case add = "+", subtract = "-", multiply = "*", divide = "/"
        /// `**`: the power.
        case power = "**"
    }

    func substituting(_ variables: [String: PlaceholderValue], bound: Set<String>) throws(PredicateVariableError) -> ObjectExpression {
        switch self {
        case .constant, .evaluatedObject: return self
        case .variable(let name):
            if bound.contains(name) || name == "FETCH_SOURCE" || name == "source" { return self }
            guard let value = variables[name] else { throw PredicateVariableError(name: name, known: variables.keys.sorted()) }
            return value.expression
        case .array(let items):
            var result: [ObjectExpression] = []
            for item in items { result.append(try item.substituting(variables, bound: bound)) }
            return .array(result)
        case .keyPath(let base, let path): return .keyPath(try base.substituting(variables, bound: bound), path)
        case .arithmetic(let op, let a, let b): return .arithmetic(op, try a.substituting(variables, bound: bound), try b.substituting(variables, bound: bound))
        case .negate(let e): return .negate(try e.substituting(variables, bound: bound))
        case .function(let name, let args):
            var result: [ObjectExpression] = []
            for arg in args { result.append(try arg.substituting(variables, bound: bound)) }
            return .function(name, result)
        case .index(let e, let i):
            if case .expression(let ix) = i { return .index(try e.substituting(variables, bound: bound), .expression(try ix.substituting(variables, bound: bound))) }
            return .index(try e.substituting(variables, bound: bound), i)
        case .subquery(let collection, let variable, let predicate):
            let inner = try predicate.substitutingInSubquery(variables, bound: bound.union([variable]))
            return .subquery(try collection.substituting(variables, bound: bound), variable: variable, inner)
        case .cast(let e, let type): return .cast(try e.substituting(variables, bound: bound), type)
        }
    }

    func variableNames(bound: Set<String>) -> Set<String> {
        switch self {
        case .constant, .evaluatedObject: return []
        case .variable(let name): return bound.contains(name) ? [] : [name]
        case .array(let items): return items.reduce(into: []) { $0.formUnion($1.variableNames(bound: bound)) }
        case .keyPath(let base, _), .negate(let base), .cast(let base, _): return base.variableNames(bound: bound)
        case .arithmetic(_, let a, let b): return a.variableNames(bound: bound).union(b.variableNames(bound: bound))
        case .function(_, let args): return args.reduce(into: []) { $0.formUnion($1.variableNames(bound: bound)) }
        case .index(let e, let i):
            if case .expression(let ix) = i { return e.variableNames(bound: bound).union(ix.variableNames(bound: bound)) }
            return e.variableNames(bound: bound)
        case .subquery(let collection, let variable, let predicate):
            return collection.variableNames(bound: bound).union(predicate.variableNames(bound: bound.union([variable])))
        }
    }
}

/// An index into a collection: `[FIRST]`, `[LAST]`, `[SIZE]` or `[expression]`.
public enum PredicateIndex: Sendable, Hashable {
    /// `[FIRST]`, `[LAST]` and `[SIZE]`.
    case first, last, size
    /// `[expression]`: the element at that position.
    case expression(ObjectExpression)
}

extension ObjectPredicate {
    func substitutingInSubquery(_ variables: [String: PlaceholderValue], bound: Set<String>) throws(PredicateVariableError) -> ObjectPredicate {
        switch self {
        case .constant: return self
        case .not(let p): return .not(try p.substitutingInSubquery(variables, bound: bound))
        case .and(let a, let b): return .and(try a.substitutingInSubquery(variables, bound: bound), try b.substitutingInSubquery(variables, bound: bound))
        case .or(let a, let b): return .or(try a.substitutingInSubquery(variables, bound: bound), try b.substitutingInSubquery(variables, bound: bound))
        case .comparison(var c):
            c.lhs = try c.lhs.substituting(variables, bound: bound)
            c.rhs = try c.rhs.substituting(variables, bound: bound)
            return .comparison(c)
        }
    }

    func variableNames(bound: Set<String>) -> Set<String> {
        switch self {
        case .constant: return []
        case .not(let p): return p.variableNames(bound: bound)
        case .and(let a, let b), .or(let a, let b): return a.variableNames(bound: bound).union(b.variableNames(bound: bound))
        case .comparison(let c): return c.lhs.variableNames(bound: bound).union(c.rhs.variableNames(bound: bound))
        }
    }
}

/// A `$VARIABLE` with no value when a predicate was used.
public struct PredicateVariableError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The variable without its `$`.
    public var name: String
    /// The variables that were given.
    public var known: [String]
    public var description: String {
        "no value for the variable $\(name)" + (known.isEmpty ? "" : " (given: " + known.map { "$" + $0 }.joined(separator: ", ") + ")")
    }
}

/// Predicate text that does not parse: where, what was found and what was expected.
public struct PredicateSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The whole predicate text.
    public var text: String
    /// The 1-based column (in characters) of the problem.
    public var column: Int
    /// What was wrong and what was expected.
    public var message: String

    public init(text: String, column: Int, message: String) {
        self.text = text
        self.column = column
        self.message = message
    }

    /// Three lines: the message with its column, the text, and a caret under the column.
    public var description: String {
        let caret = String(repeating: " ", count: max(0, column - 1)) + "^"
        return "column \(column): \(message)\n  \(text)\n  \(caret)"
    }
}

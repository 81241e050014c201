import Foundation

/// A recursive-descent parser for the predicate format grammar. Precedence, loosest first:
/// OR, AND, NOT, comparison, `+ -`, `* /`, `**`, unary minus, postfix (`.key`, `[index]`).
struct PredicateParser {
    private let text: String
    private let tokens: [PredicateToken]
    private var position = 0
    private var arguments: [PlaceholderValue]
    private(set) var argumentIndex = 0
    private var depth = 0
    private static let maximumDepth = 200
    /// Operators, key path steps and arguments of the whole predicate: chains such as
    /// `a + 1 + 1 ...` or `tags.tasks.tags...` build trees as deep as they are long, and
    /// evaluating, checking or printing those recurses once per level. Bounded, a predicate
    /// no person writes is refused with a message instead of overflowing the stack.
    private var nodes = 0
    static let maximumNodes = 256
    /// The most items of one `{...}` list.
    static let maximumListItems = 100_000

    static let reservedWords: Set<String> = [
        "AND", "OR", "NOT", "ANY", "ALL", "NONE", "SOME", "IN", "LIKE", "MATCHES", "CONTAINS", "BEGINSWITH", "ENDSWITH",
        "BETWEEN", "TRUEPREDICATE", "FALSEPREDICATE", "SELF", "NULL", "NIL", "TRUE", "FALSE", "YES", "NO", "FIRST", "LAST",
        "SIZE", "SUBQUERY", "CAST", "FUNCTION",
    ]

    static func parsePredicate(_ text: String, arguments: [PlaceholderValue]) throws(PredicateSyntaxError) -> ObjectPredicate {
        var parser = PredicateParser(text: text, tokens: try PredicateLexer.tokenize(text), arguments: arguments)
        if parser.current.kind == .end { throw parser.error("expected a predicate, found nothing") }
        let predicate = try parser.parseOr()
        try parser.expectEnd()
        // An argument no specifier takes is a mistake (a %@ left out of the text), not
        // something to drop in silence.
        guard parser.argumentIndex == arguments.count else {
            throw PredicateSyntaxError(text: text, column: text.count + 1,
                                       message: "\(arguments.count) format argument\(arguments.count == 1 ? "" : "s") given, but the predicate uses \(parser.argumentIndex)")
        }
        return predicate
    }

    static func parseExpression(_ text: String) throws(PredicateSyntaxError) -> ObjectExpression {
        var parser = PredicateParser(text: text, tokens: try PredicateLexer.tokenize(text), arguments: [])
        if parser.current.kind == .end { throw parser.error("expected an expression, found nothing") }
        let expression = try parser.parseExpression()
        try parser.expectEnd()
        return expression
    }

    private init(text: String, tokens: [PredicateToken], arguments: [PlaceholderValue]) {
        self.text = text
        self.tokens = tokens
        self.arguments = arguments
    }

    // MARK: Tokens

    private var current: PredicateToken { tokens[min(position, tokens.count - 1)] }

    private mutating func advance() { if position < tokens.count - 1 { position += 1 } }

    private func error(_ message: String, at token: PredicateToken? = nil) -> PredicateSyntaxError {
        PredicateSyntaxError(text: text, column: (token ?? current).column, message: message)
    }

    private func describe(_ token: PredicateToken) -> String {
        switch token.kind {
        case .identifier(let s): return "'\(s)'"
        case .escapedIdentifier(let s): return "'#\(s)'"
        case .integer(let i): return "\(i)"
        case .float(let d): return "\(d)"
        case .bigNumber(let s): return s
        case .string(let s): return "the string \"\(s)\""
        case .variable(let s): return "$\(s)"
        case .formatArgument(let c): return "%\(c)"
        case .collectionOperator(let s): return "@\(s)"
        case .symbol(let s): return "'\(s)'"
        case .end: return "the end of the predicate"
        }
    }

    private func isSymbol(_ s: String) -> Bool {
        if case .symbol(let t) = current.kind { return t == s }
        return false
    }

    private func isKeyword(_ k: String) -> Bool { current.keyword == k }

    private mutating func expectSymbol(_ s: String, _ context: String) throws(PredicateSyntaxError) {
        guard isSymbol(s) else { throw error("expected '\(s)' \(context), found \(describe(current))") }
        advance()
    }

    private mutating func expectEnd() throws(PredicateSyntaxError) {
        guard current.kind == .end else {
            throw error("unexpected \(describe(current)); expected AND, OR or the end of the predicate")
        }
    }

    private mutating func enter() throws(PredicateSyntaxError) {
        depth += 1
        if depth > Self.maximumDepth { throw error("the predicate is nested too deeply (more than \(Self.maximumDepth) levels)") }
        try count()
    }

    /// Counts one operator or key path step against ``maximumNodes``.
    private mutating func count() throws(PredicateSyntaxError) {
        nodes += 1
        if nodes > Self.maximumNodes { throw error("the predicate is too long (more than \(Self.maximumNodes) operators and key path steps)") }
    }

    // MARK: Predicates

    private mutating func parseOr() throws(PredicateSyntaxError) -> ObjectPredicate {
        var result = try parseAnd()
        while isKeyword("OR") || isSymbol("||") {
            try count()
            advance()
            result = .or(result, try parseAnd())
        }
        return result
    }

    private mutating func parseAnd() throws(PredicateSyntaxError) -> ObjectPredicate {
        var result = try parseNot()
        while isKeyword("AND") || isSymbol("&&") {
            try count()
            advance()
            result = .and(result, try parseNot())
        }
        return result
    }

    private mutating func parseNot() throws(PredicateSyntaxError) -> ObjectPredicate {
        try enter()
        defer { depth -= 1 }
        if isKeyword("NOT") || isSymbol("!") {
            advance()
            return .not(try parseNot())
        }
        return try parsePrimaryPredicate()
    }

    private mutating func parsePrimaryPredicate() throws(PredicateSyntaxError) -> ObjectPredicate {
        if isKeyword("TRUEPREDICATE") {
            advance()
            return .constant(true)
        }
        if isKeyword("FALSEPREDICATE") {
            advance()
            return .constant(false)
        }
        if isSymbol("(") {
            // A parenthesised predicate, or an expression such as (a + b) > 3: try the
            // predicate first and fall back when a comparison follows the parenthesis.
            let saved = (position, argumentIndex)
            advance()
            var asPredicate: PredicateSyntaxError
            do {
                let inner = try parseOr()
                if isSymbol(")") {
                    advance()
                    if !startsComparisonOperator() && !isArithmeticOperator() {
                        return inner
                    }
                    asPredicate = error("unexpected \(describe(current)) after ')'")
                } else {
                    asPredicate = error("expected ')' to close the parenthesis, found \(describe(current))")
                }
            } catch {
                asPredicate = error
            }
            (position, argumentIndex) = saved
            do {
                return .comparison(try parseComparison())
            } catch {
                // Report whichever reading got further into the text.
                throw error.column >= asPredicate.column ? error : asPredicate
            }
        }
        return .comparison(try parseComparison())
    }

    private func isArithmeticOperator() -> Bool {
        ["+", "-", "*", "/", "**", ".", "["].contains(where: isSymbol)
    }

    private func startsComparisonOperator() -> Bool {
        if case .symbol(let s) = current.kind { return ["==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>"].contains(s) }
        guard let k = current.keyword else { return false }
        return ["IN", "LIKE", "MATCHES", "CONTAINS", "BEGINSWITH", "ENDSWITH", "BETWEEN"].contains(k)
    }

    private mutating func parseComparison() throws(PredicateSyntaxError) -> PredicateComparison {
        var quantifier = PredicateComparison.Quantifier.direct
        switch current.keyword {
        case "ANY", "SOME": quantifier = .any
        case "ALL": quantifier = .all
        case "NONE": quantifier = .none
        default: break
        }
        if quantifier != .direct { advance() }
        let lhs = try parseExpression()
        let operatorToken = current
        let op: PredicateComparison.Operator
        switch (current.kind, current.keyword) {
        case (.symbol("=="), _), (.symbol("="), _): op = .equal
        case (.symbol("!="), _), (.symbol("<>"), _): op = .notEqual
        case (.symbol("<"), _): op = .less
        case (.symbol("<="), _), (.symbol("=<"), _): op = .lessOrEqual
        case (.symbol(">"), _): op = .greater
        case (.symbol(">="), _), (.symbol("=>"), _): op = .greaterOrEqual
        case (_, "IN"): op = .in
        case (_, "LIKE"): op = .like
        case (_, "MATCHES"): op = .matches
        case (_, "CONTAINS"): op = .contains
        case (_, "BEGINSWITH"): op = .beginsWith
        case (_, "ENDSWITH"): op = .endsWith
        case (_, "BETWEEN"): op = .between
        default:
            if current.kind == .end {
                throw error("expected a comparison operator (==, !=, <, <=, >, >=, IN, CONTAINS, BEGINSWITH, ENDSWITH, LIKE, MATCHES, BETWEEN) after the expression")
            }
            throw error("expected a comparison operator (==, !=, <, >, IN, CONTAINS, LIKE, ...), found \(describe(current))")
        }
        advance()
        var options = PredicateComparison.Options()
        if isSymbol("[") {
            let optionToken = current
            advance()
            guard case .identifier(let letters) = current.kind else {
                throw error("expected comparison options such as [c], [d], [cd] or [n]")
            }
            for letter in letters.lowercased() {
                switch letter {
                case "c": options.insert(.caseInsensitive)
                case "d": options.insert(.diacriticInsensitive)
                case "n": options.insert(.normalized)
                default: throw error("unknown comparison option '\(letter)'; expected c, d or n")
                }
            }
            advance()
            try expectSymbol("]", "after the comparison options")
            if ![.equal, .notEqual, .in, .contains, .beginsWith, .endsWith, .like, .matches].contains(op) {
                throw error("options [\(letters)] apply to string comparisons, not to \(op.rawValue)", at: optionToken)
            }
        }
        guard current.kind != .end else {
            throw error("expected an expression after '\(op.rawValue)'")
        }
        let rhs = try parseExpression()
        if op == .between {
            guard case .array(let bounds) = rhs, bounds.count == 2 else {
                throw error("BETWEEN needs two bounds written as {low, high}", at: operatorToken)
            }
        }
        return PredicateComparison(lhs, op, rhs, quantifier: quantifier, options: options)
    }

    // MARK: Expressions

    private mutating func parseExpression() throws(PredicateSyntaxError) -> ObjectExpression {
        try enter()
        defer { depth -= 1 }
        return try parseAdditive()
    }

    private mutating func parseAdditive() throws(PredicateSyntaxError) -> ObjectExpression {
        var result = try parseMultiplicative()
        while isSymbol("+") || isSymbol("-") {
            let op: ObjectExpression.ArithmeticOperator = isSymbol("+") ? .add : .subtract
            try count()
            advance()
            result = .arithmetic(op, result, try parseMultiplicative())
        }
        return result
    }

    private mutating func parseMultiplicative() throws(PredicateSyntaxError) -> ObjectExpression {
        var result = try parsePower()
        while isSymbol("*") || isSymbol("/") {
            let op: ObjectExpression.ArithmeticOperator = isSymbol("*") ? .multiply : .divide
            try count()
            advance()
            result = .arithmetic(op, result, try parsePower())
        }
        return result
    }

    private mutating func parsePower() throws(PredicateSyntaxError) -> ObjectExpression {
        let base = try parseUnary()
        if isSymbol("**") {
            try enter()
            defer { depth -= 1 }
            advance()
            return .arithmetic(.power, base, try parsePower())  // right-associative
        }
        return base
    }

    private mutating func parseUnary() throws(PredicateSyntaxError) -> ObjectExpression {
        if isSymbol("-") {
            advance()
            try enter()
            defer { depth -= 1 }
            let operand = try parseUnary()
            if case .constant(.integer(let i)) = operand { return .constant(.integer(-i)) }
            if case .constant(.double(let d)) = operand { return .constant(.double(-d)) }
            return .negate(operand)
        }
        return try parsePostfix()
    }

    private mutating func parsePostfix() throws(PredicateSyntaxError) -> ObjectExpression {
        var result = try parsePrimary()
        while true {
            if isSymbol(".") {
                try count()
                advance()
                let component = try parseKeyComponent()
                if case .keyPath(let base, let path) = result {
                    result = .keyPath(base, path + [component])
                } else {
                    result = .keyPath(result, [component])
                }
            } else if isSymbol("[") {
                try count()
                advance()
                let index: PredicateIndex
                switch current.keyword {
                case "FIRST": index = .first; advance()
                case "LAST": index = .last; advance()
                case "SIZE": index = .size; advance()
                default: index = .expression(try parseExpression())
                }
                try expectSymbol("]", "to close the index")
                result = .index(result, index)
            } else {
                return result
            }
        }
    }

    private mutating func parseKeyComponent() throws(PredicateSyntaxError) -> String {
        switch current.kind {
        case .identifier(let name):
            if Self.reservedWords.contains(name.uppercased()) {
                throw error("'\(name)' is a keyword; write #\(name) to use it as a key")
            }
            advance()
            return name
        case .escapedIdentifier(let name):
            advance()
            return name
        case .collectionOperator(let name):
            advance()
            return "@" + name
        case .formatArgument("K"):
            return try keyPathArgument().joined(separator: ".")
        default:
            throw error("expected a key after '.', found \(describe(current))")
        }
    }

    private mutating func nextArgument() throws(PredicateSyntaxError) -> PlaceholderValue {
        guard argumentIndex < arguments.count else {
            throw error("format specifier %\(current.kind == .formatArgument("K") ? "K" : "@") has no argument (\(arguments.count) given)")
        }
        defer { argumentIndex += 1 }
        return arguments[argumentIndex]
    }

    /// The next argument, which must be one value (a list stands only for `%@`).
    private mutating func nextValueArgument(for spec: String) throws(PredicateSyntaxError) -> Value {
        let token = current
        switch try nextArgument() {
        case .value(let value): return value
        case .list(let values): throw error("%\(spec) needs one value, got a list of \(values.count)", at: token)
        }
    }

    private mutating func keyPathArgument() throws(PredicateSyntaxError) -> [String] {
        let token = current
        let value = try nextValueArgument(for: "K")
        guard case .string(let path) = value, !path.isEmpty else {
            throw error("%K needs a key path given as a string, got \(value)", at: token)
        }
        advance()
        let components = path.split(separator: ".").map(String.init)
        for _ in components { try count() }
        return components
    }

    private mutating func parsePrimary() throws(PredicateSyntaxError) -> ObjectExpression {
        let token = current
        switch token.kind {
        case .integer(let i):
            advance()
            return .constant(.integer(i))
        case .float(let d):
            advance()
            return .constant(.double(d))
        case .bigNumber(let text):
            advance()
            guard let decimal = DecimalText.parse(text) else { throw error("invalid number \(text)", at: token) }
            return .constant(.decimal(decimal))
        case .string(let s):
            advance()
            return .constant(.string(s))
        case .variable(let name):
            advance()
            return .variable(name)
        case .collectionOperator(let name):
            advance()
            return .keyPath(.evaluatedObject, ["@" + name])
        case .escapedIdentifier(let name):
            advance()
            return .keyPath(.evaluatedObject, [name])
        case .formatArgument(let spec):
            switch spec {
            case "K":
                return .keyPath(.evaluatedObject, try keyPathArgument())
            case "d", "i", "D", "I":
                let value = try nextValueArgument(for: String(spec))
                advance()
                guard case .integer = value else { throw error("%\(spec) needs an integer argument, got \(value)", at: token) }
                return .constant(value)
            case "f":
                let value = try nextValueArgument(for: String(spec))
                advance()
                guard let d = value.doubleValue else { throw error("%f needs a number argument, got \(value)", at: token) }
                return .constant(.double(d))
            default:
                let argument = try nextArgument()
                advance()
                return argument.expression
            }
        case .symbol("("):
            advance()
            let inner = try parseExpression()
            try expectSymbol(")", "to close the parenthesis")
            return inner
        case .symbol("{"):
            advance()
            var items: [ObjectExpression] = []
            // A constant of the list is no operator: it counts against the list's own bound,
            // not the predicate's (`priority IN {300 numbers}` was "too long").
            func item() throws(PredicateSyntaxError) -> ObjectExpression {
                let before = nodes
                let item = try parseExpression()
                switch item {
                case .constant, .cast(.constant, _): nodes = before  // a value, or a typed one (a UUID)
                default: break
                }
                if items.count >= Self.maximumListItems { throw error("the list has more than \(Self.maximumListItems) items") }
                return item
            }
            if !isSymbol("}") {
                items.append(try item())
                while isSymbol(",") {
                    advance()
                    items.append(try item())
                }
            }
            try expectSymbol("}", "to close the array")
            return .array(items)
        case .identifier(let name):
            switch name.uppercased() {
            case "NULL", "NIL": advance(); return .constant(.null)
            case "TRUE", "YES": advance(); return .constant(.bool(true))
            case "FALSE", "NO": advance(); return .constant(.bool(false))
            case "SELF": advance(); return .evaluatedObject
            case "SUBQUERY": return try parseSubquery()
            case "CAST": return try parseCast()
            default: break
            }
            if Self.reservedWords.contains(name.uppercased()) {
                throw error("expected an expression, found the keyword \(name.uppercased()); write #\(name) to use it as a key")
            }
            advance()
            if isSymbol("(") {
                advance()
                var args: [ObjectExpression] = []
                if !isSymbol(")") {
                    args.append(try parseExpression())
                    while isSymbol(",") {
                        advance()
                        args.append(try parseExpression())
                    }
                }
                try expectSymbol(")", "to close the arguments of \(name)()")
                guard let function = PredicateFunctions.signature(name) else {
                    throw error("unknown function \(name)()\(NameSuggestion.hint(for: name, in: PredicateFunctions.names)); known: \(PredicateFunctions.names.joined(separator: ", "))", at: token)
                }
                guard function.arity.contains(args.count) else {
                    throw error("\(name)() takes \(function.arityDescription), got \(args.count)", at: token)
                }
                return .function(function.name, args)
            }
            return .keyPath(.evaluatedObject, [name])
        case .end:
            throw error("expected an expression, found the end of the predicate")
        default:
            throw error("expected an expression, found \(describe(token))")
        }
    }

    private mutating func parseSubquery() throws(PredicateSyntaxError) -> ObjectExpression {
        advance()
        try expectSymbol("(", "after SUBQUERY")
        let collection = try parseExpression()
        try expectSymbol(",", "after the SUBQUERY collection")
        guard case .variable(let variable) = current.kind else {
            throw error("expected a $variable as SUBQUERY's second argument, found \(describe(current))")
        }
        advance()
        try expectSymbol(",", "after the SUBQUERY variable")
        let predicate = try parseOr()
        try expectSymbol(")", "to close SUBQUERY")
        return .subquery(collection, variable: variable, predicate)
    }

    private mutating func parseCast() throws(PredicateSyntaxError) -> ObjectExpression {
        advance()
        try expectSymbol("(", "after CAST")
        let value = try parseExpression()
        try expectSymbol(",", "after CAST's value")
        guard case .string(let type) = current.kind else {
            throw error("expected the target type as a string, such as 'NSDate', found \(describe(current))")
        }
        let typeToken = current
        advance()
        try expectSymbol(")", "to close CAST")
        guard PredicateFunctions.castTypes.contains(type) else {
            throw error("CAST to '\(type)' is not supported; use one of \(PredicateFunctions.castTypes.sorted().joined(separator: ", "))", at: typeToken)
        }
        // Constants are converted now, so CAST literals the printer writes read back as
        // the same constant.
        if case .constant(let constant) = value {
            guard let converted = PredicateFunctions.cast(constant, to: type) else {
                throw error("cannot CAST \(constant) to \(type)", at: typeToken)
            }
            return .constant(converted)
        }
        return .cast(value, type)
    }
}

extension ObjectExpression {
    /// Parses an expression on its own (derived attributes, mapping expressions).
    public init(_ text: String) throws(PredicateSyntaxError) {
        self = try PredicateParser.parseExpression(text)
    }
}

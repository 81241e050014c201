import Foundation
import ObjectStore
import ObjectStoreModel

/// A Taskwarrior filter (task(1), "FILTER"): words joined by `and` (also where nothing is
/// written), `or`, `xor` and parentheses; ids (`12`, `1-3`, `1,3,5`) and UUIDs or their
/// first 8 or more hex digits; `+tag` and `-tag`, Taskwarrior's virtual tags
/// (``VirtualTags``); `name:value` and `name.modifier:value`; `/pattern/` and plain words,
/// searched for in the description and the annotations. It compiles to one predicate over
/// Task, the same as `--where` gives, so it runs as fast and as indexed.
struct TaskFilter: Sendable {
    indirect enum Node: Sendable {
        case and(Node, Node)
        case or(Node, Node)
        case xor(Node, Node)
        case term(Term)
    }

    enum Term: Sendable {
        case ids([ClosedRange<Int64>])
        case uuid(String)
        case tag(String, has: Bool)
        case attribute(name: String, modifier: String?, value: String, word: String)
        /// A name taskctl does not have: a user-defined attribute, when the settings define it.
        case userAttribute(name: String, modifier: String?, value: String, word: String)
        case pattern(String, regex: Bool)
    }

    /// The words as given, for messages.
    let words: [String]
    let root: Node?
    /// Whether the filter says which statuses it wants (status:, +PENDING, +COMPLETED,
    /// +DELETED, +WAITING), so a report's own status filter steps aside.
    let namesStatus: Bool
    /// Whether it asks for waiting tasks (+WAITING, status:waiting), which lists hide otherwise.
    let namesWaiting: Bool
    /// Whether it is only ids and UUIDs (`12`, `1-3,7`): commands name each missing one.
    let onlyIdentifiers: Bool
    /// The ids and UUIDs as written, in order, when ``onlyIdentifiers``.
    let identifiers: [String]
    /// `limit:N`: how many tasks a list shows (Taskwarrior's report modifier).
    var limit: Int?
    /// `limit:page`: as many as the terminal's page holds (reports).
    var limitsToPage = false

    var isEmpty: Bool { root == nil }

    static let empty = TaskFilter(words: [], root: nil, namesStatus: false, namesWaiting: false, onlyIdentifiers: false, identifiers: [], limit: nil)

    /// Attribute names (and the shortest abbreviation Taskwarrior takes is two letters).
    static let attributes = ["description", "project", "priority", "due", "wait", "scheduled", "until", "start", "end", "entry",
                             "status", "tags", "uuid", "id", "recur", "location"]
    static let dateAttributes: [String: String] = ["due": "dueDate", "wait": "waitUntil", "scheduled": "scheduled", "until": "until",
                                                   "start": "startedAt", "end": "completedAt", "entry": "createdAt"]
    static let modifiers: [String: String] = [
        "before": "<", "under": "<", "below": "<", "after": ">", "over": ">", "above": ">", "by": "<=",
        "none": "none", "any": "any", "is": "==", "equals": "==", "not": "!=", "isnt": "!==",
        "has": "~", "contains": "~", "hasnt": "!~", "startswith": "^", "left": "^", "endswith": "$", "right": "$",
        "word": "word", "noword": "noword",
    ]
    /// Taskwarrior attributes taskctl does not have: refused by name, never searched for.
    static let missingAttributes = ["modified", "imask", "template", "last", "urgency"]

    /// Taskwarrior's own fields taskctl keeps as Taskwarrior writes them (dependencies, a
    /// recurring task's template and places), filtered as attributes of their types.
    static let keptAttributes: [String: UserAttribute.Kind] = ["depends": .string, "parent": .string, "mask": .string, "rtype": .string]

    /// Parses filter words. Words that are not filter terms (an operator taskctl does not
    /// take, an unknown attribute modifier) are refused with the word named.
    static func parse(_ words: [String]) throws -> TaskFilter {
        var tokens: [String] = []
        var limit: Int?
        var limitsToPage = false
        for word in words {
            if word.lowercased().hasPrefix("limit:") {
                if word.dropFirst(6).lowercased() == "page" {
                    limitsToPage = true
                    limit = nil
                    continue
                }
                guard let n = Int(word.dropFirst(6)), n > 0 else {
                    throw CLIError.usage("'\(word)': limit takes a number of tasks, or page")
                }
                limit = n
                limitsToPage = false
                continue
            }
            tokens += split(word)
        }
        // Bounds a command line cannot need, so no input runs the parser or a predicate's
        // evaluation out of stack: 2,000 words, parentheses 50 deep.
        guard tokens.count <= 2_000 else { throw CLIError.usage("filter: \(tokens.count) words; a filter takes at most 2,000 (use --where for more)") }
        var parser = Parser(tokens: tokens)
        var identifiers: [String] = []
        var identifierRanges: [ClosedRange<Int64>] = []
        var uuids: [String] = []
        // Ids and UUIDs anywhere at the top level form one group, as in Taskwarrior:
        // `1 2 +work` is (id 1 or id 2) and +work.
        parser.tokens = try parser.tokens.filter { token in
            // Eight hex digits or more are a UUID's start, digits alone too, as in Taskwarrior.
            if let ranges = try idRanges(token), !isUUID(token) {
                identifierRanges += ranges
                identifiers.append(token)
                return false
            }
            if isUUID(token) {
                uuids.append(token.lowercased())
                identifiers.append(token)
                return false
            }
            return true
        }
        var root = try parser.expression()
        if parser.index < parser.tokens.count {
            throw CLIError.usage("filter: unexpected '\(parser.tokens[parser.index])'" + (parser.tokens[parser.index] == ")" ? " (no '(' before it)" : ""))
        }
        var group: Node?
        if !identifierRanges.isEmpty { group = .term(.ids(identifierRanges)) }
        for uuid in uuids { group = group.map { .or($0, .term(.uuid(uuid))) } ?? .term(.uuid(uuid)) }
        if let group { root = root.map { .and(group, $0) } ?? group }
        let mentions = Self.mentions(root)
        return TaskFilter(words: words, root: root, namesStatus: mentions.status, namesWaiting: mentions.waiting,
                          onlyIdentifiers: group != nil && parser.tokens.isEmpty, identifiers: identifiers, limit: limit,
                          limitsToPage: limitsToPage)
    }

    /// A word's tokens: parentheses at its ends are tokens of their own, and a word that
    /// starts with one ("(+a or +b)", quoted as one) is split at its blanks too.
    static func split(_ word: String) -> [String] {
        if word.hasPrefix("("), word.contains(where: \.isWhitespace) {
            return word.split(whereSeparator: \.isWhitespace).flatMap { split(String($0)) }
        }
        var leading = 0, text = Substring(word), trailing = 0
        while text.first == "(" { leading += 1; text = text.dropFirst() }
        // A closing parenthesis belongs to the word when the word opened it: /a(b)/.
        while text.last == ")" && text.filter({ $0 == "(" }).count < text.filter({ $0 == ")" }).count {
            trailing += 1
            text = text.dropLast()
        }
        var tokens = Array(repeating: "(", count: leading)
        if !text.isEmpty { tokens.append(String(text)) }
        tokens += Array(repeating: ")", count: trailing)
        return tokens
    }

    /// `12`, `1-3`, `1,3,5-7`: ids; nil for any other word.
    static func idRanges(_ word: String) throws -> [ClosedRange<Int64>]? {
        guard let first = word.first, first.isNumber, word.allSatisfy({ $0.isNumber || $0 == "," || $0 == "-" }) else { return nil }
        var ranges: [ClosedRange<Int64>] = []
        for part in word.split(separator: ",", omittingEmptySubsequences: false) {
            let ends = part.split(separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(ends.count), let low = Int64(ends[0]), let high = Int64(ends[ends.count - 1]), low > 0 else { return nil }
            guard low <= high else { throw CLIError.usage("filter: '\(word)': the range \(part) runs backwards (write \(high)-\(low))") }
            ranges.append(low...high)
        }
        return ranges
    }

    /// A UUID or its first 8 or more hex digits, dashes where a UUID has them.
    static func isUUID(_ word: String) -> Bool {
        let lower = word.lowercased()
        guard lower.count >= 8, lower.count <= 36 else { return false }
        let shape = Array("xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx")
        for (index, character) in lower.enumerated() {
            if shape[index] == "-" { guard character == "-" else { return false } } else { guard character.isHexDigit else { return false } }
        }
        return true
    }

    static func mentions(_ node: Node?) -> (status: Bool, waiting: Bool) {
        guard let node else { return (false, false) }
        switch node {
        case .and(let a, let b), .or(let a, let b), .xor(let a, let b):
            let x = mentions(a), y = mentions(b)
            return (x.status || y.status, x.waiting || y.waiting)
        case .term(.tag(let name, _)):
            return (["PENDING", "COMPLETED", "DELETED", "WAITING"].contains(name), name == "WAITING")
        case .term(.attribute(let name, _, let value, _)):
            let isStatus = (try? canonical(name)) == "status"
            return (isStatus, isStatus && value.lowercased() == "waiting")
        default:
            return (false, false)
        }
    }

    /// An attribute's full name from a name or an abbreviation of two letters or more.
    static func canonical(_ name: String) throws -> String? {
        let lower = name.lowercased()
        if attributes.contains(lower) { return lower }
        if ["desc": "description", "proj": "project", "pri": "priority", "loc": "location", "sched": "scheduled"][lower] != nil {
            return ["desc": "description", "proj": "project", "pri": "priority", "loc": "location", "sched": "scheduled"][lower]
        }
        guard lower.count >= 2 else { return nil }
        let matches = attributes.filter { $0.hasPrefix(lower) }
        if matches.count == 1 { return matches[0] }
        if matches.count > 1 { throw CLIError.usage("filter: '\(name)' is short for \(matches.joined(separator: " or ")); write more of it") }
        return nil
    }

    /// Recursive descent with Taskwarrior's precedence: and, then or, then xor.
    struct Parser {
        var tokens: [String]
        var index = 0
        var depth = 0

        mutating func expression() throws -> Node? {
            guard var left = try disjunction() else { return nil }
            while peek() == "xor" {
                index += 1
                guard let right = try disjunction() else { throw CLIError.usage("filter: 'xor' needs a term after it") }
                left = .xor(left, right)
            }
            return left
        }

        mutating func disjunction() throws -> Node? {
            guard var left = try conjunction() else { return nil }
            while peek() == "or" {
                index += 1
                guard let right = try conjunction() else { throw CLIError.usage("filter: 'or' needs a term after it") }
                left = .or(left, right)
            }
            return left
        }

        mutating func conjunction() throws -> Node? {
            guard var left = try primary() else { return nil }
            while let next = peek(), next != "or", next != "xor", next != ")" {
                if next == "and" { index += 1 }
                guard let right = try primary() else { throw CLIError.usage("filter: 'and' needs a term after it") }
                left = .and(left, right)
            }
            return left
        }

        mutating func primary() throws -> Node? {
            guard let token = peek() else { return nil }
            if ["or", "xor", "and", ")"].contains(token) {
                if token == ")" { return nil }
                throw CLIError.usage("filter: '\(token)' needs a term before it")
            }
            index += 1
            if token == "(" {
                depth += 1
                defer { depth -= 1 }
                guard depth <= 50 else { throw CLIError.usage("filter: parentheses nest at most 50 deep") }
                guard let inner = try expression() else { throw CLIError.usage("filter: '(' needs a term after it") }
                guard peek() == ")" else { throw CLIError.usage("filter: '(' is not closed; add ')'") }
                index += 1
                return inner
            }
            return .term(try TaskFilter.term(token))
        }

        func peek() -> String? { index < tokens.count ? tokens[index] : nil }
    }

    /// One word as a term.
    static func term(_ word: String) throws -> Term {
        if ["<", "<=", ">", ">=", "=", "==", "!=", "!==", "~", "!~", "!"].contains(word) {
            throw CLIError.usage("filter: '\(word)': taskctl's filters take Taskwarrior's attribute modifiers (due.before:DATE, project.not:NAME) or --where PREDICATE, not algebraic operators")
        }
        if (word.hasPrefix("+") || word.hasPrefix("-")) && word.count > 1 {
            let name = String(word.dropFirst())
            if name.allSatisfy({ $0.isLetter || $0.isNumber || "_-.@".contains($0) }), name.first?.isLetter == true || name.first == "_" {
                return .tag(name, has: word.hasPrefix("+"))
            }
        }
        if word.count >= 2, word.hasPrefix("/") {
            // /pattern/ (a regular expression, as Taskwarrior's default rc.regex=on).
            let body = word.dropFirst()
            guard body.hasSuffix("/"), body.count >= 2 else { throw CLIError.usage("filter: '\(word)': a pattern ends with '/': /pattern/") }
            return .pattern(String(body.dropLast()), regex: true)
        }
        if let separator = word.firstIndex(where: { $0 == ":" || $0 == "=" }), separator != word.startIndex {
            let key = String(word[..<separator])
            let value = String(word[word.index(after: separator)...])
            let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
            if let name = try canonical(parts[0]) {
                let modifier = parts.count == 2 ? parts[1].lowercased() : nil
                if let modifier, modifiers[modifier] == nil {
                    throw CLIError.usage("filter: '\(word)': unknown attribute modifier '\(modifier)'; modifiers: \(modifiers.keys.sorted().joined(separator: ", "))")
                }
                return .attribute(name: name, modifier: modifier, value: value, word: word)
            }
            if missingAttributes.contains(parts[0].lowercased()) {
                throw CLIError.usage("filter: '\(word)': '\(parts[0])' is a Taskwarrior attribute taskctl does not have yet; nothing was selected by it")
            }
            if word.hasPrefix("rc.") || word.hasPrefix("rc:") {
                throw CLIError.usage("'\(word)': configuration overrides go before the command or after it, not inside a filter group")
            }
            if UserAttribute.isName(parts[0]) && !value.contains(" ") && !value.hasPrefix("//") {
                let modifier = parts.count == 2 ? parts[1].lowercased() : nil
                if let modifier, modifiers[modifier] == nil {
                    throw CLIError.usage("filter: '\(word)': unknown attribute modifier '\(modifier)'; modifiers: \(modifiers.keys.sorted().joined(separator: ", "))")
                }
                return .userAttribute(name: parts[0].lowercased(), modifier: modifier, value: value, word: word)
            }
        }
        // A plain word: searched for in the description and the annotations, as written.
        return .pattern(word, regex: false)
    }
}

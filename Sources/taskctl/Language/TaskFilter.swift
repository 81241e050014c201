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

    /// The filter within the applied context (Taskwarrior's): `list`, and a command that
    /// changes the tasks a filter selects, selects only tasks the context's read filter
    /// selects too; a filter of ids or UUIDs is left as it is, and so are `export` and `show`
    /// (as in Taskwarrior: an export is everything asked for, whatever the context).
    func within(context config: Config, command: String) throws -> TaskFilter {
        guard let name = config.context, CommandWords.filtered.contains(command) || config.reports[command] != nil, !["export", "show", "ids", "uuids", "_ids", "_uuids"].contains(command),
              identifiers.isEmpty, command == "list" || command == "count" || !isEmpty else { return self }
        guard let filters = config.contexts[name] else { throw CLIError.usage("the context '\(name)' is not defined (taskctl context list; taskctl context none)") }
        guard let read = filters.read else { return self }
        let contextWords = try ContextFilters.words(read)
        guard !contextWords.isEmpty else { return self }
        let limits = words.filter { $0.lowercased().hasPrefix("limit:") }
        let own = words.filter { !$0.lowercased().hasPrefix("limit:") }
        return try TaskFilter.parse(["("] + contextWords + [")"] + (own.isEmpty ? [] : ["("] + own + [")"]) + limits)
    }

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

    // MARK: Compiling

    /// The filter as one predicate over Task (nil when empty).
    func predicate(in scope: FilterScope) throws -> ObjectPredicate? {
        guard let root else { return nil }
        return try compile(root, scope)
    }

    private func compile(_ node: Node, _ scope: FilterScope) throws -> ObjectPredicate {
        switch node {
        case .and(let a, let b): return .and(try compile(a, scope), try compile(b, scope))
        case .or(let a, let b): return .or(try compile(a, scope), try compile(b, scope))
        case .xor(let a, let b):
            let x = try compile(a, scope), y = try compile(b, scope)
            return .or(.and(x, .not(y)), .and(.not(x), y))
        case .term(let term): return try compile(term, scope)
        }
    }

    private func compile(_ term: Term, _ scope: FilterScope) throws -> ObjectPredicate {
        switch term {
        case .ids(let ranges):
            let uris = ranges.flatMap { range in
                range.count > 100_000 ? [] : range.map { Value.uri(ObjectID(entityName: "Task", storeIdentifier: scope.context.coordinator.storeIdentifier, key: .permanent($0)).uriRepresentation) }
            }
            if ranges.contains(where: { $0.count > 100_000 }) { throw CLIError.usage("filter: an id range may span at most 100,000 ids") }
            return try ObjectPredicate(format: "SELF IN %@", placeholders: [.list(uris)])
        case .uuid(let text):
            if let uuid = UUID(uuidString: text) { return try ObjectPredicate(format: "uuid == %@", .uuid(uuid)) }
            let matches = try scope.app.tasks(scope.context).filter { task in
                if case .uuid(let uuid) = task["uuid"] { return uuid.uuidString.lowercased().hasPrefix(text) }
                return false
            }
            return try scope.among(matches)
        case .tag(let name, let has):
            let predicate = try VirtualTags.predicate(name, scope: scope) ?? ObjectPredicate(format: "ANY tags.name ==[c] %@", .string(name))
            return has ? predicate : .not(predicate)
        case .pattern(let text, let regex):
            return try Self.search(text, regex: regex, in: ["title"], annotations: true, scope: scope)
        case .attribute(let name, let modifier, let value, let word):
            return try attribute(name, modifier: modifier, value: value, word: word, scope)
        case .userAttribute(let name, let modifier, let value, let word):
            if scope.app.config.userAttributes[name] == nil, let kind = Self.keptAttributes[name] {
                var kept = UserAttribute()
                kept.kind = kind
                return try userAttribute(name, kept, modifier: modifier, value: value, word: word, scope)
            }
            guard let definition = scope.app.config.userAttributes[name] else {
                // Not defined: a word with a colon is text to search for, as Taskwarrior reads it,
                // unless it looks like an attribute given a value.
                if modifier == nil && value.isEmpty { return try compile(.pattern(word, regex: false), scope) }
                throw CLIError.usage("filter: '\(word)': '\(name)' is not an attribute taskctl knows (attributes: \(Self.attributes.joined(separator: ", ")), or uda.\(name).type in the settings); to search for the text, write /\(word)/")
            }
            return try userAttribute(name, definition, modifier: modifier, value: value, word: word, scope)
        }
    }

    /// A user-defined attribute with Taskwarrior's operators, compared as its type says (a
    /// string with `uda.NAME.values` in that order: the first is "above" the others, and a
    /// task without a value above them all unless the list names the empty value).
    private func userAttribute(_ name: String, _ definition: UserAttribute, modifier: String?, value: String, word: String,
                               _ scope: FilterScope) throws -> ObjectPredicate {
        let op = modifier.map { Self.modifiers[$0] ?? "=" } ?? "="
        let having = try scope.tasks(withUserAttribute: name) { _ in true }
        if op == "none" || (value.isEmpty && ["=", "=="].contains(op)) { return .not(having) }
        if op == "any" || (value.isEmpty && ["!=", "!=="].contains(op)) { return having }
        let negative = ["!=", "!==", "!~", "noword"].contains(op)
        let positive = ["!=": "=", "!==": "==", "!~": "~", "noword": "word"][op] ?? op
        let caseless = !scope.app.config.searchCaseSensitive
        let test: (String) -> Bool
        switch definition.kind {
        case .numeric:
            guard let number = Double(value) else { throw CLIError.usage("filter: '\(word)': \(name) is a number") }
            test = { text in
                // No value is 0 in an order (as Taskwarrior's empty value is), and equals nothing.
                if text.isEmpty && !["<", ">", "<="].contains(positive) { return false }
                guard let stored = text.isEmpty ? 0 : Double(text) else { return false }
                switch positive {
                case "<": return stored < number
                case ">": return stored > number
                case "<=": return stored <= number
                default: return stored == number
                }
            }
        case .date:
            let date = try FilterValue(dates: scope.app.dates).date(value)
            let calendar = Calendar.taskctl(in: scope.app.timeZone)
            test = { text in
                guard let stored = TaskwarriorFormat.parseDate(text) else { return false }
                switch positive {
                case "<": return stored < date
                case ">": return stored > date
                case "<=": return stored <= date
                case "==": return stored == date
                default: return calendar.isDate(stored, inSameDayAs: date)
                }
            }
        case .duration:
            guard let seconds = FilterValue.seconds(Substring(value)) else { throw CLIError.usage("filter: '\(word)': \(name) is a duration") }
            test = { text in
                guard let stored = FilterValue.seconds(Substring(text)) else { return false }
                switch positive {
                case "<": return stored < seconds
                case ">": return stored > seconds
                case "<=": return stored <= seconds
                default: return stored == seconds
                }
            }
        case .string:
            // Taskwarrior ranks values from the list's end: a value missing from it ranks first.
            let count = definition.values?.count ?? 0
            let rank: (String) -> Int = { text in definition.values?.firstIndex(of: text).map { count - 1 - $0 } ?? count }
            let pattern: NSRegularExpression?
            switch positive {
            case "~", "word", "^", "$":
                let body = positive == "word" ? "\\b\(value)\\b" : positive == "^" ? "^" + value : positive == "$" ? value + "$" : value
                guard let regex = try? NSRegularExpression(pattern: body, options: caseless ? [.caseInsensitive] : []) else {
                    throw CLIError.usage("filter: '\(word)': not a regular expression")
                }
                pattern = regex
            default: pattern = nil
            }
            test = { text in
                if let pattern { return pattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil }
                switch positive {
                case "==": return text == value
                case "<", ">", "<=":
                    if definition.values != nil {
                        let a = rank(text), b = rank(value)
                        return positive == "<" ? a < b : positive == ">" ? a > b : a <= b
                    }
                    guard !text.isEmpty else { return false }
                    return positive == "<" ? text < value : positive == ">" ? text > value : text <= value
                default: return text.hasPrefix(value)
                }
            }
        }
        var matching = try scope.tasks(withUserAttribute: name, where: test)
        // A task without a value is read as the empty value, as Taskwarrior reads it.
        if test("") { matching = .or(matching, .not(having)) }
        return negative ? .not(matching) : matching
    }

    /// Taskwarrior's `~`: a regular expression (or, not `regex`, text) anywhere in the value,
    /// case-sensitive unless `search.case.sensitive` is off; with `annotations`, any of the
    /// task's annotations matching matches too.
    static func search(_ text: String, regex: Bool, in keys: [String], annotations: Bool, scope: FilterScope) throws -> ObjectPredicate {
        let caseless = !scope.app.config.searchCaseSensitive
        let plain = !regex || !text.contains(where: { "\\^$.|?*+()[]{}".contains($0) })
        var clauses: [ObjectPredicate] = []
        let paths = keys + (annotations ? ["annotations.text"] : [])
        for path in paths {
            let any = path.contains(".") ? "ANY " : ""
            if plain {
                clauses.append(try ObjectPredicate(format: "\(any)\(path) CONTAINS\(caseless ? "[c]" : "") %@", .string(text)))
            } else {
                if (try? NSRegularExpression(pattern: text)) == nil { throw CLIError.usage("filter: '/\(text)/' is not a regular expression") }
                let whole = "(?s)\(caseless ? "(?i)" : "").*(?:\(text)).*"
                clauses.append(try ObjectPredicate(format: "\(any)\(path) MATCHES %@", .string(whole)))
            }
        }
        return clauses.dropFirst().reduce(clauses[0]) { .or($0, $1) }
    }

    private func attribute(_ name: String, modifier: String?, value: String, word: String, _ scope: FilterScope) throws -> ObjectPredicate {
        let op = modifier.map { Self.modifiers[$0] ?? "=" } ?? "="
        let app = scope.app
        func refuse(_ why: String) -> CLIError { CLIError.usage("filter: '\(word)': \(why)") }
        switch name {
        case "description":
            // Taskwarrior's patterns (has, startswith, endswith, word) search the annotations too.
            switch op {
            case "^", "$", "word", "noword":
                let pattern = op == "^" ? "^" + value : op == "$" ? value + "$" : "\\b" + value + "\\b"
                let positive = try Self.search(pattern, regex: true, in: ["title"], annotations: true, scope: scope)
                return op == "noword" ? .not(positive) : positive
            default:
                return try Self.string(op, value: value, path: "title", search: ["title"], annotations: true, caseless: false, word: word, scope: scope)
            }
        case "recur":
            return try Self.string(op, value: value.lowercased(), path: "recurrence", search: ["recurrence"], annotations: false, caseless: true, word: word, scope: scope)
        case "project", "location":
            let entity = name == "project" ? "Project" : "Location"
            switch op {
            case "none": return try ObjectPredicate("\(name) == nil")
            case "any": return try ObjectPredicate("\(name) != nil")
            case "<", ">", "<=": throw refuse("\(name)s compare by name and pattern, not by order")
            default: break
            }
            // The names that match, then the tasks that refer to one of them (no task's
            // related object is read). A location matches by its whole name (taskctl's own
            // attribute); a project as Taskwarrior does: `project:home` is every project whose
            // name starts with "home" (home.garden, and homework too).
            let positive = ["=": "=", "!=": "=", "==": "==", "!==": "==", "~": "~", "!~": "~", "^": "^", "$": "$", "word": "word", "noword": "word"][op] ?? op
            let partial = name == "project" ? "BEGINSWITH[c]" : "==[c]"
            var matching: ObjectPredicate
            switch positive {
            case "=": matching = try ObjectPredicate(format: "name \(partial) %@", .string(value))
            case "==": matching = try ObjectPredicate(format: "name ==[c] %@", .string(value))
            default: matching = try Self.patternPredicate(positive, value: value, path: "name", caseless: true)
            }
            if value.isEmpty && (positive == "=" || positive == "==") {
                return ["!=", "!=="].contains(op) ? try ObjectPredicate("\(name) != nil") : try ObjectPredicate("\(name) == nil")
            }
            let objects = try scope.context.fetch(FetchRequest(entityName: entity, predicate: matching))
            let among = try ObjectPredicate(format: "\(name) IN %@", placeholders: [.list(objects.map { .uri($0.objectID.uriRepresentation) })])
            return ["!=", "!==", "!~", "noword"].contains(op) ? .not(among) : among
        case "priority":
            if value.isEmpty || ["none", "any"].contains(op) {
                let none = try ObjectPredicate("priority == 0")
                return op == "any" || ((op == "!=" || op == "!==") && value.isEmpty) ? .not(none) : none
            }
            let level = try Priority.parse(value)
            switch op {
            case "=", "==": return try ObjectPredicate(format: "priority == %d", .integer(level))
            case "!=", "!==": return try ObjectPredicate(format: "priority != %d", .integer(level))
            // High above medium above low above none.
            case "<": return try ObjectPredicate(format: "priority < %d", .integer(level))
            case ">": return try ObjectPredicate(format: "priority > %d", .integer(level))
            case "<=": return try ObjectPredicate(format: "priority <= %d", .integer(level))
            default: throw refuse("priority takes :, .is, .not, .isnt, .above, .below, .by, .any and .none")
            }
        case "status":
            if ["none", "any"].contains(op) { return .constant(op == "any") }
            guard ["=", "==", "!=", "!=="].contains(op) else { throw refuse("status takes :, .is, .not and .isnt") }
            let selected: ObjectPredicate
            switch value.lowercased() {
            case "pending": selected = .and(try app.pending(), .not(try ObjectPredicate(format: "waitUntil > %@", .date(app.now))))
            case "completed": selected = try ObjectPredicate("status == 'done'")
            case "deleted": selected = .or(try ObjectPredicate("status == 'deleted'"), try app.expired())
            case "waiting": selected = .and(try app.pending(), try ObjectPredicate(format: "waitUntil > %@", .date(app.now)))
            case "recurring": selected = try ObjectPredicate("status == 'recurring'")
            default: throw refuse("status is pending, completed, deleted, waiting or recurring")
            }
            return op.hasPrefix("!") ? .not(selected) : selected
        case "tags":
            switch op {
            case "none": return try ObjectPredicate("tags.@count == 0")
            case "any": return try ObjectPredicate("tags.@count > 0")
            case "=", "==", "~": break
            case "!=", "!==", "!~": return .not(try compile(.tag(value, has: true), scope))
            default: throw refuse("tags take :, .has, .hasnt, .is, .not, .any and .none")
            }
            return try compile(.tag(value, has: true), scope)
        case "uuid":
            switch op {
            case "=": return try compile(.uuid(value.lowercased()), scope)
            case "==": return try UUID(uuidString: value).map { try ObjectPredicate(format: "uuid == %@", .uuid($0)) } ?? .constant(false)
            case "!=": return .not(try compile(.uuid(value.lowercased()), scope))
            case "!==": return try UUID(uuidString: value).map { .not(try ObjectPredicate(format: "uuid == %@", .uuid($0))) } ?? .constant(true)
            default: throw refuse("uuid takes :, .is, .not and .isnt")
            }
        case "id":
            guard let ranges = try Self.idRanges(value) else { throw refuse("an id is a number, a range (1-3) or a list (1,3)") }
            switch op {
            case "=", "==": return try compile(.ids(ranges), scope)
            case "!=", "!==": return .not(try compile(.ids(ranges), scope))
            default: throw refuse("id takes :, .is, .not and .isnt")
            }
        default:
            guard let key = Self.dateAttributes[name] else { throw refuse("unknown attribute") }
            switch op {
            case "none": return try ObjectPredicate("\(key) == nil")
            case "any": return try ObjectPredicate("\(key) != nil")
            default: break
            }
            if value.isEmpty {
                return op.hasPrefix("!") ? try ObjectPredicate("\(key) != nil") : try ObjectPredicate("\(key) == nil")
            }
            let values = FilterValue(dates: app.dates)
            let date = try values.date(value)
            switch op {
            case "=", "!=":
                // On that day (Taskwarrior's partial match of dates).
                let calendar = Calendar.taskctl(in: app.timeZone)
                let start = calendar.startOfDay(for: date)
                let next = calendar.date(byAdding: .day, value: 1, to: start) ?? start.addingTimeInterval(86_400)
                let same = try ObjectPredicate(format: "\(key) >= %@ AND \(key) < %@", .date(start), .date(next))
                return op == "=" ? same : .not(same)
            case "==": return try ObjectPredicate(format: "\(key) == %@", .date(date))
            case "!==": return .not(try ObjectPredicate(format: "\(key) == %@", .date(date)))
            case "<", ">", "<=": return try ObjectPredicate(format: "\(key) \(op) %@", .date(date))
            default: throw refuse("dates take :, .is, .not, .isnt, .before, .after, .by, .any and .none")
            }
        }
    }

    /// A string attribute with Taskwarrior's operators: `=` starts with, `==` is, `~` has.
    static func string(_ op: String, value: String, path: String, search keys: [String], annotations: Bool, caseless: Bool, word: String, scope: FilterScope) throws -> ObjectPredicate {
        let c = caseless ? "[c]" : ""
        switch op {
        case "none": return try ObjectPredicate("\(path) == nil OR \(path) == ''")
        case "any": return try ObjectPredicate("\(path) != nil AND \(path) != ''")
        case "=", "!=":
            let positive = value.isEmpty ? try ObjectPredicate("\(path) == nil OR \(path) == ''") : try ObjectPredicate(format: "\(path) BEGINSWITH\(c) %@", .string(value))
            return op == "=" ? positive : .not(positive)
        case "==", "!==":
            let positive = value.isEmpty ? try ObjectPredicate("\(path) == nil OR \(path) == ''") : try ObjectPredicate(format: "\(path) ==\(c) %@", .string(value))
            return op == "==" ? positive : .not(positive)
        case "~", "!~":
            let positive = try search(value, regex: true, in: keys, annotations: annotations, scope: scope)
            return op == "~" ? positive : .not(positive)
        case "^", "$", "word", "noword":
            let positive = try patternPredicate(op == "noword" ? "word" : op, value: value, path: path, caseless: caseless || !scope.app.config.searchCaseSensitive)
            return op == "noword" ? .not(positive) : positive
        default:
            throw CLIError.usage("filter: '\(word)': text compares by :, .is, .isnt, .not, .has, .hasnt, .startswith, .endswith, .word, .noword, .any and .none")
        }
    }

    /// startswith, endswith, word and has as one predicate on `path`.
    static func patternPredicate(_ op: String, value: String, path: String, caseless: Bool) throws -> ObjectPredicate {
        let c = caseless ? "[c]" : ""
        switch op {
        case "^": return try ObjectPredicate(format: "\(path) BEGINSWITH\(c) %@", .string(value))
        case "$": return try ObjectPredicate(format: "\(path) ENDSWITH\(c) %@", .string(value))
        case "word":
            let escaped = NSRegularExpression.escapedPattern(for: value)
            return try ObjectPredicate(format: "\(path) MATCHES %@", .string("(?s)\(caseless ? "(?i)" : "").*\\b\(escaped)\\b.*"))
        default:
            return try ObjectPredicate(format: "\(path) CONTAINS\(c) %@", .string(value))
        }
    }
}

import Foundation
import ObjectStore
import ObjectStoreModel

/// A filter compiled into a predicate over Task: its terms read the tasks, the settings and
/// the clock of the running app.
extension TaskFilter {
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

/// The words after the command: options (`--priority high`, `--priority=high`), flags
/// (`--json`) and positional words. Options are known per command so values are never
/// mistaken for flags.
struct Arguments {
    private(set) var positional: [String] = []
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    /// Parses `words` with the options ``CommandDefinition`` gives `command`.
    init(_ words: [String], for command: String) throws {
        guard let definition = CommandDefinition.named(command) else { throw CLIError.usage("unknown command '\(command)'") }
        try self.init(words, valued: definition.valued, switches: definition.switches, command: command,
                      taskwarriorAttributes: definition.taskwarriorAttributes)
    }

    /// Parses `words`; `valued` options take a value, `switches` are flags. With
    /// `taskwarriorAttributes`, words such as `+tag` and `due:tomorrow` are options too.
    init(_ words: [String], valued: Set<String>, switches: Set<String>, command: String, taskwarriorAttributes: Bool = false) throws {
        var i = 0
        var onlyPositional = false
        while i < words.count {
            let word = words[i]
            i += 1
            if onlyPositional || !word.hasPrefix("--") || word == "--" {
                if word == "--" && !onlyPositional { onlyPositional = true; continue }
                if !onlyPositional, taskwarriorAttributes, try taskwarriorAttribute(word, valued: valued, switches: switches, command: command) { continue }
                positional.append(word)
                continue
            }
            var name = String(word.dropFirst(2))
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if valued.contains(name) {
                if let inline {
                    values[name] = inline
                } else {
                    guard i < words.count else { throw CLIError.usage("--\(name) needs a value (see taskctl help \(command))") }
                    values[name] = words[i]
                    i += 1
                }
                try OptionValue.check(name, values[name] ?? "")
            } else if switches.contains(name) {
                guard inline == nil else { throw CLIError.usage("--\(name) takes no value") }
                flags.insert(name)
            } else {
                let known = (valued.map { "--" + $0 } + switches.map { "--" + $0 }).sorted()
                let hint = NameHint.closest(to: "--" + name, in: known).map { " (did you mean \($0)?)" } ?? ""
                throw CLIError.usage("unknown option --\(name) for '\(command)'\(hint); see taskctl help \(command)")
            }
        }
    }

    /// Taskwarrior's attribute words, for its users' habits: `+tag` (and `-tag` where
    /// `--untag` exists), `due:`, `project:`/`proj:`, `priority:`/`pri:` (H, M, L),
    /// `location:`/`loc:`, read as the matching option. Attributes taskctl does not have
    /// are refused with a hint rather than stored as text. `--` ends this: words after it
    /// are text as written. An empty value clears the field, as in Taskwarrior: `due:` is
    /// `--no-due` in `edit` and no due date in `add`, `pri:` no priority.
    private mutating func taskwarriorAttribute(_ word: String, valued: Set<String>, switches: Set<String>, command: String) throws -> Bool {
        func add(_ option: String, _ value: String) throws {
            guard valued.contains(option) else {
                throw CLIError.usage("'\(word)' is Taskwarrior's syntax; '\(command)' has no --\(option) (see taskctl help \(command))")
            }
            if option == "tag" || option == "untag" || option == "depends", let existing = values[option], !existing.isEmpty {
                values[option] = value.isEmpty ? existing : existing + "," + value
            } else {
                values[option] = value
            }
        }
        let isName: (Substring) -> Bool = { !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || "_-.@".contains($0) } }
        if word.hasPrefix("+"), isName(word.dropFirst()) {
            try add("tag", String(word.dropFirst()))
            return true
        }
        if word.hasPrefix("-"), isName(word.dropFirst()), word.dropFirst().first?.isLetter == true, valued.contains("untag") {
            try add("untag", String(word.dropFirst()))
            return true
        }
        guard let colon = word.firstIndex(of: ":"), colon != word.startIndex else { return false }
        let key = word[..<colon].lowercased()
        let value = String(word[word.index(after: colon)...])
        // description:TEXT is the text (add, modify) or --text (edit).
        if key == "description" || key == "desc" {
            if valued.contains("text") {
                values["text"] = value
            } else {
                positional.append(value)
            }
            return true
        }
        let options = ["due": "due", "project": "project", "proj": "project", "pro": "project", "priority": "priority", "pri": "priority",
                       "location": "location", "loc": "location", "wait": "wait", "scheduled": "scheduled", "sched": "scheduled",
                       "recur": "recur", "until": "until", "depends": "depends", "dep": "depends", "depe": "depends", "depen": "depends",
                       "depend": "depends",
                       // Filters of `list`: attribute modifiers and status.
                       "due.before": "due-before", "due.after": "due-after", "due.by": "due-by", "project.not": "project-not",
                       "proj.not": "project-not", "description.contains": "text-contains", "desc.contains": "text-contains", "status": "status"]
        let missing = ["start", "end", "entry", "annotation"]
        if let option = options[key] {
            if option == "depends" && valued.contains("depends") {
                // depends: (empty) removes every dependency, as in Taskwarrior.
                try add(option, value)
                return true
            }
            if value.isEmpty {
                if option == "priority" && valued.contains("priority") {
                    try add("priority", "none")
                    return true
                }
                if switches.contains("no-" + option) {
                    flags.insert("no-" + option)
                    return true
                }
                // `add` starts without the field: nothing to clear.
                if command == "add" && valued.contains(option) { return true }
                throw CLIError.usage("'\(word)' has no value; write \(key):VALUE or --\(option) VALUE")
            }
            if command == "list" && ["due", "wait", "scheduled", "recur", "until"].contains(option) {
                throw CLIError.usage(option == "due" ? "'\(word)': list filters by due date with --due-before DATE and --due-after DATE"
                                                     : "'\(word)': list filters by \(option) with --where (e.g. --where \"\(option == "wait" ? "waitUntil" : option == "recur" ? "recurrence" : option) != nil\")")
            }
            try add(option, value)
            return true
        }
        if missing.contains(key) && !value.isEmpty {
            throw CLIError.usage("'\(word)' is a Taskwarrior attribute taskctl does not have yet; nothing was changed (put text after -- to keep it as text)")
        }
        return false
    }

    /// Refuses words beyond the `count` a command takes (they were silently ignored).
    func allowWords(_ count: Int, command: String) throws {
        guard positional.count > count else { return }
        let extra = positional.dropFirst(count).joined(separator: " ")
        throw CLIError.usage("'\(command)' takes \(count == 0 ? "no words" : "\(count) word\(count == 1 ? "" : "s")"), not '\(extra)'; see taskctl help \(command)")
    }

    func value(_ name: String) -> String? { values[name] }
    func has(_ name: String) -> Bool { flags.contains(name) || values[name] != nil }
}

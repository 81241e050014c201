/// A command line as Taskwarrior reads one, `[FILTER] COMMAND [WORDS]`, with its
/// configuration overrides (`rc.NAME=VALUE`, `rc.NAME:VALUE`, `rc:FILE`) taken out wherever
/// they stand before `--`. taskctl's own form, `COMMAND WORDS`, is the same line without a
/// filter.
struct CommandWords {
    var overrides: [(key: String, value: String)] = []
    /// `rc:FILE`: the settings file to read instead of the usual one.
    var configFile: String?
    /// The words before the command.
    var filter: [String] = []
    /// The command as typed (nil when the line has none).
    var command: String?
    /// The words after it.
    var rest: [String] = []
    /// The command's word as typed (an alias or abbreviation of it).
    var typed: String?

    /// Taskwarrior's other names for taskctl's commands.
    static let aliases = ["info": "show", "information": "show", "rm": "delete", "synchronize": "sync", "history": "history.monthly"]

    /// Taskwarrior 2.6's commands taskctl does not have (yet): refused by name, never read
    /// as a word to search for.
    static let missing: Set<String> = [
        "burndown", "burndown.daily", "burndown.monthly", "burndown.weekly", "calendar",
        "colors", "columns", "commands", "diagnostics", "execute", "ghistory", "ghistory.annual", "ghistory.daily",
        "ghistory.monthly", "ghistory.weekly", "history.daily", "history.weekly",
        "logo", "news", "purge",
        "reports", "udas", "_aliases", "_columns", "_commands", "_config",
        "_context", "_show", "_tags", "_udas", "_unique", "_urgency", "_version", "_zshattributes",
        "_zshcommands", "_zshids", "_zshuuids",
    ]

    /// Commands that take a filter before them.
    static let filtered: Set<String> = Set<String>(["list", "export", "done", "delete", "reopen", "start", "stop", "edit", "modify", "annotate", "show",
                                        "append", "prepend", "duplicate", "denotate", "count", "ids", "uuids", "_ids", "_uuids",
                                        "projects", "_projects", "tags", "summary", "history.monthly", "history.annual", "timesheet"])
        .union(ReportDefinition.builtInNames)

    static func read(_ words: [String], commands: Set<String>) throws -> CommandWords {
        var result = CommandWords()
        var remaining: [String] = []
        var textOnly = false
        var malformed: String?
        for word in words {
            if textOnly || word == "--" {
                textOnly = true
                remaining.append(word)
                continue
            }
            if word.hasPrefix("rc:") {
                let file = String(word.dropFirst(3))
                guard !file.isEmpty else { throw CLIError.usage("'rc:' needs a settings file: rc:FILE") }
                result.configFile = file
                continue
            }
            if word.hasPrefix("rc.") {
                let body = word.dropFirst(3)
                guard let separator = body.firstIndex(where: { $0 == "=" || $0 == ":" }), separator != body.startIndex else {
                    // A DOM reference of _get (rc.dateformat); anywhere else, refused below.
                    malformed = malformed ?? word
                    remaining.append(word)
                    continue
                }
                result.overrides.append((String(body[..<separator]), String(body[body.index(after: separator)...])))
                continue
            }
            remaining.append(word)
        }
        // The first word that names a command is the command; what comes before it is a
        // filter. Options (--name) before any command belong to no filter.
        if let index = remaining.firstIndex(where: { command(named: $0, in: commands) != nil }), !remaining[..<index].contains("--") {
            result.filter = Array(remaining[..<index])
            result.command = command(named: remaining[index], in: commands)
            result.typed = remaining[index]
            result.rest = Array(remaining[(index + 1)...])
        } else {
            result.filter = remaining
        }
        if let malformed, result.command != "_get" || result.filter.contains(malformed) {
            throw CLIError.usage("'\(malformed)': a configuration override is rc.NAME=VALUE")
        }
        return result
    }

    /// Moves options (`--json`, `--limit 5`) out of a line without a command into the words
    /// of the command it runs: `valued` names the options that take a value.
    mutating func moveOptionsToTheCommand(valued: Set<String>) {
        var filterWords: [String] = [], options: [String] = []
        var index = 0
        while index < filter.count {
            let word = filter[index]
            index += 1
            guard word.hasPrefix("--"), word != "--" else { filterWords.append(word); continue }
            options.append(word)
            if valued.contains(String(word.dropFirst(2))), index < filter.count {
                options.append(filter[index])
                index += 1
            }
        }
        filter = filterWords
        rest = options + rest
    }

    /// A command's name, or (as Taskwarrior reads them) the first two letters or more of
    /// exactly one command's name: `mod`, `ann`, `li`.
    static func command(named word: String, in commands: Set<String>) -> String? {
        if commands.contains(word) || missing.contains(word) { return word }
        if let name = aliases[word] { return name }
        guard word.count >= 2, word.allSatisfy({ $0.isLetter && $0.isLowercase }) else { return nil }
        let matches = commands.union(missing).union(aliases.keys).filter { $0.hasPrefix(word) }
        guard matches.count == 1, let only = matches.first else { return nil }
        return aliases[only] ?? only
    }
}

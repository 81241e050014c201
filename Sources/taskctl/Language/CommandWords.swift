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

    /// Commands that take a filter before them.
    static let filtered: Set<String> = ["list", "export", "done", "delete", "reopen", "start", "stop", "edit", "modify", "annotate", "show",
                                        "append", "prepend", "duplicate", "denotate"]

    static func read(_ words: [String], commands: Set<String>) throws -> CommandWords {
        var result = CommandWords()
        var remaining: [String] = []
        var textOnly = false
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
                    throw CLIError.usage("'\(word)': a configuration override is rc.NAME=VALUE")
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
            result.rest = Array(remaining[(index + 1)...])
        } else {
            result.filter = remaining
        }
        return result
    }

    /// A command's name, or (as Taskwarrior reads them) the first two letters or more of
    /// exactly one command's name: `mod`, `ann`, `li`.
    static func command(named word: String, in commands: Set<String>) -> String? {
        if commands.contains(word) { return word }
        guard word.count >= 2, word.allSatisfy({ $0.isLetter && $0.isLowercase }) else { return nil }
        let matches = commands.filter { $0.hasPrefix(word) }
        return matches.count == 1 ? matches.first : nil
    }
}

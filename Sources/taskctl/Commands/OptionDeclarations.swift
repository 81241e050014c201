/// What each option's value is, and each command's subcommands, declared once: `Arguments`
/// checks a value against it, completion offers from it, and a test holds every command's
/// help to it (each value an option takes is named in the help of the commands that take it).
enum OptionValue: Sendable, Equatable {
    /// One of these words.
    case choice([String])
    /// A name of an entity's objects in the store (completion offers them).
    case names(entity: String)
    /// A priority (`Priority.names`, or a letter, a digit).
    case priority
    /// Sort keys (``ListSort/keys``), comma-separated.
    case sortKeys
    /// Anything else: text, a date, a number, a predicate, a path.
    case text

    /// Every option's value by its name (the same name means the same value in every command).
    static let declared: [String: OptionValue] = [
        "priority": .priority,
        "location": .names(entity: "Location"),
        "project": .names(entity: "Project"), "project-not": .names(entity: "Project"),
        "tag": .names(entity: "Tag"), "untag": .names(entity: "Tag"),
        "group-by": .choice(groupKeys),
        "format": .choice(formats),
        "color": .choice(Config.colors),
        "sort": .sortKeys,
    ]

    static let groupKeys = ["location", "priority", "due", "project"]
    static let formats = ["taskctl", "taskwarrior", "todo.txt"]

    /// The words that may follow a command first (its subcommands), for those that have them.
    static let subcommands: [String: [String]] = [
        "store": ["info", "check", "compact", "repair"],
        "location": ["add", "rename", "delete"],
        "completion": ["bash", "zsh", "fish"],
        "context": ["define", "delete", "list", "show", "none"],
        "help": TaskCtl.commandNames + ["dates", "filters", "reports", "recurrence", "man"],
    ]

    static func of(_ option: String) -> OptionValue { declared[option] ?? .text }

    /// Refuses a value the declaration does not allow, naming the ones it does.
    static func check(_ option: String, _ value: String) throws {
        guard case .choice(let words) = of(option), !words.contains(value) else { return }
        let hint = NameHint.closest(to: value, in: words).map { " (did you mean '\($0)'?)" } ?? ""
        throw CLIError.usage("--\(option) takes \(listed(words)), not '\(value)'\(hint)")
    }

    /// "a, b or c".
    static func listed(_ words: [String]) -> String {
        words.count < 2 ? words.joined() : words.dropLast().joined(separator: ", ") + " or " + (words.last ?? "")
    }
}

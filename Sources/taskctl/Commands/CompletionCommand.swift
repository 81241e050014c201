import Foundation
import ObjectStore
import ObjectStoreModel

/// `taskctl completion bash|zsh|fish` prints a completion script; the scripts ask
/// `taskctl completion --next WORDS...` for the candidates of the word after WORDS, so the
/// logic lives here once: commands, each command's options (from its definition),
/// option values (priorities, locations, projects, tags, group keys, formats) and task ids.
enum CompletionCommand {
    static func run(_ words: [String], _ app: App) throws {
        if words.first == "--next" {
            for candidate in try candidates(after: Array(words.dropFirst()), app) { app.output.line(candidate) }
            return
        }
        let args = try Arguments(words, for: "completion")
        try args.allowWords(1, command: "completion")
        switch args.positional.first {
        case "bash": app.output.line(bash)
        case "zsh": app.output.line(zsh)
        case "fish": app.output.line(fish)
        default: throw CLIError.usage("usage: taskctl completion bash|zsh|fish")
        }
    }

    /// A command's options, from its definition.
    static func options(of command: String) -> [String] {
        CommandDefinition.named(command)?.options ?? []
    }

    static func candidates(after words: [String], _ app: App) throws -> [String] {
        let commands = TaskCtl.commandNames
        guard let command = words.first else { return commands }
        func names(_ entity: String) throws -> [String] {
            guard FileManager.default.fileExists(atPath: app.storeURL.path) else { return [] }
            let context = try app.context(readOnly: true)
            return try context.fetch(FetchRequest(entityName: entity)).compactMap { $0["name"].stringValue }.sorted()
        }
        // An option's value, as the option is declared (OptionValue).
        if let last = words.last, last.hasPrefix("--"), CommandDefinition.named(command)?.valued.contains(String(last.dropFirst(2))) == true || last == "--color" {
            switch OptionValue.of(String(last.dropFirst(2))) {
            case .choice(let words): return words
            case .names(let entity): return try names(entity)
            case .priority: return Priority.names
            case .sortKeys: return ListSort.keys
            case .text: return []
            }
        }
        if words.count == 1, let subcommands = OptionValue.subcommands[command] { return subcommands }
        switch command {
        case "help", "completion": return []
        case "store": return options(of: command)
        case "location": return try names("Location") + options(of: command)
        case "show", "edit", "done", "reopen", "delete", "start", "stop", "annotate":
            guard FileManager.default.fileExists(atPath: app.storeURL.path) else { return options(of: command) }
            let status = command == "reopen" ? "done" : "pending"
            let context = try app.context(readOnly: true)
            let ids = try app.tasks(context, where: try ObjectPredicate(format: "status == %@", .string(status))).compactMap { $0.objectID.primaryKey }.map(String.init)
            return ids + options(of: command)
        default:
            return commands.contains(command) ? options(of: command) : []
        }
    }

    /// Candidates are task data (a location may be named `$(cmd)`), so they are only ever
    /// read as lines and compared as plain text: never through `compgen -W`, which expands
    /// its word list, and never evaluated. A candidate is put on the command line quoted
    /// (`printf %q`), so spaces and `$` stay part of it.
    static let bash = """
        # taskctl completion for bash: eval "$(taskctl completion bash)" in ~/.bashrc
        _taskctl() {
            local cur="${COMP_WORDS[COMP_CWORD]}" candidate
            COMPREPLY=()
            while IFS= read -r candidate; do
                [[ "$candidate" == "$cur"* ]] && COMPREPLY+=("$(printf '%q' "$candidate")")
            done < <(taskctl completion --next "${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null)
        }
        complete -F _taskctl taskctl
        """

    /// zsh's `compadd` and fish's `complete -a` take the lines as words and quote them when
    /// they insert one; neither evaluates them.
    static let zsh = """
        # taskctl completion for zsh: eval "$(taskctl completion zsh)" in ~/.zshrc
        _taskctl() {
            local -a candidates
            candidates=("${(@f)$(taskctl completion --next "${(@)words[2,CURRENT-1]}" 2>/dev/null)}")
            compadd -a candidates
        }
        compdef _taskctl taskctl
        """

    static let fish = """
        # taskctl completion for fish: taskctl completion fish > ~/.config/fish/completions/taskctl.fish
        complete -c taskctl -f -a '(taskctl completion --next (commandline -opc)[2..-1] 2>/dev/null)'
        """
}

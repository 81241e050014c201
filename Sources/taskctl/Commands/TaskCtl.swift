import Foundation
import ObjectStore
import ObjectStoreModel

/// The command dispatcher: global options, then one command.
enum TaskCtl {
    /// taskctl's version (CHANGELOG.md).
    static let version = "1.0.0"

    /// Every command (``CommandDefinition/all``) and help.
    static let commandNames: [String] = CommandDefinition.all.map(\.name) + ["help"]

    static func run(arguments: [String], environment: [String: String]) -> Int32 {
        var words = arguments
        // Global options may come before or after the command.
        let storePath: String?, color: String?
        do {
            storePath = try takeGlobalOption("store", from: &words, needs: "a path")
            color = try takeGlobalOption("color", from: &words, needs: "auto, always or never")
        } catch {
            return fail(CLIError.from(error))
        }
        do {
            if let color { try OptionValue.check("color", color) }
        } catch {
            return fail(CLIError.from(error))
        }
        if words.first == "--version" || words.first == "version" {
            print("taskctl \(version)")
            return 0
        }
        if words.first == "--help" || words.first == "-h" || words.first == "help" {
            if let topic = words.dropFirst().first {
                guard let text = Help.text(for: topic) else { return fail(.usage("no help for '\(topic)'; commands: \(commandNames.joined(separator: ", "))")) }
                print(text)
            } else {
                print(Help.overview)
            }
            return 0
        }
        // Taskwarrior's grammar, [FILTER] COMMAND [WORDS], with rc.NAME=VALUE anywhere.
        var line: CommandWords
        let filter: TaskFilter
        var customReports: Set<String> = []
        do {
            line = try CommandWords.read(words, commands: Set(commandNames))
            // A report the settings define (report.NAME.columns) is a command too: looked
            // for only when the line names no other command.
            // Nothing to do: the settings' default.command (Taskwarrior's), else list.
            if line.command == nil, line.filter.isEmpty,
               let config = try? line.configFile.map({ try Config.load(path: $0, environment: environment) }) ?? Config.load(environment: environment),
               let defaultCommand = line.overrides.last(where: { $0.key == "default.command" })?.value ?? config.defaultCommand {
                let defaultWords = try ContextFilters.words(defaultCommand)
                customReports = Set(config.reports.keys).subtracting(ReportDefinition.builtInNames)
                line = try CommandWords.read(words + defaultWords, commands: Set(commandNames).union(customReports))
            }
            if line.command == nil, !line.filter.isEmpty {
                let config = try? line.configFile.map { try Config.load(path: $0, environment: environment) } ?? Config.load(environment: environment)
                customReports = Set((config?.reports.keys).map(Array.init) ?? []).subtracting(ReportDefinition.builtInNames)
                if !customReports.isEmpty { line = try CommandWords.read(words, commands: Set(commandNames).union(customReports)) }
            }
            // `taskctl +work --json`: the options belong to the command the line runs (list's).
            if line.command == nil { line.moveOptionsToTheCommand(valued: CommandDefinition.named("list")?.valued ?? []) }
            if let option = line.filter.first(where: { $0.hasPrefix("--") }) {
                let hint = line.command.map { " (after '\($0)')" } ?? ""
                throw CLIError.usage(line.command == nil && line.filter.count == 1 && !option.contains("=")
                    ? "unknown command '\(option)'; see taskctl help"
                    : "'\(option)': options go after the command\(hint); see taskctl help")
            }
            filter = try TaskFilter.parse(line.filter)
        } catch {
            return fail(CLIError.from(error))
        }
        // With no command: a filter of ids alone shows those tasks (Taskwarrior's
        // information report); any other filter, or none, lists.
        let command = line.command ?? (filter.onlyIdentifiers ? "show" : "list")
        if CommandWords.missing.contains(command) {
            return fail(.usage("'\(command)' is Taskwarrior's command, and taskctl does not have it yet; nothing was done (taskctl list lists tasks by urgency; taskctl help for what taskctl has; to search for the word, write /\(command)/)"))
        }
        var rest = line.rest
        // Taskwarrior's information report (info, or ids alone) lists the task's changes too.
        if command == "show", line.command == nil || ["info", "information"].contains(line.typed ?? "") { rest.append("--changes") }
        let isReport = ReportDefinition.builtInNames.contains(command) || customReports.contains(command)
        if (filter.limit != nil || filter.limitsToPage) && command != "list" && !isReport {
            return fail(.usage("limit:N is for lists; '\(command)' takes none"))
        }
        if !filter.isEmpty && !CommandWords.filtered.contains(command) && !isReport {
            return fail(.usage("'\(command)' takes no filter before it (\(line.filter.joined(separator: " "))); commands that do: \(CommandWords.filtered.sorted().joined(separator: ", "))"))
        }
        // A bare word is a search, as in Taskwarrior; one that looks like a misspelled
        // command says so beside the list, and is an error when no task mentions it.
        var typo: (word: String, command: String)?
        if line.command == nil, filter.identifiers.isEmpty, line.filter.count == 1, !line.filter[0].contains(where: { ":+-/(".contains($0) }),
           let hint = NameHint.closest(to: line.filter[0], in: commandNames) {
            typo = (line.filter[0], hint)
        }
        if rest.contains("--help") || rest.contains("-h") {
            print(Help.text(for: command) ?? Help.overview)
            return 0
        }
        // A command that lost a race with another taskctl (a location it created was created
        // at the same moment elsewhere, or one it linked a task to was deleted) runs once
        // more on the fresh state.
        for attempt in 1...2 {
            let app: App
            var commandWords = rest
            do {
                var config = try line.configFile.map { try Config.load(path: $0, environment: environment) } ?? Config.load(environment: environment)
                for (key, value) in line.overrides { try config.set(key, to: value, at: "rc.\(key)", environment: environment) }
                app = try App(environment: environment, storePath: storePath, color: color, config: config)
                app.configPath = line.configFile ?? Config.path(environment: environment)
                if attempt == 1 { for warning in config.warnings { FileHandle.standardError.write(Data("taskctl: \(warning)\n".utf8)) } }
                app.filter = try filter.within(context: config, command: command)
                commandWords = try Self.withWriteContext(rest, config: config, command: command)
                app.commandTypo = typo
                app.output.writesThrough = true
            } catch {
                return fail(CLIError.from(error))
            }
            do {
                try dispatch(command, commandWords, app)
                // What the command did stands (it is saved); output that cannot be written is
                // an error of its own.
                let failed = Output.write(app.output.out, to: STDOUT_FILENO)
                Output.write(app.output.err, to: STDERR_FILENO)
                if let failed { return fail(.store("cannot write the output: \(failed)")) }
                #if DEBUG
                // Work a test counts instead of timing it (a fetch per object made is quadratic).
                if environment["TASKCTL_COUNT_FETCHES"] != nil { Output.write("taskctl: fetches: \(app.fetchesRun)\n", to: STDERR_FILENO) }
                #endif
                // The process ends next: freeing every object of a large list one by one
                // would only delay that.
                keptUntilExit = app
                return 0
            } catch let error as ValidationError where attempt == 1 && error.failures.allSatisfy({ $0.rule == .unique || $0.rule == .danglingReference }) {
                continue
            } catch {
                FileHandle.standardError.write(Data(app.output.err.utf8))
                return fail(CLIError.from(error))
            }
        }
        return 0
    }

    /// Removes `--NAME VALUE` or `--NAME=VALUE` from `words` and returns the value.
    /// The process's environment, read from `environ` by bytes: Foundation's
    /// `ProcessInfo.environment` splits each entry at its "=" character by character, which
    /// took 5% of an `add` with a hundred variables set. An entry without "=" is left out;
    /// of a name given twice, the first counts (as `getenv` reads it).
    static func processEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let text = entry.pointee {
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text))
            if let equals = bytes.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[..<equals]), as: UTF8.self)
                if result[name] == nil {
                    result[name] = String(decoding: UnsafeBufferPointer(rebasing: bytes[(equals + 1)...]), as: UTF8.self)
                }
            }
            entry += 1
        }
        return result
    }

    /// The last command's app, not freed before the process exits.
    nonisolated(unsafe) static var keptUntilExit: App?

    static func takeGlobalOption(_ name: String, from words: inout [String], needs: String) throws -> String? {
        guard let index = words.firstIndex(where: { $0 == "--" + name || $0.hasPrefix("--\(name)=") }) else { return nil }
        let word = words[index]
        guard word == "--" + name else {
            words.remove(at: index)
            return String(word.dropFirst(name.count + 3))
        }
        guard index + 1 < words.count else { throw CLIError.usage("--\(name) needs \(needs)") }
        defer { words.removeSubrange(index...index + 1) }
        return words[index + 1]
    }

    /// `add` in a context: its write filter's words join the new task's words (before `--`).
    static func withWriteContext(_ words: [String], config: Config, command: String) throws -> [String] {
        guard command == "add", let name = config.context else { return words }
        guard let filters = config.contexts[name] else { throw CLIError.usage("the context '\(name)' is not defined (taskctl context list; taskctl context none)") }
        guard let write = filters.write else { return words }
        let added = try ContextFilters.words(write)
        guard let end = words.firstIndex(of: "--") else { return words + added }
        return Array(words[..<end]) + added + Array(words[end...])
    }

    static func fail(_ error: CLIError) -> Int32 {
        FileHandle.standardError.write(Data(("taskctl: " + error.message.replacingOccurrences(of: "\n", with: "\n  ") + "\n").utf8))
        return error.status
    }

    static func dispatch(_ command: String, _ words: [String], _ app: App) throws {
        if CommandDefinition.named(command) == nil, app.config.reports[command] != nil {
            try ReportCommand.run(command, words, app)
            return
        }
        guard let definition = CommandDefinition.named(command) else { throw CLIError.usage("unknown command '\(command)'") }
        try definition.run(words, app)
    }
}

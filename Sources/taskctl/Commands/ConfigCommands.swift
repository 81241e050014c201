import Foundation
import ObjectStore

/// `taskctl config` and `taskctl context`: read and change the settings file
/// (docs/taskctl.md, "Configuration"), as Taskwarrior's commands of those names change
/// `.taskrc`.
enum ConfigCommands {
    /// Settings shown as set, never with their value.
    static let secrets: Set<String> = ["sync.encryption_secret", "sync.aws.secret_access_key"]

    /// `config`: every setting in the file; `config NAME`: one; `config NAME VALUE`: sets it;
    /// `config --unset NAME`: removes it.
    static func config(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "config")
        let file = SettingsFile(path: app.configPath)
        if let name = args.value("unset") {
            try args.allowWords(0, command: "config")
            guard try file.set(name, to: nil) else { throw CLIError.usage("\(name) is not set in \(app.configPath)") }
            app.output.line("removed \(name) from \(app.configPath)")
            return
        }
        guard let name = args.positional.first else {
            for (key, value) in try file.settings() { app.output.line("\(key) = \(secrets.contains(key) ? "(set, not shown)" : value)") }
            return
        }
        let value = args.positional.dropFirst().joined(separator: " ")
        if args.positional.count == 1 {
            guard let found = try file.settings().last(where: { $0.key == name }) else {
                throw CLIError.usage("\(name) is not set in \(app.configPath)")
            }
            app.output.line(secrets.contains(name) ? "(set, not shown)" : found.value)
            return
        }
        // Checked as the file would be read, before it is written.
        var check = try Config.load(path: app.configPath, environment: app.environment, required: false)
        try check.set(name, to: value, at: "config \(name)", environment: app.environment)
        try file.set(name, to: value)
        app.output.line("\(name) = \(secrets.contains(name) ? "(set, not shown)" : value)")
    }

    /// `context define NAME FILTER`, `context NAME`, `context none`, `context list`,
    /// `context show`, `context delete NAME`.
    static func context(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "context")
        let file = SettingsFile(path: app.configPath)
        let config = app.config
        guard let action = args.positional.first else { return try show(config, app) }
        let rest = Array(args.positional.dropFirst())
        switch action {
        case "define":
            guard let name = rest.first, rest.count >= 2 else { throw CLIError.usage("usage: taskctl context define NAME FILTER") }
            guard ContextFilters.isName(name), !["define", "delete", "list", "show", "none"].contains(name) else {
                throw CLIError.usage("'\(name)' cannot name a context: use letters, digits, - and _ (and not a word of the context command)")
            }
            let filter = Array(rest.dropFirst())
            _ = try TaskFilter.parse(filter)
            let text = filter.map { $0.contains(where: \.isWhitespace) ? "\"\($0)\"" : $0 }.joined(separator: " ")
            try file.set("context.\(name).read", to: text)
            let writable = ContextFilters.isWritable(filter)
            try file.set("context.\(name).write", to: writable ? text : nil)
            app.output.line("Context '\(name)' defined (\(writable ? "read, write" : "read only: it cannot give new tasks their attributes")). Use 'taskctl context \(name)' to apply it.")
        case "delete":
            guard rest.count == 1, let name = rest.first else { throw CLIError.usage("usage: taskctl context delete NAME") }
            guard config.contexts[name] != nil else { throw CLIError.usage("no context named '\(name)'; see taskctl context list") }
            for key in ["context.\(name)", "context.\(name).read", "context.\(name).write"] { _ = try file.set(key, to: nil) }
            // One defined in ~/.taskrc stays there: emptied here, which is read after it.
            if try Config.load(environment: app.environment).contexts[name] != nil {
                try file.set("context.\(name).read", to: "")
                try file.set("context.\(name).write", to: "")
            }
            if config.context == name { _ = try file.set("context", to: "") }
            app.output.line("Context '\(name)' deleted.")
        case "list":
            try args.allowWords(1, command: "context")
            if config.contexts.isEmpty {
                app.output.line("No contexts defined; taskctl context define NAME FILTER makes one.")
                return
            }
            var rows: [[String]] = []
            for name in config.contexts.keys.sorted() {
                let filters = config.contexts[name] ?? ContextFilters()
                let active = config.context == name ? "yes" : "no"
                rows.append([name, "read", filters.read ?? "", active])
                rows.append(["", "write", filters.write ?? "", ""])
            }
            let table = Table(headers: ["Name", "Type", "Definition", "Active"], rows: rows, flexible: 2, droppable: [])
            for line in table.render(width: app.terminal.width) { app.output.line(line) }
        case "show":
            try args.allowWords(1, command: "context")
            try show(config, app)
        case "none":
            try args.allowWords(1, command: "context")
            // Empty rather than removed: a context set in ~/.taskrc is read first.
            _ = try file.set("context", to: "")
            app.output.line("Context unset.")
        default:
            try args.allowWords(1, command: "context")
            guard config.contexts[action] != nil else {
                let hint = NameHint.closest(to: action, in: Array(config.contexts.keys)).map { " (did you mean '\($0)'?)" } ?? ""
                throw CLIError.usage("no context named '\(action)'\(hint); define it with taskctl context define \(action) FILTER")
            }
            try file.set("context", to: action)
            app.output.line("Context '\(action)' set. Use 'taskctl context none' to remove.")
        }
    }

    static func show(_ config: Config, _ app: App) throws {
        guard let name = config.context else {
            app.output.line("No context is currently applied.")
            return
        }
        let filters = config.contexts[name] ?? ContextFilters()
        app.output.line("Context '\(name)' with read filter '\(filters.read ?? "")' and write filter '\(filters.write ?? "")' is currently applied.")
    }
}

/// The settings file as lines: one setting changed, the other lines (comments, order)
/// kept, the file replaced atomically (a temporary file, flushed, renamed over it).
struct SettingsFile {
    let path: String

    /// The file's settings in order (`key = value` lines).
    func settings() throws -> [(key: String, value: String)] {
        try lines().compactMap(Self.setting)
    }

    private func lines() throws -> [String] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        guard let text = String(data: data, encoding: .utf8) else { throw CLIError.usage("\(path) is not UTF-8 text") }
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    static func setting(_ line: String) -> (key: String, value: String)? {
        let trimmed = line.trimmingBlanks()
        guard !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { return nil }
        return (trimmed[..<equals].trimmingBlanks(), trimmed[trimmed.index(after: equals)...].trimmingBlanks())
    }

    /// Sets `key` to `value` (nil: removes it): the line that sets it is replaced (later
    /// ones removed), or a line is added. Returns whether the file changed. The file is
    /// locked (as a store is) from reading to replacing it, so two commands changing it at
    /// once both keep their change.
    @discardableResult
    func set(_ key: String, to value: String?) throws -> Bool {
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            // Made whole under another name and linked in place: one process makes it.
            if !FileIO.exists(path) { try FileIO.createExclusively([], at: path) }
            return try FileLock(storePath: path).withLock { _, resolved in
                try SettingsFile(path: resolved).replace(key, with: value)
            }
        } catch let error as StoreError {
            throw CLIError.store("cannot write \(path): \(error)")
        }
    }

    /// ``set(_:to:)``'s change, the lock held.
    private func replace(_ key: String, with value: String?) throws -> Bool {
        var lines = try lines()
        let before = lines
        var done = false
        lines = lines.compactMap { line in
            guard Self.setting(line)?.key == key else { return line }
            if done || value == nil { return nil }
            done = true
            return "\(key) = \(value ?? "")"
        }
        if !done, let value { lines.append("\(key) = \(value)") }
        guard lines != before else { return false }
        let text = lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n"
        close(try FileIO.replace(path, with: Array(text.utf8)))
        return true
    }
}

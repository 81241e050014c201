import Foundation

/// taskctl's settings file: `$XDG_CONFIG_HOME/taskctl/config` (or `~/.config/taskctl/config`),
/// one `key = value` a line, `#` comments (on a line of their own, or after a blank):
///
///     store = ~/Documents/tasks.store
///     color = never
///     sort = due,-priority
///     dateformat = D.M.Y
///
/// Options and environment variables override it. A line taskctl does not understand is an
/// error with its line number, not silently ignored.
struct Config {
    var store: String?
    var color: String?
    var sort: String?
    /// How dates are shown, in Taskwarrior's letters (`Y-M-D`, `D.M.Y`, `M/D/y`, `a b d`).
    var dateFormat: String?
    /// Taskwarrior 3's sync settings (docs/sync.md): a TaskChampion sync server, the
    /// client ID every replica of one task list shares, and the encryption secret.
    var syncServerURL: String?
    var syncClientID: String?
    var syncSecret: String?
    /// Or a git repository (TaskChampion's git layout): the clone's folder, the remote
    /// (none: the folder is the only copy) and the branch.
    var syncGitPath: String?
    var syncGitRemote: String?
    var syncGitBranch: String?
    /// `sync.timeout`: the most seconds one request of a sync may take (300 unless set).
    var syncTimeout: Double?
    /// Or an S3 bucket (TaskChampion's bucket layout, as Taskwarrior 3's `sync.aws.*`): the
    /// bucket, its region, the credentials (a key pair, a profile of `~/.aws/credentials`, or
    /// the AWS environment), and for S3-compatible services their URL and path-style access.
    var syncAWSBucket: String?
    var syncAWSRegion: String?
    var syncAWSAccessKeyID: String?
    var syncAWSSecretAccessKey: String?
    var syncAWSProfile: String?
    var syncAWSDefaultCredentials = false
    var syncAWSEndpoint: String?
    var syncAWSForcePathStyle = false
    /// Taskwarrior's contexts: `context = NAME` (the one applied), and per name
    /// `context.NAME.read` (a filter added to what commands select) and `context.NAME.write`
    /// (attribute words `add` gives new tasks).
    var context: String?
    var contexts: [String: ContextFilters] = [:]
    /// Taskwarrior's user-defined attributes (`uda.NAME.*`), by name.
    var userAttributes: [String: UserAttribute] = [:]
    /// Lines of a Taskwarrior file that were skipped, said on stderr.
    var warnings: [String] = []
    /// Taskwarrior's settings of the same names (docs/taskctl.md, "Configuration").
    /// `search.case.sensitive`: whether filters' patterns and words match case (yes).
    var searchCaseSensitive = true
    /// `confirmation`: whether a change to more than `bulk` tasks asks first on a terminal.
    var confirmation = true
    var bulk = 3
    /// `default.project`, `uda.priority.default` (Taskwarrior 2.6's name: its priority is a
    /// user-defined attribute), `default.due`: what `add` gives a task that
    /// does not say.
    var defaultProject: String?
    var defaultPriority: String?
    var defaultDue: String?
    /// Taskwarrior's urgency coefficients (`urgency.*`).
    var urgency = UrgencyCoefficients()
    /// Reports defined or changed by `report.NAME.*` (on top of ``ReportDefinition/builtIn``).
    var reports: [String: ReportDefinition] = [:]
    /// Taskwarrior's `recurrence` (whether recurring tasks' instances are made) and
    /// `recurrence.limit` (how many instances after now a series keeps).
    var recurrence = true
    var recurrenceLimit = 1
    /// `default.command`: what `taskctl` alone runs (`next`, as in Taskwarrior, unless set).
    var defaultCommand: String?

    static let keys = ["store", "color", "sort", "dateformat", "sync.server.url", "sync.server.client_id", "sync.encryption_secret",
                       "sync.git.local_path", "sync.git.remote", "sync.git.branch", "sync.aws.bucket", "sync.aws.region",
                       "sync.aws.access_key_id", "sync.aws.secret_access_key", "sync.aws.profile", "sync.aws.default_credentials",
                       "sync.aws.endpoint_url", "sync.aws.force_path_style", "sync.timeout", "search.case.sensitive", "confirmation", "bulk",
                       "default.project", "uda.priority.default", "default.due",
                       "context", "context.NAME.read", "context.NAME.write", "uda.NAME.type", "uda.NAME.label", "uda.NAME.values", "uda.NAME.default",
                       "urgency.TERM.coefficient", "urgency.user.tag.NAME.coefficient", "urgency.user.project.NAME.coefficient",
                       "urgency.user.keyword.WORD.coefficient", "urgency.uda.NAME[.VALUE].coefficient", "urgency.age.max", "urgency.inherit",
                       "report.NAME.columns", "report.NAME.labels", "report.NAME.sort", "report.NAME.filter", "report.NAME.description",
                       "default.command", "recurrence", "recurrence.limit"]

    static func path(environment: [String: String]) -> String {
        let base: String
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            base = xdg
        } else {
            base = (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
        }
        return base + "/taskctl/config"
    }

    /// Taskwarrior's settings file: `TASKRC`, else `~/.taskrc`.
    static func taskrcPath(environment: [String: String]) -> String {
        if let path = environment["TASKRC"], !path.isEmpty { return path }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.taskrc"
    }

    /// The settings taskctl reads from Taskwarrior's file (`~/.taskrc`): those it shares with
    /// Taskwarrior, sync's included (a Taskwarrior 3 replica's server, client and secret);
    /// the others there are Taskwarrior's alone and are passed over.
    static func isTaskwarriorSetting(_ key: String) -> Bool {
        ["color", "dateformat", "bulk", "confirmation", "search.case.sensitive", "default.project", "uda.priority.default", "default.due",
         "context"].contains(key) || key.hasPrefix("context.") || UrgencyCoefficients.isSetting(key)
            || ["default.command", "recurrence", "recurrence.limit"].contains(key) || (Self.reportSetting(key).map { !Self.isOwnCommand($0.name) } ?? false)
            || (key.hasPrefix("uda.") && ["type", "label", "values", "default"].contains(key.split(separator: ".").last ?? "")) || (key.hasPrefix("sync.") && keys.contains(key))
    }

    /// A report's setting's parts: `report.NAME.FIELD` (FIELD columns, labels, sort, filter,
    /// description; Taskwarrior's context and dateformat fields are passed over as nil).
    static func reportSetting(_ key: String) -> (name: String, field: String)? {
        guard key.hasPrefix("report."), let dot = key.lastIndex(of: "."), dot > key.index(key.startIndex, offsetBy: 6) else { return nil }
        let name = String(key[key.index(key.startIndex, offsetBy: 7)..<dot]), field = String(key[key.index(after: dot)...])
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }),
              ["columns", "labels", "sort", "filter", "description"].contains(field) else { return nil }
        return (name, field)
    }

    /// Whether `name` is one of taskctl's commands that is not a Taskwarrior report (`list`).
    static func isOwnCommand(_ name: String) -> Bool {
        ownCommandNames.contains(name)
    }

    /// taskctl's commands that are not Taskwarrior reports (the command table's names less
    /// the built-in reports: a test holds them equal).
    static let ownCommandNames: Set<String> = [
        "_get", "_ids", "_projects", "_uuids", "add", "agenda", "annotate", "append", "calc", "completion", "config",
        "context", "count", "delete", "denotate", "done", "duplicate", "edit", "export", "help", "history.annual",
        "history.monthly", "ids", "import", "install", "list", "location", "locations", "log", "migrate", "modify",
        "prepend", "projects", "reopen", "show", "start", "stats", "stop", "store", "summary", "sync", "tags",
        "timesheet", "undo", "uninstall", "uuids",
    ]

    /// The values of the `color` setting and `--color`.
    static let colors = ["auto", "always", "never"]

    /// A report by name: Taskwarrior's built-in ones as the settings change them, and the
    /// settings' own.
    func report(named name: String) -> ReportDefinition? { reports[name] ?? ReportDefinition.builtIn[name] }

    /// Taskwarrior's `~/.taskrc` (the settings above), then taskctl's own file on top.
    static func load(environment: [String: String]) throws -> Config {
        var config = Config()
        try config.read(path: taskrcPath(environment: environment), environment: environment, taskwarrior: true)
        try config.read(path: path(environment: environment), environment: environment, taskwarrior: false)
        return config
    }

    /// The settings in the file at `path` (`rc:FILE`, read as Taskwarrior reads its own
    /// file: taskctl's settings and those of Taskwarrior's it has).
    static func load(path: String, environment: [String: String], required: Bool = true) throws -> Config {
        guard FileManager.default.fileExists(atPath: path) || !required else { throw CLIError.usage("rc:\(path): no such settings file") }
        var config = Config()
        try config.read(path: path, environment: environment, taskwarrior: true, ownKeys: true)
        return config
    }

    /// Reads `path` (nothing when it does not exist). taskctl's file is strict: a line it
    /// does not understand is an error with its line number. A Taskwarrior file
    /// (`taskwarrior`) passes over what taskctl does not have, follows `include FILE`, and a
    /// setting taskctl has with a value it cannot take is skipped with a warning.
    mutating func read(path: String, environment: [String: String], taskwarrior: Bool, ownKeys: Bool = false, depth: Int = 0) throws {
        guard let decoded = FileBytes.text(path) else { return }
        guard let text = decoded else {
            if taskwarrior { warnings.append("\(path) is not UTF-8 text; its settings were not read"); return }
            throw CLIError.usage("\(path) is not UTF-8 text")
        }
        // Any line ending: "\r\n" is one Character, which splitting on "\n" never met.
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            var line = raw.trimmingBlanks()
            if taskwarrior, let hash = line.firstIndex(of: "#") { line = line[..<hash].trimmingBlanks() }
            // taskctl's own file: a comment after a value starts with a blank and '#' (a '#'
            // inside a value, as in a secret, stays).
            if !taskwarrior, let comment = line.range(of: #"\s#"#, options: .regularExpression) { line = line[..<comment.lowerBound].trimmingBlanks() }
            if line.isEmpty || line.hasPrefix("#") { continue }
            let place = "\(path):\(index + 1)"
            if taskwarrior && line.hasPrefix("include ") {
                var file = line.dropFirst(8).trimmingBlanks()
                if file.hasPrefix("~/") { file = (environment["HOME"] ?? NSHomeDirectory()) + file.dropFirst() }
                if !file.hasPrefix("/") { file = (path as NSString).deletingLastPathComponent + "/" + file }
                // Taskwarrior's own themes (holidays, colours) may be missing here; that is fine.
                if depth < 8 { try read(path: file, environment: environment, taskwarrior: true, ownKeys: ownKeys, depth: depth + 1) }
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                if taskwarrior { continue }
                throw CLIError.usage("\(place): expected 'key = value', found '\(line)'")
            }
            let key = line[..<equals].trimmingBlanks(), value = line[line.index(after: equals)...].trimmingBlanks()
            if taskwarrior && !(ownKeys && Config.keys.contains(key)) && !Self.isTaskwarriorSetting(key) { continue }
            do {
                try set(key, to: value, at: place, environment: environment)
            } catch let error as CLIError where taskwarrior {
                warnings.append("\(error.message); the line was skipped")
            }
        }
    }

    /// Sets one setting from the file (`at` its line) or a command line's `rc.NAME=VALUE`.
    mutating func set(_ key: String, to text: String, at place: String, environment: [String: String]) throws {
        var config = self
        defer { self = config }
        var value = text
        func flag(_ text: String) throws -> Bool {
            guard let flag = ["true": true, "1": true, "yes": true, "on": true, "y": true, "false": false, "0": false, "no": false, "off": false, "n": false][text.lowercased()] else {
                throw CLIError.usage("\(place): \(key) takes yes or no, not '\(text)'")
            }
            return flag
        }
        switch key {
        case "store":
            if value.hasPrefix("~/") { value = (environment["HOME"] ?? NSHomeDirectory()) + value.dropFirst() }
            config.store = value
        case "color":
            // Taskwarrior's color=on/off.
            if let flag = ["on": "auto", "yes": "auto", "true": "auto", "1": "auto", "off": "never", "no": "never", "false": "never", "0": "never"][value.lowercased()] { value = flag }
            guard Self.colors.contains(value) else {
                throw CLIError.usage("\(place): color takes auto, always or never, not '\(value)'")
            }
            config.color = value
        case "sort":
            _ = try ListSort.parse(value)
            config.sort = value
        case "dateformat":
            guard RelativeDate.isValidFormat(value) else {
                throw CLIError.usage("\(place): dateformat takes Taskwarrior's letters (Y y M m D d b a) and separators, such as Y-M-D or D.M.Y, not '\(value)'")
            }
            config.dateFormat = value
        case "sync.server.url":
            guard let url = URL(string: value), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw CLIError.usage("\(place): sync.server.url takes the server's http:// or https:// URL, not '\(value)'")
            }
            config.syncServerURL = value
        case "sync.timeout":
            guard let seconds = Double(value), seconds.isFinite, (1...86_400).contains(seconds) else {
                throw CLIError.usage("\(place): sync.timeout takes the most seconds one request of a sync may take, 1 to 86400, not '\(value)'")
            }
            config.syncTimeout = seconds
        case "sync.server.client_id":
            guard UUID(uuidString: value) != nil else {
                throw CLIError.usage("\(place): sync.server.client_id takes a UUID (the same on every replica of one task list), not '\(value)'")
            }
            config.syncClientID = value
        case "sync.git.local_path":
            if value.hasPrefix("~/") { value = (environment["HOME"] ?? NSHomeDirectory()) + value.dropFirst() }
            guard !value.isEmpty else { throw CLIError.usage("\(place): sync.git.local_path is empty") }
            config.syncGitPath = value
        case "sync.git.remote":
            guard !value.hasPrefix("-") else {
                throw CLIError.usage("\(place): sync.git.remote takes a git URL or path, not an option ('\(value)')")
            }
            config.syncGitRemote = value
        case "sync.git.branch":
            guard !value.isEmpty, !value.hasPrefix("-"), !value.contains(" ") else {
                throw CLIError.usage("\(place): sync.git.branch takes a branch name, not '\(value)'")
            }
            config.syncGitBranch = value
        case "sync.aws.bucket":
            // S3's rule for names: 3 to 63 lower-case letters, digits, dots and hyphens.
            guard (3...63).contains(value.count), value.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "." || $0 == "-") }),
                  value.first?.isLetter == true || value.first?.isNumber == true else {
                throw CLIError.usage("\(place): sync.aws.bucket takes a bucket name (3 to 63 lower-case letters, digits, dots and hyphens), not '\(value)'")
            }
            config.syncAWSBucket = value
        case "sync.aws.region":
            guard !value.isEmpty, value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
                throw CLIError.usage("\(place): sync.aws.region takes a region such as us-east-1, not '\(value)'")
            }
            config.syncAWSRegion = value
        case "sync.aws.access_key_id":
            guard !value.isEmpty else { throw CLIError.usage("\(place): sync.aws.access_key_id is empty") }
            config.syncAWSAccessKeyID = value
        case "sync.aws.secret_access_key":
            // Never repeated in a message, as the encryption secret.
            guard !value.isEmpty else { throw CLIError.usage("\(place): sync.aws.secret_access_key is empty") }
            config.syncAWSSecretAccessKey = value
        case "sync.aws.profile":
            guard !value.isEmpty else { throw CLIError.usage("\(place): sync.aws.profile is empty") }
            config.syncAWSProfile = value
        case "sync.aws.default_credentials", "sync.aws.force_path_style":
            guard let flag = ["true": true, "1": true, "yes": true, "on": true, "false": false, "0": false, "no": false, "off": false][value.lowercased()] else {
                throw CLIError.usage("\(place): \(key) takes true or false, not '\(value)'")
            }
            if key == "sync.aws.default_credentials" { config.syncAWSDefaultCredentials = flag } else { config.syncAWSForcePathStyle = flag }
        case "sync.aws.endpoint_url":
            guard let url = URL(string: value), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw CLIError.usage("\(place): sync.aws.endpoint_url takes the service's http:// or https:// URL, not '\(value)'")
            }
            config.syncAWSEndpoint = value
        case "search.case.sensitive": config.searchCaseSensitive = try flag(value)
        case "confirmation": config.confirmation = try flag(value)
        case "bulk":
            guard let n = Int(value), n >= 0 else { throw CLIError.usage("\(place): bulk takes a number of tasks (0: never ask), not '\(value)'") }
            config.bulk = n
        case "default.project": config.defaultProject = value.isEmpty ? nil : value
        case "uda.priority.default":
            if !value.isEmpty { _ = try Priority.parse(value) }
            config.defaultPriority = value.isEmpty ? nil : value
        case "default.due":
            config.defaultDue = value.isEmpty ? nil : value
        case "context":
            config.context = value.isEmpty ? nil : value
        case "uda.priority.values", "uda.priority.type", "uda.priority.label":
            // Taskwarrior 2.6 defines priority as an attribute of its own; taskctl's is H, M, L.
            guard key != "uda.priority.values" || ["H,M,L,", "H,M,L"].contains(value.replacingOccurrences(of: " ", with: "")) else {
                throw CLIError.usage("\(place): taskctl's priorities are H, M and L (none); uda.priority.values cannot change them")
            }
        case "recurrence": config.recurrence = try flag(value)
        case "recurrence.limit":
            guard let n = Int(value), (1...100).contains(n) else {
                throw CLIError.usage("\(place): recurrence.limit takes how many instances after now a series keeps, 1 to 100, not '\(value)'")
            }
            config.recurrenceLimit = n
        case "default.command":
            config.defaultCommand = value.isEmpty ? nil : value
        case _ where key.hasPrefix("report."):
            guard let (name, field) = Self.reportSetting(key) else {
                throw CLIError.usage("\(place): '\(key)' is not a report's setting (report.NAME.columns, .labels, .sort, .filter, .description; NAME letters, digits, _ and -)")
            }
            guard !Self.isOwnCommand(name) else {
                throw CLIError.usage("\(place): '\(name)' is taskctl's own command, not a report; \(key) cannot change it (define a report of another name)")
            }
            var report = config.reports[name] ?? ReportDefinition.builtIn[name] ?? ReportDefinition(description: "", columns: "", labels: "", sort: "", filter: "")
            switch field {
            case "columns": report.columns = value.split(separator: ",").map { $0.trimmingBlanks() }
            case "labels": report.labels = value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingBlanks() }
            case "sort":
                do {
                    _ = try ReportDefinition.sortKeys(value, userAttributes: Set(config.userAttributes.keys), report: name)
                } catch let error as CLIError {
                    throw CLIError.usage("\(place): \(error.message)")
                }
                report.sort = value
            case "filter":
                do {
                    _ = try TaskFilter.parse(try ContextFilters.words(value))
                } catch let error as CLIError {
                    throw CLIError.usage("\(place): \(key): \(error.message)")
                }
                report.filter = value
            default: report.description = value
            }
            config.reports[name] = report
        case _ where UrgencyCoefficients.isSetting(key):
            try config.urgency.set(key, to: value, at: place)
        case _ where key.hasPrefix("uda."):
            let parts = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, UserAttribute.isName(parts[1]), !UserAttribute.reserved.contains(parts[1].lowercased()),
                  ["type", "label", "values", "default"].contains(parts[2]) else {
                throw CLIError.usage("\(place): '\(key)' is not a user-defined attribute's setting (uda.NAME.type, .label, .values, .default; NAME letters, digits and _, not one of Taskwarrior's attributes)")
            }
            let name = parts[1].lowercased()
            var attribute = config.userAttributes[name] ?? UserAttribute()
            switch parts[2] {
            case "type":
                guard let kind = UserAttribute.Kind(rawValue: value) else {
                    throw CLIError.usage("\(place): \(key) takes string, numeric, date or duration, not '\(value)'")
                }
                attribute.kind = kind
            case "label": attribute.label = value.isEmpty ? nil : value
            case "values": attribute.values = value.isEmpty ? nil : value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingBlanks() }
            default: attribute.defaultValue = value.isEmpty ? nil : value
            }
            config.userAttributes[name] = attribute
        case _ where key.hasPrefix("context."):
            let parts = key.dropFirst(8).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard let name = parts.first, ContextFilters.isName(name), parts.count <= 2, parts.count == 1 || ["read", "write"].contains(parts[1]) else {
                throw CLIError.usage("\(place): '\(key)' is not a context's setting (context.NAME.read, context.NAME.write)")
            }
            do {
                _ = try TaskFilter.parse(try ContextFilters.words(value))
            } catch let error as CLIError {
                throw CLIError.usage("\(place): \(key): \(error.message)")
            }
            var filters = config.contexts[name] ?? ContextFilters()
            if parts.count == 1 || parts[1] == "read" { filters.read = value.isEmpty ? nil : value }
            if parts.count == 1 || parts[1] == "write" { filters.write = value.isEmpty ? nil : value }
            config.contexts[name] = filters.read == nil && filters.write == nil ? nil : filters
        case "sync.encryption_secret":
            // Never repeated in a message: the secret is the key to every synced task.
            guard !value.isEmpty else { throw CLIError.usage("\(place): sync.encryption_secret is empty") }
            config.syncSecret = value
        default:
            let hint = NameHint.closest(to: key, in: Config.keys).map { " (did you mean '\($0)'?)" } ?? ""
            throw CLIError.usage("\(place): unknown setting '\(key)'\(hint); settings: \(Config.keys.joined(separator: ", "))")
        }
    }
}

/// A context's two filters (`context define` sets both when the filter can be written).
struct ContextFilters {
    var read: String?
    var write: String?

    static func isName(_ name: String) -> Bool {
        !name.isEmpty && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
    }

    /// A setting's words: split at blanks, with '...' and "..." kept as one word.
    static func words(_ text: String) throws -> [String] {
        var words: [String] = [], current = "", quote: Character?, inWord = false
        for character in text {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
                inWord = true
            } else if character.isWhitespace {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(character)
                inWord = true
            }
        }
        if quote != nil { throw CLIError.usage("a quote is not closed in '\(text)'") }
        if inWord { words.append(current) }
        return words
    }

    /// Taskwarrior's rule for a filter that can also give new tasks their attributes: no
    /// 'or', no '-tag', no modifier but is and equals.
    static func isWritable(_ words: [String]) -> Bool {
        for word in words {
            if word == "or" || word == "xor" { return false }
            if word.hasPrefix("-"), word.count > 1 { return false }
            if let colon = word.firstIndex(where: { $0 == ":" || $0 == "=" }), let dot = word[..<colon].firstIndex(of: ".") {
                let modifier = word[word.index(after: dot)..<colon].lowercased()
                if modifier != "is" && modifier != "equals" { return false }
            }
        }
        return true
    }
}

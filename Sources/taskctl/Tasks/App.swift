import Foundation
import ObjectStore
import ObjectStoreModel

/// What every command needs: the environment, the clock, the terminal and the store.
final class App {
    let environment: [String: String]
    let terminal: Terminal
    let now: Date
    let timeZone: TimeZone
    let dates: DateParser
    let storeURL: URL
    /// Whether the store is the default one (no `--store`, no `TASKCTL_STORE`, no `store =`
    /// in the config file).
    let isDefaultStore: Bool
    /// The settings file's values (docs/taskctl.md, "Configuration").
    let config: Config
    var output = Output()
    /// The Taskwarrior filter written before the command (empty when none).
    var filter = TaskFilter.empty
    /// The settings file this command reads (`rc:FILE` or the usual one).
    var configPath = ""
    /// A lone word read as a search that looks like a misspelled command (`taskctl lst`).
    var commandTypo: (word: String, command: String)?
    /// What a command made and no longer needs, left for the process's exit to reclaim:
    /// freeing 100,000 listed tasks' views and cells one by one cost a tenth of `list`.
    var keptUntilExit: [Any] = []
    /// Taskwarrior's urgency with the settings' coefficients, and the store's dependencies.
    lazy var urgency = UrgencyScorer(coefficients: config.urgency, now: now)

    init(environment: [String: String], storePath: String?, color: String? = nil, config: Config = Config()) throws {
        self.environment = environment
        self.config = config
        terminal = Terminal(environment: environment, color: color ?? config.color ?? "auto")
        output.sanitizes = terminal.isTTY
        output.keepsStyles = terminal.useColor
        timeZone = environment["TZ"].flatMap { TimeZone(identifier: $0) } ?? TimeZone.current
        if let text = environment["TASKCTL_NOW"], !text.isEmpty {
            guard let fixed = ISO8601.parse(text) else {
                throw CLIError.usage("TASKCTL_NOW='\(text)' is not an ISO-8601 date such as 2026-11-22T12:00:00Z")
            }
            now = fixed
        } else {
            now = Date()
        }
        dates = DateParser(now: now, timeZone: timeZone, format: config.dateFormat)
        let explicit = storePath ?? environment["TASKCTL_STORE"].flatMap { $0.isEmpty ? nil : $0 } ?? config.store
        isDefaultStore = explicit?.isEmpty ?? true
        storeURL = App.storeURL(explicit: explicit, environment: environment)
    }

    /// `--store`, then `TASKCTL_STORE`, then `$XDG_DATA_HOME/taskctl/tasks.store`, then
    /// `~/.local/share/taskctl/tasks.store`.
    static func storeURL(explicit: String?, environment: [String: String]) -> URL {
        if let explicit, !explicit.isEmpty { return URL(fileURLWithPath: explicit) }
        let base: String
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
            base = xdg
        } else {
            base = (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        }
        return URL(fileURLWithPath: base).appendingPathComponent("taskctl").appendingPathComponent("tasks.store")
    }

    static func modelDirectory() throws -> ModelDirectory {
        try ModelDirectory(location: "taskctl's Tasks model", files: TasksModelFiles.files)
    }

    private var opened: (PersistentStoreCoordinator, ManagedObjectContext)?

    /// How many transactions the store keeps: ``historyKept``, or in a debug build (the
    /// tests') TASKCTL_HISTORY_KEPT, so a test reaches the bound with a few dozen commands.
    var historyKept: Int {
        #if DEBUG
        if let text = environment["TASKCTL_HISTORY_KEPT"], let kept = Int(text), kept > 0 { return kept }
        #endif
        return App.historyKept
    }

    /// The fetches the command's context ran (the tests count them: TASKCTL_COUNT_FETCHES).
    var fetchesRun: Int { opened?.1.fetchesRun ?? 0 }

    /// Opens (creating, or migrating with a notice) the store and returns a context. A
    /// command that only reads creates the default store, but not one at a path it was given:
    /// a mistyped `--store` is an error, not a new empty store.
    func context(readOnly: Bool = false) throws -> ManagedObjectContext {
        if let opened { return opened.1 }
        let directory = storeURL.deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: storeURL.path) {
            if readOnly && !isDefaultStore {
                throw CLIError.store("no store at \(storeURL.path); check the path (a command that adds something creates a new store there)")
            }
            // The store is created on first use, by any command.
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw CLIError.store("cannot create \(directory.path): \(error.localizedDescription)")
            }
        }
        let migrator = StoreMigrator(models: try App.modelDirectory())
        let now = self.now
        var announced = false
        let terminal = self.terminal
        let (coordinator, result) = try migrator.openStore(at: storeURL, clock: { now }) { progress in
            if !announced {
                FileHandle.standardError.write(Data("taskctl: migrating \(self.storeURL.lastPathComponent) to the current model...\n".utf8))
                announced = true
            }
            if terminal.isTTY && progress.total >= 1_000 {
                let width = 30
                let filled = progress.total == 0 ? width : min(width, progress.done * width / max(1, progress.total))
                let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
                FileHandle.standardError.write(Data("\r  step \(progress.step)/\(progress.stepCount) [\(bar)] \(progress.done)/\(progress.total)".utf8))
                if progress.done >= progress.total { FileHandle.standardError.write(Data("\n".utf8)) }
            }
        }
        if let result {
            var done: [String] = []
            if result.plan.isNeeded { done.append("migrated the store (\(result.plan.steps.map { "\($0.source) -> \($0.destination)" }.joined(separator: ", ")))") }
            if let format = result.upgradedFormat { done.append("upgraded the store from the pre-release binary format \(format) to store format 1.0") }
            output.warn("taskctl: \(done.joined(separator: " and ")); the old store is kept at \(result.backupURL.path)")
        }
        // Every save records its transaction in the store's history: undo and log read it.
        // What a sync has not sent yet is kept however long the replica stays offline: it is
        // what the sync reads to send removals (a tag taken off, a date cleared).
        try coordinator.trackHistory(HistoryRetention(transactions: historyKept))
        let context = ManagedObjectContext(coordinator: coordinator)
        // Only a command that saves can compact, and so drop history: `list` and `show` skip it.
        if !readOnly, try coordinator.store.objectIDs(ofEntity: "SyncState").isEmpty == false,
           case .integer(let synced)? = try context.fetch(FetchRequest(entityName: "SyncState")).first?["syncedTransaction"] {
            try coordinator.trackHistory(HistoryRetention(transactions: historyKept, keepingAfter: synced))
        }
        context.transactionAuthor = App.historyAuthor
        context.undoManager = nil
        // Two taskctl processes editing different fields of one task both keep their edit.
        context.mergePolicy = .mergeByPropertyMemoryWins
        opened = (coordinator, context)
        return context
    }

    /// Taskwarrior's expiry, where a command meets the task: a pending task with `until` (an
    /// instance of a recurring task too, as in Taskwarrior) is deleted once its `until` has passed, ending then (saved with the
    /// command's own change). Lists leave such tasks out (``pending()``) and views read them
    /// as deleted, so a task nobody names needs no write: searching for them at every
    /// command cost `add` 18 ms at 100,000 tasks.
    func expireIfPassed(_ task: ManagedObject) throws {
        guard task["status"] == "pending", case .date(let until) = task["until"], until <= now else { return }
        try task.setValue("deleted", forKey: "status")
        try task.setValue(.date(until), forKey: "completedAt")
        try task.setValue(.null, forKey: "startedAt")
    }

    /// Pending tasks past their `until`: still pending in the store, left out
    /// of every list. The clock as a constant, so the store's columns decide it (with
    /// `now()` every row was evaluated: `list` at 100k 181 -> 212 ms).
    func expired() throws -> ObjectPredicate {
        try ObjectPredicate(format: "status == 'pending' AND until != nil AND until <= %@", .date(now))
    }

    /// The pending tasks lists show: the expired ones left out.
    func pending() throws -> ObjectPredicate {
        .and(try ObjectPredicate("status == 'pending'"), .not(try expired()))
    }

    // MARK: Lookups

    func tasks(_ context: ManagedObjectContext, where predicate: ObjectPredicate? = nil, sort: [SortKey] = []) throws -> [ManagedObject] {
        try context.fetch(FetchRequest(entityName: "Task", predicate: predicate, sortDescriptors: sort))
    }

    /// A task by id, UUID or unique UUID prefix.
    func task(_ reference: String, in context: ManagedObjectContext) throws -> ManagedObject {
        let task = try lookUp(reference, in: context)
        try expireIfPassed(task)
        return task
    }

    private func lookUp(_ reference: String, in context: ManagedObjectContext) throws -> ManagedObject {
        if let id = Int64(reference), id > 0 {
            let objectID = ObjectID(entityName: "Task", storeIdentifier: context.coordinator.storeIdentifier, key: .permanent(id))
            do {
                return try context.existingObject(with: objectID)
            } catch ObjectStoreError.objectNotFound {
                // Not a task id: maybe a UUID prefix (below). A damaged row throws as it is.
            }
            // A UUID can start with digits only ("12345678-..."): try it as a prefix too.
            let asPrefix = reference.count >= 4 ? try? task(uuidPrefix: reference, in: context) : nil
            if let asPrefix { return asPrefix }
            throw CLIError.usage("no task with id \(id); see taskctl list --all")
        }
        return try task(uuidPrefix: reference, in: context)
    }

    private func task(uuidPrefix reference: String, in context: ManagedObjectContext) throws -> ManagedObject {
        let prefix = reference.lowercased()
        guard prefix.count >= 4, prefix.allSatisfy({ $0.isHexDigit || $0 == "-" }) else {
            throw CLIError.usage("'\(reference)' is not a task id, UUID or UUID prefix (at least 4 hex digits)")
        }
        let matches = try tasks(context).filter { task in
            if case .uuid(let uuid) = task["uuid"] { return uuid.uuidString.lowercased().hasPrefix(prefix) }
            return false
        }
        guard let first = matches.first else { throw CLIError.usage("no task has a UUID starting with \(reference)") }
        guard matches.count == 1 else {
            throw CLIError.usage("\(reference) matches \(matches.count) tasks (ids \(matches.compactMap(\.objectID.primaryKey).map(String.init).joined(separator: ", "))); give more of the UUID")
        }
        return first
    }

    func location(named name: String, in context: ManagedObjectContext, create: Bool) throws -> ManagedObject? {
        let predicate = try ObjectPredicate(format: "name ==[c] %@", .string(name))
        if let found = try context.fetch(FetchRequest(entityName: "Location", predicate: predicate)).first { return found }
        guard create else { return nil }
        let location = try context.insertObject(entityName: "Location")
        try location.setValue(.string(name), forKey: "name")
        return location
    }

    func named(_ entity: String, _ name: String, in context: ManagedObjectContext, create: Bool) throws -> ManagedObject? {
        let predicate = try ObjectPredicate(format: "name == %@", .string(name))
        if let found = try context.fetch(FetchRequest(entityName: entity, predicate: predicate)).first { return found }
        guard create else { return nil }
        let object = try context.insertObject(entityName: entity)
        try object.setValue(.string(name), forKey: "name")
        return object
    }

    func parseDate(_ text: String) throws -> Date { try dates.parse(text) }

    /// Dates shown relative to now, in the configured format.
    var relative: RelativeDate {
        var relative = RelativeDate(now: now, timeZone: timeZone)
        if let format = config.dateFormat { relative.format = format }
        return relative
    }
    /// A date that starts something: a bare day means its start (wait, scheduled).
    func parseStartDate(_ text: String) throws -> Date { try dates.parseStart(text) }
}

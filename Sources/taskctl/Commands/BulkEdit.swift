import Foundation
import ObjectStore
import ObjectStoreModel

/// `edit --where PREDICATE` of attributes alone (`--priority`, `--text`, `--no-due`) as a batch
/// update in the store: no task is loaded, so an edit of 250,000 tasks costs their rows, not
/// 250,000 objects. It is the same edit as the one task by one: taskctl's rule (a high
/// priority needs a due date) checked first over the selection, the recurring tasks' due
/// instances made, one transaction named after the command (`undo` takes it back), each
/// task listed. Tasks whose Taskwarrior fields a change must touch too (a `modified` time
/// kept from an import, a priority kept as written) need their own work: a selection with
/// any of them takes the one-by-one path, as does a JSON store (which writes its whole file
/// at every save) and `--json` output.
enum BulkEdit {
    /// Runs the edit as a batch when it can be one; false (nothing done) when it cannot.
    static func run(_ args: Arguments, selecting live: ObjectPredicate, filter: String, priority: Int64?, command: String, app: App) throws -> Bool {
        let changes = ["text", "priority", "due", "location", "project", "tag", "untag", "wait", "scheduled", "recur", "until", "status", "depends",
                       "no-due", "no-location", "no-project", "no-wait", "no-scheduled", "no-recur", "no-until"]
        let batchable: Set<String> = ["priority", "text", "no-due"]
        guard !args.has("json"), changes.allSatisfy({ !args.has($0) || batchable.contains($0) }),
              StoreType.forFile(app.storeURL) == .binary else { return false }
        let context = try app.context()
        func count(_ predicate: ObjectPredicate) throws -> Int {
            try context.count(for: FetchRequest(entityName: "Task", predicate: predicate))
        }
        let keptAsWritten = priority != nil ? #"extras CONTAINS '"modified"' OR extras CONTAINS '"priority"'"# : #"extras CONTAINS '"modified"'"#
        guard try count(.and(live, try ObjectPredicate(keptAsWritten))) == 0 else { return false }
        let selected = try count(live)
        guard selected > 0 else { throw CLIError.usage("no task matches --where \(filter); nothing changed") }

        var values: [String: Value] = [:]
        if let priority { values["priority"] = .integer(priority) }
        if let text = args.value("text") {
            let trimmed = text.trimmingBlanks()
            guard !trimmed.isEmpty else { throw CLIError.usage("a task's text cannot be empty") }
            values["title"] = .string(trimmed)
        }
        if args.has("no-due") { values["dueDate"] = .null }
        // taskctl's rule, as the one-by-one edit checks it: a pending task this edit leaves
        // high-priority without a due date, where it changed its priority or due date.
        let breaking: String?
        switch (priority == 3, args.has("no-due")) {
        case (true, false): breaking = "dueDate == nil AND priority != 3"
        case (true, true): breaking = "priority != 3 OR dueDate != nil"
        case (false, true) where priority == nil: breaking = "priority == 3 AND dueDate != nil"
        default: breaking = nil
        }
        if args.has("no-due"), try count(.and(live, try ObjectPredicate("recurrence != nil"))) > 0 {
            throw CLIError.usage("a recurring task needs a due date: add --due DATE")
        }
        if let breaking, try count(.and(live, try ObjectPredicate("status == 'pending' AND (\(breaking))"))) > 0 {
            throw CLIError.usage("a high-priority task needs a due date: add --due DATE (e.g. --due friday)")
        }
        try app.confirmBulk(selected, command, yes: args.has("yes"))

        let (listed, changed) = try commit(values, to: live, listing: live, command: command, context: context, app: app)
        for row in listed {
            let id = row.objectID.primaryKey ?? 0
            let title = values["title"]?.stringValue ?? row.values.first?.value.stringValue ?? ""
            app.output.line(changed.contains(row.objectID) ? "edited \(id): \(title)" : "task \(id) already had those values; nothing changed")
        }
        return true
    }
}

extension BulkEdit {
    /// Sets `values` on the tasks `selection` matches in one batch update, inside one commit
    /// with the recurring instances the change makes (one transaction named after the
    /// command), and returns the tasks `listing` matched (their titles, in id order, read in
    /// the same commit) and those the update changed.
    static func commit(_ values: [String: Value], to selection: ObjectPredicate, listing: ObjectPredicate, command: String,
                       context: ManagedObjectContext, app: App) throws -> (listed: [FetchedValues], changed: Set<ObjectID>) {
        var request = BatchUpdateRequest(entityName: "Task", predicate: selection, propertiesToUpdate: values)
        request.resultType = .objectIDs
        context.name = command
        var listed: [FetchedValues] = []
        var changed = Set<ObjectID>()
        try context.coordinator.committingTogether {
            listed = try context.fetchValues(FetchRequest(entityName: "Task", predicate: listing), properties: ["title"])
            changed = Set(try context.executeInsideCommit(request).objectIDs ?? [])
            guard !changed.isEmpty else { return }
            var recorder = ChangeRecorder(command: command)
            _ = try RecurringTasks.update(in: context, app: app, recorder: &recorder)
            if context.hasChanges { try context.save() }
        }
        if !changed.isEmpty {
            app.urgency.invalidate()
            app.removeUndoJournal()
            if let warning = context.coordinator.housekeepingWarning { app.output.warn("taskctl: warning: \(warning)") }
        }
        return (listed, changed)
    }
}

/// `FILTER done`, `FILTER delete` and `FILTER reopen` of tasks a filter selects (not ids) as
/// one batch update in the store, as ``BulkEdit`` does for `edit --where`: the same status,
/// end time and stopped clock as one task at a time, the same warnings for tasks already in
/// that state, one transaction. A selection with a recurring task (a template or an
/// instance, whose series the change updates), a task with an `until` (which may expire
/// first), a deleted task or Taskwarrior fields to stamp takes the one-by-one path.
enum BulkStatus {
    /// Runs the change as a batch when it can be one; false (nothing done) when it cannot.
    static func run(_ args: Arguments, command: String, to status: String, app: App) throws -> Bool {
        let filter = app.filter
        guard !args.has("json"), !filter.isEmpty, !filter.onlyIdentifiers, StoreType.forFile(app.storeURL) == .binary else { return false }
        let context = try app.context()
        let all = args.positional.isEmpty ? filter : try TaskFilter.parse(filter.words + args.positional)
        guard let predicate = try all.predicate(in: FilterScope(app: app, context: context)) else { return false }
        let live = all.namesStatus ? predicate : .and(.and(try ObjectPredicate("status != 'deleted'"), .not(try app.expired())), predicate)
        func count(_ predicate: ObjectPredicate) throws -> Int {
            try context.count(for: FetchRequest(entityName: "Task", predicate: predicate))
        }
        let oneByOne = #"status == 'recurring' OR status == 'deleted' OR recurrence != nil OR until != nil OR extras CONTAINS '"parent"' OR extras CONTAINS '"modified"'"#
        guard try count(.and(live, try ObjectPredicate(oneByOne))) == 0 else { return false }
        let selected = try count(live)
        guard selected > 0 else { throw CLIError.usage("no task matches \(all.words.joined(separator: " ")); nothing changed") }
        try app.confirmBulk(selected, command, yes: args.has("yes"))

        let changing = ObjectPredicate.and(live, try ObjectPredicate(format: "status != %@", .string(status)))
        var values: [String: Value] = ["status": .string(status), "completedAt": status == "pending" ? .null : .date(app.now)]
        if status != "pending" { values["startedAt"] = .null }
        let (listed, changed) = try BulkEdit.commit(values, to: changing, listing: live, command: command, context: context, app: app)
        for row in listed where !changed.contains(row.objectID) {
            app.output.warn("taskctl: task \(row.objectID.primaryKey ?? 0) is already \(status)")
        }
        guard !changed.isEmpty else {
            throw CLIError.usage("nothing to \(command): every task given is already \(status == "pending" ? "pending" : status)")
        }
        let verb = ["done": "done", "reopen": "reopened", "delete": "deleted"][command] ?? command
        for row in listed where changed.contains(row.objectID) {
            // The title as the one-by-one path writes it.
            let title = (row.values.first?.value ?? .null).description.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            app.output.line("\(verb) \(row.objectID.primaryKey ?? 0): \(title)")
        }
        return true
    }
}

import Foundation
import ObjectStore
import ObjectStoreModel

/// add, show, edit, done, reopen, delete.
enum TaskCommands {
    /// `add`, or with `logged` Taskwarrior's `log TEXT`: a task recorded as done already.
    static func add(_ words: [String], _ app: App, logged: Bool = false) throws {
        var words = words
        var userValues = try UserAttribute.take(from: &words, config: app.config, app: app)
        // uda.NAME.default for what the task does not say.
        for (name, attribute) in app.config.userAttributes.sorted(by: { $0.key < $1.key }) where !userValues.contains(where: { $0.name == name }) {
            if let value = attribute.defaultValue { userValues.append((name, try attribute.stored(value, name: name, app: app))) }
        }
        let args = try Arguments(words, for: "add")
        let text = args.positional.joinedBySpaces().trimmingBlanks()
        guard !text.isEmpty else { throw CLIError.usage("add needs the task's text: taskctl add \"Buy milk\" [--due tomorrow]") }
        // Check every value before touching the store.
        // Taskwarrior's uda.priority.default, default.due and default.project fill what the
        // task does not say.
        let priority = try (args.value("priority") ?? app.config.defaultPriority).map(Priority.parse) ?? 0
        let due = try (args.value("due") ?? app.config.defaultDue).map(app.parseDate)
        let dates = try Dates(args, app: app)
        if dates.recurrence != nil && due == nil { throw CLIError.usage("a recurring task needs a due date: add --due DATE") }
        if logged && dates.recurrence != nil { throw CLIError.usage("log records a task done already; a recurring one cannot be logged (as in Taskwarrior)") }
        let context = try app.context()
        var recorder = ChangeRecorder(command: logged ? "log" : "add")
        let task = try context.insertObject(entityName: "Task")
        try task.setValue(.string(text), forKey: "title")
        try task.setValue(.integer(priority), forKey: "priority")
        try task.setValue(due.map(Value.date) ?? .null, forKey: "dueDate")
        try task.setValue(.uuid(UUID()), forKey: "uuid")
        try task.setValue(.date(app.now), forKey: "createdAt")
        try apply(args, to: task, app: app, context: context)
        if args.value("project") == nil, let name = app.config.defaultProject {
            try task.setObject(try app.named("Project", name, in: context, create: true), forKey: "project")
        }
        try dates.apply(to: task)
        try UserAttribute.apply(userValues, to: task)
        if let dependencies = args.value("depends") { try Dependencies.apply(dependencies, to: task, app: app, context: context) }
        if logged {
            try task.setValue(.string("done"), forKey: "status")
            try task.setValue(.date(app.now), forKey: "completedAt")
        }
        try recorder.willChange(task: task)
        try checkRules(task)
        // A recurring task is a template: the instance due first stands for it.
        let made = try RecurringTasks.update(in: context, app: app, recorder: &recorder)
        // The series are made: the save need not read them again (10,000 tasks read twice
        // were half of an add's time).
        recorder.makesInstances = false
        try recorder.save(context, app: app)
        let shown = task["status"] == "recurring" ? made.first(where: { $0["status"] == "pending" }) ?? task : task
        if args.has("json") {
            app.output.line(try TaskView(shown, app: app).json)
        } else {
            app.output.line(String(shown.objectID.primaryKey ?? 0))
        }
    }

    /// Location, project and tags from options shared by add and edit.
    static func apply(_ args: Arguments, to task: ManagedObject, app: App, context: ManagedObjectContext) throws {
        if let name = args.value("location") {
            let trimmed = name.trimmingBlanks()
            guard !trimmed.isEmpty else { throw CLIError.usage("a location needs a name") }
            try task.setObject(try app.location(named: trimmed, in: context, create: true), forKey: "location")
        }
        if let name = args.value("project") {
            let trimmed = name.trimmingBlanks()
            guard !trimmed.isEmpty else { throw CLIError.usage("a project needs a name") }
            try task.setObject(try app.named("Project", trimmed, in: context, create: true), forKey: "project")
        }
        for tag in (args.value("tag") ?? "").split(separator: ",").map({ $0.trimmingBlanks() }) where !tag.isEmpty {
            try VirtualTags.checkStorable(tag)
            if let object = try app.named("Tag", tag, in: context, create: true) { try task.addObject(object, toKey: "tags") }
        }
    }

    /// --wait, --scheduled, --recur and --until (and their --no- forms for edit), checked
    /// before the store is touched.
    struct Dates {
        var wait: DateValue??, scheduled: DateValue??, until: DateValue??
        var recurrence: String??

        init(_ args: Arguments, app: App) throws {
            func date(_ key: String) throws -> DateValue?? {
                if args.has("no-" + key) {
                    if args.has(key) { throw CLIError.usage("give --\(key) or --no-\(key), not both") }
                    return .some(nil)
                }
                return try args.value(key).map { .some(try DateValue.parse($0, start: key != "until", app: app)) }
            }
            wait = try date("wait")
            scheduled = try date("scheduled")
            until = try date("until")
            if args.has("no-recur") {
                if args.has("recur") { throw CLIError.usage("give --recur or --no-recur, not both") }
                recurrence = .some(nil)
            } else if let text = args.value("recur") {
                guard Recurrence(text) != nil else { throw CLIError.usage("--recur '\(text)' is not a recurrence; use \(Recurrence.help)") }
                recurrence = .some(text.trimmingBlanks())
            }
        }

        func apply(to task: ManagedObject) throws {
            if let wait { try task.setValue(try wait.map { .date(try $0.date(for: task)) } ?? .null, forKey: "waitUntil") }
            if let scheduled { try task.setValue(try scheduled.map { .date(try $0.date(for: task)) } ?? .null, forKey: "scheduled") }
            if let until { try task.setValue(try until.map { .date(try $0.date(for: task)) } ?? .null, forKey: "until") }
            if let recurrence { try task.setValue(recurrence.map(Value.string) ?? .null, forKey: "recurrence") }
            if !task["recurrence"].isNull && task["dueDate"].isNull {
                throw CLIError.usage("a recurring task needs a due date: add --due DATE")
            }
        }
    }

    /// taskctl's own rule, on top of the model's: a high-priority task needs a due date.
    static func checkRules(_ task: ManagedObject) throws {
        if task["priority"] == 3 && task["dueDate"].isNull && task["status"] == "pending" {
            throw CLIError.usage("a high-priority task needs a due date: add --due DATE (e.g. --due friday)")
        }
    }

    static func show(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "show")
        guard args.positional.count == 1 || !app.filter.isEmpty else { throw CLIError.usage("usage: taskctl show ID") }
        let context = try app.context(readOnly: true)
        if !app.filter.isEmpty {
            let tasks = try app.selected(args.positional, in: context, command: "show")
            if tasks.count == 1 && app.filter.onlyIdentifiers {
                // One task named: as show ID.
                let view = try TaskView(tasks[0], app: app)
                if args.has("json") && !(view.status == "deleted" && !args.has("all") && !args.has("deleted")) {
                    app.output.line(view.json)
                    return
                }
                return try show(view, args: args, app: app, extras: tasks[0]["extras"])
            }
            // Several tasks (a filter): each, in id order, a blank line between.
            if args.has("json") {
                app.output.line(TaskView.jsonArray(try TaskView.of(tasks, app: app)))
                return
            }
            for (index, task) in tasks.enumerated() {
                if index > 0 { app.output.line() }
                try show(TaskView(task, app: app), args: args, app: app, extras: task["extras"])
            }
            return
        }
        let task = try app.task(args.positional[0], in: context)
        let view = try TaskView(task, app: app)
        if args.has("json") && !(view.status == "deleted" && !args.has("all") && !args.has("deleted")) {
            app.output.line(view.json)
            return
        }
        try show(view, args: args, app: app, extras: task["extras"])
    }

    /// One task's lines; `extras` (its kept fields) give its user-defined attributes.
    static func show(_ view: TaskView, args: Arguments, app: App, extras: Value = .null) throws {
        if view.status == "deleted" && !args.has("all") && !args.has("deleted") {
            throw CLIError.usage("task \(view.id) is deleted; 'taskctl show \(view.id) --deleted' shows it, 'taskctl undo' brings a delete back")
        }
        if args.has("json") {
            app.output.line(view.json)
            return
        }
        let relative = app.relative
        var lines: [(String, String)] = [("id", String(view.id)), ("text", view.text), ("status", view.status), ("priority", Priority.name(view.priority))]
        lines.append(("due", view.due.map { "\(relative.day($0)) (\(relative.describe($0)))" } ?? "-"))
        lines.append(("location", view.location ?? "-"))
        lines.append(("project", view.project ?? "-"))
        lines.append(("tags", view.tags.isEmpty ? "-" : view.tags.joined(separator: ", ")))
        lines.append(("created", view.created.map(relative.day) ?? "-"))
        if let completed = view.completed { lines.append(("completed", relative.day(completed))) }
        if let wait = view.wait { lines.append(("waits", relative.day(wait) + (wait > app.now ? " (hidden from the list until then)" : ""))) }
        if let scheduled = view.scheduled { lines.append(("scheduled", relative.day(scheduled))) }
        if let started = view.started { lines.append(("started", relative.day(started))) }
        if let recurrence = view.recurrence { lines.append(("recurs", recurrence + (view.until.map { " until " + relative.day($0) } ?? ""))) }
        for annotation in view.annotations { lines.append(("note", (annotation.entry.map { relative.day($0) + "  " } ?? "") + annotation.text)) }
        for (key, json) in ExtrasText.decode(extras) {
            guard let attribute = app.config.userAttributes[key] else { continue }
            lines.append((attribute.label ?? key, UserAttribute.text(ofJSON: json)))
        }
        if let context = try? app.context(readOnly: true) {
            // Dependencies by id (a UUID no task here has yet, as it is), and the open tasks
            // waiting for this one.
            func ids(_ uuids: [UUID]) throws -> String {
                guard !uuids.isEmpty else { return "" }
                let found = try context.fetchValues(FetchRequest(entityName: "Task", predicate: try ObjectPredicate(
                    format: "uuid IN %@", placeholders: [.list(uuids.map(Value.uuid))])), properties: ["uuid"])
                var byUUID: [UUID: Int64] = [:]
                for row in found { if case .uuid(let uuid)? = row.values.first?.value, let key = row.objectID.primaryKey { byUUID[uuid] = key } }
                return uuids.map { byUUID[$0].map(String.init) ?? $0.uuidString.lowercased() }.joined(separator: " ")
            }
            let index = try app.urgency.dependencyIndex(context)
            if !view.depends.isEmpty {
                let blocked = view.uuidValue.map(index.blocked.contains) ?? false
                lines.append(("depends", try ids(view.depends) + (blocked ? " (blocked)" : "")))
            }
            if let own = view.uuidValue, index.blocking.contains(own) {
                lines.append(("blocks", try ids(index.dependents.filter { $0.value.contains(own) }.map(\.key).sorted { $0.uuidString < $1.uuidString })))
            }
        }
        if view.status == "pending" { lines.append(("urgency", Urgency.text(view.urgency))) }
        lines.append(("uuid", view.uuid ?? "-"))
        for (key, value) in lines {
            let value = Terminal.visible(value)
            let shown = key == "due" && view.overdue ? app.terminal.paint(value, .red) : value
            app.output.line(key.padding(toLength: 10, withPad: " ", startingAt: 0) + shown)
        }
        if args.has("changes") { try changes(of: view.objectID, app: app) }
    }

    /// The task's changes the store's history holds (its last 1,000 transactions), oldest
    /// first, with old and new values: what Taskwarrior's information report shows from its
    /// undo log.
    static func changes(of task: ObjectID, app: App) throws {
        let context = try app.context(readOnly: true)
        let coordinator = context.coordinator
        guard coordinator.keepsHistory else { return }
        let transactions = try coordinator.fetchHistory(after: nil, entities: ["Task"])
        let namer = HistoryCommand.Namer(context: context)
        var lines: [String] = []
        let dates = RelativeDate(now: app.now, timeZone: app.timeZone)
        for transaction in transactions {
            for change in transaction.changes where change.objectID == task {
                let when = "\(dates.date(transaction.timestamp)) \(HistoryCommand.time(transaction.timestamp, app.timeZone))"
                let what = UndoCommand.undoneNumber(transaction).map { "undo of #\($0)" } ?? transaction.contextName ?? "(unnamed)"
                lines.append("  #\(transaction.number) \(when) \(what): " + HistoryCommand.describe(change, namer, context.model))
            }
        }
        guard !lines.isEmpty else { return }
        app.output.line("changes")
        for line in lines.suffix(50) { app.output.line(Terminal.visible(line)) }
    }

    static func edit(_ words: [String], _ app: App) throws {
        var words = words
        let userValues = try UserAttribute.take(from: &words, config: app.config, app: app)
        let args = try Arguments(words, for: "edit")
        try edit(args, ids: args.positional, command: "edit", app: app, userValues: userValues)
    }

    /// Taskwarrior's `modify`: `FILTER modify [MODIFICATIONS]`, where attribute words change
    /// fields, other words replace the description, and `/from/to/` (`/from/to/g`) replaces
    /// text in it.
    static func modify(_ words: [String], _ app: App) throws {
        var words = words
        let userValues = try UserAttribute.take(from: &words, config: app.config, app: app)
        let args = try Arguments(words, for: "modify")
        var text: [String] = []
        var substitutions: [(from: String, to: String, global: Bool)] = []
        for word in args.positional {
            if let substitution = Substitution(word) { substitutions.append(substitution.parts) } else { text.append(word) }
        }
        let replacement = text.joinedBySpaces().trimmingBlanks()
        try edit(args, ids: [], command: "modify", app: app, text: { title in
            var title = replacement.isEmpty ? title : replacement
            for s in substitutions {
                if s.global {
                    title = title.replacingOccurrences(of: s.from, with: s.to)
                } else if let range = title.range(of: s.from) {
                    title.replaceSubrange(range, with: s.to)
                }
            }
            return title
        }, changesText: !replacement.isEmpty || !substitutions.isEmpty, userValues: userValues)
    }

    /// `FILTER append WORDS` and `FILTER prepend WORDS`: text added to the descriptions.
    static func extend(_ words: [String], _ app: App, prepend: Bool) throws {
        let command = prepend ? "prepend" : "append"
        let args = try Arguments(words, for: command)
        let added = args.positional.joinedBySpaces().trimmingBlanks()
        guard !added.isEmpty else { throw CLIError.usage("\(command) needs words to add: taskctl ID \(command) WORDS") }
        try edit(args, ids: [], command: command, app: app, text: { prepend ? added + " " + $0 : $0 + " " + added }, changesText: true)
    }

    /// `/from/to/` or `/from/to/g` (a word of modify).
    struct Substitution {
        let parts: (from: String, to: String, global: Bool)
        init?(_ word: String) {
            guard word.hasPrefix("/"), word.count >= 3 else { return nil }
            let pieces = word.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard pieces.count == 3, !pieces[0].isEmpty, pieces[2] == "" || pieces[2] == "g" else { return nil }
            parts = (pieces[0], pieces[1], pieces[2] == "g")
        }
    }

    /// Taskwarrior's `duplicate`: `FILTER duplicate [MODIFICATIONS]` adds a pending copy of
    /// each task (its text, priority, dates, location, project, tags and annotations; not its
    /// start, end or place in a recurrence), with the modifications applied to the copy.
    static func duplicate(_ words: [String], _ app: App) throws {
        var words = words
        let userValues = try UserAttribute.take(from: &words, config: app.config, app: app)
        let args = try Arguments(words, for: "duplicate")
        // Other words annotate the copy, as in Taskwarrior 2.6.
        let note = args.positional.joinedBySpaces().trimmingWhiteSpace()
        try edit(args, ids: [], command: "duplicate", app: app, changesText: true, duplicating: true, annotation: note.isEmpty ? nil : note,
                 userValues: userValues)
    }

    static func edit(_ args: Arguments, ids: [String], command: String, app: App, text newText: ((String) -> String)? = nil, changesText: Bool = false,
                     duplicating: Bool = false, annotation: String? = nil, userValues: [(name: String, json: String?)] = []) throws {
        let filter = args.value("where")
        guard !ids.isEmpty || filter != nil || !app.filter.isEmpty else {
            throw CLIError.usage(command == "edit"
                ? "usage: taskctl edit ID... [--text T] [--priority P] [--due DATE] ..., or taskctl edit --where PREDICATE ..."
                : "\(command) needs tasks before it: taskctl ID \(command) ... or taskctl FILTER \(command) ...")
        }
        if filter != nil && (!ids.isEmpty || !app.filter.isEmpty) { throw CLIError.usage("give task ids or a filter, or --where, not both") }
        let changes = ["text", "priority", "due", "location", "project", "tag", "untag", "wait", "scheduled", "recur", "until", "status", "depends",
                       "no-due", "no-location", "no-project", "no-wait", "no-scheduled", "no-recur", "no-until"]
        guard changesText || !userValues.isEmpty || changes.contains(where: args.has) else {
            throw CLIError.usage("\(command) needs something to change: --text, --priority, --due, --location, --project, --tag, --untag, --wait, --scheduled, --recur, --until (see taskctl help edit)")
        }
        if args.has("due") && args.has("no-due") { throw CLIError.usage("give --due or --no-due, not both") }
        if args.has("location") && args.has("no-location") { throw CLIError.usage("give --location or --no-location, not both") }
        let priority = try args.value("priority").map(Priority.parse)
        // modify status:pending|completed|deleted, as Taskwarrior's.
        let status = try args.value("status").map { text -> String in
            guard let status = ["pending": "pending", "completed": "done", "done": "done", "deleted": "deleted"][text.lowercased()] else {
                throw CLIError.usage("status:\(text): a task's status is set to pending, completed or deleted")
            }
            return status
        }
        let due = try args.value("due").map { try DateValue.parse($0, start: false, app: app) }
        let dates = try Dates(args, app: app)
        let predicate = try filter.map { try ListCommand.userPredicate($0, app: app) }
        // Tasks that are not deleted, as a filter selects them.
        let live = try predicate.map { ObjectPredicate.and(.and(try ObjectPredicate("status != 'deleted'"), .not(try app.expired())), $0) }
        if let live, !duplicating, annotation == nil, userValues.isEmpty, newText == nil, !changesText,
           try BulkEdit.run(args, selecting: live, filter: filter ?? "", priority: priority, command: command, app: app) {
            return
        }
        let context = try app.context()
        var tasks: [ManagedObject]
        if let live {
            tasks = try app.tasks(context, where: live)
                .sorted { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) }
            guard !tasks.isEmpty else { throw CLIError.usage("no task matches --where \(filter ?? ""); nothing changed") }
        } else {
            tasks = try app.selected(ids, in: context, command: command)
        }
        try app.confirmBulk(tasks.count, command, yes: args.has("yes"))
        var recorder = ChangeRecorder(command: command)
        var changed: [ManagedObject] = []
        let originals = tasks
        if duplicating {
            for task in tasks where task["status"] == "deleted" {
                throw CLIError.usage("task \(task.objectID.primaryKey ?? 0) is deleted; 'taskctl undo' brings back a delete")
            }
            tasks = try tasks.map { try RecurringTasks.copy(of: $0, app: app, context: context) }
            if let annotation { for task in tasks { try Annotations.add(annotation, entry: app.now, to: task, in: context) } }
        }
        for task in tasks {
            if task["status"] == "deleted" && status == nil {
                throw CLIError.usage("task \(task.objectID.primaryKey ?? 0) is deleted; 'taskctl undo' brings back a delete")
            }
            try recorder.willChange(task: task)
            if let status, task["status"] != .string(status) {
                try task.setValue(.string(status), forKey: "status")
                try task.setValue(status == "pending" ? .null : .date(app.now), forKey: "completedAt")
                if status != "pending" { try task.setValue(.null, forKey: "startedAt") }
                try RecurringTasks.statusChanged(task, in: context, app: app, recorder: &recorder)
            }
            // A task that broke taskctl's own rule before (an imported high-priority task
            // without a due date: Taskwarrior allows it) stays editable: only an edit of its
            // priority, due date or status must satisfy the rule.
            let brokeRulesBefore = (try? checkRules(task)) == nil
            if let newText {
                let trimmed = newText(task["title"].stringValue ?? "").trimmingBlanks()
                guard !trimmed.isEmpty else { throw CLIError.usage("a task's text cannot be empty") }
                try task.setValue(.string(trimmed), forKey: "title")
            }
            if let text = args.value("text") {
                let trimmed = text.trimmingBlanks()
                guard !trimmed.isEmpty else { throw CLIError.usage("a task's text cannot be empty") }
                try task.setValue(.string(trimmed), forKey: "title")
            }
            if let priority {
                try task.setValue(.integer(priority), forKey: "priority")
                // A priority an import kept as written (not H, M or L) is replaced by this one.
                if ExtrasText.decode(task["extras"]).contains(where: { $0.key == "priority" }) { try UserAttribute.apply([("priority", nil)], to: task) }
            }
            if let due { try task.setValue(.date(try due.date(for: task)), forKey: "dueDate") }
            if args.has("no-due") { try task.setValue(.null, forKey: "dueDate") }
            if args.has("no-location") { try task.setObject(nil, forKey: "location") }
            if args.has("no-project") { try task.setObject(nil, forKey: "project") }
            try apply(args, to: task, app: app, context: context)
            for tag in (args.value("untag") ?? "").split(separator: ",").map({ $0.trimmingBlanks() }) where !tag.isEmpty {
                try VirtualTags.checkStorable(tag)
                if let object = try app.named("Tag", tag, in: context, create: false) { try task.removeObject(object, fromKey: "tags") }
            }
            try dates.apply(to: task)
            try UserAttribute.apply(userValues, to: task)
            if let dependencies = args.value("depends") { try Dependencies.apply(dependencies, to: task, app: app, context: context) }
            if !brokeRulesBefore || ["priority", "dueDate", "status"].contains(where: { task.changedValues()[$0] != nil }) {
                try checkRules(task)
            }
            context.processPendingChanges()
            if task.hasChanges { changed.append(task) }
        }
        try recorder.save(context, app: app)
        if args.has("json") {
            if tasks.count == 1 && predicate == nil && app.filter.isEmpty {
                app.output.line(try TaskView(tasks[0], app: app).json)
            } else {
                app.output.line(TaskView.jsonArray(try TaskView.of(tasks, app: app)))
            }
            return
        }
        for (index, task) in tasks.enumerated() {
            let title = task["title"].stringValue ?? ""
            let id = task.objectID.primaryKey ?? 0
            if duplicating {
                app.output.line("added \(id): \(title) (a copy of \(originals[index].objectID.primaryKey ?? 0))")
                continue
            }
            app.output.line(changed.contains { $0 === task } ? "edited \(id): \(title)" : "task \(id) already had those values; nothing changed")
        }
    }

    /// done, reopen and delete: change the status of several tasks at once.
    static func setStatus(_ words: [String], _ app: App, command: String, to status: String) throws {
        let args = try Arguments(words, for: command)
        if try BulkStatus.run(args, command: command, to: status, app: app) { return }
        let context = try app.context()
        let tasks = try app.selected(args.positional, in: context, command: command)
        try app.confirmBulk(tasks.count, command, yes: args.has("yes"))
        var recorder = ChangeRecorder(command: command)
        var changed: [ManagedObject] = []
        var templates = 0
        for task in tasks {
            if task["status"] == .string(status) {
                app.output.warn("taskctl: task \(task.objectID.primaryKey ?? 0) is already \(status)")
                continue
            }
            if task["status"] == "deleted" {
                throw CLIError.usage("task \(task.objectID.primaryKey ?? 0) is deleted; 'taskctl undo' brings back a delete")
            }
            if task["status"] == "recurring" && status != "deleted" {
                // As in Taskwarrior: a template is neither pending nor done; its instances are.
                app.output.warn("taskctl: task \(task.objectID.primaryKey ?? 0) is a recurring task's template; \(command) its instances instead (taskctl \(task.objectID.primaryKey ?? 0) show)")
                templates += 1
                continue
            }
            try recorder.willChange(task: task)
            try task.setValue(.string(status), forKey: "status")
            // When the task ended: done or deleted, as Taskwarrior's `end` (a deleted task
            // was exported without one).
            try task.setValue(status == "pending" ? .null : .date(app.now), forKey: "completedAt")
            if status != "pending" { try task.setValue(.null, forKey: "startedAt") }
            changed.append(task)
            try RecurringTasks.statusChanged(task, in: context, app: app, recorder: &recorder)
        }
        if changed.isEmpty && templates > 0 {
            throw CLIError.usage("nothing to \(command): a recurring task's template is not \(command == "done" ? "done" : "changed so"); its instances are")
        }
        if changed.isEmpty {
            // Every task was in that state already: nothing done is a failure, not a success.
            throw CLIError.usage("nothing to \(command): every task given is already \(status == "pending" ? "pending" : status)")
        }
        try recorder.save(context, app: app)
        if args.has("json") {
            app.output.line(TaskView.jsonArray(try TaskView.of(changed, app: app)))
        } else {
            let verb = ["done": "done", "reopen": "reopened", "delete": "deleted"][command] ?? command
            let relative = app.relative
            for task in changed {
                app.output.line("\(verb) \(task.objectID.primaryKey ?? 0): \(task["title"].description.trimmingCharacters(in: CharacterSet(charactersIn: "\"")))")
                // A recurring task's instance done: its series' next pending one.
                if status == "done", let next = try RecurringTasks.nextPending(after: task, in: context), case .date(let due) = next["dueDate"] {
                    app.output.line("next \(next.objectID.primaryKey ?? 0): due \(relative.day(due)) (\(task["recurrence"].stringValue ?? ""))")
                }
            }
        }
    }

    /// start and stop: mark pending tasks as being worked on (Taskwarrior's start/stop).
    static func setStarted(_ words: [String], _ app: App, start: Bool) throws {
        let command = start ? "start" : "stop"
        let args = try Arguments(words, for: command)
        let context = try app.context()
        let tasks = try app.selected(args.positional, in: context, command: command)
        try app.confirmBulk(tasks.count, command, yes: args.has("yes"))
        var recorder = ChangeRecorder(command: command)
        var changed: [ManagedObject] = []
        for task in tasks {
            let id = task.objectID.primaryKey ?? 0
            guard task["status"] == "pending" else { throw CLIError.usage("task \(id) is \(task["status"].stringValue ?? "not pending"); only pending tasks start and stop") }
            if start != task["startedAt"].isNull {
                app.output.warn("taskctl: task \(id) is \(start ? "already started" : "not started")")
                continue
            }
            try recorder.willChange(task: task)
            try task.setValue(start ? .date(app.now) : .null, forKey: "startedAt")
            changed.append(task)
        }
        if changed.isEmpty { throw CLIError.usage("nothing to \(command): every task given is \(start ? "already started" : "not started")") }
        try recorder.save(context, app: app)
        if args.has("json") {
            app.output.line(TaskView.jsonArray(try TaskView.of(changed, app: app)))
        } else {
            for task in changed { app.output.line("\(start ? "started" : "stopped") \(task.objectID.primaryKey ?? 0): \(task["title"].stringValue ?? "")") }
        }
    }

    /// Taskwarrior's `denotate`: `FILTER denotate [TEXT]` removes from each task the
    /// annotation whose text is TEXT, else the first that contains it (the first, with no text).
    static func denotate(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "denotate")
        let pattern = args.positional.joinedBySpaces()
        let context = try app.context()
        let tasks = try app.selected([], in: context, command: "denotate")
        try app.confirmBulk(tasks.count, "denotate", yes: args.has("yes"))
        var recorder = ChangeRecorder(command: "denotate")
        var changed: [(ManagedObject, String)] = []
        for task in tasks {
            let notes = try task.objects(forKey: "annotations").sorted {
                ($0["entry"].dateValue ?? .distantPast, $0["text"].stringValue ?? "") < ($1["entry"].dateValue ?? .distantPast, $1["text"].stringValue ?? "")
            }
            let caseless = !app.config.searchCaseSensitive
            guard let note = notes.first(where: { $0["text"].stringValue == pattern })
                    ?? notes.first(where: { pattern.isEmpty || ($0["text"].stringValue ?? "").range(of: pattern, options: caseless ? [.caseInsensitive] : []) != nil }) else { continue }
            try recorder.willChange(task: task)
            changed.append((task, note["text"].stringValue ?? ""))
            context.delete(note)
        }
        guard !changed.isEmpty else {
            throw CLIError.usage(pattern.isEmpty ? "no task given has an annotation to remove" : "no task given has an annotation matching '\(pattern)'; nothing changed")
        }
        try recorder.save(context, app: app)
        for (task, text) in changed { app.output.line("denotated \(task.objectID.primaryKey ?? 0): removed '\(text)'") }
    }

    /// `annotate ID TEXT`: a dated note on a task.
    static func annotate(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "annotate")
        // taskctl's `annotate ID TEXT`, or Taskwarrior's `FILTER annotate TEXT`.
        let byFilter = !app.filter.isEmpty
        guard args.positional.count >= (byFilter ? 1 : 2) else { throw CLIError.usage("usage: taskctl annotate ID TEXT (or taskctl FILTER annotate TEXT)") }
        let text = Array(args.positional.dropFirst(byFilter ? 0 : 1)).joinedBySpaces().trimmingWhiteSpace()
        guard !text.isEmpty else { throw CLIError.usage("an annotation needs text") }
        let context = try app.context()
        let tasks = try app.selected(byFilter ? [] : [args.positional[0]], in: context, command: "annotate")
        try app.confirmBulk(tasks.count, "annotate", yes: args.has("yes"))
        var recorder = ChangeRecorder(command: "annotate")
        for task in tasks {
            if task["status"] == "deleted" { throw CLIError.usage("task \(task.objectID.primaryKey ?? 0) is deleted; 'taskctl undo' brings back a delete") }
            try recorder.willChange(task: task)
            try Annotations.add(text, entry: app.now, to: task, in: context)
        }
        do {
            try recorder.save(context, app: app)
        } catch let error as ValidationError {
            throw CLIError.usage("not annotated: \(CLIError.from(error).message)")
        }
        if args.has("json") {
            app.output.line(tasks.count == 1 && !byFilter ? try TaskView(tasks[0], app: app).json : TaskView.jsonArray(try TaskView.of(tasks, app: app)))
        } else {
            for task in tasks { app.output.line("annotated \(task.objectID.primaryKey ?? 0): \(task["title"].stringValue ?? "")") }
        }
    }
}

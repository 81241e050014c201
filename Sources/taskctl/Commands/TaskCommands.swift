import Foundation
import ObjectStore
import ObjectStoreModel

/// add, show, edit, done, reopen, delete.
enum TaskCommands {
    static func add(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, valued: ["priority", "due", "location", "project", "tag"], switches: ["json"], command: "add", taskwarriorAttributes: true)
        let text = args.positional.joined(separator: " ").trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { throw CLIError.usage("add needs the task's text: taskctl add \"Buy milk\" [--due tomorrow]") }
        // Check every value before touching the store.
        let priority = try args.value("priority").map(Priority.parse) ?? 0
        let due = try args.value("due").map(app.parseDate)
        let context = try app.context()
        var recorder = ChangeRecorder(command: "add")
        let task = try context.insertObject(entityName: "Task")
        try task.setValue(.string(text), forKey: "title")
        try task.setValue(.integer(priority), forKey: "priority")
        try task.setValue(due.map(Value.date) ?? .null, forKey: "dueDate")
        try task.setValue(.uuid(UUID()), forKey: "uuid")
        try task.setValue(.date(app.now), forKey: "createdAt")
        try apply(args, to: task, app: app, context: context)
        try recorder.willChange(task: task)
        try checkRules(task)
        try recorder.save(context, journal: UndoJournal(storeURL: app.storeURL), app: app)
        if args.has("json") {
            app.output.line(try TaskView(task).json)
        } else {
            app.output.line(String(task.objectID.primaryKey ?? 0))
        }
    }

    /// Location, project and tags from options shared by add and edit.
    static func apply(_ args: Arguments, to task: ManagedObject, app: App, context: ManagedObjectContext) throws {
        if let name = args.value("location") {
            let trimmed = name.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { throw CLIError.usage("a location needs a name") }
            try task.setObject(try app.location(named: trimmed, in: context, create: true), forKey: "location")
        }
        if let name = args.value("project") {
            let trimmed = name.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { throw CLIError.usage("a project needs a name") }
            try task.setObject(try app.named("Project", trimmed, in: context, create: true), forKey: "project")
        }
        for tag in (args.value("tag") ?? "").split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !tag.isEmpty {
            if let object = try app.named("Tag", tag, in: context, create: true) { try task.addObject(object, toKey: "tags") }
        }
    }

    /// taskctl's own rule, on top of the model's: a high-priority task needs a due date.
    static func checkRules(_ task: ManagedObject) throws {
        if task["priority"] == 3 && task["dueDate"].isNull && task["status"] == "pending" {
            throw CLIError.usage("a high-priority task needs a due date: add --due DATE (e.g. --due friday)")
        }
    }

    static func show(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, valued: [], switches: ["json", "all", "deleted"], command: "show")
        guard args.positional.count == 1 else { throw CLIError.usage("usage: taskctl show ID") }
        let context = try app.context(readOnly: true)
        let view = try TaskView(try app.task(args.positional[0], in: context))
        if view.status == "deleted" && !args.has("all") && !args.has("deleted") {
            throw CLIError.usage("task \(view.id) is deleted; 'taskctl show \(view.id) --deleted' shows it, 'taskctl undo' brings a delete back")
        }
        if args.has("json") {
            app.output.line(view.json)
            return
        }
        let relative = RelativeDate(now: app.now, timeZone: app.timeZone)
        var lines: [(String, String)] = [("id", String(view.id)), ("text", view.text), ("status", view.status), ("priority", Priority.name(view.priority))]
        lines.append(("due", view.due.map { "\(relative.day($0)) (\(relative.describe($0)))" } ?? "-"))
        lines.append(("location", view.location ?? "-"))
        lines.append(("project", view.project ?? "-"))
        lines.append(("tags", view.tags.isEmpty ? "-" : view.tags.joined(separator: ", ")))
        lines.append(("created", view.created.map(relative.day) ?? "-"))
        if let completed = view.completed { lines.append(("completed", relative.day(completed))) }
        if let wait = view.wait { lines.append(("waits", relative.day(wait) + (wait > app.now ? " (hidden from the list until then)" : ""))) }
        if let scheduled = view.scheduled { lines.append(("scheduled", relative.day(scheduled))) }
        for annotation in view.annotations { lines.append(("note", annotation)) }
        lines.append(("uuid", view.uuid ?? "-"))
        for (key, value) in lines {
            let value = Terminal.visible(value)
            let shown = key == "due" && view.overdue ? app.terminal.paint(value, .red) : value
            app.output.line(key.padding(toLength: 10, withPad: " ", startingAt: 0) + shown)
        }
    }

    static func edit(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, valued: ["text", "priority", "due", "location", "project", "tag", "untag"],
                                 switches: ["no-due", "no-location", "no-project", "json"], command: "edit", taskwarriorAttributes: true)
        guard args.positional.count == 1 else { throw CLIError.usage("usage: taskctl edit ID [--text T] [--priority P] [--due DATE] ...") }
        let changes = ["text", "priority", "due", "location", "project", "tag", "untag", "no-due", "no-location", "no-project"]
        guard changes.contains(where: args.has) else {
            throw CLIError.usage("edit needs something to change: --text, --priority, --due, --location, --project, --tag, --untag (see taskctl help edit)")
        }
        if args.has("due") && args.has("no-due") { throw CLIError.usage("give --due or --no-due, not both") }
        if args.has("location") && args.has("no-location") { throw CLIError.usage("give --location or --no-location, not both") }
        let priority = try args.value("priority").map(Priority.parse)
        let due = try args.value("due").map(app.parseDate)
        let context = try app.context()
        let task = try app.task(args.positional[0], in: context)
        if task["status"] == "deleted" {
            throw CLIError.usage("task \(task.objectID.primaryKey ?? 0) is deleted; 'taskctl undo' brings back a delete")
        }
        var recorder = ChangeRecorder(command: "edit")
        try recorder.willChange(task: task)
        if let text = args.value("text") {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { throw CLIError.usage("a task's text cannot be empty") }
            try task.setValue(.string(trimmed), forKey: "title")
        }
        if let priority { try task.setValue(.integer(priority), forKey: "priority") }
        if let due { try task.setValue(.date(due), forKey: "dueDate") }
        if args.has("no-due") { try task.setValue(.null, forKey: "dueDate") }
        if args.has("no-location") { try task.setObject(nil, forKey: "location") }
        if args.has("no-project") { try task.setObject(nil, forKey: "project") }
        try apply(args, to: task, app: app, context: context)
        for tag in (args.value("untag") ?? "").split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !tag.isEmpty {
            if let object = try app.named("Tag", tag, in: context, create: false) { try task.removeObject(object, fromKey: "tags") }
        }
        try checkRules(task)
        let changed = context.hasChanges
        try recorder.save(context, journal: UndoJournal(storeURL: app.storeURL), app: app)
        if args.has("json") {
            app.output.line(try TaskView(task).json)
        } else {
            let title = task["title"].description.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            app.output.line(changed ? "edited \(task.objectID.primaryKey ?? 0): \(title)" : "task \(task.objectID.primaryKey ?? 0) already had those values; nothing changed")
        }
    }

    /// done, reopen and delete: change the status of several tasks at once.
    static func setStatus(_ words: [String], _ app: App, command: String, to status: String) throws {
        let args = try Arguments(words, valued: [], switches: ["json"], command: command)
        guard !args.positional.isEmpty else { throw CLIError.usage("usage: taskctl \(command) ID...") }
        let context = try app.context()
        var recorder = ChangeRecorder(command: command)
        var changed: [ManagedObject] = []
        for reference in args.positional {
            let task = try app.task(reference, in: context)
            if task["status"] == .string(status) {
                app.output.warn("taskctl: task \(task.objectID.primaryKey ?? 0) is already \(status)")
                continue
            }
            if task["status"] == "deleted" {
                throw CLIError.usage("task \(task.objectID.primaryKey ?? 0) is deleted; 'taskctl undo' brings back a delete")
            }
            try recorder.willChange(task: task)
            try task.setValue(.string(status), forKey: "status")
            try task.setValue(status == "done" ? .date(app.now) : .null, forKey: "completedAt")
            changed.append(task)
        }
        if changed.isEmpty {
            // Every task was in that state already: nothing done is a failure, not a success.
            throw CLIError.usage("nothing to \(command): every task given is already \(status == "pending" ? "pending" : status)")
        }
        try recorder.save(context, journal: UndoJournal(storeURL: app.storeURL), app: app)
        if args.has("json") {
            app.output.line(TaskView.jsonArray(try changed.map(TaskView.init)))
        } else {
            let verb = ["done": "done", "reopen": "reopened", "delete": "deleted"][command] ?? command
            for task in changed {
                app.output.line("\(verb) \(task.objectID.primaryKey ?? 0): \(task["title"].description.trimmingCharacters(in: CharacterSet(charactersIn: "\"")))")
            }
        }
    }
}

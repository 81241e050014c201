import Foundation
import ObjectStore
import ObjectStoreModel

/// Taskwarrior's recurrence: a recurring task is a template (status `recurring`, with its
/// `recur` period, `due`, `until`, and a `mask` of one character per instance made: `-`
/// pending, `+` done, `X` deleted, `W` waiting) and instances, pending tasks cloned from it,
/// each with its template's UUID (`parent`) and its place in the series (`imask`).
/// Instances are made for every due date from the template's up to and including the first
/// one after now (Taskwarrior's `recurrence.limit`, 1, counts those), as Taskwarrior 2.6
/// makes them (its `recur.cpp`), whichever replica made the template.
///
/// The fields are Taskwarrior's own, kept among the task's Taskwarrior fields (its extras),
/// as Taskwarrior writes them, so sync and export carry them unchanged. An instance's UUID is
/// named after its template and its place (UUIDv5), so two taskctl replicas that make the
/// same instance make one task, not two.
enum RecurringTasks {
    /// Up to this many tasks, every change makes every series' due instances.
    static let everyTaskLimit = 100_000

    /// The limit for this process (the debug build lets TASKCTL_RECURRENCE_LIMIT_TASKS make
    /// it small, so a test sees a large store's behaviour on a few tasks).
    static func everyTaskLimit(_ app: App) -> Int {
        #if DEBUG
        if let text = app.environment["TASKCTL_RECURRENCE_LIMIT_TASKS"], let limit = Int(text), limit >= 0 { return limit }
        #endif
        return everyTaskLimit
    }

    /// A task's `parent` (its template's UUID), when it is an instance.
    static func parent(of task: ManagedObject) -> UUID? {
        ExtrasText.decode(task["extras"]).first { $0.key == "parent" }.flatMap { UUID(uuidString: UserAttribute.text(ofJSON: $0.json)) }
    }

    /// A template's mask.
    static func mask(of task: ManagedObject) -> String {
        ExtrasText.decode(task["extras"]).first { $0.key == "mask" }.map { UserAttribute.text(ofJSON: $0.json) } ?? ""
    }

    /// Sets (nil: removes) the Taskwarrior fields `values` on a task.
    static func set(_ values: [(String, String?)], on task: ManagedObject) throws {
        var extras = ExtrasText.decode(task["extras"])
        for (key, json) in values {
            if let index = extras.firstIndex(where: { $0.key == key }) {
                if let json { extras[index].json = json } else { extras.remove(at: index) }
            } else if let json {
                extras.append((key, json))
            }
        }
        try task.setValue(ExtrasText.encode(extras), forKey: "extras")
    }

    /// The mask character of a status.
    static func maskCharacter(_ task: ManagedObject, now: Date) -> Character {
        switch task["status"].stringValue {
        case "done": return "+"
        case "deleted": return "X"
        default:
            if case .date(let wait) = task["waitUntil"], wait > now { return "W" }
            return "-"
        }
    }

    /// Makes the templates' instances that are due, as Taskwarrior does before a report: a
    /// pending task with a period and a due date and no template of its own becomes a template
    /// (as Taskwarrior's validation makes it; stores of taskctl 0.3 kept recurring tasks so),
    /// then each template gets its missing instances, and a template whose series has ended
    /// (past its `until`, every instance done or deleted) is deleted. Each change is recorded
    /// in `recorder`, so it is saved and undone with the command. Returns the instances made.
    ///
    /// In a store of more than ``everyTaskLimit`` tasks, a change reads only the series it
    /// touches (the changed tasks, and the templates of changed instances): reading every task
    /// at every change cost a command a second at a million tasks. `everything` (sync) reads
    /// every series whatever the size.
    @discardableResult
    static func update(in context: ManagedObjectContext, app: App, recorder: inout ChangeRecorder, everything: Bool = false) throws -> [ManagedObject] {
        guard app.config.recurrence else { return [] }
        // A template without a due date or a period makes nothing (instances(of:) below), so
        // both are asked of every candidate: the due dates' column then sets aside, without
        // reading them, the rows of tasks that have none (most tasks, in most lists).
        let query = "dueDate != nil AND recurrence != nil AND (status == 'recurring' OR status == 'pending')"
        var candidates: [ManagedObject]
        let readsEverything = try everything || context.count(for: FetchRequest(entityName: "Task")) <= everyTaskLimit(app)
        if readsEverything {
            candidates = try app.tasks(context, where: try ObjectPredicate(query))
        } else {
            // The series the command touched.
            func isCandidate(_ task: ManagedObject) -> Bool {
                task["status"] == "recurring" || (task["status"] == "pending" && !task["recurrence"].isNull && !task["dueDate"].isNull)
            }
            var seen = Set<ObjectID>()
            candidates = []
            for task in context.insertedObjects + context.updatedObjects where task.entity.isKind(of: "Task") {
                if let parent = parent(of: task) {
                    for template in try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "uuid == %@", .uuid(parent))))
                    where seen.insert(template.objectID).inserted {
                        candidates.append(template)
                    }
                } else if isCandidate(task), seen.insert(task.objectID).inserted {
                    candidates.append(task)
                }
            }
        }
        var made: [ManagedObject] = []
        for task in candidates {
            if task["status"] == "pending" {
                guard parent(of: task) == nil else { continue }
                // Taskwarrior's rule: pending, due, recurring and no parent is a template.
                try recorder.willChange(task: task)
                try task.setValue("recurring", forKey: "status")
                try task.setValue(.null, forKey: "startedAt")
                if !ExtrasText.decode(task["extras"]).contains(where: { $0.key == "rtype" }) { try set([("rtype", "\"periodic\"")], on: task) }
            }
            made += try instances(of: task, in: context, app: app, recorder: &recorder)
        }
        return made
    }

    /// The missing instances of one template (the template deleted when its series ended).
    static func instances(of template: ManagedObject, in context: ManagedObjectContext, app: App,
                          recorder: inout ChangeRecorder) throws -> [ManagedObject] {
        guard case .uuid(let templateUUID) = template["uuid"], let period = template["recurrence"].stringValue,
              let recurrence = Recurrence(period) else { return [] }
        var mask = mask(of: template)
        guard case .date(let due) = template["dueDate"] else { return [] }
        guard let dates = dueDates(from: due, recurrence: recurrence, until: template["until"].dateValue, mask: mask, app: app) else {
            // Depleted: past its until, nothing left to do.
            try recorder.willChange(task: template)
            try template.setValue("deleted", forKey: "status")
            try template.setValue(.date(app.now), forKey: "completedAt")
            return []
        }
        guard dates.count > mask.count else { return [] }
        try recorder.willChange(task: template)
        var made: [ManagedObject] = []
        for index in mask.count..<dates.count {
            let uuid = NameUUID.v5(namespace: templateUUID, name: "instance \(index)")
            if let existing = try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "uuid == %@", .uuid(uuid)))).first {
                // Made by another taskctl replica and received already.
                mask.append(maskCharacter(existing, now: app.now))
                continue
            }
            let instance = try clone(template, due: dates[index], index: index, uuid: uuid, in: context, app: app)
            try recorder.willChange(task: instance)
            // Taskwarrior marks an instance of a template with a wait as waiting when made.
            mask.append(template["waitUntil"].isNull ? "-" : "W")
            made.append(instance)
        }
        try set([("mask", JSONText.quote(mask))], on: template)
        return made
    }

    /// An instance: the template's fields (its Taskwarrior fields too, but its mask), due
    /// `due`, its wait moved with it, pending, made now.
    static func clone(_ template: ManagedObject, due: Date, index: Int, uuid: UUID, in context: ManagedObjectContext, app: App) throws -> ManagedObject {
        // duplicate's copy (fields, location, project, tags, annotations), then what makes it
        // this instance: its due date, its wait moved with it, its UUID and place.
        let instance = try Self.copy(of: template, app: app, context: context)
        try instance.setValue(.date(due), forKey: "dueDate")
        if case .date(let wait) = template["waitUntil"], case .date(let templateDue) = template["dueDate"] {
            try instance.setValue(.date(due.addingTimeInterval(wait.timeIntervalSince(templateDue))), forKey: "waitUntil")
        }
        try instance.setValue(.uuid(uuid), forKey: "uuid")
        var extras = ExtrasText.decode(template["extras"]).filter { !["mask", "modified", "parent", "imask"].contains($0.key) }
        if case .uuid(let parent) = template["uuid"] { extras.append(("parent", JSONText.quote(parent.uuidString.lowercased()))) }
        extras.append(("imask", String(index)))
        try instance.setValue(ExtrasText.encode(extras), forKey: "extras")
        return instance
    }

    /// Taskwarrior's due dates of a series: from the template's, one period apart, up to and
    /// including the first after now (`recurrence.limit` of them after now). Past `until`,
    /// the list ends with the first date beyond it, as Taskwarrior's does; nil when the series
    /// has ended (every instance up to then made, none pending).
    static func dueDates(from due: Date, recurrence: Recurrence, until: Date?, mask: String, app: App) -> [Date]? {
        let calendar = Calendar.taskctl(in: app.timeZone)
        var dates: [Date] = []
        var afterNow = 0
        var current = due
        // A bound no real series reaches (a daily series 270 years long), so no input loops.
        while dates.count < 100_000 {
            dates.append(current)
            if let until, current > until {
                if mask.count == dates.count && !mask.contains("-") { return nil }
                return dates
            }
            if current > app.now { afterNow += 1 }
            if afterNow >= app.config.recurrenceLimit { return dates }
            guard let next = recurrence.next(after: current, calendar: calendar), next > current else { return dates }
            current = next
        }
        return dates
    }

    /// After an instance's status changed: its character in its template's mask.
    static func statusChanged(_ instance: ManagedObject, in context: ManagedObjectContext, app: App, recorder: inout ChangeRecorder) throws {
        guard let parent = parent(of: instance),
              let index = ExtrasText.decode(instance["extras"]).first(where: { $0.key == "imask" }).flatMap({ Int(UserAttribute.text(ofJSON: $0.json)) }),
              index >= 0, index < 100_000,
              let template = try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "uuid == %@", .uuid(parent)))).first
        else { return }
        var mask = Array(mask(of: template))
        while mask.count <= index { mask.append("?") }
        let character = maskCharacter(instance, now: app.now)
        guard mask[index] != character else { return }
        mask[index] = character
        try recorder.willChange(task: template)
        try set([("mask", JSONText.quote(String(mask)))], on: template)
    }

    /// The pending instance of `instance`'s series due first after it.
    static func nextPending(after instance: ManagedObject, in context: ManagedObjectContext) throws -> ManagedObject? {
        guard let parent = parent(of: instance), case .date(let due) = instance["dueDate"] else { return nil }
        let siblings = try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate(
            format: "status == 'pending' AND dueDate > %@ AND extras CONTAINS %@", .date(due), .string(parent.uuidString.lowercased()))))
        return siblings.filter { Self.parent(of: $0) == parent }.min { ($0["dueDate"].dateValue ?? .distantFuture) < ($1["dueDate"].dateValue ?? .distantFuture) }
    }

    /// A pending copy of `task`, new in `context`.
    static func copy(of task: ManagedObject, app: App, context: ManagedObjectContext) throws -> ManagedObject {
        let copy = try context.insertObject(entityName: "Task")
        for key in ["title", "priority", "dueDate", "waitUntil", "scheduled", "until", "recurrence"] { try copy.setValue(task[key], forKey: key) }
        let kept = ExtrasText.decode(task["extras"]).filter { !["parent", "imask", "mask", "last", "rtype", "template", "modified"].contains($0.key) }
        try copy.setValue(ExtrasText.encode(kept), forKey: "extras")
        try copy.setValue(.string("pending"), forKey: "status")
        try copy.setValue(.uuid(UUID()), forKey: "uuid")
        try copy.setValue(.date(app.now), forKey: "createdAt")
        try copy.setObject(try task.object(forKey: "location"), forKey: "location")
        try copy.setObject(try task.object(forKey: "project"), forKey: "project")
        try copy.setObjects(try task.objects(forKey: "tags"), forKey: "tags")
        for note in try Annotations.list(of: task) {
            try Annotations.add(note.text, entry: note.entry ?? app.now, to: copy, in: context, movingOnCollision: false)
        }
        return copy
    }
}

import Foundation
import ObjectStore
import ObjectStoreModel

extension VirtualTags {
    /// The predicate of `+NAME`; nil when `name` is not reserved (an ordinary tag).
    static func predicate(_ name: String, scope: FilterScope) throws -> ObjectPredicate? {
        guard isReserved(name) else { return nil }
        let app = scope.app
        let pending = try app.pending()
        // Not completed or deleted: pending, or a recurring task's template.
        let open = Self.open(try app.pending())
        let waiting = try ObjectPredicate(format: "waitUntil > %@", .date(app.now))
        let values = FilterValue(dates: app.dates)
        func dueFrom(_ start: Date, before end: Date) throws -> ObjectPredicate {
            .and(open, try ObjectPredicate(format: "dueDate >= %@ AND dueDate < %@", .date(start), .date(end)))
        }
        func dueBetween(_ start: String, _ end: String) throws -> ObjectPredicate {
            .and(open, try ObjectPredicate(format: "dueDate >= %@ AND dueDate <= %@", .date(try values.date(start)), .date(try values.date(end))))
        }
        func day(_ word: String) throws -> ObjectPredicate {
            let start = try values.date(word)
            return try dueFrom(start, before: try values.date(word + "+1d"))
        }
        switch name {
        // Taskwarrior 2.6 gives a task waiting for a later date the status waiting.
        case "PENDING": return .and(pending, .not(waiting))
        case "COMPLETED": return try ObjectPredicate("status == 'done'")
        case "DELETED": return .or(try ObjectPredicate("status == 'deleted'"), try app.expired())
        case "WAITING": return .and(pending, waiting)
        case "ACTIVE": return try ObjectPredicate("startedAt != nil")
        case "SCHEDULED": return try ObjectPredicate("scheduled != nil")
        case "UNTIL": return try ObjectPredicate("until != nil")
        case "ANNOTATED": return try ObjectPredicate("annotations.@count > 0")
        case "TAGGED": return try ObjectPredicate("tags.@count > 0")
        case "PROJECT": return try ObjectPredicate("project != nil")
        case "PRIORITY": return try ObjectPredicate("priority != 0")
        case "OVERDUE": return .and(pending, try ObjectPredicate(format: "dueDate < %@", .date(app.now)))
        case "TODAY", "DUETODAY": return try day("today")
        case "YESTERDAY": return try day("yesterday")
        case "TOMORROW": return try day("tomorrow")
        // From today's start to 7 days after it (Taskwarrior's `due` setting, 7).
        case "DUE": return try dueFrom(try values.date("today"), before: try values.date("today+7d"))
        case "WEEK": return try dueBetween("sow", "eow")
        case "MONTH": return try dueBetween("som", "eom")
        case "QUARTER": return try dueBetween("soq", "eoq")
        case "YEAR": return try dueBetween("soy", "eoy")
        case "BLOCKED": return try scope.dependencies().blocked
        case "UNBLOCKED": return .not(try scope.dependencies().blocked)
        case "BLOCKING": return try scope.dependencies().blocking
        case "READY":
            let notScheduled = try ObjectPredicate(format: "scheduled == nil OR scheduled < %@", .date(app.now))
            return .and(.and(.and(pending, .not(waiting)), .not(try scope.dependencies().blocked)), notScheduled)
        // Taskwarrior's recurrence: an instance has a parent (template), a template a mask (last).
        case "CHILD", "INSTANCE": return try scope.tasks(withExtra: ["parent", "template"])
        case "PARENT", "TEMPLATE": return try scope.tasks(withExtra: ["mask", "last"])
        // Taskwarrior 2.6 defines priority as a user-defined attribute, beside those the settings define.
        case "UDA": return try scope.withUserAttributes()
        case "ORPHAN": return try scope.orphans()
        case "LATEST": return try scope.latest()
        default:
            throw CLIError.usage("'+\(name)': upper-case tags are reserved for Taskwarrior's virtual tags, and \(name) is not one; virtual tags: \(names.joined(separator: " "))")
        }
    }
}

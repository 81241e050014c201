import Foundation
import ObjectStore
import ObjectStoreModel

/// `taskctl undo`: reverts what the last journaled command changed, and only that.
///
/// It holds the store's lock from reading the journal to saving, so concurrent undos each
/// take their own entry. It reverts only the fields the entry's command changed, and
/// refuses when one of them was changed since (by something the journal did not record),
/// rather than overwrite that change.
enum UndoCommand {
    static let taskTypes: [String: AttributeType] = [
        "title": .string, "priority": .int16, "dueDate": .date, "status": .string, "createdAt": .date, "completedAt": .date, "uuid": .uuid, "extras": .string,
        "waitUntil": .date, "scheduled": .date, "startedAt": .date, "recurrence": .string, "until": .date,
    ]

    static func decode(_ text: String?, as type: AttributeType) -> Value {
        guard let text, let node = try? JSONParser.parse(text), case .success(let value) = JSONText.decode(node, as: type) else { return .null }
        return value
    }

    static func run(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "undo")
        guard args.positional.isEmpty else {
            throw CLIError.usage("undo takes no arguments: it undoes the last change, whichever task it was ('\(args.positional.joined(separator: " "))' given)")
        }
        let journal = UndoJournal(storeURL: app.storeURL)
        let context = try app.context()
        let entry: UndoJournal.Entry = try context.coordinator.withExclusiveStoreAccess {
            var entries = journal.read()
            guard let entry = entries.popLast() else { throw CLIError.usage("nothing to undo") }
            try revert(entry, in: context, app)
            // The entry leaves the journal before the save: a crash in between leaves the
            // change in place (undo it again), never an entry that undoes twice.
            try journal.write(entries)
            do {
                try context.save()
            } catch {
                try? journal.write(entries + [entry])
                throw error
            }
            return entry
        }
        let ids = UndoJournal.ranges(entry.tasks.map(\.id)).map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }
        app.output.line("undid \(entry.command)" + (ids.isEmpty ? "" : " of task\(entry.tasks.count == 1 ? "" : "s") \(ids.joined(separator: ", "))"))
    }

    /// The keys an entry's command changed on a task (every key for an old entry without "after").
    static func changedKeys(before: [String: String], after: [String: String]?) -> [String] {
        // Keys an entry does not have (written before taskctl recorded them) are left alone.
        let keys = (Array(taskTypes.keys) + ["location", "project", "tags", "annotations"]).filter { before[$0] != nil }
        guard let after else { return keys.sorted() }
        return keys.filter { before[$0] != after[$0] }.sorted()
    }

    private static func revert(_ entry: UndoJournal.Entry, in context: ManagedObjectContext, _ app: App) throws {
        // Check every task against what the command left before changing anything.
        var found: [Int64: ManagedObject] = [:]
        for (id, before, after) in entry.tasks {
            guard let task = try? app.task(String(id), in: context) else { continue }
            found[id] = task
            guard let after else { continue }
            let now = try UndoJournal.snapshot(task: task)
            let keys = before.map { changedKeys(before: $0, after: after) } ?? Array(after.keys).sorted()
            let changed = keys.filter { now[$0] != after[$0] }
            if !changed.isEmpty {
                let names = changed.map { $0 == "title" ? "text" : $0 == "dueDate" ? "due" : $0 }
                throw CLIError.usage("cannot undo \(entry.command): task \(id)'s \(names.joined(separator: ", ")) changed since, and undo would overwrite that")
            }
        }
        for (after, before) in entry.locations {
            let current = try after.flatMap { try app.location(named: $0, in: context, create: false) }
            guard let before else {
                if let current { context.delete(current) }
                continue
            }
            guard case .string(let name) = decode(before["name"], as: .string) else { continue }
            if after != nil && current == nil {
                throw CLIError.usage("cannot undo \(entry.command): location \(after ?? "") was renamed or deleted since")
            }
            let location = try current ?? app.location(named: name, in: context, create: true)
            guard let location else { continue }
            try location.setValue(.string(name), forKey: "name")
            if current == nil, let ids = before["tasks"].flatMap({ try? JSONParser.parse($0) })?.elements {
                for id in ids.compactMap({ $0.numberText.flatMap { Int64($0) } }) {
                    if let task = try? app.task(String(id), in: context) { try task.setObject(location, forKey: "location") }
                }
            }
        }
        for (id, before, after) in entry.tasks {
            guard let task = found[id] else { continue }
            guard let before else {
                context.delete(task)
                continue
            }
            for key in changedKeys(before: before, after: after) {
                switch key {
                case "location":
                    if case .string(let name) = decode(before["location"], as: .string) {
                        try task.setObject(try app.location(named: name, in: context, create: true), forKey: "location")
                    } else {
                        try task.setObject(nil, forKey: "location")
                    }
                case "project":
                    if case .string(let name) = decode(before["project"], as: .string) {
                        try task.setObject(try app.named("Project", name, in: context, create: true), forKey: "project")
                    } else {
                        try task.setObject(nil, forKey: "project")
                    }
                case "tags":
                    let tagNames = (before["tags"].flatMap { try? JSONParser.parse($0) }?.elements ?? []).compactMap(\.stringValue)
                    try task.setObjects(try tagNames.compactMap { try app.named("Tag", $0, in: context, create: true) }, forKey: "tags")
                case "annotations":
                    try Annotations.replace(on: task, with: Annotations.fromJournal(before["annotations"]), in: context)
                default:
                    guard let type = taskTypes[key] else { continue }
                    try task.setValue(decode(before[key], as: type), forKey: key)
                }
            }
        }
    }
}

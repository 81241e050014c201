import Foundation
import ObjectStore
import ObjectStoreModel

/// `taskctl undo`: restores what the last journaled command changed.
enum UndoCommand {
    static let taskTypes: [String: AttributeType] = [
        "title": .string, "priority": .int16, "dueDate": .date, "status": .string, "createdAt": .date, "completedAt": .date, "uuid": .uuid, "extras": .string,
    ]

    static func decode(_ text: String?, as type: AttributeType) -> Value {
        guard let text, let node = try? JSONParser.parse(text), case .success(let value) = JSONText.decode(node, as: type) else { return .null }
        return value
    }

    static func run(_ words: [String], _ app: App) throws {
        _ = try Arguments(words, valued: [], switches: [], command: "undo")
        let journal = UndoJournal(storeURL: app.storeURL)
        var entries = journal.read()
        guard let entry = entries.popLast() else { throw CLIError.usage("nothing to undo") }
        let context = try app.context()
        for (after, before) in entry.locations {
            let current = try after.flatMap { try app.location(named: $0, in: context, create: false) }
            guard let before else {
                if let current { context.delete(current) }
                continue
            }
            guard case .string(let name) = decode(before["name"], as: .string) else { continue }
            let location = try current ?? app.location(named: name, in: context, create: true)
            guard let location else { continue }
            try location.setValue(.string(name), forKey: "name")
            if current == nil, let ids = before["tasks"].flatMap({ try? JSONParser.parse($0) })?.elements {
                for id in ids.compactMap({ $0.numberText.flatMap { Int64($0) } }) {
                    if let task = try? app.task(String(id), in: context) { try task.setObject(location, forKey: "location") }
                }
            }
        }
        for (id, before) in entry.tasks {
            guard let task = try? app.task(String(id), in: context) else { continue }
            guard let before else {
                context.delete(task)
                continue
            }
            for (key, type) in taskTypes { try task.setValue(decode(before[key], as: type), forKey: key) }
            if case .string(let name) = decode(before["location"], as: .string) {
                try task.setObject(try app.location(named: name, in: context, create: true), forKey: "location")
            } else {
                try task.setObject(nil, forKey: "location")
            }
            if case .string(let name) = decode(before["project"], as: .string) {
                try task.setObject(try app.named("Project", name, in: context, create: true), forKey: "project")
            } else {
                try task.setObject(nil, forKey: "project")
            }
            let tagNames = (before["tags"].flatMap { try? JSONParser.parse($0) }?.elements ?? []).compactMap(\.stringValue)
            try task.setObjects(try tagNames.compactMap { try app.named("Tag", $0, in: context, create: true) }, forKey: "tags")
        }
        try context.save()
        try journal.write(entries)
        let ids = entry.tasks.map { String($0.id) }
        app.output.line("undid \(entry.command)" + (ids.isEmpty ? "" : " of task\(ids.count == 1 ? "" : "s") \(ids.joined(separator: ", "))"))
    }
}

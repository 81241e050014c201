import Foundation
import ObjectStore
import ObjectStoreModel

/// A task's annotations (model v4): dated notes, `taskctl annotate ID TEXT`.
enum Annotations {
    /// Adds one, dated `entry`, or the first later second no other annotation of the task
    /// has: as Taskwarrior does, since an annotation travels under the key
    /// `annotation_SECONDS`, and two in one second would be one on every other replica.
    /// `movingOnCollision` false keeps the date as given (an import, a sync, an undo: dates
    /// that are already the annotations' keys elsewhere).
    static func add(_ text: String, entry: Date, to task: ManagedObject, in context: ManagedObjectContext, movingOnCollision: Bool = true) throws {
        var entry = entry
        if movingOnCollision {
            let taken = Set(try list(of: task).compactMap { $0.entry.map(second) })
            while taken.contains(second(entry)) { entry += 1 }
        }
        let note = try context.insertObject(entityName: "Annotation")
        try note.setValue(.string(text), forKey: "text")
        try note.setValue(.date(entry), forKey: "entry")
        try note.setObject(task, forKey: "task")
    }

    /// The whole second a date falls in, as an annotation's key counts it.
    static func second(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970.rounded(.down)) }

    /// The task's annotations as (entry, text), oldest first.
    static func list(of task: ManagedObject) throws -> [(entry: Date?, text: String)] {
        try task.objects(forKey: "annotations").compactMap { note -> (Date?, String)? in
            guard case .string(let text) = try note.value(forKey: "text") else { return nil }
            if case .date(let entry) = try note.value(forKey: "entry") { return (entry, text) }
            return (nil, text)
        }.sorted { ($0.0 ?? .distantPast, $0.1) < ($1.0 ?? .distantPast, $1.1) }
    }

    /// Makes the task's annotations exactly `notes` (an import, an undo); nothing changes
    /// when they are already.
    static func replace(on task: ManagedObject, with notes: [(entry: Date?, text: String)], in context: ManagedObjectContext) throws {
        let current = try list(of: task)
        guard !current.elementsEqual(notes, by: { $0.entry == $1.entry && $0.text == $1.text }) else { return }
        for note in try task.objects(forKey: "annotations") { context.delete(note) }
        // An annotation needs an entry date: one imported without keeps its place by the
        // task's creation date.
        let fallback: Date
        if case .date(let created) = task["createdAt"] { fallback = created } else { fallback = Date(timeIntervalSince1970: 0) }
        for note in notes { try add(note.text, entry: note.entry ?? fallback, to: task, in: context, movingOnCollision: false) }
    }
}

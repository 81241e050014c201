import Foundation
import ObjectStore
import ObjectStoreModel

/// The Tasks model of Models/Tasks and stores of its versions, shared by the migration and
/// the engine's tests.
enum TasksFixtures {
    /// The package's root (this file is Tests/Support/TasksFixtures.swift, and seen from each
    /// test target's folder through a link: two levels below the root either way).
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The stores of the Tasks model's versions, as their users had them.
    static let fixtures = repository.appendingPathComponent("Tests/ObjectStoreTests/Fixtures/Tasks")

    static func tasksDirectory() throws -> ModelDirectory {
        try ModelDirectory(url: repository.appendingPathComponent("Models/Tasks"))
    }

    /// Writes the same tasks into a store of a given Tasks version: what a user of that
    /// version would have. Texts and projects differ per version where the model allows.
    static func writeStore(version: String, to url: URL) throws {
        let directory = try tasksDirectory()
        let model = try directory.model(version: version)
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
        let titleKey = version == "v1" ? "text" : "title"
        let home = try context.insertObject(entityName: "Location")
        try home.setValue("Home", forKey: "name")
        let work = try context.insertObject(entityName: "Location")
        try work.setValue("Work", forKey: "name")
        let rows: [(String, Int64, Double?, ManagedObject?, String?)] = [
            ("Buy milk", 3, 1_795_300_000, home, "errands"), ("Write report", 2, 1_795_900_000.5, work, "work"),
            ("Call Zoë ☎", 1, nil, nil, "errands"), ("Read", 0, nil, home, nil),
        ]
        var tasks: [ManagedObject] = []
        for (title, priority, due, location, project) in rows {
            let task = try context.insertObject(entityName: "Task")
            try task.setValue(.string(title), forKey: titleKey)
            try task.setValue(.integer(priority), forKey: "priority")
            if let due { try task.setValue(.date(Date(timeIntervalSince1970: due)), forKey: "dueDate") }
            try task.setObject(location, forKey: "location")
            if version != "v1" {
                try task.setValue(.uuid(UUID(uuidString: "00000000-0000-4000-8000-00000000000\(tasks.count + 1)")!), forKey: "uuid")
                if version == "v2", let project { try task.setValue(.string(project), forKey: "project") }
            }
            tasks.append(task)
        }
        if version != "v1" {
            let tag = try context.insertObject(entityName: "Tag")
            try tag.setValue("urgent", forKey: "name")
            try tag.setObjects([tasks[0], tasks[1]], forKey: "tasks")
            try tasks[3].setValue("done", forKey: "status")
        }
        if version >= "v3" {
            for name in ["errands", "work"] {
                let project = try context.insertObject(entityName: "Project")
                try project.setValue(.string(name), forKey: "name")
                try project.setObjects(zip(tasks, rows).filter { $0.1.4 == name }.map(\.0), forKey: "tasks")
            }
        }
        if version >= "v4" {
            let note = try context.insertObject(entityName: "Annotation")
            try note.setValue("ask for oat milk", forKey: "text")
            try note.setValue(.date(Date(timeIntervalSince1970: 1_795_200_000)), forKey: "entry")
            try note.setObject(tasks[0], forKey: "task")
            try tasks[1].setValue(.date(Date(timeIntervalSince1970: 1_795_800_000)), forKey: "waitUntil")
            try tasks[1].setValue("weekly", forKey: "recurrence")
            try tasks[2].setValue(.date(Date(timeIntervalSince1970: 1_795_250_000)), forKey: "startedAt")
        }
        // A deleted task: its key must never come back.
        let gone = try context.insertObject(entityName: "Task")
        try gone.setValue("Gone", forKey: titleKey)
        if version >= "v3" { try gone.setValue(.uuid(UUID()), forKey: "uuid") }
        try context.save()
        context.delete(gone)
        try context.save()
    }
}

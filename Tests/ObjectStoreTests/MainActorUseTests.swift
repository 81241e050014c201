import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

// Swift 6.2 and later: `PersistentContainer.performBackgroundTask` is nonisolated(nonsending).
#if compiler(>=6.2)
/// A view model on the main actor, as an app keeps one: it holds the container and hands
/// work to a background context through it (this file compiling is half of the test).
@MainActor final class NotesViewModel {
    let container: PersistentContainer

    init(container: PersistentContainer) {
        self.container = container
    }

    /// Inserts in the background, then counts in the view context.
    func addInBackground(_ titles: [String]) async throws -> Int {
        let saved = try await container.performBackgroundTask { context in
            for title in titles {
                let task = try context.insertObject(entityName: "Task")
                try task.setValue(.string(title), forKey: "text")
            }
            try context.save()
            return titles.count
        }
        let counted = try container.viewContext.count(for: FetchRequest(entityName: "Task"))
        return min(saved, counted)
    }
}

@Suite struct MainActorUseTests {
    @Test @MainActor func theContainersBackgroundTaskRunsFromTheMainActor() async throws {
        let directory = try TemporaryDirectory()
        let models = try ModelDirectory(location: "Test", files: [
            "manifest.json": #"{ "versions": ["v1"], "current": "v1" }"#,
            "v1.json": TestModel.schema,
        ])
        let model = NotesViewModel(container: try PersistentContainer(name: "Test", models: models, storeURL: directory.file("tasks.store")))
        #expect(try await model.addInBackground(["a", "b", "c"]) == 3)
        #expect(try model.container.viewContext.count(for: FetchRequest(entityName: "Task")) == 3)
    }

    /// A view context with `automaticallyMergesChangesFromParent` shows what a background
    /// context saved (an edit, an insert through an inverse) without a fetch of its own;
    /// switched off, it keeps what it had.
    @Test @MainActor func aViewContextMergesBackgroundSavesOnItsOwn() async throws {
        let directory = try TemporaryDirectory()
        let models = try ModelDirectory(location: "Test", files: [
            "manifest.json": #"{ "versions": ["v1"], "current": "v1" }"#,
            "v1.json": TestModel.schema,
        ])
        let container = try PersistentContainer(name: "Test", models: models, storeURL: directory.file("tasks.store"))
        let view = container.viewContext
        view.automaticallyMergesChangesFromParent = true
        #expect(view.automaticallyMergesChangesFromParent)
        let home = try view.insertObject(entityName: "Location")
        try home.setValue("Home", forKey: "name")
        let first = try view.insertObject(entityName: "Task")
        try first.setValue("first", forKey: "text")
        try first.setObject(home, forKey: "location")
        try view.save()
        #expect(try home.objects(forKey: "tasks").count == 1)
        let homeID = home.objectID, firstID = first.objectID
        try await container.performBackgroundTask { context in
            let task = try context.insertObject(entityName: "Task")
            try task.setValue("second", forKey: "text")
            try task.setObject(try context.existingObject(with: homeID), forKey: "location")
            try context.existingObject(with: firstID).setValue("first, edited", forKey: "text")
            try context.save()
        }
        // The merge was queued on the main queue during the save, before the resumption.
        for _ in 0..<200 where try home.objects(forKey: "tasks").count < 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(try home.objects(forKey: "tasks").count == 2)
        #expect(first["text"] == "first, edited")

        view.automaticallyMergesChangesFromParent = false
        try await container.performBackgroundTask { context in
            try context.existingObject(with: firstID).setValue("third", forKey: "text")
            try context.save()
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(first["text"] == "first, edited", "not merged once switched off")
    }
}
#endif

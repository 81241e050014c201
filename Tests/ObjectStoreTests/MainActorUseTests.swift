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
}
#endif

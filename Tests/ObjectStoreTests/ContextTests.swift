import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

@Suite struct ContextTests {
    @Test func objectIDsAreTemporaryUntilSaveAndUnique() throws {
        let context = TestModel.context()
        let task = try context.task("Milk")
        let temporary = task.objectID
        #expect(temporary.isTemporary)
        #expect(try context.object(with: temporary) === task)
        try context.save()
        #expect(!task.objectID.isTemporary)
        #expect(task.objectID.primaryKey != nil)
        #expect(try context.object(with: task.objectID) === task, "one object per ID per context")
        let uri = task.objectID.uriRepresentation
        #expect(ObjectID(uri: uri) == task.objectID)
        #expect(uri.absoluteString.hasPrefix("x-objectstore://"))
    }

    @Test func obtainPermanentIDsBeforeSaving() throws {
        let context = TestModel.context()
        let home = try context.location("Home")
        let task = try context.task("Milk")
        try task.setObject(home, forKey: "location")
        try context.obtainPermanentIDs(for: [task])
        #expect(!task.objectID.isTemporary)
        let permanent = task.objectID
        #expect(try home.objectIDs(forRelationship: "tasks") == [permanent])
        try context.save()
        #expect(task.objectID == permanent)
    }

    /// A context does not keep itself alive through its objects: a fault fetched by a
    /// context nobody holds cannot load, and says why instead of trapping.
    @Test func aFaultWhoseContextIsGoneThrowsAndSaysWhy() throws {
        let directory = try TemporaryDirectory()
        let coordinator = try PersistentStoreCoordinator(model: TestModel.model, storeURL: directory.file("tasks.store"))
        let setup = ManagedObjectContext(coordinator: coordinator)
        _ = try setup.task("Milk")
        try setup.save()
        let orphans = try ManagedObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Task"))
        let orphan = try #require(orphans.first)
        #expect(orphan.managedObjectContext == nil)
        do {
            _ = try orphan.value(forKey: "text")
            Issue.record("a fault without its context loaded")
        } catch let error as ObjectStoreError {
            #expect(error == .objectNotFound(orphan.objectID))
            #expect(error.description.contains("context no longer exists"))
        }
    }

    @Test func existingObjectThrowsForMissingObjects() throws {
        let context = TestModel.context()
        let task = try context.task("Milk")
        try context.save()
        let id = task.objectID
        context.delete(task)
        try context.save()
        #expect(throws: ObjectStoreError.objectNotFound(id)) { try context.existingObject(with: id) }
        // A fault of a missing row throws on access, never traps.
        let fault = try TestModel.context().object(with: ObjectID(entityName: "Task", storeIdentifier: "x", key: .permanent(99)))
        #expect(fault.isFault)
        #expect(throws: ObjectStoreError.self) { try fault.value(forKey: "text") }
        #expect(fault["text"] == .null)
    }

    @Test func fetchedObjectsAreFaultsUntilTouched() throws {
        let coordinator = TestModel.coordinator()
        let context = ManagedObjectContext(coordinator: coordinator)
        try context.task("Milk")
        try context.save()
        let other = ManagedObjectContext(coordinator: coordinator)
        let fetched = try #require(other.all("Task").first)
        #expect(fetched.isFault)
        #expect(fetched["text"] == "Milk")
        #expect(!fetched.isFault)
        other.refresh(fetched, mergeChanges: false)
        #expect(fetched.isFault)
    }

    @Test func notificationsReportChangesAndSaves() throws {
        let context = TestModel.context()
        var events: [String] = []
        var changes: [ObjectChanges] = []
        let token = context.observe { event in
            switch event {
            case .objectsDidChange(let c):
                events.append("change")
                changes.append(c)
            case .willSave: events.append("willSave")
            case .didSave(let saved): events.append("didSave \(saved.inserted.count)")
            }
        }
        let task = try context.task("Milk")
        try context.save()
        try task.setValue(2, forKey: "priority")
        context.processPendingChanges()
        #expect(events == ["change", "willSave", "didSave 1", "change"])
        #expect(changes.first?.inserted.count == 1)
        #expect(changes.last?.updated == [task.objectID])
        token.cancel()
        try task.setValue(3, forKey: "priority")
        context.processPendingChanges()
        #expect(events.count == 4)
    }

    @Test func childContextsSaveIntoTheParentOrAreDiscarded() throws {
        let parent = TestModel.context()
        let task = try parent.task("Milk")
        try parent.save()

        // Discard: the parent never sees the child's edits.
        let cancelled = ManagedObjectContext(parent: parent)
        try cancelled.existingObject(with: task.objectID).setValue("Cancelled", forKey: "text")
        #expect(task["text"] == "Milk")

        // Save: the child's changes become the parent's unsaved changes.
        let editor = ManagedObjectContext(parent: parent)
        let edited = try editor.existingObject(with: task.objectID)
        try edited.setValue("Bread", forKey: "text")
        let home = try editor.location("Home")
        try edited.setObject(home, forKey: "location")
        try editor.save()
        #expect(task["text"] == "Bread")
        #expect(task.isUpdated)
        #expect(try task.value(forKeyPath: "location.name").value == "Home")
        #expect(try ManagedObjectContext(coordinator: parent.coordinator).existingObject(with: task.objectID)["text"] == "Milk")
        try parent.save()
        #expect(try ManagedObjectContext(coordinator: parent.coordinator).existingObject(with: task.objectID)["text"] == "Bread")
    }

    @Test func aChildSeesItsParentsUnsavedState() throws {
        let parent = TestModel.context()
        let task = try parent.task("Unsaved")
        let child = ManagedObjectContext(parent: parent)
        #expect(try child.all("Task").map { $0["text"] } == ["Unsaved"])
        let copy = try child.existingObject(with: task.objectID)
        child.delete(copy)
        try child.save()
        #expect(try parent.all("Task").isEmpty)
    }

    @Test func contextsOnOtherThreadsMergeSaves() async throws {
        let coordinator = TestModel.coordinator()
        let main = ManagedObjectContext(coordinator: coordinator)
        let task = try main.task("Milk")
        try main.save()
        let taskID = task.objectID

        let received = SaveLog()
        let token = coordinator.addSaveObserver { received.append($0) }
        let newID = try await coordinator.performBackgroundTask { background in
            let copy = try background.existingObject(with: taskID)
            try copy.setValue(3, forKey: "priority")
            let other = try background.task("Bread")
            try background.save()
            return other.objectID
        }
        token.cancel()
        let notification = try #require(received.all.first)
        #expect(notification.updated == [taskID] && notification.inserted == [newID])
        main.mergeChanges(from: notification)
        #expect(task["priority"] == 3)
        #expect(try main.existingObject(with: newID)["text"] == "Bread")
    }

    @Test func resetForgetsEverything() throws {
        let context = TestModel.context()
        try context.task("Milk")
        context.reset()
        #expect(!context.hasChanges && context.registeredObjects.isEmpty)
    }
}

/// Collects save notifications from any thread.
final class SaveLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [SaveNotification] = []
    func append(_ item: SaveNotification) { lock.withLock { items.append(item) } }
    var all: [SaveNotification] { lock.withLock { items } }
}

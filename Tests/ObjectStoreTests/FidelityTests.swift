import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

/// A task class that counts its awakeFromFetch calls.
final class CountingTask: ManagedObject {
    nonisolated(unsafe) static var awakenings = 0
    @Attribute var text: String

    override func awakeFromFetch() {
        Self.awakenings += 1
    }
}

/// Behaviour a Core Data user relies on, each once a defect.
@Suite(.serialized) struct FidelityTests {
    @Test func editingAnUnsavedNewObjectAfterItsInsertWasPostedIsAnUpdate() throws {
        let context = TestModel.context()
        var changes: [ObjectChanges] = []
        let token = context.observe { if case .objectsDidChange(let c) = $0 { changes.append(c) } }
        let task = try context.task("Milk")
        context.processPendingChanges()
        #expect(changes.last?.inserted == [task.objectID])
        try task.setValue(2, forKey: "priority")
        context.processPendingChanges()
        #expect(changes.last?.updated == [task.objectID], "the edit of the new object is reported")
        #expect(changes.last?.inserted.isEmpty == true)
        token.cancel()

        // A fetched-results controller shows the edit as an update of its row.
        let results = FetchedResultsController(request: FetchRequest(entityName: "Task", sortDescriptors: [SortKey("text")]), context: context)
        var rowChanges: [FetchedResultsController.Change] = []
        results.onChange = { rowChanges.append($0) }
        try results.performFetch()
        try task.setValue(3, forKey: "priority")
        context.processPendingChanges()
        #expect(rowChanges.last?.updated == [.init(section: 0, row: 0)])
    }

    @Test func aMisspeltKeyFailsOnAnEmptyStoreToo() throws {
        let context = TestModel.context()
        let request = FetchRequest(entityName: "Task", predicate: try ObjectPredicate("prioritty > 1"))
        #expect(throws: PredicateTypeError.self) { _ = try context.fetch(request) }
        #expect(throws: PredicateTypeError.self) { _ = try context.count(for: request) }
    }

    @Test func sortingByAToManyKeyIsRefused() throws {
        let context = try PredicateEvaluationTests.graph()
        #expect {
            _ = try context.fetch(FetchRequest(entityName: "Task", sortDescriptors: [SortKey("tags.label")]))
        } throws: { error in
            (error as? ObjectStoreError)?.description.contains("cannot sort by 'tags.label'") == true
        }
        // An aggregate of it is one value per object.
        let byCount = try context.fetch(FetchRequest(entityName: "Task", sortDescriptors: [SortKey("tags.@count", ascending: false), SortKey("text")]))
        #expect(byCount.first?["text"] == "Milk")
    }

    @Test func aSavedDeletionIsNoLongerDeleted() throws {
        let context = TestModel.context()
        let task = try context.task("Milk")
        try context.save()
        context.delete(task)
        #expect(task.isDeleted)
        try context.save()
        #expect(!task.isDeleted, "as in Core Data, isDeleted is false once the deletion is saved")
        #expect(task.managedObjectContext == nil)
    }

    @Test func fetchedObjectsAreFaultsUntilUsed() throws {
        let coordinator = TestModel.coordinator()
        try coordinator.register(CountingTask.self, forEntityName: "Task")
        let setup = ManagedObjectContext(coordinator: coordinator)
        for text in ["Milk", "Bread", "Eggs"] { try setup.task(text) }
        try setup.save()
        let context = ManagedObjectContext(coordinator: coordinator)
        CountingTask.awakenings = 0
        let fetched = try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("text BEGINSWITH 'M' OR text BEGINSWITH 'B'")))
        #expect(fetched.count == 2)
        #expect(fetched.allSatisfy { $0.isFault })
        #expect(CountingTask.awakenings == 0)
        #expect(fetched.compactMap { ($0 as? CountingTask)?.text }.sorted() == ["Bread", "Milk"])
        #expect(CountingTask.awakenings == 2)
        #expect(!fetched.contains { $0.isFault })
    }

    @Test func aTypedGetterOnADeletedRowRecordsTheError() throws {
        let coordinator = TestModel.coordinator()
        try coordinator.register(TypedTask.self, forEntityName: "Task")
        let setup = ManagedObjectContext(coordinator: coordinator)
        let task = try setup.insert(TypedTask.self)
        task.text = "Milk"
        try setup.save()
        let reader = ManagedObjectContext(coordinator: coordinator)
        let fault = try #require(reader.object(with: task.objectID) as? TypedTask)
        setup.delete(task)
        try setup.save()
        #expect(fault.text == "", "a getter cannot throw: it returns a placeholder")
        #expect(fault.lastAccessError as? ObjectStoreError == .objectNotFound(task.objectID))
    }

    @Test func aDuplicatePropertyWithABadTypeIsReportedAsADuplicateToo() {
        let schema = #"{"entities": [{"name": "E", "attributes": [{"name": "a", "type": "string"}, {"name": "a", "type": "strnig"}]}]}"#
        do {
            _ = try ManagedObjectModel(schema: schema)
            Issue.record("expected an error")
        } catch {
            #expect(error.diagnostics.contains { $0.message.contains("duplicate property name 'a'") }, "\(error)")
            #expect(error.diagnostics.contains { $0.message.contains("strnig") }, "\(error)")
        }
    }

    @Test func zeroLevelsOfUndoMeansNoLimit() throws {
        let context = TestModel.context()
        context.undoManager?.levelsOfUndo = 0
        let task = try context.task("Milk")
        context.processPendingChanges()
        for priority in 1...3 {
            try task.setValue(.integer(Int64(priority)), forKey: "priority")
            context.processPendingChanges()
        }
        for _ in 0..<3 { context.undo() }
        #expect(task["priority"] == 0, "every step was kept")
        context.undoManager?.levelsOfUndo = 1
        for priority in 1...3 {
            try task.setValue(.integer(Int64(priority)), forKey: "priority")
            context.processPendingChanges()
        }
        for _ in 0..<3 { context.undo() }
        #expect(task["priority"] == 2, "one step kept")
    }
}

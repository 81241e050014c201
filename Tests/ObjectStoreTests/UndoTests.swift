import Testing
import ObjectStore
import ObjectStoreModel

@Suite struct UndoTests {
    @Test func undoAndRedoAcrossSeveralGroups() throws {
        let context = TestModel.context()
        let task = try context.task("Milk", priority: 1)
        context.processPendingChanges()                 // group 1: insert
        try task.setValue(2, forKey: "priority")
        context.processPendingChanges()                 // group 2
        try task.setValue("Bread", forKey: "text")
        try task.setValue(3, forKey: "priority")
        context.processPendingChanges()                 // group 3

        context.undo()
        #expect(task["text"] == "Milk" && task["priority"] == 2)
        context.undo()
        #expect(task["priority"] == 1)
        context.redo()
        #expect(task["priority"] == 2)
        context.redo()
        #expect(task["text"] == "Bread" && task["priority"] == 3)
        #expect(context.undoManager?.canRedo == false)
        context.undo()
        context.undo()
        context.undo()
        #expect(context.insertedObjects.isEmpty, "undoing the insert removes the object")
        #expect(!context.hasChanges)
    }

    @Test func explicitGroupsUndoAsOne() throws {
        let context = TestModel.context()
        let home = try context.location("Home")
        let task = try context.task("Milk")
        try context.save()
        context.undoManager?.removeAll()
        context.undoManager?.beginGrouping()
        try task.setValue(3, forKey: "priority")
        context.processPendingChanges()  // does not close an explicit group
        try task.setObject(home, forKey: "location")
        context.undoManager?.endGrouping()
        context.undo()
        #expect(task["priority"] == 0)
        #expect(try task.object(forKey: "location") == nil)
        #expect(try home.objects(forKey: "tasks").isEmpty)
        #expect(!context.hasChanges)
    }

    @Test func undoRestoresADeleteAndItsNullifiedRelationships() throws {
        let context = TestModel.context()
        let home = try context.location("Home")
        let task = try context.task("Milk")
        try task.setObject(home, forKey: "location")
        try context.save()
        context.delete(home)
        context.processPendingChanges()
        #expect(try task.object(forKey: "location") == nil)
        context.undo()
        #expect(!home.isDeleted)
        #expect(try task.object(forKey: "location") === home)
        #expect(!context.hasChanges)
    }

    @Test func undoAfterSaveMakesTheContextDirtyAgain() throws {
        let context = TestModel.context()
        let task = try context.task("Milk")
        try context.save()
        try task.setValue(2, forKey: "priority")
        try context.save()
        context.undo()
        #expect(task["priority"] == 0 && task.isUpdated)
        try context.save()
        #expect(try ManagedObjectContext(coordinator: context.coordinator).existingObject(with: task.objectID)["priority"] == 0)
    }

    @Test func undoCanBeDisabledForBulkWork() throws {
        let context = TestModel.context()
        context.undoManager = nil
        try context.task("Milk")
        context.undo()
        #expect(context.insertedObjects.count == 1)
    }
}

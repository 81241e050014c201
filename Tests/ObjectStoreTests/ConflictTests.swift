import Testing
import ObjectStore
import ObjectStoreModel

@Suite struct ConflictTests {
    /// Two contexts load the same saved task; the first saves an edit.
    private func setUp() throws -> (first: ManagedObjectContext, second: ManagedObjectContext, id: ObjectID) {
        let coordinator = TestModel.coordinator()
        let setup = ManagedObjectContext(coordinator: coordinator)
        let task = try setup.task("Milk", priority: 1)
        try setup.save()
        let first = ManagedObjectContext(coordinator: coordinator)
        let second = ManagedObjectContext(coordinator: coordinator)
        let a = try first.existingObject(with: task.objectID)
        let b = try second.existingObject(with: task.objectID)
        try a.setValue("Bread", forKey: "text")
        try first.save()
        try b.setValue(3, forKey: "priority")
        return (first, second, task.objectID)
    }

    private func saved(_ context: ManagedObjectContext, _ id: ObjectID) throws -> ManagedObject {
        try ManagedObjectContext(coordinator: context.coordinator).existingObject(with: id)
    }

    @Test func theDefaultPolicyReportsTheConflictingObjectAndKeys() throws {
        let (_, second, id) = try setUp()
        #expect {
            try second.save()
        } throws: { error in
            guard let conflict = error as? StoreConflictError, let first = conflict.conflicts.first else { return false }
            return first.objectID == id && first.keys == ["text"] && conflict.description.contains("text")
        }
        #expect(second.hasChanges, "a failed save keeps the changes")
    }

    @Test func mergeByPropertyKeepsBothEdits() throws {
        let (_, second, id) = try setUp()
        second.mergePolicy = .mergeByPropertyMemoryWins
        try second.save()
        let task = try saved(second, id)
        #expect(task["text"] == "Bread" && task["priority"] == 3)
    }

    @Test func storeWinsDropsTheLocalEdit() throws {
        let (_, second, id) = try setUp()
        second.mergePolicy = .storeWins
        try second.save()
        let task = try saved(second, id)
        #expect(task["text"] == "Bread" && task["priority"] == 1)
    }

    @Test func memoryWinsWritesTheWholeObject() throws {
        let (_, second, id) = try setUp()
        second.mergePolicy = .memoryWins
        try second.save()
        let task = try saved(second, id)
        #expect(task["text"] == "Milk" && task["priority"] == 3)
    }

    @Test func coreDatasPolicyNamesAreTheSamePolicies() throws {
        #expect(MergePolicy.mergeByPropertyObjectTrump == .mergeByPropertyMemoryWins)
        #expect(MergePolicy.mergeByPropertyStoreTrump == .mergeByPropertyStoreWins)
        #expect(MergePolicy.overwrite == .memoryWins && MergePolicy.rollback == .storeWins)
        let (_, second, id) = try setUp()
        second.mergePolicy = .mergeByPropertyObjectTrump
        try second.save()
        #expect(try saved(second, id)["text"] == "Bread")
    }

    /// Found by the stress harness: another save deleted a task while this context moved it
    /// to a location. The task's update is dropped (nothing is left to update), and so must
    /// be the location's new edge to it, under every merging policy.
    @Test(arguments: [MergePolicy.memoryWins, .mergeByPropertyMemoryWins, .mergeByPropertyStoreWins, .storeWins])
    func anEdgeToAnObjectAnotherSaveDeletedIsDropped(policy: MergePolicy) throws {
        let coordinator = TestModel.coordinator()
        let setup = ManagedObjectContext(coordinator: coordinator)
        let task = try setup.task("Milk")
        let kept = try setup.task("Bread")
        let home = try setup.location("Home")
        try setup.save()
        let deleting = ManagedObjectContext(coordinator: coordinator)
        let moving = ManagedObjectContext(coordinator: coordinator)
        moving.mergePolicy = policy
        let movingTask = try moving.existingObject(with: task.objectID)
        let movingKept = try moving.existingObject(with: kept.objectID)
        let movingHome = try moving.existingObject(with: home.objectID)
        deleting.delete(try deleting.existingObject(with: task.objectID))
        try deleting.save()
        try movingTask.setObject(movingHome, forKey: "location")
        try movingKept.setObject(movingHome, forKey: "location")
        try moving.save()
        let fresh = ManagedObjectContext(coordinator: coordinator)
        #expect(try fresh.existingObject(with: home.objectID).objectIDs(forRelationship: "tasks") == [kept.objectID], "\(policy)")
        let problems = try coordinator.checkIntegrity().problems
        #expect(problems.isEmpty, "\(policy): \(problems)")
    }
}

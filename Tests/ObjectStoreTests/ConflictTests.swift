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

/// A save that links an object another save deleted since (through a relationship whose
/// other side is not stored, so the deleted object itself is not saved again): the store
/// refuses it under its lock, naming the relationship, and writes nothing. Before, the row
/// was written pointing at nothing, and reading the whole store failed from then on.
@Suite struct DeletedDestinationTests {
    @Test(arguments: StoreKind.allCases)
    func aLinkToAnObjectDeletedSinceIsRefusedAndNothingWritten(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let setup = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        let person = try setup.insertObject(entityName: "Person")
        try person.setValue("Ada", forKey: "name")
        let project = try setup.insertObject(entityName: "Project")
        try project.setValue("Engine", forKey: "name")
        try setup.save()

        let mine = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        let theirs = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        let ada = try mine.existingObject(with: person.objectID)
        let engine = try mine.existingObject(with: project.objectID)
        theirs.delete(try theirs.existingObject(with: person.objectID))
        try theirs.save()

        try engine.setObject(ada, forKey: "lead")
        let fresh = try mine.insertObject(entityName: "Project")
        try fresh.setValue("New", forKey: "name")
        try fresh.setObject(ada, forKey: "lead")
        for policy in [MergePolicy.error, .mergeByPropertyMemoryWins] {
            mine.mergePolicy = policy
            #expect {
                try mine.save()
            } throws: { error in
                guard let failures = (error as? ValidationError)?.failures else { return false }
                return failures.count == 2 && failures.allSatisfy { $0.rule == .danglingReference && $0.key == "lead" }
                    && "\(error)".contains("which another save deleted since")
            }
        }
        #expect(mine.hasChanges, "a refused save keeps its changes")
        let check = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        let projects = try check.fetch(FetchRequest(entityName: "Project"))
        #expect(projects.map { $0["name"] } == ["Engine"])
        #expect(try projects.first?.object(forKey: "lead") == nil)
        #expect(try check.coordinator.checkIntegrity().problems.isEmpty)
    }
}

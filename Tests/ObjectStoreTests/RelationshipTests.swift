import Testing
import ObjectStore
import ObjectStoreModel

@Suite struct RelationshipTests {
    private func ids(_ objects: [ManagedObject]) -> [ObjectID] { objects.map(\.objectID) }

    @Test func toOneAndToManyMaintainTheInverse() throws {
        let context = TestModel.context()
        let home = try context.location("Home")
        let work = try context.location("Work")
        let task = try context.task("Milk")
        try task.setObject(home, forKey: "location")
        #expect(ids(try home.objects(forKey: "tasks")) == [task.objectID])

        // Moving a task to another location removes it from the old location's tasks.
        try task.setObject(work, forKey: "location")
        #expect(try home.objects(forKey: "tasks").isEmpty)
        #expect(ids(try work.objects(forKey: "tasks")) == [task.objectID])

        // Adding from the to-many side moves it too.
        try home.addObject(task, toKey: "tasks")
        #expect(try task.object(forKey: "location") === home)
        #expect(try work.objects(forKey: "tasks").isEmpty)

        try task.setObject(nil, forKey: "location")
        #expect(try home.objects(forKey: "tasks").isEmpty)
        #expect(try task.object(forKey: "location") == nil)
    }

    @Test func oneToOneDisplacesOldPartners() throws {
        let context = TestModel.context()
        let (a, b, c) = (try context.insertObject(entityName: "Person"), try context.insertObject(entityName: "Person"), try context.insertObject(entityName: "Person"))
        try a.setObject(b, forKey: "spouse")
        #expect(try b.object(forKey: "spouse") === a)
        try c.setObject(b, forKey: "spouse")
        #expect(try a.object(forKey: "spouse") == nil)
        #expect(try b.object(forKey: "spouse") === c)
    }

    @Test func manyToManyMaintainsBothSides() throws {
        let context = TestModel.context()
        let t1 = try context.task("one")
        let t2 = try context.task("two")
        let red = try context.insertObject(entityName: "Tag")
        let blue = try context.insertObject(entityName: "Tag")
        try t1.setObjects([red, blue], forKey: "tags")
        try t2.addObject(red, toKey: "tags")
        #expect(Set(ids(try red.objects(forKey: "tasks"))) == [t1.objectID, t2.objectID])
        #expect(ids(try blue.objects(forKey: "tasks")) == [t1.objectID])
        try red.removeObject(t1, fromKey: "tasks")
        #expect(ids(try t1.objects(forKey: "tags")) == [blue.objectID])
        try t1.setObjects([], forKey: "tags")
        #expect(try blue.objects(forKey: "tasks").isEmpty)
    }

    @Test func orderedToManyKeepsTheGivenOrder() throws {
        let context = TestModel.context()
        let parent = try context.task("parent")
        let subtasks = try ["c", "a", "b"].map { try context.task($0) }
        try parent.setObjects(subtasks, forKey: "subtasks")
        #expect(try parent.objects(forKey: "subtasks").map { $0["text"] } == ["c", "a", "b"])
        try parent.setObjects([subtasks[2], subtasks[0]], forKey: "subtasks")
        #expect(try parent.objects(forKey: "subtasks").map { $0["text"] } == ["b", "c"])
        #expect(try subtasks[1].object(forKey: "parent") == nil)
        #expect(try subtasks[2].object(forKey: "parent") === parent)
    }

    @Test func relationshipsSurviveASaveAndReload() throws {
        let coordinator = TestModel.coordinator()
        let context = ManagedObjectContext(coordinator: coordinator)
        let home = try context.location("Home")
        let task = try context.task("Milk")
        try task.setObject(home, forKey: "location")
        try context.save()
        let other = ManagedObjectContext(coordinator: coordinator)
        let reloaded = try other.existingObject(with: home.objectID)
        #expect(try reloaded.value(forKeyPath: "tasks.text").description == "[\"Milk\"]")
    }

    @Test func wrongDestinationsAreRefused() throws {
        let context = TestModel.context()
        let task = try context.task("Milk")
        let tag = try context.insertObject(entityName: "Tag")
        #expect(throws: ObjectStoreError.wrongDestination(entity: "Task", key: "location", expected: "Location", given: "Tag")) {
            try task.setObject(tag, forKey: "location")
        }
        #expect(throws: ObjectStoreError.self) { try task.setObject(tag, forKey: "tags") }
    }

    /// An object whose deletion was saved has left its context: linking to it is refused as
    /// an object that is gone, not as one of another context.
    @Test func linkingToAnObjectWhoseDeletionWasSavedSaysItIsGone() throws {
        let context = TestModel.context()
        let task = try context.task("Pack")
        let home = try context.location("Home")
        try context.save()
        context.delete(home)
        try context.save()
        #expect(throws: ObjectStoreError.objectNotFound(home.objectID)) { try task.setObject(home, forKey: "location") }
        let other = TestModel.context()
        let office = try other.location("Office")
        #expect(throws: ObjectStoreError.foreignObject(office.objectID)) { try task.setObject(office, forKey: "location") }
    }
}

import Testing
import ObjectStore
import ObjectStoreModel

@Suite struct DeleteRuleTests {
    @Test func nullifyRemovesTheDeletedObjectFromItsPartners() throws {
        let context = TestModel.context()
        let home = try context.location("Home")
        let task = try context.task("Milk")
        try task.setObject(home, forKey: "location")
        try context.save()
        context.delete(home)
        context.processPendingChanges()
        #expect(try task.object(forKey: "location") == nil)
        try context.save()
        #expect(try context.all("Location").isEmpty)
        #expect(try context.all("Task").count == 1)
    }

    /// Many deletions in one batch: each deleted task leaves its location's list (whose
    /// order stays), a deleted location lets go of its tasks and they of it, tags lose
    /// their deleted tasks, and one undo brings every list back as it was.
    @Test func aBatchOfDeletionsLeavesEachListAndUndoRestoresThem() throws {
        let context = TestModel.context()
        let home = try context.location("Home"), work = try context.location("Work")
        let tag = try context.insertObject(entityName: "Tag")
        try tag.setValue("errand", forKey: "label")
        var tasks: [ManagedObject] = []
        for i in 0..<12 {
            let task = try context.task("t\(i)")
            try task.setObject(i % 3 == 0 ? work : home, forKey: "location")
            if i % 2 == 0 { try task.addObject(tag, toKey: "tags") }
            tasks.append(task)
        }
        try context.save()
        func texts(_ object: ManagedObject, _ key: String) throws -> [String] {
            try object.objects(forKey: key).map { $0["text"].stringValue ?? "?" }
        }
        let homeBefore = try texts(home, "tasks"), tagBefore = try texts(tag, "tasks")
        #expect(homeBefore == ["t1", "t2", "t4", "t5", "t7", "t8", "t10", "t11"])

        let deleted = [1, 2, 4, 8, 11]
        for i in deleted { context.delete(tasks[i]) }
        context.delete(work)
        context.processPendingChanges()
        #expect(try texts(home, "tasks") == ["t5", "t7", "t10"])
        #expect(try texts(tag, "tasks") == ["t0", "t6", "t10"])
        for i in deleted + [0, 3, 6, 9] { #expect(try tasks[i].object(forKey: "location") == nil, "t\(i)") }
        for i in deleted { #expect(try tasks[i].objects(forKey: "tags").isEmpty, "t\(i)") }
        #expect(try work.objects(forKey: "tasks").isEmpty)

        context.undo()
        #expect(try texts(home, "tasks") == homeBefore)
        #expect(try texts(tag, "tasks") == tagBefore)
        #expect(try texts(work, "tasks") == ["t0", "t3", "t6", "t9"])
        for (i, task) in tasks.enumerated() { #expect(try task.object(forKey: "location") === (i % 3 == 0 ? work : home), "t\(i)") }

        context.redo()
        try context.save()
        let fresh = ManagedObjectContext(coordinator: context.coordinator)
        let saved = try #require(try fresh.all("Location").first { $0["name"] == "Home" })
        #expect(try texts(saved, "tasks") == ["t5", "t7", "t10"])
        #expect(try fresh.all("Task").count == 12 - deleted.count)
        #expect(try fresh.all("Location").count == 1)
    }

    @Test func cascadeDeletesChainsAndSurvivesCycles() throws {
        let context = TestModel.context()
        let task = try context.task("Milk")
        let note = try context.insertObject(entityName: "Note")
        let attachment = try context.insertObject(entityName: "Attachment")
        try task.addObject(note, toKey: "notes")
        try note.addObject(attachment, toKey: "attachments")
        let sub = try context.task("sub")
        try task.addObject(sub, toKey: "subtasks")
        try context.save()

        // Note -> Attachment cascades both ways: a cycle of cascade rules.
        context.delete(task)
        try context.save()
        #expect(try context.all("Task").isEmpty)
        #expect(try context.all("Note").isEmpty)
        #expect(try context.all("Attachment").isEmpty)
        #expect(note.isDeleted || note.managedObjectContext == nil)
    }

    @Test func denyFailsTheSaveNamingObjectAndRelationship() throws {
        let context = TestModel.context()
        let project = try context.insertObject(entityName: "Project")
        let person = try context.insertObject(entityName: "Person")
        try project.addObject(person, toKey: "members")
        try context.save()
        context.delete(project)
        #expect {
            try context.save()
        } throws: { error in
            guard let error = error as? ValidationError, error.failures.count == 1, let failure = error.failures.first else { return false }
            return failure.objectID == project.objectID && failure.key == "members" && failure.rule == .deny
        }
        // Still related: deny changes nothing until the members go.
        #expect(try person.object(forKey: "project") === project)
        context.delete(person)
        try context.save()
        #expect(try context.all("Project").isEmpty)
    }

    @Test func noActionLeavesTheOtherSideAlone() throws {
        let coordinator = TestModel.coordinator()
        let context = ManagedObjectContext(coordinator: coordinator)
        let project = try context.insertObject(entityName: "Project")
        let lead = try context.insertObject(entityName: "Person")
        try project.setObject(lead, forKey: "lead")
        try context.save()
        context.delete(lead)
        try context.save()
        // The project still names its lead's ID; following it finds nothing.
        #expect(try project.objectIDs(forRelationship: "lead") == [lead.objectID])
        #expect(throws: ObjectStoreError.objectNotFound(lead.objectID)) {
            try ManagedObjectContext(coordinator: coordinator).existingObject(with: lead.objectID)
        }
    }

    @Test func deletingAnUnsavedInsertLeavesNoTrace() throws {
        let context = TestModel.context()
        let home = try context.location("Home")
        try context.save()
        let task = try context.task("Milk")
        try task.setObject(home, forKey: "location")
        context.delete(task)
        context.processPendingChanges()
        #expect(context.insertedObjects.isEmpty && context.deletedObjects.isEmpty && !context.hasChanges)
        #expect(try home.objects(forKey: "tasks").isEmpty)
        try context.save()
        #expect(try context.all("Task").isEmpty)
    }
}

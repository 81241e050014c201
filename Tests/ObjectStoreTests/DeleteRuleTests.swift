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

import Foundation
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

    /// A bulk delete of objects that are faults (a fresh context over a saved store), as
    /// many as make the binary store read the entity whole at once: each deleted task lets
    /// go of its location (whose list is derived) and cascades to its notes, one undo brings
    /// them all back, and the saved store holds exactly the others, on every kind of store.
    @Test(arguments: StoreKind.allCases)
    func aBulkDeleteOfFaultsCascadesNullifiesAndUndoes(kind: StoreKind) throws {
        let schema = """
            { "entities": [
              { "name": "Task", "attributes": [{ "name": "text", "type": "string" }],
                "relationships": [
                  { "name": "location", "destination": "Location", "inverse": "tasks" },
                  { "name": "notes", "destination": "Note", "inverse": "task", "toMany": true, "deleteRule": "cascade" }] },
              { "name": "Location", "attributes": [{ "name": "name", "type": "string" }],
                "relationships": [{ "name": "tasks", "destination": "Task", "inverse": "location", "toMany": true, "derivedFromInverse": true }] },
              { "name": "Note", "attributes": [{ "name": "body", "type": "string" }],
                "relationships": [{ "name": "task", "destination": "Task", "inverse": "notes" }] }
            ] }
            """
        let model = try ManagedObjectModel(schema: schema, file: "bulk")
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let n = 1_200
        do {
            let context = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory, model: model))
            context.undoManager = nil
            let locations = try (0..<3).map { i in
                let location = try context.insertObject(entityName: "Location")
                try location.setValue(.string("L\(i)"), forKey: "name")
                return location
            }
            for i in 0..<n {
                let task = try context.insertObject(entityName: "Task")
                try task.setValue(.string("t\(i)"), forKey: "text")
                try task.setObject(locations[i % 3], forKey: "location")
                let note = try context.insertObject(entityName: "Note")
                try note.setValue(.string("n\(i)"), forKey: "body")
                try note.setObject(task, forKey: "task")
            }
            try context.save()
            try context.coordinator.compactStore()
        }
        let context = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory, model: model))
        let fresh = ManagedObjectContext(coordinator: context.coordinator)
        // Every fourth task in key order: 300, above the 256 single reads after which the
        // binary store reads an entity whole.
        let chosen = try fresh.fetch(FetchRequest(entityName: "Task")).enumerated().filter { $0.offset % 4 == 0 }.map(\.element)
        let doomed = chosen.map(\.objectID)
        let doomedTexts = Set(chosen.map { $0["text"].stringValue ?? "?" })
        #expect(doomedTexts.count == n / 4)
        fresh.reset()
        // Faults with nothing read: each deletion reads its task's row.
        let faults = try doomed.map { try fresh.object(with: $0) }
        #expect(faults.allSatisfy { $0.isFault })
        for task in faults { fresh.delete(task) }
        fresh.processPendingChanges()
        for task in faults {
            #expect(try task.object(forKey: "location") == nil)
            #expect(try task.objects(forKey: "notes").isEmpty)
        }
        #expect(fresh.deletedObjects.count == 2 * doomed.count)  // each task and its note
        fresh.undo()
        for task in faults {
            #expect(try task.object(forKey: "location") != nil)
            #expect(try task.objects(forKey: "notes").count == 1)
        }
        #expect(fresh.deletedObjects.isEmpty)
        fresh.redo()
        try fresh.save()

        let reopened = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory, model: model))
        let tasks = try reopened.fetch(FetchRequest(entityName: "Task"))
        let notes = try reopened.fetch(FetchRequest(entityName: "Note"))
        #expect(tasks.count == n - doomed.count)
        #expect(notes.count == n - doomed.count)
        #expect(tasks.allSatisfy { !doomedTexts.contains($0["text"].stringValue ?? "?") })
        for note in notes {
            let task = try #require(try note.object(forKey: "task"))
            #expect(note["body"].stringValue?.dropFirst() == task["text"].stringValue?.dropFirst())
        }
        let perLocation = try reopened.fetch(FetchRequest(entityName: "Location")).map { try $0.objects(forKey: "tasks").count }
        #expect(perLocation.reduce(0, +) == n - doomed.count)
    }

    /// The same bulk delete of faults (as many as make the store read the entity whole at
    /// once) after another coordinator, through a symbolic link to the store, edited tasks and
    /// compacted the file (replaced it by a rename): the deletion reads the rows, the save
    /// lands on the new file, and the other side's edits of the tasks kept survive.
    @Test func aBulkDeleteOfFaultsAfterAnotherCompactedThroughALink() throws {
        let model = TestModel.model
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store"), link = directory.file("link.store")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        let n = 1_000
        let first = try PersistentStoreCoordinator(model: model, storeURL: url, clock: { TestModel.now })
        do {
            let context = ManagedObjectContext(coordinator: first)
            context.undoManager = nil
            for i in 0..<n {
                let task = try context.task("t\(i)")
                let note = try context.insertObject(entityName: "Note")
                try note.setValue(.string("n\(i)"), forKey: "body")
                try task.addObject(note, toKey: "notes")
            }
            try context.save()
            try first.compactStore()
        }
        let ids = try ManagedObjectContext(coordinator: first).fetch(FetchRequest(entityName: "Task")).map(\.objectID)
        let doomed = ids.enumerated().filter { $0.offset % 3 == 0 }.map(\.element)
        do {
            // The other side: every task kept gets priority 2, then the file is compacted.
            let second = try PersistentStoreCoordinator(model: model, storeURL: link, clock: { TestModel.now })
            let other = ManagedObjectContext(coordinator: second)
            other.undoManager = nil
            for task in try other.fetch(FetchRequest(entityName: "Task")) where !doomed.contains(task.objectID) {
                try task.setValue(.integer(2), forKey: "priority")
            }
            try other.save()
            try second.compactStore()
        }
        let context = ManagedObjectContext(coordinator: first)
        for id in doomed { context.delete(try context.object(with: id)) }
        try context.save()

        let reopened = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: link, clock: { TestModel.now }))
        let tasks = try reopened.fetch(FetchRequest(entityName: "Task"))
        #expect(tasks.count == n - doomed.count)
        #expect(tasks.allSatisfy { $0["priority"] == .integer(2) })
        #expect(try reopened.fetch(FetchRequest(entityName: "Note")).count == n - doomed.count)
        let attributes = try FileManager.default.attributesOfItem(atPath: link.path)
        #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink)
        #expect(try reopened.coordinator.checkIntegrity().problems.isEmpty)
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

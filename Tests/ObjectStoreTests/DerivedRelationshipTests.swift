import Foundation
import Testing
@testable import ObjectStore
import ObjectStoreModel
@testable import ObjectStoreStorage

/// To-many relationships derived from their inverse (`"derivedFromInverse": true`): nothing is
/// stored on their side, they read what the inverse says (unsaved changes included), a change
/// from either side writes only the stored side, and delete rules, predicates and undo work
/// as for a stored list.
@Suite struct DerivedRelationshipTests {
    /// TestModel with a location's tasks, a tag's tasks, a task's notes (cascading) and a
    /// project's members (deny) derived from their inverses.
    static let model: ManagedObjectModel = {
        var schema = TestModel.schema
        for (old, new) in [
            (#"{ "name": "tasks", "destination": "Task", "inverse": "location", "toMany": true }"#,
             #"{ "name": "tasks", "destination": "Task", "inverse": "location", "toMany": true, "derivedFromInverse": true }"#),
            (#"{ "name": "tasks", "destination": "Task", "inverse": "tags", "toMany": true }"#,
             #"{ "name": "tasks", "destination": "Task", "inverse": "tags", "toMany": true, "derivedFromInverse": true }"#),
            (#"{ "name": "notes", "destination": "Note", "inverse": "task", "toMany": true, "deleteRule": "cascade" }"#,
             #"{ "name": "notes", "destination": "Note", "inverse": "task", "toMany": true, "deleteRule": "cascade", "derivedFromInverse": true }"#),
            (#"{ "name": "members", "destination": "Person", "inverse": "project", "toMany": true, "deleteRule": "deny" }"#,
             #"{ "name": "members", "destination": "Person", "inverse": "project", "toMany": true, "deleteRule": "deny", "derivedFromInverse": true }"#),
        ] {
            precondition(schema.contains(old), "the test model changed: \(old)")
            schema = schema.replacingOccurrences(of: old, with: new)
        }
        // An index on the tasks' location, which a location's tasks are looked up in.
        precondition(schema.contains(#"{ "name": "Task","#))
        schema = schema.replacingOccurrences(of: #"{ "name": "Task","#, with: #"{ "name": "Task", "indexes": [{ "name": "byLocation", "properties": ["location"] }],"#)
        do {
            return try ManagedObjectModel(schema: schema, file: "DerivedModel")
        } catch {
            preconditionFailure("the derived test model must load: \(error)")
        }
    }()

    static func ids(_ objects: [ManagedObject]) -> Set<ObjectID> { Set(objects.map(\.objectID)) }

    /// One store of a kind with this suite's model, in a temporary directory: each context
    /// opens it again (the in-memory kind shares its one store).
    final class Store {
        let kind: StoreKind
        let directory: TemporaryDirectory
        private var memory: InMemoryStore?

        init(_ kind: StoreKind) throws {
            self.kind = kind
            directory = try TemporaryDirectory()
        }

        func context() throws -> ManagedObjectContext {
            ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory, model: DerivedRelationshipTests.model))
        }
    }

    /// The store's side, without a context's delete rules: a deletion of a location that a
    /// stored task the save does not change still points at (a task another writer linked
    /// after the deleting one read the location's tasks) is refused, and nothing written.
    @Test(arguments: StoreKind.allCases)
    func theStoreRefusesDeletingALocationATaskItDidNotSeePointsAt(kind: StoreKind) throws {
        let store = try Store(kind)
        let setup = try store.context()
        let home = try setup.location("Home")
        let task = try setup.task("Unseen")
        try task.setObject(home, forKey: "location")
        try setup.save()
        var changes = StoreChanges()
        changes.deleted = [(home.objectID, 1)]
        let coordinator = try store.context().coordinator
        #expect {
            _ = try coordinator.store.save(changes)
        } throws: { error in
            guard let failure = (error as? ValidationError)?.failures.first else { return false }
            return failure.rule == .danglingReference && failure.objectID == home.objectID && failure.message.contains("\(task.objectID).location")
        }
        #expect(try coordinator.store.row(for: home.objectID) != nil)
        // With the task's link cleared in the same save, the deletion lands.
        var cleared = try #require(try coordinator.store.row(for: task.objectID))
        let slot = try #require(DerivedRelationshipTests.model.entity(named: "Task")?.slot(of: "location"))
        cleared.slots[slot] = .toOne(nil)
        cleared.version = 2
        changes.updated = [(cleared, 1)]
        _ = try coordinator.store.save(changes)
        #expect(try coordinator.store.row(for: home.objectID) == nil)
    }

    /// Two writers: one adds a task at Home, the other deletes Home, each from what it read
    /// before the other saved. Whichever saves second is refused by the store (a link to a
    /// deleted object, or a delete whose rule never saw the new task), nothing is written,
    /// and saving again from fresh state lands with the store sound: never a task pointing
    /// at a location that is gone.
    @Test(arguments: StoreKind.allCases, [true, false])
    func addingToALocationWhileAnotherWriterDeletesItNeverLeavesADanglingLink(kind: StoreKind, deleteFirst: Bool) throws {
        let store = try Store(kind)
        let setup = try store.context()
        let home = try setup.location("Home")
        let old = try setup.task("Old")
        try old.setObject(home, forKey: "location")
        try setup.save()

        let adder = try store.context(), deleter = try store.context()
        let fresh = try adder.task("New")
        try fresh.setObject(try adder.existingObject(with: home.objectID), forKey: "location")
        deleter.delete(try deleter.existingObject(with: home.objectID))
        let (first, second) = deleteFirst ? (deleter, adder) : (adder, deleter)
        try first.save()
        // The add after the delete is refused. The delete after the add lands when its delete
        // rule reads the location's tasks at the save (then it clears the new task's link too),
        // and is refused when it read them before the add was saved.
        var landed = true
        do {
            try second.save()
        } catch let error as ValidationError {
            #expect(error.failures.allSatisfy { $0.rule == .danglingReference }, "\(error)")
            landed = false
        }
        #expect(!(deleteFirst && landed), "an add linking a location deleted since was written")
        let check = try store.context()
        #expect(try check.coordinator.checkIntegrity().problems.isEmpty)
        #expect(try check.fetch(FetchRequest(entityName: "Task")).count == (deleteFirst && !landed ? 1 : 2))
        if !landed {
            // Again from fresh state: the add makes its task without the deleted Home (a new
            // context finds no Home), the delete now sees the new task and clears its link.
            let again = try store.context()
            if deleteFirst {
                #expect(try again.fetch(FetchRequest(entityName: "Location")).isEmpty)
                _ = try again.task("New")
            } else {
                again.delete(try again.existingObject(with: home.objectID))
            }
            try again.save()
        }
        let last = try store.context()
        #expect(try last.coordinator.checkIntegrity().problems.isEmpty)
        #expect(try last.fetch(FetchRequest(entityName: "Location")).isEmpty)
        #expect(try last.fetch(FetchRequest(entityName: "Task")).count == 2)
        #expect(try last.fetch(FetchRequest(entityName: "Task")).allSatisfy { try $0.object(forKey: "location") == nil })
    }

    @Test(arguments: StoreKind.allCases)
    func aDerivedListIsWhatItsInverseSaysSavedOrNot(kind: StoreKind) throws {
        let store = try Store(kind)
        let context = try store.context()
        let home = try context.location("Home")
        let milk = try context.task("Milk"), bread = try context.task("Bread")
        try milk.setObject(home, forKey: "location")
        try home.addObject(bread, toKey: "tasks")  // from the derived side: sets bread.location
        #expect(try bread.object(forKey: "location") === home)
        let red = try context.insertObject(entityName: "Tag")
        try red.setValue("red", forKey: "label")
        try red.addObject(milk, toKey: "tasks")
        try bread.setObjects([red], forKey: "tags")
        #expect(Self.ids(try home.objects(forKey: "tasks")) == Self.ids([milk, bread]))
        #expect(Self.ids(try red.objects(forKey: "tasks")) == Self.ids([milk, bread]))
        #expect(try milk.objectIDs(forRelationship: "tags") == [red.objectID])
        try context.save()

        // Another context (a reopened file) reads the same from the stored side.
        let other = try store.context()
        let home2 = try other.existingObject(with: home.objectID), red2 = try other.existingObject(with: red.objectID)
        #expect(Self.ids(try home2.objects(forKey: "tasks")) == Self.ids([milk, bread]))
        #expect(Self.ids(try red2.objects(forKey: "tasks")) == Self.ids([milk, bread]))

        // Unsaved changes count: an edit, a removal from the derived side, a delete, an insert.
        let milk2 = try other.existingObject(with: milk.objectID), bread2 = try other.existingObject(with: bread.objectID)
        try milk2.setObject(nil, forKey: "location")
        #expect(Self.ids(try home2.objects(forKey: "tasks")) == [bread.objectID])
        try red2.removeObject(bread2, fromKey: "tasks")
        #expect(try bread2.objectIDs(forRelationship: "tags").isEmpty)
        #expect(try red2.objectIDs(forRelationship: "tasks") == [milk.objectID])
        other.delete(milk2)
        #expect(try red2.objectIDs(forRelationship: "tasks").isEmpty)
        let eggs = try other.task("Eggs")
        try eggs.setObject(home2, forKey: "location")
        #expect(Self.ids(try home2.objects(forKey: "tasks")) == Self.ids([bread, eggs]))

        // A child context sees its parent's unsaved state under its own.
        let child = ManagedObjectContext(parent: other)
        let homeInChild = try child.existingObject(with: home.objectID)
        #expect(Self.ids(try homeInChild.objects(forKey: "tasks")) == Self.ids([bread, eggs]))
        try child.existingObject(with: bread.objectID).setObject(nil, forKey: "location")
        #expect(Self.ids(try homeInChild.objects(forKey: "tasks")) == [eggs.objectID])
        try child.save()
        #expect(Self.ids(try home2.objects(forKey: "tasks")) == [eggs.objectID])

        try other.save()
        let third = try store.context()
        #expect(try third.existingObject(with: home.objectID).objects(forKey: "tasks").map { try $0.value(forKey: "text") } == ["Eggs"])
        #expect(try third.existingObject(with: red.objectID).objects(forKey: "tasks").isEmpty)
        #expect(try third.coordinator.checkIntegrity().problems.isEmpty)
    }

    /// Adding a task to a location or tag writes the task alone: the location is not
    /// changed, and the file grows by the task, not by the size of the group. The same with
    /// the lists stored shows what the test measures.
    @Test(arguments: [true, false])
    func addingToALargeGroupWritesOnlyTheNewObject(derived: Bool) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let model = derived ? Self.model : TestModel.model
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
        context.undoManager = nil
        let home = try context.location("Home")
        let red = try context.insertObject(entityName: "Tag")
        try red.setValue("red", forKey: "label")
        for i in 0..<5_000 {
            let task = try context.task("t\(i)")
            try task.setObject(home, forKey: "location")
            try task.addObject(red, toKey: "tags")
        }
        try context.save()
        let before = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0

        let adder = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
        let task = try adder.task("one more")
        try task.setObject(try adder.existingObject(with: home.objectID), forKey: "location")
        try task.addObject(try adder.existingObject(with: red.objectID), toKey: "tags")
        #expect(adder.updatedObjects.isEmpty == derived, "the location and tag are changed only when they store the list")
        try adder.save()
        let grown = (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0) - before
        if derived {
            #expect(grown < 4_096, "a save of one task wrote \(grown) bytes")
        } else {
            #expect(grown > 8_000, "both lists of 5,001 tasks are written again: \(grown) bytes")
        }
        let reader = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
        #expect(try reader.existingObject(with: home.objectID).objectIDs(forRelationship: "tasks").count == 5_001)
        #expect(try reader.existingObject(with: red.objectID).objectIDs(forRelationship: "tasks").count == 5_001)
    }

    /// Looked up in a compacted store (through the index on the tasks' location, or every
    /// row for a tag's tasks), with saves in the log after it and unsaved changes on top:
    /// each location's and tag's tasks are those that point at it.
    @Test(arguments: StoreKind.allCases)
    func lookupsAgreeWithTheTasksThroughSnapshotLogAndChanges(kind: StoreKind) throws {
        let store = try Store(kind)
        let context = try store.context()
        let places = try (0..<8).map { try context.location("L\($0)") }
        let tags = try (0..<3).map { n -> ManagedObject in
            let tag = try context.insertObject(entityName: "Tag")
            try tag.setValue(.string("t\(n)"), forKey: "label")
            return tag
        }
        var tasks: [ManagedObject] = []
        for n in 0..<400 {
            let task = try context.task("t\(n)")
            try task.setObject(places[n % 8], forKey: "location")
            if n % 3 != 0 { try task.setObjects([tags[n % 3]], forKey: "tags") }
            tasks.append(task)
        }
        try context.save()
        try context.coordinator.compactStore()
        // Saved after the snapshot: moves, a removal, a deletion, an insert.
        try tasks[0].setObject(places[1], forKey: "location")
        try tasks[9].setObject(nil, forKey: "location")
        context.delete(tasks[17])
        try context.task("late").setObject(places[3], forKey: "location")
        try context.save()
        // Unsaved on top, in another context.
        let other = try store.context()
        try other.existingObject(with: tasks[2].objectID).setObject(try other.existingObject(with: places[5].objectID), forKey: "location")
        try other.existingObject(with: tasks[4].objectID).setObjects([], forKey: "tags")
        let all = try other.fetch(FetchRequest(entityName: "Task"))
        for place in places {
            let expected = try Set(all.filter { try $0.object(forKey: "location")?.objectID == place.objectID }.map(\.objectID))
            let derived = try other.existingObject(with: place.objectID).objectIDs(forRelationship: "tasks")
            #expect(Set(derived) == expected && derived.count == expected.count, "\(place["name"])")
        }
        for tag in tags {
            let expected = try Set(all.filter { try $0.objectIDs(forRelationship: "tags").contains(tag.objectID) }.map(\.objectID))
            #expect(Set(try other.existingObject(with: tag.objectID).objectIDs(forRelationship: "tasks")) == expected)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func deleteRulesReachTheDerivedSide(kind: StoreKind) throws {
        let store = try Store(kind)
        let context = try store.context()
        let home = try context.location("Home")
        let milk = try context.task("Milk"), bread = try context.task("Bread")
        try milk.setObject(home, forKey: "location")
        try bread.setObject(home, forKey: "location")
        let note = try context.insertObject(entityName: "Note")
        try note.setObject(milk, forKey: "task")
        let project = try context.insertObject(entityName: "Project")
        let person = try context.insertObject(entityName: "Person")
        try person.setObject(project, forKey: "project")
        try context.save()

        // Nullify from the derived side: the tasks no longer point at the deleted location.
        let other = try store.context()
        other.delete(try other.existingObject(with: home.objectID))
        try other.save()
        #expect(try other.existingObject(with: milk.objectID).object(forKey: "location") == nil)
        #expect(try other.existingObject(with: bread.objectID).object(forKey: "location") == nil)
        // Cascade from the derived side: the task's notes go with it.
        other.delete(try other.existingObject(with: milk.objectID))
        try other.save()
        #expect(try other.fetch(FetchRequest(entityName: "Note")).isEmpty)
        // Deny from the derived side: refused while the project has a member.
        let project2 = try other.existingObject(with: project.objectID)
        other.delete(project2)
        #expect {
            try other.save()
        } throws: { error in
            (error as? ValidationError)?.failures.contains { $0.key == "members" && $0.rule == .deny } == true
        }
        other.delete(try other.existingObject(with: person.objectID))
        try other.save()
        #expect(try other.fetch(FetchRequest(entityName: "Project")).isEmpty)
        #expect(try other.coordinator.checkIntegrity().problems.isEmpty)
    }

    @Test func predicatesKeyPathsAndUndoReadTheDerivedSide() throws {
        let store = try Store(.binary)
        let context = try store.context()
        let home = try context.location("Home"), work = try context.location("Work")
        for (text, priority, place) in [("Milk", 1, home), ("Bread", 3, home), ("Report", 2, work)] {
            try context.task(text, priority: Int64(priority)).setObject(place, forKey: "location")
        }
        try context.save()
        func names(_ format: String) throws -> [String] {
            let request = FetchRequest(entityName: "Location", predicate: try ObjectPredicate(format), sortDescriptors: [SortKey("name")])
            return try context.fetch(request).map { object -> String in
                guard case .string(let name) = try object.value(forKey: "name") else { return "?" }
                return name
            }
        }
        #expect(try names("tasks.@count >= 2") == ["Home"])
        #expect(try names("ANY tasks.text == 'Report'") == ["Work"])
        #expect(try names("SUBQUERY(tasks, $t, $t.priority > 1).@count > 0") == ["Home", "Work"])
        #expect(try home.value(forKeyPath: "tasks.@sum.priority").value == .integer(4))
        // setObjects from the derived side moves the tasks; undo puts them back.
        let report = try #require(try work.objects(forKey: "tasks").first)
        try home.setObjects([report], forKey: "tasks")
        #expect(try names("tasks.@count == 1") == ["Home"])
        #expect(try work.objects(forKey: "tasks").isEmpty)
        context.undo()
        #expect(try home.objects(forKey: "tasks").count == 2 && work.objects(forKey: "tasks").count == 1)
        #expect(try report.object(forKey: "location") === work)
        let values = try context.fetchValues(FetchRequest(entityName: "Location", sortDescriptors: [SortKey("name")]), properties: ["name", "tasks"])
        #expect(values.map { $0.values[1].referencedIDs.count } == [2, 1])
    }

    /// What the schema refuses, each at the key.
    @Test(arguments: [
        (#"{ "name": "t", "destination": "B", "inverse": "a", "derivedFromInverse": true }"#, "'derivedFromInverse' applies to to-many relationships only"),
        (#"{ "name": "t", "destination": "B", "toMany": true, "derivedFromInverse": true }"#, "needs an inverse"),
        (#"{ "name": "t", "destination": "B", "inverse": "a", "toMany": true, "ordered": true, "derivedFromInverse": true }"#, "an ordered relationship cannot be derived"),
        (#"{ "name": "t", "destination": "B", "inverse": "many", "toMany": true, "derivedFromInverse": true }"#, "one side of a pair must be stored"),
    ])
    func theSchemaRefusesADerivedListThatCannotBeDerived(relationship: String, message: String) throws {
        let schema = """
        { "entities": [
          { "name": "A", "relationships": [\(relationship)] },
          { "name": "B", "relationships": [
            { "name": "a", "destination": "A", "inverse": "t" },
            { "name": "many", "destination": "A", "inverse": "t", "toMany": true, "derivedFromInverse": true } ] } ] }
        """
        #expect {
            try ManagedObjectModel(schema: schema, file: "bad.json")
        } throws: { error in
            "\(error)".contains(message) && "\(error)".contains("derivedFromInverse")
        }
    }

    /// The key is part of the entity's version hash (a store written with the list derived
    /// needs a migration to store it again), and leaves the hashes of models without it alone.
    @Test func theKeyChangesTheVersionHashOnlyWhereItIsSet() throws {
        let plain = TestModel.model.entityVersionHashes, derived = Self.model.entityVersionHashes
        #expect(plain["Location"] != derived["Location"] && plain["Tag"] != derived["Tag"])
        #expect(plain["Circle"] == derived["Circle"] && plain["Attachment"] == derived["Attachment"])
    }
}

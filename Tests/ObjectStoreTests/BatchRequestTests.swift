import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

/// Batch update, delete and insert requests, run in the store: validated as a save is,
/// delete rules applied, one transaction of history, and merged into contexts.
@Suite struct BatchRequestTests {
    enum Kind: String, CaseIterable {
        case inMemory, json, binary

        func coordinator(in directory: TemporaryDirectory, history: Bool = true) throws -> PersistentStoreCoordinator {
            switch self {
            case .inMemory: return PersistentStoreCoordinator(inMemoryWith: TestModel.model, clock: { TestModel.now }, history: history ? .all : nil)
            case .json: return try PersistentStoreCoordinator(model: TestModel.model, storeURL: directory.file("tasks.json"), clock: { TestModel.now }, history: history ? .all : nil)
            case .binary: return try PersistentStoreCoordinator(model: TestModel.model, storeURL: directory.file("tasks.store"), clock: { TestModel.now }, history: history ? .all : nil)
            }
        }

        /// A second opening of the same store (the in-memory store has only one).
        func reopened(_ coordinator: PersistentStoreCoordinator, in directory: TemporaryDirectory) throws -> PersistentStoreCoordinator {
            self == .inMemory ? coordinator : try self.coordinator(in: directory)
        }
    }

    /// Tasks t0... with priorities 0, 1, 2, 3, 0, 1, ...
    static func seed(_ context: ManagedObjectContext, count: Int) throws -> [ManagedObject] {
        let tasks = try (0..<count).map { try context.task("t\($0)", priority: Int64($0 % 4)) }
        try context.save()
        return tasks
    }

    static func priorities(_ coordinator: PersistentStoreCoordinator) throws -> [String: Int64] {
        let context = ManagedObjectContext(coordinator: coordinator)
        var result: [String: Int64] = [:]
        for task in try context.fetch(FetchRequest(entityName: "Task")) {
            result[task["text"].stringValue ?? "?"] = task["priority"].integerValue
        }
        return result
    }

    // MARK: Update

    /// The seed recipe: a batch update of the objects a predicate matches, with a count.
    /// Only the matching ones change, on every store kind, and a second opening reads them.
    @Test(arguments: Kind.allCases) func anUpdateSetsTheMatchingObjectsAndCountsThem(kind: Kind) throws {
        let directory = try TemporaryDirectory()
        let coordinator = try kind.coordinator(in: directory)
        let context = ManagedObjectContext(coordinator: coordinator)
        _ = try Self.seed(context, count: 10)
        var request = BatchUpdateRequest(entityName: "Task", predicate: try ObjectPredicate(format: "priority < %@", .integer(2)),
                                         propertiesToUpdate: ["priority": .integer(3), "status": .string("done")])
        request.resultType = .count
        #expect(try context.execute(request) == .count(6))
        let after = try Self.priorities(kind.reopened(coordinator, in: directory))
        for i in 0..<10 { #expect(after["t\(i)"] == (i % 4 < 2 ? 3 : Int64(i % 4)), "t\(i)") }
        // The same request again finds them holding the values already: nothing is written.
        request.predicate = try ObjectPredicate("status == 'done'")
        #expect(try context.execute(request) == .count(0))
    }

    /// An expression is evaluated on each object's saved values; IDs come back in key order.
    @Test(arguments: Kind.allCases) func anExpressionIsEvaluatedPerObject(kind: Kind) throws {
        let directory = try TemporaryDirectory()
        let coordinator = try kind.coordinator(in: directory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let tasks = try Self.seed(context, count: 8)
        var request = BatchUpdateRequest(entityName: "Task", predicate: try ObjectPredicate("priority <= 1"),
                                         expressionsToUpdate: ["priority": try ObjectExpression("priority + 2"), "ratio": try ObjectExpression("priority / 4.0")])
        request.resultType = .objectIDs
        let ids = try context.execute(request).objectIDs
        #expect(ids == [0, 1, 4, 5].map { tasks[$0].objectID })
        let fresh = ManagedObjectContext(coordinator: try kind.reopened(coordinator, in: directory))
        let t5 = try fresh.existingObject(with: tasks[5].objectID)
        #expect(t5["priority"] == 3)
        #expect(t5["ratio"] == .double(0.25))
    }

    /// New values are validated as a save validates them; a refused request changes nothing.
    @Test(arguments: Kind.allCases) func anUpdateBreakingARuleIsRefusedWhole(kind: Kind) throws {
        let directory = try TemporaryDirectory()
        let coordinator = try kind.coordinator(in: directory)
        let context = ManagedObjectContext(coordinator: coordinator)
        _ = try Self.seed(context, count: 6)
        let before = try Self.priorities(coordinator)
        func refused(_ request: BatchUpdateRequest) -> ValidationError? {
            do {
                try context.execute(request)
                return nil
            } catch let error as ValidationError {
                return error
            } catch {
                Issue.record("expected a ValidationError, got \(error)")
                return nil
            }
        }
        // Above the maximum, for every task.
        let tooHigh = refused(BatchUpdateRequest(entityName: "Task", propertiesToUpdate: ["priority": .integer(9)]))
        #expect(tooHigh?.failures.count == 6)
        #expect(tooHigh?.failures.first?.key == "priority")
        #expect(tooHigh?.failures.first?.rule == .maximum)
        // An expression that goes past it for some.
        let some = refused(BatchUpdateRequest(entityName: "Task", expressionsToUpdate: ["priority": try ObjectExpression("priority + 2")]))
        #expect(some?.failures.count == 2)
        // A required attribute set to nil, a pattern, a list of allowed values.
        #expect(refused(BatchUpdateRequest(entityName: "Task", propertiesToUpdate: ["text": .null]))?.failures.first?.rule == .required)
        #expect(refused(BatchUpdateRequest(entityName: "Task", propertiesToUpdate: ["code": .string("abc")]))?.failures.first?.rule == .pattern)
        #expect(refused(BatchUpdateRequest(entityName: "Task", propertiesToUpdate: ["status": .string("later")]))?.failures.first?.rule == .allowedValues)
        #expect(try Self.priorities(kind.reopened(coordinator, in: directory)) == before)
    }

    /// Requests that cannot mean anything are refused with the name at fault.
    @Test func anUpdateOfWhatIsNotAStoredAttributeIsRefused() throws {
        let context = TestModel.context()
        _ = try Self.seed(context, count: 2)
        func message(_ request: BatchUpdateRequest) -> String {
            do {
                try context.execute(request)
                return "no error"
            } catch {
                return "\(error)"
            }
        }
        #expect(message(BatchUpdateRequest(entityName: "Task", propertiesToUpdate: ["prority": .integer(1)])) == "Task has no property 'prority' (did you mean 'priority'?)")
        #expect(message(BatchUpdateRequest(entityName: "Task", propertiesToUpdate: ["location": .null])).contains("is a relationship"))
        #expect(message(BatchUpdateRequest(entityName: "Task", propertiesToUpdate: ["doubled": .integer(2)])) == "Task.doubled is derived and cannot be set")
        #expect(message(BatchUpdateRequest(entityName: "Task", propertiesToUpdate: ["scratch": .string("x")])).contains("is transient"))
        #expect(message(BatchUpdateRequest(entityName: "Task", propertiesToUpdate: ["priority": .string("high")])) == "Task.priority expects int16, got a string (\"high\")")
        #expect(message(BatchUpdateRequest(entityName: "Tsk", propertiesToUpdate: ["priority": .integer(1)])).contains("unknown entity 'Tsk'"))
        #expect(message(BatchUpdateRequest(entityName: "Task", propertiesToUpdate: [:])).contains("sets nothing"))
        #expect(message(BatchUpdateRequest(entityName: "Task", expressionsToUpdate: ["priority": try ObjectExpression("prio + 1")])).contains("prio"))
        let child = ManagedObjectContext(parent: context)
        #expect(throws: ObjectStoreError.self) { try child.execute(BatchUpdateRequest(entityName: "Task", propertiesToUpdate: ["priority": .integer(1)])) }
    }

    /// A uniqueness constraint holds across a batch update: two locations given one name
    /// are refused, and nothing changes.
    @Test(arguments: Kind.allCases) func anUpdateKeepsUniquenessConstraints(kind: Kind) throws {
        let directory = try TemporaryDirectory()
        let coordinator = try kind.coordinator(in: directory)
        let context = ManagedObjectContext(coordinator: coordinator)
        for name in ["Home", "Work", "Shop"] { try context.location(name) }
        try context.save()
        #expect(throws: ValidationError.self) {
            try context.execute(BatchUpdateRequest(entityName: "Location", predicate: try ObjectPredicate("name != 'Home'"), propertiesToUpdate: ["name": .string("Home")]))
        }
        // One location renamed to a free name goes through.
        try context.execute(BatchUpdateRequest(entityName: "Location", predicate: try ObjectPredicate("name == 'Shop'"), propertiesToUpdate: ["name": .string("Market")]))
        let reader = ManagedObjectContext(coordinator: try kind.reopened(coordinator, in: directory))
        let names = try reader.fetch(FetchRequest(entityName: "Location")).compactMap { $0["name"].stringValue }.sorted()
        #expect(names == ["Home", "Market", "Work"])
    }

    /// The executing context's objects show the new values (keeping its own unsaved
    /// changes); other contexts hear of it through save observers and through history.
    @Test(arguments: Kind.allCases) func anUpdateIsMergedAndRecordedAsOneTransaction(kind: Kind) throws {
        let directory = try TemporaryDirectory()
        let coordinator = try kind.coordinator(in: directory)
        let context = ManagedObjectContext(coordinator: coordinator)
        context.transactionAuthor = "importer"
        context.name = "bulk"
        let tasks = try Self.seed(context, count: 5)
        let token = try coordinator.currentHistoryToken
        try tasks[1].setValue(.string("edited"), forKey: "text")
        let heard = Locked<Set<ObjectID>>([])
        let observation = coordinator.addSaveObserver { notification in heard.withLock { $0.formUnion(notification.updated) } }
        try context.execute(BatchUpdateRequest(entityName: "Task", predicate: try ObjectPredicate("priority == 1"), propertiesToUpdate: ["priority": .integer(2)]))
        observation.cancel()
        #expect(tasks[1]["priority"] == 2)
        #expect(tasks[1]["text"] == "edited")
        #expect(tasks[1].hasChanges)
        #expect(heard.withLock { $0 } == [tasks[1].objectID])
        let transactions = try coordinator.fetchHistory(after: token)
        #expect(transactions.count == 1)
        #expect(transactions.first?.author == "importer")
        #expect(transactions.first?.contextName == "bulk")
        #expect(transactions.first?.changes.map(\.objectID) == [tasks[1].objectID])
        #expect(transactions.first?.changes.first?.changedKeys == ["priority"])
        // Another context merging the history sees the new value.
        let other = ManagedObjectContext(coordinator: coordinator)
        let copy = try other.existingObject(with: tasks[1].objectID)
        _ = copy["text"]
        other.mergeChanges(fromHistory: transactions)
        #expect(copy["priority"] == 2)
    }

    /// Updates one after another, each reading the rows the one before wrote (from the log,
    /// then after a compaction, with a context holding some of the objects changed): every
    /// slot an update does not set keeps its value, relationships and dates included, and a
    /// predicate through a to-one finds the objects it names. The rows an update rewrites
    /// are those its fetch read, not looked up again.
    @Test(arguments: Kind.allCases) func updatesInARowReadWhatTheOneBeforeWrote(kind: Kind) throws {
        let directory = try TemporaryDirectory()
        let coordinator = try kind.coordinator(in: directory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let home = try context.location("Home"), work = try context.location("Work")
        let tag = try context.insertObject(entityName: "Tag")
        try tag.setValue("urgent", forKey: "label")
        var expected: [String: (priority: Int64, ratio: Double?, status: String, location: String)] = [:]
        for i in 0..<40 {
            let task = try context.task("t\(i)", priority: Int64(i % 4))
            try task.setValue(.date(TestModel.now.addingTimeInterval(Double(i) * 3600)), forKey: "dueDate")
            try task.setObject(i % 3 == 0 ? work : home, forKey: "location")
            if i % 5 == 0 { try task.setObjects([tag], forKey: "tags") }
            expected["t\(i)"] = (Int64(i % 4), nil, "open", i % 3 == 0 ? "Work" : "Home")
        }
        // t1's subtasks: reading them (ANY subtasks.text) makes the request's own context hold
        // them, so their rows are read from the store when they match too.
        let t1 = try #require(try context.all("Task").first { $0["text"] == "t1" })
        try t1.setObjects(try context.all("Task").filter { $0["text"] == "t2" || $0["text"] == "t3" }.sorted { $0["text"].stringValue ?? "" < $1["text"].stringValue ?? "" }, forKey: "subtasks")
        try context.save()
        // Some of the objects held (and read) by the context that runs the requests.
        let held = try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("priority == 2")))
        #expect(held.count == 10)
        func run(_ predicate: String, _ properties: [String: ObjectExpression]) throws -> Int {
            var request = BatchUpdateRequest(entityName: "Task", predicate: try ObjectPredicate(predicate), expressionsToUpdate: properties)
            request.resultType = .count
            return try context.execute(request).count ?? -1
        }
        #expect(try run("priority < 2", ["ratio": try ObjectExpression("priority + 10.5")]) == 20)
        for (text, value) in expected where value.priority < 2 { expected[text]?.ratio = Double(value.priority) + 10.5 }
        #expect(try run("ratio >= 10 AND location.name == 'Work'", ["status": try ObjectExpression("'done'")]) == 7)
        for (text, value) in expected where (value.ratio ?? 0) >= 10 && value.location == "Work" { expected[text]?.status = "done" }
        if kind == .binary { try coordinator.compactStore() }
        #expect(try run("status == 'done' OR priority == 2", ["priority": try ObjectExpression("3")]) == 17)
        for (text, value) in expected where value.status == "done" || value.priority == 2 { expected[text]?.priority = 3 }
        #expect(try run("ANY subtasks.text == 't2' OR parent != nil", ["ratio": try ObjectExpression("0.5")]) == 3)
        for text in ["t1", "t2", "t3"] { expected[text]?.ratio = 0.5 }

        let fresh = ManagedObjectContext(coordinator: try kind.reopened(coordinator, in: directory))
        let tasks = try fresh.fetch(FetchRequest(entityName: "Task"))
        #expect(tasks.count == 40)
        for task in tasks {
            let text = task["text"].stringValue ?? "?"
            guard let want = expected[text], let i = Int(text.dropFirst()) else { Issue.record("unexpected \(text)"); continue }
            #expect(task["priority"] == .integer(want.priority), "\(text)")
            #expect(task["status"] == .string(want.status), "\(text)")
            #expect(task["ratio"] == (want.ratio.map { .double($0) } ?? .null), "\(text)")
            #expect(task["dueDate"] == .date(TestModel.now.addingTimeInterval(Double(i) * 3600)), "\(text)")
            #expect(try task.value(forKeyPath: "location.name").value == .string(want.location), "\(text)")
            #expect(try task.objectIDs(forRelationship: "tags") == (i % 5 == 0 ? [tag.objectID] : []), "\(text)")
            #expect(try task.value(forKeyPath: "parent.text").value == (i == 2 || i == 3 ? .string("t1") : .null), "\(text)")
        }
        #expect(try fresh.existingObject(with: t1.objectID).objects(forKey: "subtasks").map { $0["text"] } == ["t2", "t3"])
        // The held objects were merged: they read the last update's values.
        for task in held { #expect(task["priority"] == .integer(expected[task["text"].stringValue ?? "?"]?.priority ?? -1)) }
    }

    /// A binary store commits an update of more rows than one chunk as one commit: one
    /// transaction, and a second opening reads all of it.
    @Test func aLargeUpdateIsOneCommit() throws {
        let directory = try TemporaryDirectory()
        let coordinator = try Kind.binary.coordinator(in: directory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let rows = (0..<20_000).map { ["text": Value.string("t\($0)"), "priority": .integer(Int64($0 % 2))] }
        #expect(try context.execute(BatchInsertRequest(entityName: "Task", objects: rows)).count == nil)
        let token = try coordinator.currentHistoryToken
        var request = BatchUpdateRequest(entityName: "Task", propertiesToUpdate: ["priority": .integer(3)])
        request.resultType = .count
        #expect(try context.execute(request) == .count(20_000))
        let transactions = try coordinator.fetchHistory(after: token)
        #expect(transactions.count == 1)
        #expect(transactions.first?.changes.count == 20_000)
        let reader = ManagedObjectContext(coordinator: try Kind.binary.coordinator(in: directory))
        #expect(try reader.count(for: FetchRequest(entityName: "Task", predicate: try ObjectPredicate("priority == 3"))) == 20_000)
    }

    // MARK: Delete

    /// Deleted locations leave their tasks (nullify, the inverse stored in each task's
    /// row); a deleted task's notes and their attachments go with it (cascade); the count
    /// names every object deleted.
    @Test(arguments: Kind.allCases) func aDeleteAppliesNullifyAndCascade(kind: Kind) throws {
        let directory = try TemporaryDirectory()
        let coordinator = try kind.coordinator(in: directory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let home = try context.location("Home"), work = try context.location("Work")
        let tasks = try Self.seed(context, count: 4)
        for (index, task) in tasks.enumerated() { try task.setObject(index < 2 ? home : work, forKey: "location") }
        let note = try context.insertObject(entityName: "Note")
        try note.setObject(tasks[3], forKey: "task")
        let attachment = try context.insertObject(entityName: "Attachment")
        try attachment.setObject(note, forKey: "note")
        try context.save()

        var request = BatchDeleteRequest(entityName: "Location", predicate: try ObjectPredicate("name == 'Home'"))
        request.resultType = .objectIDs
        #expect(try context.execute(request).objectIDs == [home.objectID])
        #expect(try tasks[0].object(forKey: "location") == nil)
        #expect(home.managedObjectContext == nil)
        var cascade = BatchDeleteRequest(entityName: "Task", predicate: try ObjectPredicate("text == 't3'"))
        cascade.resultType = .count
        #expect(try context.execute(cascade) == .count(3))

        let fresh = ManagedObjectContext(coordinator: try kind.reopened(coordinator, in: directory))
        #expect(try fresh.existingObject(with: tasks[0].objectID).object(forKey: "location") == nil)
        #expect(try fresh.existingObject(with: work.objectID).objects(forKey: "tasks").map(\.objectID) == [tasks[2].objectID])
        #expect(try fresh.count(for: FetchRequest(entityName: "Note")) == 0)
        #expect(try fresh.count(for: FetchRequest(entityName: "Attachment")) == 0)
        #expect(try coordinator.checkIntegrity().problems.isEmpty)
    }

    /// Deletes in a row, run by a context that holds some of the objects: each one follows
    /// its rules (cascade to notes and their attachments, nullify of a location's tasks) on
    /// the rows its scan read, rows a batch update rewrote into the log, after a compaction,
    /// and the rows of held objects, which are read from the store.
    @Test(arguments: Kind.allCases) func deletesInARowFollowTheRulesOnTheRowsTheirScanRead(kind: Kind) throws {
        let directory = try TemporaryDirectory()
        let coordinator = try kind.coordinator(in: directory)
        let setup = ManagedObjectContext(coordinator: coordinator)
        let home = try setup.location("Home"), work = try setup.location("Work")
        // Task i: priority i % 4, at Work when i % 3 == 0 (else Home), with a note holding an
        // attachment when i % 5 == 0 or i % 6 == 0.
        var left = Set(0..<30)
        func hasNote(_ i: Int) -> Bool { i % 5 == 0 || i % 6 == 0 }
        for i in 0..<30 {
            let task = try setup.task("t\(i)", priority: Int64(i % 4))
            try task.setObject(i % 3 == 0 ? work : home, forKey: "location")
            if hasNote(i) {
                let note = try setup.insertObject(entityName: "Note")
                try note.setObject(task, forKey: "task")
                let attachment = try setup.insertObject(entityName: "Attachment")
                try attachment.setObject(note, forKey: "note")
            }
        }
        try setup.save()
        let context = ManagedObjectContext(coordinator: coordinator)
        let held = try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("priority == 3")))
        #expect(held.count == 7)
        func delete(_ entity: String, _ predicate: String) throws -> Int {
            var request = BatchDeleteRequest(entityName: entity, predicate: try ObjectPredicate(predicate))
            request.resultType = .count
            return try context.execute(request).count ?? -1
        }
        /// The objects deleting these tasks deletes: each one, its note and the attachment.
        func deleting(_ tasks: [Int]) -> Int {
            left.subtract(tasks)
            return tasks.reduce(0) { $0 + (hasNote($1) ? 3 : 1) }
        }
        var update = BatchUpdateRequest(entityName: "Task", predicate: try ObjectPredicate("priority == 1"), propertiesToUpdate: ["ratio": .double(1.5)])
        update.resultType = .count
        #expect(try context.execute(update).count == 8)
        // Rows the update wrote to the log.
        #expect(try delete("Task", "ratio != nil AND location.name == 'Work'") == deleting(left.filter { $0 % 4 == 1 && $0 % 3 == 0 }))
        if kind == .binary { try coordinator.compactStore() }
        // Held objects (priority 3) among rows read from a new snapshot.
        #expect(try delete("Task", "priority == 3 OR text == 't0'") == deleting(left.filter { $0 % 4 == 3 || $0 == 0 }))
        #expect(held.allSatisfy { $0.managedObjectContext == nil })
        // Home goes; its tasks' rows are edited (nullify) and then matched by the next delete.
        #expect(try delete("Location", "name == 'Home'") == 1)
        #expect(try delete("Task", "location == nil") == deleting(left.filter { $0 % 3 != 0 }))

        let fresh = ManagedObjectContext(coordinator: try kind.reopened(coordinator, in: directory))
        let remaining = try fresh.fetch(FetchRequest(entityName: "Task")).compactMap { $0["text"].stringValue }
        #expect(Set(remaining) == Set(left.map { "t\($0)" }))
        #expect(left == [6, 12, 18, 24])
        #expect(Set(try fresh.existingObject(with: work.objectID).objects(forKey: "tasks").compactMap { $0["text"].stringValue }) == Set(remaining))
        #expect(try fresh.count(for: FetchRequest(entityName: "Note")) == left.filter(hasNote).count)
        #expect(try fresh.count(for: FetchRequest(entityName: "Attachment")) == left.filter(hasNote).count)
        #expect(try fresh.count(for: FetchRequest(entityName: "Location")) == 1)
        #expect(try coordinator.checkIntegrity().problems.isEmpty)
    }

    /// A deny rule refuses a delete while the relationship holds objects the request does not
    /// delete too; nothing is deleted.
    @Test(arguments: Kind.allCases) func aDenyRuleRefusesTheDelete(kind: Kind) throws {
        let directory = try TemporaryDirectory()
        let coordinator = try kind.coordinator(in: directory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let project = try context.insertObject(entityName: "Project")
        try project.setValue("Apollo", forKey: "name")
        let person = try context.insertObject(entityName: "Person")
        try person.setValue("Ada", forKey: "name")
        try person.setObject(project, forKey: "project")
        try context.save()
        do {
            try context.execute(BatchDeleteRequest(entityName: "Project"))
            Issue.record("the delete went through")
        } catch let error as ValidationError {
            #expect(error.failures.map(\.rule) == [.deny])
            #expect(error.failures.first?.objectID == project.objectID)
        }
        #expect(try ManagedObjectContext(coordinator: kind.reopened(coordinator, in: directory)).count(for: FetchRequest(entityName: "Project")) == 1)
        // Without members the project goes; the person's project is nullified.
        try context.execute(BatchDeleteRequest(objectIDs: [person.objectID]))
        try context.execute(BatchDeleteRequest(entityName: "Project"))
        #expect(try ManagedObjectContext(coordinator: kind.reopened(coordinator, in: directory)).count(for: FetchRequest(entityName: "Project")) == 0)
    }

    /// A to-many derived from its inverse: deleting its owner nullifies each member's stored
    /// to-one, found by a lookup rather than a list.
    @Test func aDeleteNullifiesMembersOfADerivedToMany() throws {
        let schema = #"""
        { "entities": [
            { "name": "Department", "attributes": [{ "name": "name", "type": "string" }],
              "relationships": [{ "name": "employees", "destination": "Employee", "inverse": "department", "toMany": true, "derivedFromInverse": true }] },
            { "name": "Employee", "attributes": [{ "name": "name", "type": "string" }, { "name": "age", "type": "int16" }],
              "relationships": [{ "name": "department", "destination": "Department", "inverse": "employees" }] }
        ] }
        """#
        let model = try ManagedObjectModel(schema: schema, file: "org")
        let directory = try TemporaryDirectory()
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: directory.file("org.store"))
        let context = ManagedObjectContext(coordinator: coordinator)
        let sales = try context.insertObject(entityName: "Department"), lab = try context.insertObject(entityName: "Department")
        try sales.setValue("Sales", forKey: "name")
        try lab.setValue("Lab", forKey: "name")
        var people: [ManagedObject] = []
        for i in 0..<6 {
            let person = try context.insertObject(entityName: "Employee")
            try person.setValue(.string("e\(i)"), forKey: "name")
            try person.setObject(i < 4 ? sales : lab, forKey: "department")
            people.append(person)
        }
        try context.save()
        var request = BatchDeleteRequest(entityName: "Department", predicate: try ObjectPredicate("name == 'Sales'"))
        request.resultType = .count
        #expect(try context.execute(request) == .count(1))
        let fresh = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: directory.file("org.store")))
        #expect(try fresh.count(for: FetchRequest(entityName: "Employee", predicate: try ObjectPredicate("department == nil"))) == 4)
        #expect(try fresh.existingObject(with: lab.objectID).objects(forKey: "employees").count == 2)
        #expect(try people[0].object(forKey: "department") == nil)
    }

    // MARK: Insert

    /// Inserted objects start from the model's defaults, get permanent IDs and are seen by
    /// fetches; a handler feeds them one at a time.
    @Test(arguments: Kind.allCases) func anInsertMakesObjectsFromDictionaries(kind: Kind) throws {
        let directory = try TemporaryDirectory()
        let coordinator = try kind.coordinator(in: directory)
        let context = ManagedObjectContext(coordinator: coordinator)
        var request = BatchInsertRequest(entityName: "Task", objects: [["text": "first", "priority": 2], ["text": "second", "ratio": 1]])
        request.resultType = .objectIDs
        let ids = try #require(try context.execute(request).objectIDs)
        #expect(ids.count == 2 && ids.allSatisfy { !$0.isTemporary })
        let first = try context.existingObject(with: ids[0])
        #expect(first["priority"] == 2)
        #expect(first["status"] == "open")
        #expect(try context.existingObject(with: ids[1])["ratio"] == .double(1))

        let counter = Locked(0)
        var streamed = BatchInsertRequest(entityName: "Task") { values in
            let n = counter.withLock { n -> Int in
                n += 1
                return n
            }
            guard n <= 5 else { return true }
            values["text"] = .string("streamed \(n)")
            return false
        }
        streamed.resultType = .count
        #expect(try context.execute(streamed) == .count(5))
        let fresh = ManagedObjectContext(coordinator: try kind.reopened(coordinator, in: directory))
        #expect(try fresh.count(for: FetchRequest(entityName: "Task")) == 7)
    }

    /// An insert breaking a rule, or a uniqueness constraint against saved objects or each
    /// other, inserts nothing.
    @Test(arguments: Kind.allCases) func anInsertBreakingARuleInsertsNothing(kind: Kind) throws {
        let directory = try TemporaryDirectory()
        let coordinator = try kind.coordinator(in: directory)
        let context = ManagedObjectContext(coordinator: coordinator)
        try context.location("Home")
        try context.save()
        #expect(throws: ValidationError.self) { try context.execute(BatchInsertRequest(entityName: "Task", objects: [["text": "ok"], ["priority": 1]])) }
        #expect(throws: ValidationError.self) { try context.execute(BatchInsertRequest(entityName: "Location", objects: [["name": "Work"], ["name": "Home"]])) }
        #expect(throws: ValidationError.self) { try context.execute(BatchInsertRequest(entityName: "Location", objects: [["name": "Shop"], ["name": "Shop"]])) }
        #expect(throws: ObjectStoreError.self) { try context.execute(BatchInsertRequest(entityName: "Task", objects: [["text": "x", "location": .null]])) }
        #expect(throws: ObjectStoreError.abstractEntity("Shape")) { try context.execute(BatchInsertRequest(entityName: "Shape", objects: [[:]])) }
        let fresh = ManagedObjectContext(coordinator: try kind.reopened(coordinator, in: directory))
        #expect(try fresh.count(for: FetchRequest(entityName: "Task")) == 0)
        #expect(try fresh.count(for: FetchRequest(entityName: "Location")) == 1)
    }
}

@Suite struct RefreshAllObjectsTests {
    /// After another opening of the store saved, refreshAllObjects shows its values: clean
    /// objects become faults that read them, changed ones keep their changes on top, inserted
    /// ones stay.
    @Test func refreshAllObjectsReadsOtherSavesAndKeepsUnsavedChanges() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url))
        let clean = try context.task("clean", priority: 1), edited = try context.task("edited", priority: 1)
        try context.save()
        let other = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url))
        try other.execute(BatchUpdateRequest(entityName: "Task", propertiesToUpdate: ["priority": .integer(2)]))
        try edited.setValue(.string("mine"), forKey: "text")
        let inserted = try context.task("new")
        #expect(clean["priority"] == 1)
        context.refreshAllObjects()
        #expect(clean.isFault)
        #expect(clean["priority"] == 2)
        #expect(edited["priority"] == 2)
        #expect(edited["text"] == "mine")
        #expect(inserted.isInserted && inserted["text"] == "new")
        try context.save()
        let reader = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url))
        #expect(try reader.existingObject(with: edited.objectID)["text"] == "mine")
    }
}

/// An object whose row holds a long stored to-many (a department's employees, written in its
/// row) is read in place through where each slot starts: its attributes after the list read
/// without skipping the list (an object reached through a to-one from each of 20,000
/// employees skipped it at every read: quadratic), and every value reads as decoded.
@Suite struct ListHoldingRowTests {
    @Test func aRowWithALongListReadsItsSlotsInPlaceAndRight() throws {
        let schema = #"""
        { "entities": [
            { "name": "Department", "attributes": [{ "name": "name", "type": "string" }, { "name": "budget", "type": "int64" }],
              "relationships": [{ "name": "employees", "destination": "Employee", "inverse": "department", "toMany": true }] },
            { "name": "Employee", "attributes": [{ "name": "name", "type": "string" }],
              "relationships": [{ "name": "department", "destination": "Department", "inverse": "employees" }] }
        ] }
        """#
        let model = try ManagedObjectModel(schema: schema, file: "org")
        let directory = try TemporaryDirectory()
        let url = directory.file("org.store")
        let writer = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
        let sales = try writer.insertObject(entityName: "Department"), lab = try writer.insertObject(entityName: "Department")
        try sales.setValue("Sales", forKey: "name")
        try sales.setValue(.integer(500), forKey: "budget")
        try lab.setValue("Lab", forKey: "name")
        for i in 0..<300 {
            let employee = try writer.insertObject(entityName: "Employee")
            try employee.setValue(.string("e\(i)"), forKey: "name")
            try employee.setObject(i % 10 == 0 ? lab : sales, forKey: "department")
        }
        try writer.save()

        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
        let department = try context.existingObject(with: sales.objectID)
        #expect(department["name"] == "Sales")
        #expect(department["budget"] == 500)
        guard case .indexed = department.slots.storage else {
            Issue.record("a department row holding 270 employees is not read through its positions: \(department.slots.storage)")
            return
        }
        #expect(try department.objects(forKey: "employees").count == 270)
        // Reached through each employee's to-one, in a predicate and a sort.
        let inSales = try context.fetch(FetchRequest(entityName: "Employee", predicate: try ObjectPredicate("department.name == 'Sales' AND department.budget > 100")))
        #expect(inSales.count == 270)
        let sorted = try context.fetch(FetchRequest(entityName: "Employee", sortDescriptors: [SortKey("department.name"), SortKey("name")]))
        #expect(sorted.first?["name"] == "e0" && sorted.count == 300)
        // A write decodes the values; they are the same.
        try department.setValue(.integer(600), forKey: "budget")
        #expect(department["name"] == "Sales")
        #expect(try department.objects(forKey: "employees").count == 270)
        try context.save()
        let reader = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
        #expect(try reader.existingObject(with: sales.objectID)["budget"] == 600)
    }
}

/// A count without a predicate asks the store how many rows an entity has instead of
/// listing them; it must be the number of IDs a fetch lists, through every state of a
/// binary store's snapshot and log (rows replaced or deleted after a compaction, new ones).
@Suite struct UnfilteredCountTests {
    @Test(arguments: BatchRequestTests.Kind.allCases) func anUnfilteredCountIsTheNumberOfObjects(kind: BatchRequestTests.Kind) throws {
        let directory = try TemporaryDirectory()
        let coordinator = try kind.coordinator(in: directory, history: false)
        let context = ManagedObjectContext(coordinator: coordinator)
        func check(_ label: String) throws {
            for reader in [context, ManagedObjectContext(coordinator: try kind.reopened(coordinator, in: directory))] {
                // Counted first: a new opening has read none of the snapshot's rows yet.
                let counted = try reader.count(for: FetchRequest(entityName: "Task"))
                #expect(counted == (try reader.fetchObjectIDs(FetchRequest(entityName: "Task")).count), "\(label)")
                let shapes = try reader.fetchObjectIDs(FetchRequest(entityName: "Shape")).count
                #expect(try reader.count(for: FetchRequest(entityName: "Shape")) == shapes, "\(label)")
            }
        }
        var tasks = try BatchRequestTests.seed(context, count: 50)
        for _ in 0..<4 { try context.insertObject(entityName: "Circle").setValue("c", forKey: "label") }
        try context.save()
        try check("saved")
        try coordinator.compactStore()
        try check("compacted")
        for task in tasks[0..<10] { try task.setValue(.integer(3), forKey: "priority") }
        for task in tasks[10..<15] { context.delete(task) }
        try context.save()
        try check("snapshot rows replaced and deleted")
        // A snapshot whose keys have gaps (rows deleted before it), then a few changes.
        try coordinator.compactStore()
        try tasks[20].setValue(.integer(1), forKey: "priority")
        context.delete(tasks[21])
        try context.save()
        try check("a snapshot with gaps, a row replaced and one deleted")
        tasks.remove(at: 21)
        tasks = Array(tasks[15...]) + (try (0..<3).map { try context.task("new \($0)") })
        try context.save()
        context.delete(tasks[tasks.count - 1])
        try context.save()
        try check("log rows added and one deleted")
        // Unsaved inserts count; unsaved deletes too (the listing path).
        try context.task("unsaved")
        #expect(try context.count(for: FetchRequest(entityName: "Task")) == 47)
        #expect(try context.fetchObjectIDs(FetchRequest(entityName: "Task")).count == 47)
        context.delete(tasks[0])
        #expect(try context.count(for: FetchRequest(entityName: "Task")) == 46)
        #expect(try context.fetchObjectIDs(FetchRequest(entityName: "Task")).count == 46)
    }
}

import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

@Suite struct StoreConformanceTests {
    @Test(arguments: StoreKind.allCases)
    func createReadUpdateDeleteSurviveReopening(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let context = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        let home = try context.location("Home")
        let milk = try context.task("Milk", priority: 3)
        let bread = try context.task("Bread")
        try milk.setObject(home, forKey: "location")
        try bread.setObject(home, forKey: "location")
        let red = try context.insertObject(entityName: "Tag")
        try red.setValue("red", forKey: "label")
        try milk.setObjects([red], forKey: "tags")
        let sub = try context.task("Sub")
        try milk.setObjects([sub], forKey: "subtasks")
        try context.save()

        var reopened = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        let tasks = try reopened.fetch(FetchRequest(entityName: "Task", sortDescriptors: [SortKey("text")]))
        #expect(tasks.map { $0["text"] } == ["Bread", "Milk", "Sub"])
        let reloadedMilk = tasks[1]
        #expect(reloadedMilk["priority"] == 3)
        #expect(try reloadedMilk.value(forKeyPath: "location.name").value == "Home")
        #expect(try reloadedMilk.value(forKeyPath: "location.tasks.@count").value == 2)
        #expect(try reloadedMilk.value(forKeyPath: "tags.label").description == "[\"red\"]")
        #expect(try reloadedMilk.objects(forKey: "subtasks").map { $0["text"] } == ["Sub"])
        #expect(try tasks[2].object(forKey: "parent")?.objectID == reloadedMilk.objectID)

        // Update and delete, then reopen again.
        try reloadedMilk.setValue("Oat milk", forKey: "text")
        reopened.delete(tasks[0])
        try reopened.save()
        reopened = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        let remaining = try reopened.fetch(FetchRequest(entityName: "Task", sortDescriptors: [SortKey("text")]))
        #expect(remaining.map { $0["text"] } == ["Oat milk", "Sub"])
        let location = try #require(reopened.fetch(FetchRequest(entityName: "Location")).first)
        #expect(try location.objects(forKey: "tasks").map { $0["text"] } == ["Oat milk"], "the deleted task left the inverse too")
        // Keys are never reused.
        let newer = try reopened.task("New")
        try reopened.save()
        #expect((newer.objectID.primaryKey ?? 0) > (remaining.compactMap(\.objectID.primaryKey).max() ?? 0))
    }

    @Test(arguments: StoreKind.allCases)
    func everyValueTypeRoundTripsExactly(kind: StoreKind) throws {
        let schema = #"""
        {"entities": [{"name": "V", "attributes": [
          {"name": "i16", "type": "int16"}, {"name": "i32", "type": "int32"}, {"name": "i64", "type": "int64"},
          {"name": "d", "type": "double"}, {"name": "f", "type": "float"}, {"name": "dec", "type": "decimal"},
          {"name": "s", "type": "string"}, {"name": "b", "type": "boolean"}, {"name": "date", "type": "date"},
          {"name": "bin", "type": "binary"}, {"name": "u", "type": "uuid"}, {"name": "uri", "type": "uri"}
        ]}]}
        """#
        let model = try ManagedObjectModel(schema: schema)
        let samples: [[String: Value]] = [
            ["i16": .integer(Int64(Int16.min)), "i32": .integer(Int64(Int32.max)), "i64": .integer(Int64.min), "d": .double(.nan), "f": .double(-0.0),
             "dec": .decimal(Decimal(string: "12345678901234567890.123456789")!), "s": "héllo \"wörld\"\n\t😀 \\ \u{1}",
             "b": true, "date": .date(Date(timeIntervalSince1970: 1_795_348_800.123_456_7)), "bin": .data(Data([0, 1, 255, 128])),
             "u": .uuid(UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8")!), "uri": .uri(URL(string: "https://example.com/a?b=c#d")!)],
            ["i16": .integer(Int64(Int16.max)), "i32": .integer(Int64(Int32.min)), "i64": .integer(Int64.max), "d": .double(.infinity),
             "f": .double(1.0e-300), "dec": .decimal(Decimal(string: "-0.000000000000000000000000001")!), "s": "", "b": false,
             "date": .date(Date(timeIntervalSinceReferenceDate: -123.000_001)), "bin": .data(Data()), "d2": .null],
            ["d": .double(-.infinity)],
            ["d": .double(0.1 + 0.2), "date": .date(Date(timeIntervalSince1970: 0.000_1))],
        ]
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let context = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory, model: model))
        var ids: [ObjectID] = []
        for sample in samples {
            let object = try context.insertObject(entityName: "V")
            for (key, value) in sample where key != "d2" { try object.setValue(value, forKey: key) }
            ids.append(object.objectID)
        }
        try context.save()
        let reopened = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory, model: model))
        for (sample, object) in zip(samples, try reopened.fetch(FetchRequest(entityName: "V"))) {
            for attribute in model.entity(named: "V")!.attributes {
                let expected = sample[attribute.name] ?? .null
                let actual = object[attribute.name]
                if case .double(let e) = expected, e.isNaN {
                    #expect(actual.doubleValue?.isNaN == true)
                } else if case .double(let e) = expected, e == 0, case .double(let a) = actual {
                    #expect(a == 0 && a.sign == e.sign, "\(kind) \(attribute.name)")
                } else {
                    #expect(actual == expected, "\(kind) \(attribute.name)")
                }
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func fetchedObjectsAreFaultsAndCanBeTurnedBackIntoFaults(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let context = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        for i in 0..<5 { try context.task("T\(i)") }
        try context.save()
        let reader = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        let tasks = try reader.fetch(FetchRequest(entityName: "Task"))
        #expect(tasks.allSatisfy { $0.isFault })
        #expect(tasks[0]["text"] == "T0")
        #expect(!tasks[0].isFault && tasks[1].isFault)
        reader.refresh(tasks[0], mergeChanges: false)
        #expect(tasks[0].isFault)
        #expect(tasks[0]["text"] == "T0")
    }

    @Test(arguments: StoreKind.allCases)
    func contextsOnManyThreadsSaveToOneStore(kind: StoreKind) async throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let coordinator = try kind.open(in: directory, memory: &memory)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for i in 0..<10 {
                        _ = try await coordinator.performBackgroundTask { context in
                            try context.task("w\(worker)-\(i)")
                            try context.save()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let context = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        let texts = try context.fetch(FetchRequest(entityName: "Task")).map { $0["text"] }
        #expect(texts.count == 40)
        #expect(Set(texts).count == 40)
    }

    @Test(arguments: [StoreKind.json, .binary])
    func twoOpenersOfOneFileSaveAlternatelyAndDetectConflicts(kind: StoreKind) throws {
        // Two coordinators with their own store objects behave like two processes.
        let directory = try TemporaryDirectory()
        var unused: InMemoryStore?
        let first = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &unused))
        let second = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &unused))
        let a = try first.task("from first")
        try first.save()
        let b = try second.task("from second")
        try second.save()
        #expect(a.objectID.primaryKey != b.objectID.primaryKey, "keys are unique across openers")
        #expect(try first.count(for: FetchRequest(entityName: "Task")) == 2)

        let shared = try second.existingObject(with: a.objectID)
        try a.setValue("edited by first", forKey: "text")
        try first.save()
        try shared.setValue(2, forKey: "priority")
        #expect(throws: StoreConflictError.self) { try second.save() }
        second.mergePolicy = .mergeByPropertyMemoryWins
        try second.save()
        let check = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &unused))
        let saved = try check.existingObject(with: a.objectID)
        #expect(saved["text"] == "edited by first" && saved["priority"] == 2)
    }

    @Test(arguments: [StoreKind.json, .binary])
    func storeFilesAreOwnerOnly(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var unused: InMemoryStore?
        let context = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &unused))
        try context.task("x")
        try context.save()
        let file = directory.file(kind == .json ? "tasks.json" : "tasks.store")
        let permissions = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
    }

    @Test(arguments: [StoreKind.json, .binary])
    func aStoreOfAnotherModelIsRefusedNamingTheEntities(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var unused: InMemoryStore?
        let context = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &unused))
        try context.task("x")
        try context.save()
        let other = try ManagedObjectModel(schema: TestModel.schema.replacingOccurrences(of: #"{ "name": "code", "type": "string", "pattern": "[A-Z]{3}" },"#, with: ""))
        #expect(throws: StoreError.incompatibleModel(path: directory.file(kind == .json ? "tasks.json" : "tasks.store").path, entities: ["Task"])) {
            try kind.open(in: directory, memory: &unused, model: other)
        }
    }

    @Test(arguments: [StoreKind.json, .binary])
    func readOnlyStoresReadAndRefuseWrites(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var unused: InMemoryStore?
        let context = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &unused))
        try context.task("x")
        try context.save()
        let url = directory.file(kind == .json ? "tasks.json" : "tasks.store")
        let readOnly = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url, readOnly: true))
        #expect(try readOnly.count(for: FetchRequest(entityName: "Task")) == 1)
        try readOnly.task("y")
        #expect(throws: StoreError.readOnly(path: url.path)) { try readOnly.save() }
    }
}

@Suite struct FaultingTests {
    private func seeded(_ kind: StoreKind, in directory: TemporaryDirectory, memory: inout InMemoryStore?) throws -> PersistentStoreCoordinator {
        let coordinator = try kind.open(in: directory, memory: &memory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let home = try context.location("Home")
        for i in 0..<10 {
            let task = try context.task("T\(i)")
            try task.setObject(home, forKey: "location")
        }
        try context.save()
        return try kind.open(in: directory, memory: &memory)
    }

    @Test(arguments: StoreKind.allCases)
    func batchesLoadTogether(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let context = ManagedObjectContext(coordinator: try seeded(kind, in: directory, memory: &memory))
        var request = FetchRequest(entityName: "Task")
        request.fetchBatchSize = 4
        let tasks = try context.fetch(request)
        #expect(tasks.count == 10 && tasks.allSatisfy { $0.isFault })
        _ = tasks[5]["text"]
        #expect(tasks.map(\.isFault) == [true, true, true, true, false, false, false, false, true, true])
    }

    @Test(arguments: StoreKind.allCases)
    func prefetchingLoadsRelationshipDestinations(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let context = ManagedObjectContext(coordinator: try seeded(kind, in: directory, memory: &memory))
        var request = FetchRequest(entityName: "Task", predicate: try ObjectPredicate("text == 'T3'"))
        request.relationshipKeyPathsForPrefetching = ["location.tasks"]
        let task = try #require(context.fetch(request).first)
        let home = try #require(context.registeredObject(for: try task.objectIDs(forRelationship: "location")[0]))
        #expect(!home.isFault)
        let siblings = try home.objectIDs(forRelationship: "tasks").compactMap { context.registeredObject(for: $0) }
        #expect(siblings.count == 10 && siblings.allSatisfy { !$0.isFault })
    }

    @Test(arguments: StoreKind.allCases)
    func cleanObjectsNobodyHoldsAreLetGo(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let context = ManagedObjectContext(coordinator: try seeded(kind, in: directory, memory: &memory))
        context.undoManager = nil  // an undo stack keeps the objects it can undo alive
        do {
            let tasks = try context.fetch(FetchRequest(entityName: "Task"))
            #expect(tasks.allSatisfy { $0["text"] != .null })
            #expect(context.registeredObjects.count >= 10)
            try tasks[0].setValue("changed", forKey: "text")
        }
        // Only the changed object is kept, until it is saved (besides the recently loaded
        // ones, until they are released).
        context.releaseCleanObjects()
        #expect(context.registeredObjects.map { $0["text"] } == ["changed"])
        try context.save()
        context.releaseCleanObjects()
        #expect(context.registeredObjects.isEmpty)
        #expect(try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("text == 'changed'"))).count == 1)
    }

    /// Letting go of clean objects never lets go of one the program holds: it stays the
    /// one object of its ID. And a context that registers many objects nobody keeps does not
    /// grow without end.
    @Test func heldObjectsStayOneObjectPerIDAndUnheldOnesAreLetGo() throws {
        let context = TestModel.context()
        context.undoManager = nil
        for i in 0..<6_000 { try context.task("t\(i % 100)") }
        try context.save()
        context.releaseCleanObjects()
        let held = try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("text == 't7'")))
        #expect(held.count == 60)
        context.releaseCleanObjects()
        #expect(context.registeredObjects.count == held.count)
        let again = try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("text == 't7'")))
        #expect(zip(held, again).allSatisfy { $0 === $1 }, "the same objects, not second copies")
        // Every task fetched and dropped, then new objects registered: past its sweep size the
        // registry lets go of the dropped ones (all but the 1,024 recent) before growing.
        _ = try context.fetch(FetchRequest(entityName: "Task")).count
        #expect(context.registeredObjects.count == 6_000)
        for i in 0..<3_000 { try context.task("new \(i)") }
        #expect(context.registeredObjects.count < 6_000 + 3_000 - 4_000)
        context.rollback()
        context.releaseCleanObjects()
        #expect(context.registeredObjects.count == held.count)
    }
}

@Suite struct StoreUniquenessTests {
    @Test(arguments: StoreKind.allCases)
    func twoWritersCannotBothAddTheSameUniqueValue(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let first = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        let second = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        first.undoManager = nil
        second.undoManager = nil
        try first.location("Office")
        try second.location("Office")  // validated against what second can see: nothing yet
        try first.save()
        #expect {
            try second.save()
        } throws: { error in
            (error as? ValidationError)?.failures.map(\.rule) == [.unique]
        }
        #expect(second.hasChanges, "nothing was written; the change is kept to fix")
        #expect(try ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory)).count(for: FetchRequest(entityName: "Location")) == 1)
    }

    /// An update is checked by the store, under its lock, when it changes a constrained
    /// value (another writer may have taken it since the context looked), and not refused
    /// when it leaves them as they were.
    @Test(arguments: StoreKind.allCases)
    func anUpdateCannotTakeAValueAnotherWriterSaved(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let setup = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        let home = try setup.location("Home")
        try setup.save()
        let first = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        let second = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        let held = try second.existingObject(with: home.objectID)
        try first.location("Office")
        try first.save()
        try held.setValue("Office", forKey: "name")  // second has not seen first's Office
        #expect {
            try second.save()
        } throws: { error in
            (error as? ValidationError)?.failures.map(\.rule) == [.unique]
        }
        // Its name as saved, another value changed: no clash.
        try held.setValue("Home", forKey: "name")
        #expect(!held.isUpdated)
        let other = try second.insertObject(entityName: "Location")
        try other.setValue("Garden", forKey: "name")
        try second.save()
        let check = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        let names = try check.fetch(FetchRequest(entityName: "Location")).compactMap { $0["name"].stringValue }
        #expect(names.sorted() == ["Garden", "Home", "Office"])
    }

    /// The same through a second name of the file, after the first writer compacted it
    /// (the file rewritten whole): the store checks the update against what the file holds.
    @Test(arguments: ["tasks.store", "tasks.json"])
    func anUpdateThroughASymlinkCannotTakeAValueSavedAndCompactedElsewhere(file: String) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file(file)
        func open(_ url: URL) throws -> ManagedObjectContext {
            ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url, clock: { TestModel.now }))
        }
        let setup = try open(url)
        let home = try setup.location("Home")
        try setup.save()
        let link = directory.file("link-" + file)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        let second = try open(link)
        let held = try second.existingObject(with: home.objectID)
        let first = try open(url)
        try first.location("Office")
        try first.save()
        try first.coordinator.compactStore()
        try held.setValue("Office", forKey: "name")
        #expect {
            try second.save()
        } throws: { error in
            (error as? ValidationError)?.failures.map(\.rule) == [.unique]
        }
        try held.setValue("Cellar", forKey: "name")
        try second.save()
        let check = try open(url)
        let names = try check.fetch(FetchRequest(entityName: "Location")).compactMap { $0["name"].stringValue }
        #expect(names.sorted() == ["Cellar", "Office"])
    }
}

import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

extension StoreKind {
    /// A coordinator on this kind of store that keeps history.
    func openWithHistory(in directory: TemporaryDirectory, memory: inout InMemoryStore?, retention: HistoryRetention = .all) throws -> PersistentStoreCoordinator {
        let coordinator = try open(in: directory, memory: &memory)
        try coordinator.trackHistory(retention)
        return coordinator
    }
}

@Suite struct HistoryTests {
    @Test(arguments: StoreKind.allCases)
    func everySaveRecordsItsTransactionWithOldAndNewValues(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let coordinator = try kind.openWithHistory(in: directory, memory: &memory)
        #expect(try coordinator.currentHistoryToken.transactionNumber == 0)
        let context = ManagedObjectContext(coordinator: coordinator)
        context.transactionAuthor = "app"
        context.name = "main"
        let home = try context.location("Home")
        let milk = try context.task("Milk", priority: 3)
        try milk.setObject(home, forKey: "location")
        let red = try context.insertObject(entityName: "Tag")
        try red.setValue("red", forKey: "label")
        try context.save()
        let afterInsert = try coordinator.currentHistoryToken

        try milk.setValue(1, forKey: "priority")
        try milk.setObject(nil, forKey: "location")
        try milk.setObjects([red], forKey: "tags")
        try context.save()
        context.transactionAuthor = "cleanup"
        context.delete(milk)
        try context.save()

        // Read back by a new opening of the file (the in-memory store is shared).
        let reader = try kind.open(in: directory, memory: &memory)
        let transactions = try reader.fetchHistory(after: nil)
        #expect(transactions.map(\.number) == [1, 2, 3])
        #expect(transactions.map(\.author) == ["app", "app", "cleanup"])
        #expect(transactions.allSatisfy { $0.contextName == "main" && $0.processID == getpid() && $0.timestamp == TestModel.now })
        #expect(transactions.last?.token == (try reader.currentHistoryToken))

        let inserted = transactions[0].changes
        #expect(inserted.map(\.kind) == [.insert, .insert, .insert])
        let milkID = milk.objectID
        let insertedMilk = try #require(inserted.first { $0.objectID == milkID })
        // An insertion lists no values (as Core Data's): the object has them.
        #expect(insertedMilk.values.isEmpty)
        #expect(Set(inserted.map(\.objectID)) == [milkID, home.objectID, red.objectID])

        let update = try #require(transactions[1].changes.first { $0.objectID == milkID })
        #expect(update.kind == .update)
        #expect(update.changedKeys.sorted() == ["location", "priority", "tags"])
        #expect(update.value(forKey: "priority") == PropertyChange(name: "priority", slot: update.value(forKey: "priority")?.slot ?? -1, oldValue: .value(3), newValue: .value(1)))
        #expect(update.value(forKey: "location")?.oldValue == .toOne(home.objectID))
        #expect(update.value(forKey: "location")?.newValue == .toOne(nil))
        // A to-many relationship records the objects added and removed, not the whole list.
        #expect(update.value(forKey: "tags")?.oldValue == .toMany([]))
        #expect(update.value(forKey: "tags")?.newValue == .toMany([red.objectID]))
        // The inverses changed too, and say so.
        let homeChange = try #require(transactions[1].changes.first { $0.objectID == home.objectID })
        #expect(homeChange.value(forKey: "tasks")?.oldValue == .toMany([milkID]))
        #expect(homeChange.value(forKey: "tasks")?.newValue == .toMany([]))

        let deletion = try #require(transactions[2].changes.first { $0.objectID == milkID })
        #expect(deletion.kind == .delete)
        // The tombstone: the attribute marked preserveValueOnDeletion, and only it.
        #expect(deletion.values.map(\.name) == ["text"])
        #expect(deletion.value(forKey: "text")?.oldValue == .value("Milk"))

        // After a token, by author, by entity.
        #expect(try reader.fetchHistory(after: afterInsert).map(\.number) == [2, 3])
        #expect(try reader.fetchHistory(after: nil, authors: ["cleanup"]).map(\.number) == [3])
        let tagChanges = try reader.fetchHistory(after: nil, entities: ["Tag"])
        #expect(tagChanges.map(\.number) == [1, 2, 3])  // the deletion took the task from its tag
        #expect(tagChanges.allSatisfy { $0.changes.allSatisfy { $0.entityName == "Tag" } })
        #expect(try reader.fetchHistory(after: TestModel.now.addingTimeInterval(-1)).count == 3)
        #expect(try reader.fetchHistory(after: TestModel.now).isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func deletedHistoryExpiresTokensAndKeepsNumbering(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let coordinator = try kind.openWithHistory(in: directory, memory: &memory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let task = try context.task("One")
        try context.save()
        let first = try coordinator.currentHistoryToken
        for priority in 1...3 {
            try task.setValue(.integer(Int64(priority)), forKey: "priority")
            try context.save()
        }
        try coordinator.deleteHistory(before: HistoryToken(storeIdentifier: coordinator.storeIdentifier, transactionNumber: 2))
        let reader = try kind.open(in: directory, memory: &memory)
        #expect(try reader.fetchHistory(after: nil).map(\.number) == [3, 4])
        #expect(throws: HistoryError.self) { try reader.fetchHistory(after: first) }
        #expect(try reader.fetchHistory(after: HistoryToken(storeIdentifier: coordinator.storeIdentifier, transactionNumber: 2)).map(\.number) == [3, 4])
        // A token of another store, and one past the last transaction.
        #expect(throws: HistoryError.self) { try reader.fetchHistory(after: HistoryToken(storeIdentifier: UUID().uuidString, transactionNumber: 1)) }
        #expect(throws: HistoryError.self) { try reader.fetchHistory(after: HistoryToken(storeIdentifier: coordinator.storeIdentifier, transactionNumber: 9)) }

        // Everything deleted: numbering goes on where it was.
        try coordinator.deleteHistory(before: try coordinator.currentHistoryToken)
        #expect(try coordinator.fetchHistory(after: nil).isEmpty)
        try task.setValue(0, forKey: "priority")
        try context.save()
        #expect(try kind.open(in: directory, memory: &memory).fetchHistory(after: nil).map(\.number) == [5])
    }

    @Test(arguments: [StoreKind.binary, .snapshot])
    func historySurvivesCompactionAndLogCutsWithinItsRetention(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let coordinator = try kind.openWithHistory(in: directory, memory: &memory, retention: HistoryRetention(transactions: 5))
        let context = ManagedObjectContext(coordinator: coordinator)
        let task = try context.task("Edited")
        try context.save()
        for round in 1...8 {
            try task.setValue(.integer(Int64(round % 4)), forKey: "priority")
            try context.save()
        }
        try coordinator.compactStore()
        var reader = try kind.open(in: directory, memory: &memory)
        #expect(try reader.fetchHistory(after: nil).map(\.number) == Array(5...9))
        #expect(try reader.fetchHistory(after: nil).last?.changes.first?.value(forKey: "priority")?.newValue == .value(0))
        #expect(throws: HistoryError.self) { try reader.fetchHistory(after: HistoryToken(storeIdentifier: coordinator.storeIdentifier, transactionNumber: 0)) }

        // A log cut (a log that mostly repeats one row) keeps them too.
        let store = try #require(coordinator.store as? BinaryStore)
        store.compactionThreshold = 64
        let cuts = try StoreHeader.logCuts(directory.file("tasks.store"))
        for round in 1...60 {
            try task.setValue(.integer(Int64(round % 4)), forKey: "priority")
            try context.save()
        }
        #expect(try StoreHeader.logCuts(directory.file("tasks.store")) > cuts || StoreHeader.snapshotLength(directory.file("tasks.store")) > 0)
        reader = try kind.open(in: directory, memory: &memory)
        let kept = try reader.fetchHistory(after: nil).map(\.number)
        #expect(kept.last == 69)
        #expect(kept == Array(kept.first!...69))
        #expect(kept.count >= 5)
        #expect(try reader.currentHistoryToken.transactionNumber == 69)
    }

    @Test func aFileThatKeepsHistoryIsMarkedAndEveryOpeningRecords() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        do {
            let coordinator = try PersistentStoreCoordinator(model: TestModel.model, storeURL: url, clock: { TestModel.now }, history: .all)
            let context = ManagedObjectContext(coordinator: coordinator)
            try context.task("First")
            try context.save()
        }
        // The write feature bit: a program that does not keep history must not save here.
        #expect(StoreHeader.field(try Data(contentsOf: url), at: 72) & 1 == 1)
        // An opening without the option records too.
        let plain = try PersistentStoreCoordinator(model: TestModel.model, storeURL: url, clock: { TestModel.now })
        #expect(plain.keepsHistory)
        let context = ManagedObjectContext(coordinator: plain)
        try context.task("Second")
        try context.save()
        #expect(try plain.fetchHistory(after: nil).map(\.number) == [1, 2])
        // A store without history says so.
        let other = try PersistentStoreCoordinator(model: TestModel.model, storeURL: directory.file("plain.store"))
        #expect(!other.keepsHistory)
        #expect(throws: HistoryError.notTracked) { try other.fetchHistory(after: nil) }
    }

    @Test func aJSONStoreKeepsItsHistoryReadableInTheFile() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.json")
        let coordinator = try PersistentStoreCoordinator(model: TestModel.model, storeURL: url, clock: { TestModel.now }, history: .all)
        let context = ManagedObjectContext(coordinator: coordinator)
        context.transactionAuthor = "importer"
        try context.task("Milk", priority: 2)
        try context.save()
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.contains("\"formatVersion\": 2"))
        #expect(text.contains(#"{"number": 1, "timestamp": "2026-11-22T12:00:00Z", "author": "importer""#))
        #expect(text.contains(#"{"kind": "insert", "object": "Task/1", "values": {}}"#))
        let editor = ManagedObjectContext(coordinator: coordinator)
        try editor.fetch(FetchRequest(entityName: "Task")).first?.setValue(3, forKey: "priority")
        try editor.save()
        #expect(try String(contentsOf: url, encoding: .utf8).contains(#"{"kind": "update", "object": "Task/1", "values": {"priority": [2, 3]}}"#))
        // A program of format 1 would save without recording: version 2 keeps it out.
        let plain = try PersistentStoreCoordinator(model: TestModel.model, storeURL: directory.file("plain.json"))
        let plainContext = ManagedObjectContext(coordinator: plain)
        try plainContext.task("Plain")
        try plainContext.save()
        #expect(try String(contentsOf: directory.file("plain.json"), encoding: .utf8).contains("\"formatVersion\": 1"))
    }

    @MainActor @Test(arguments: [StoreKind.json, .binary])
    func anotherOpeningsSaveIsFetchedByTokenNotifiedAndMerged(kind: StoreKind) async throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let viewCoordinator = try kind.openWithHistory(in: directory, memory: &memory)
        viewCoordinator.remoteChangeInterval = 0.02
        let view = ManagedObjectContext(coordinator: viewCoordinator)
        let task = try view.task("Shared", priority: 1)
        try view.save()
        let token = try viewCoordinator.currentHistoryToken
        let changes = try viewCoordinator.remoteChanges()
        view.automaticallyMergeChanges(on: DispatchQueue.main)
        let ownSave = try view.task("Own")
        _ = ownSave
        try view.save()

        // Another opening of the file (another process would do the same) edits and inserts.
        let other = try kind.openWithHistory(in: directory, memory: &memory)
        let otherContext = ManagedObjectContext(coordinator: other)
        otherContext.transactionAuthor = "other"
        let shared = try otherContext.existingObject(with: task.objectID)
        try shared.setValue(3, forKey: "priority")
        try otherContext.task("Theirs")
        try otherContext.save()

        let fetched = try viewCoordinator.fetchHistory(after: token, authors: ["other"])
        #expect(fetched.count == 1)
        #expect(fetched.first?.changes.count == 2)

        var received: RemoteChange?
        for await change in changes {
            received = change
            break
        }
        let change = try #require(received)
        // Only the other opening's transaction: this coordinator's own save is not reported.
        #expect(change.transactions.map(\.author) == ["other"])
        #expect(change.token.transactionNumber == 3)
        // The automatic merge runs on the main queue: the view context sees the new value.
        for _ in 0..<200 where task["priority"] != 3 {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(task["priority"] == 3)
        #expect(try view.count(for: FetchRequest(entityName: "Task")) == 3)
    }

    /// A compaction moves the kept history to a region the header points at; opening does
    /// not read it, and every flipped byte of the file is still reported (by opening, by
    /// reading the objects, by the integrity check or by reading the history).
    @Test func theHistoryRegionIsCheckedWhenReadAndEveryFlippedByteIsReported() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        do {
            let coordinator = try PersistentStoreCoordinator(model: TestModel.model, storeURL: url, clock: { TestModel.now }, history: .all)
            let context = ManagedObjectContext(coordinator: coordinator)
            context.undoManager = nil
            let task = try context.task("Kept", priority: 1)
            try context.save()
            try task.setValue(2, forKey: "priority")
            try context.save()
            try coordinator.compactStore()
            try task.setValue(3, forKey: "priority")
            try context.save()
        }
        let original = Array(try Data(contentsOf: url))
        #expect(StoreHeader.field(original, at: 80) > 0, "a history region")
        #expect(StoreHeader.field(original, at: 96) == 1 && StoreHeader.field(original, at: 104) == 2)
        func damageIsReported() -> Bool {
            do {
                let coordinator = try PersistentStoreCoordinator(model: TestModel.model, storeURL: url)
                let context = ManagedObjectContext(coordinator: coordinator)
                for object in try context.fetch(FetchRequest(entityName: "Task")) {
                    for property in object.entity.properties where property.attribute != nil { _ = try object.value(forKey: property.name) }
                }
                let transactions = try coordinator.fetchHistory(after: nil)
                guard transactions.map(\.number) == [1, 2, 3] else { return true }
                return try !coordinator.checkIntegrity().problems.isEmpty
            } catch is StoreError {
                return true
            } catch {
                return false
            }
        }
        #expect(!damageIsReported())
        var unnoticed: [Int] = []
        for offset in 0..<original.count {
            var damaged = original
            damaged[offset] ^= 0x5A
            try Data(damaged).write(to: url)
            if !damageIsReported() { unnoticed.append(offset) }
        }
        #expect(unnoticed.isEmpty, "flips at \(unnoticed.prefix(20)) of \(original.count) bytes went unnoticed")
    }
}

@Suite struct HistoryRetentionTests {
    /// Saves past the retention bound do not grow the file: compactions and log cuts keep
    /// the last transactions only. OBJECTSTORE_HISTORY_SAVES sets the count (100,000 in the
    /// long run of docs/reliability.md).
    @Test func retentionBoundsTheFile() throws {
        let saves = ProcessInfo.processInfo.environment["OBJECTSTORE_HISTORY_SAVES"].flatMap(Int.init) ?? 20_000
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let coordinator = try PersistentStoreCoordinator(model: TestModel.model, storeURL: url, durability: .normal, clock: { TestModel.now },
                                                         history: HistoryRetention(transactions: 1_000))
        let context = ManagedObjectContext(coordinator: coordinator)
        context.undoManager = nil
        let tasks = try (0..<10).map { try context.task("Task \($0)") }
        try context.save()
        // The largest size in each half of the run (the log grows, then is compacted or cut).
        var largest = [0, 0]
        for save in 1...saves {
            try tasks[save % 10].setValue(.integer(Int64(1 + save % 3)), forKey: "priority")
            try context.save()
            if save % 100 == 0 {
                let size = (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
                largest[save * 2 > saves ? 1 : 0] = max(largest[save * 2 > saves ? 1 : 0], size)
            }
        }
        let kept = try coordinator.fetchHistory(after: nil)
        #expect(kept.last?.number == (try coordinator.currentHistoryToken.transactionNumber))
        #expect(kept.last?.number == Int64(saves + 1), "every save recorded its transaction")
        // At least the bound, and past it no more than a log cut carries (the log's
        // transactions, up to the 256 KB compaction threshold; these take 20 bytes or more).
        #expect(kept.count >= 1_000 && kept.count <= 1_000 + (256 << 10) / 20, "\(kept.count) kept")
        // The file swings with the log but does not grow with the saves: at most an old and
        // a new log (each up to 256 KB of rows and 256 KB of carried transactions) and the
        // region beside the tiny snapshot.
        #expect(largest[1] < 2 << 20, "the file reached \(largest[1]) bytes (\(largest[0]) in the first half)")
        // Compacted, it holds the rows and the last 1,000 transactions (about 50 bytes each).
        try coordinator.compactStore()
        let compacted = (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
        #expect(compacted < 80_000, "\(compacted) bytes")
        #expect(try coordinator.fetchHistory(after: nil).count == 1_000)
    }
}

extension HistoryRetentionTests {
    /// A migration keeps history on and its numbering going: the old transactions (of the
    /// old model's properties) stay behind, and a token from before is reported expired,
    /// never taken for a later transaction.
    @Test(arguments: ["tasks.store", "tasks.json"])
    func aMigrationKeepsHistoryOnAndItsNumbering(name: String) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file(name)
        try TasksFixtures.writeStore(version: "v3", to: url)
        let models = try TasksFixtures.tasksDirectory()
        let before: HistoryToken
        do {
            let coordinator = try PersistentStoreCoordinator(model: try models.model(version: "v3"), storeURL: url, history: .all)
            let context = ManagedObjectContext(coordinator: coordinator)
            for task in try context.fetch(FetchRequest(entityName: "Task")) { try task.setValue(1, forKey: "priority") }
            try context.save()
            before = try coordinator.currentHistoryToken
            #expect(before.transactionNumber == 1)
        }
        #expect(try StoreMigrator(models: models).migrate(storeURL: url) != nil)
        let (coordinator, _) = try StoreMigrator(models: models).openStore(at: url)
        #expect(coordinator.keepsHistory)
        #expect(try coordinator.currentHistoryToken == before)
        #expect(try coordinator.fetchHistory(after: before).isEmpty)
        #expect(throws: HistoryError.self) { try coordinator.fetchHistory(after: HistoryToken(storeIdentifier: before.storeIdentifier, transactionNumber: 0)) }
        let context = ManagedObjectContext(coordinator: coordinator)
        try context.fetch(FetchRequest(entityName: "Task")).first?.setValue(2, forKey: "priority")
        try context.save()
        #expect(try coordinator.fetchHistory(after: before).map(\.number) == [2])
    }
}

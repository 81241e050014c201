import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

/// Several saves committed as one (`PersistentStoreCoordinator.committingTogether`): a bulk
/// load in batches that is still all or nothing, and one transaction of history.
@Suite struct CommittingTogetherTests {
    private func fileBytes(_ directory: TemporaryDirectory) throws -> Data {
        try Data(contentsOf: directory.file("tasks.store"))
    }

    /// Batches saved and let go of inside the body: nothing reaches the file until the body
    /// returns; then one transaction holds them all, other openings read them all, and
    /// objects of an earlier batch are found again by ID in a later one.
    @Test(arguments: [StoreKind.binary, .snapshot])
    func batchesAreOneCommitAndOneTransaction(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let coordinator = try kind.openWithHistory(in: directory, memory: &memory)
        let context = ManagedObjectContext(coordinator: coordinator)
        context.name = "load"
        let kept = try context.task("Kept", priority: 1)
        try context.save()
        let keptID = kept.objectID
        let before = try fileBytes(directory)
        let transactionsBefore = try coordinator.fetchHistory(after: nil).count

        var homeID: ObjectID?
        try coordinator.committingTogether {
            for batch in 0..<3 {
                let home = try homeID.map { try context.object(with: $0) } ?? context.location("Home")
                for i in 0..<400 {
                    let task = try context.task("T\(batch)-\(i)", priority: Int64(i % 4))
                    try task.setObject(home, forKey: "location")
                }
                try context.save()
                homeID = home.objectID
                #expect(try fileBytes(directory) == before, "nothing written before the body returns")
                // This process reads what the batch saved.
                #expect(try context.count(for: FetchRequest(entityName: "Task")) == 1 + 400 * (batch + 1))
                context.reset()
            }
        }
        #expect(try fileBytes(directory) != before)

        let reader = try kind.open(in: directory, memory: &memory)
        let readerContext = ManagedObjectContext(coordinator: reader)
        #expect(try readerContext.count(for: FetchRequest(entityName: "Task")) == 1_201)
        #expect(try readerContext.count(for: FetchRequest(entityName: "Location")) == 1)
        #expect(try readerContext.count(for: FetchRequest(entityName: "Task", predicate: try ObjectPredicate("location.name == 'Home'"))) == 1_200)
        let transactions = try reader.fetchHistory(after: nil)
        #expect(transactions.count == transactionsBefore + 1, "one transaction for the three saves")
        let last = try #require(transactions.last)
        #expect(last.contextName == "load")
        #expect(last.changes.count == 1_201 && last.changes.allSatisfy { $0.kind == .insert })
        #expect(!last.changes.contains { $0.objectID == keptID })
    }

    /// An object changed in two saves is recorded once, against its values before the
    /// batch; one inserted and deleted inside is not recorded; one deleted keeps its values.
    @Test func theTransactionRecordsTheNetChange() throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let coordinator = try StoreKind.binary.openWithHistory(in: directory, memory: &memory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let edited = try context.task("Edited", priority: 1)
        let removed = try context.task("Removed", priority: 2)
        try context.save()

        try coordinator.committingTogether {
            try edited.setValue(2, forKey: "priority")
            let brief = try context.task("Brief")
            try context.save()
            try edited.setValue(3, forKey: "priority")
            context.delete(brief)
            context.delete(removed)
            try context.save()
        }
        let last = try #require(try coordinator.fetchHistory(after: nil).last)
        #expect(last.changes.count == 2, "\(last.changes.map { "\($0.kind) \($0.objectID)" })")
        let update = try #require(last.changes.first { $0.objectID == edited.objectID })
        #expect(update.kind == .update)
        #expect(update.values.map { "\($0.name) \($0.oldValue.value) -> \($0.newValue.value)" } == ["priority 1 -> 3"])
        #expect(last.changes.first { $0.objectID == removed.objectID }?.kind == .delete)
        // A new opening reads the one commit as the batch left the store: each row's last
        // write, the deleted ones gone.
        let reader = ManagedObjectContext(coordinator: try StoreKind.binary.open(in: directory, memory: &memory))
        let tasks = try reader.fetch(FetchRequest(entityName: "Task"))
        #expect(tasks.map { "\($0["text"].stringValue ?? "") \($0["priority"].integerValue ?? -1)" } == ["Edited 3"])
    }

    /// A body that throws after saving leaves the store as it was: the file, what a new
    /// opening reads, the history, and this opening's own reads.
    @Test(arguments: [StoreKind.binary, .snapshot])
    func aBodyThatThrowsLeavesTheStoreAsItWas(kind: StoreKind) throws {
        struct Stop: Error {}
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let coordinator = try kind.openWithHistory(in: directory, memory: &memory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let kept = try context.task("Kept", priority: 1)
        try context.save()
        let before = try fileBytes(directory)
        let history = try coordinator.fetchHistory(after: nil).count

        #expect(throws: Stop.self) {
            try coordinator.committingTogether {
                for i in 0..<300 { _ = try context.task("Lost \(i)") }
                try context.save()
                try kept.setValue(3, forKey: "priority")
                try context.save()
                throw Stop()
            }
        }
        #expect(try fileBytes(directory) == before)
        context.reset()
        #expect(try context.count(for: FetchRequest(entityName: "Task")) == 1)
        #expect(try context.fetch(FetchRequest(entityName: "Task")).first?["priority"] == 1)
        #expect(try coordinator.fetchHistory(after: nil).count == history)
        let reader = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        #expect(try reader.count(for: FetchRequest(entityName: "Task")) == 1)

        // The store goes on as before: a save after it commits by itself.
        _ = try context.task("After")
        try context.save()
        let again = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        #expect(try again.count(for: FetchRequest(entityName: "Task")) == 2)
    }

    /// Stores that write as they go refuse, before running the body; nesting is refused.
    @Test func otherStoresAndNestingAreRefused() throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        for kind in [StoreKind.json, .inMemory] {
            let coordinator = try kind.open(in: directory, memory: &memory)
            var ran = false
            #expect(throws: StoreError.self) { try coordinator.committingTogether { ran = true } }
            #expect(!ran)
        }
        let binary = try StoreKind.binary.open(in: directory, memory: &memory)
        #expect(throws: StoreError.self) {
            try binary.committingTogether { try binary.committingTogether {} }
        }
        // Refused inside, the outer body's error ends the outer one: nothing is left held.
        let context = ManagedObjectContext(coordinator: binary)
        _ = try context.task("After")
        try binary.committingTogether { try context.save() }
        let reader = ManagedObjectContext(coordinator: try StoreKind.binary.open(in: directory, memory: &memory))
        #expect(try reader.count(for: FetchRequest(entityName: "Task")) == 1)
    }

    /// Uniqueness is checked once, at the commit, over all the saves: a value two saves of
    /// the batch give (the first's objects let go of), or one a row saved before the batch
    /// holds, fails the commit and nothing is kept; a value freed inside the batch (its
    /// holder renamed or deleted) may be taken.
    @Test(arguments: [StoreKind.binary, .snapshot])
    func uniquenessIsCheckedOverTheWholeBatch(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let coordinator = try kind.open(in: directory, memory: &memory)
        let context = ManagedObjectContext(coordinator: coordinator)
        context.mergePolicy = .error
        let office = try context.location("Office")
        let lab = try context.location("Lab")
        try context.save()
        let before = try fileBytes(directory)

        for clash in ["Home", "Office"] {
            let error = try #require(throws: ValidationError.self) {
                try coordinator.committingTogether {
                    for i in 0..<1_100 { try context.location("L\(i)") }
                    try context.location("Home")
                    try context.save()
                    context.reset()
                    try context.location(clash)
                    try context.save()
                }
            }
            #expect(error.failures.map(\.rule) == [.unique], "\(error)")
            #expect(try fileBytes(directory) == before)
            context.reset()
        }

        try coordinator.committingTogether {
            let office = try context.object(with: office.objectID)
            try office.setValue("Old office", forKey: "name")
            context.delete(try context.object(with: lab.objectID))
            try context.save()
            context.reset()
            try context.location("Office")
            try context.location("Lab")
            try context.save()
        }
        let reader = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        let names = try reader.fetch(FetchRequest(entityName: "Location")).compactMap { $0["name"].stringValue }.sorted()
        #expect(names == ["Lab", "Office", "Old office"])
    }

    /// A row saved before the batch and edited inside it, its constrained values kept,
    /// still holds them: a new row with them fails the commit. One whose values the batch
    /// changed gives them up.
    @Test func anEditedRowKeepsItsValues() throws {
        let schema = #"""
        { "entities": [{ "name": "Seat",
            "attributes": [{ "name": "row", "type": "string" }, { "name": "number", "type": "int64" }, { "name": "holder", "type": "string" }],
            "uniquenessConstraints": [["row", "number"]] }] }
        """#
        let model = try ManagedObjectModel(schema: schema, file: "seats")
        let directory = try TemporaryDirectory()
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: directory.file("tasks.store"))
        let context = ManagedObjectContext(coordinator: coordinator)
        context.mergePolicy = .error
        func seat(_ row: String, _ number: Int64, _ holder: String) throws -> ManagedObject {
            let seat = try context.insertObject(entityName: "Seat")
            try seat.setValue(.string(row), forKey: "row")
            try seat.setValue(.integer(number), forKey: "number")
            try seat.setValue(.string(holder), forKey: "holder")
            return seat
        }
        let ann = try seat("A", 1, "Ann"), bob = try seat("B", 1, "Bob")
        try context.save()
        let a1 = ann.objectID, b1 = bob.objectID
        let before = try fileBytes(directory)

        #expect(throws: ValidationError.self) {
            try coordinator.committingTogether {
                try context.object(with: a1).setValue("Zed", forKey: "holder")
                try context.save()
                context.reset()
                _ = try seat("A", 1, "Cy")
                try context.save()
            }
        }
        #expect(try fileBytes(directory) == before)
        context.reset()

        try coordinator.committingTogether {
            try context.object(with: b1).setValue(2, forKey: "number")
            try context.save()
            context.reset()
            _ = try seat("B", 1, "Dee")
            try context.save()
        }
        let reader = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: directory.file("tasks.store")))
        #expect(try reader.count(for: FetchRequest(entityName: "Seat")) == 3)
    }

    /// Another opening of the store on the batch's own thread (the file's lock is the
    /// thread's) that saves, or compacts, inside the body: the batch is refused and writes
    /// nothing, and what the other opening saved stays.
    @Test(arguments: [false, true])
    func anotherOpeningChangingTheFileInsideTheBodyIsRefused(compacts: Bool) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let coordinator = try StoreKind.binary.open(in: directory, memory: &memory)
        let context = ManagedObjectContext(coordinator: coordinator)
        _ = try context.task("Before")
        try context.save()
        let other = try StoreKind.binary.open(in: directory, memory: &memory)
        let otherContext = ManagedObjectContext(coordinator: other)
        #expect(throws: StoreError.self) {
            try coordinator.committingTogether {
                _ = try context.task("Batch")
                try context.save()
                _ = try otherContext.task("Other")
                try otherContext.save()
                if compacts { try other.compactStore() }
                _ = try context.task("Batch 2")
                try context.save()
            }
        }
        context.reset()
        let reader = ManagedObjectContext(coordinator: try StoreKind.binary.open(in: directory, memory: &memory))
        #expect(try reader.fetch(FetchRequest(entityName: "Task")).compactMap { $0["text"].stringValue }.sorted() == ["Before", "Other"])
        #expect(try context.fetch(FetchRequest(entityName: "Task")).compactMap { $0["text"].stringValue }.sorted() == ["Before", "Other"])
        #expect(try reader.coordinator.checkIntegrity().problems.isEmpty)
    }
}

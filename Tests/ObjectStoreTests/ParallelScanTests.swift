import Foundation
import Testing
@testable import ObjectStore
import ObjectStoreModel

/// A large scan is decoded and tested on several threads; what a fetch, a count, an ID
/// fetch and a value fetch return must be exactly what the one-thread scan returns, in the
/// same order, on every kind of store, with held, changed, deleted and new objects about.
@Suite struct ParallelScanTests {
    static func predicate(_ random: inout SeededRandom) throws -> ObjectPredicate {
        let atoms = [
            "priority >= \(random.next() % 4)", "priority == \(random.next() % 4)", "text BEGINSWITH[c] 't\(random.next() % 10)'",
            "text CONTAINS '\(random.next() % 10)'", "dueDate < %@", "dueDate == nil", "ratio > 0.5", "code == nil",
            "status == 'done'", "estimate >= 2.5", "text ==[cd] 'T12'", "priority IN {1, 3}",
        ]
        func atom() -> String { random.pick(atoms) }
        let text: String
        switch random.next() % 4 {
        case 0: text = atom()
        case 1: text = "\(atom()) AND \(atom())"
        case 2: text = "\(atom()) OR NOT (\(atom()))"
        default: text = "NOT (\(atom()) AND \(atom())) OR \(atom())"
        }
        let dates = text.components(separatedBy: "%@").count - 1
        return try ObjectPredicate(format: text, arguments: (0..<dates).map { _ in .date(TestModel.now.addingTimeInterval(Double(random.next() % 200) * 3600 - 100 * 3600)) })
    }

    @Test(arguments: StoreKind.allCases)
    func severalThreadsAnswerAsOneDoes(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        var random = SeededRandom(seed: 0x9A_7A + UInt64(kind.rawValue.count))
        do {
            let context = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
            for n in 0..<1_500 {
                let task = try context.task("t\(n)", priority: Int64(random.next() % 4))
                if random.chance(80) { try task.setValue(.date(TestModel.now.addingTimeInterval(Double(random.next() % 200) * 3600 - 100 * 3600)), forKey: "dueDate") }
                if random.chance(50) { try task.setValue(.double(Double(random.next() % 100) / 100), forKey: "ratio") }
                if random.chance(30) { try task.setValue(.decimal(Decimal(Int(random.next() % 5))), forKey: "estimate") }
                if random.chance(20) { try task.setValue(.string("done"), forKey: "status") }
            }
            try context.save()
            // Later saves leave rows in the log over the snapshot.
            for task in try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("priority == 2"))) where random.chance(30) {
                try task.setValue(.integer(3), forKey: "priority")
            }
            try context.save()
        }
        let coordinator = try kind.open(in: directory, memory: &memory)
        // A context with objects held, changed, deleted and inserted, unsaved: the same
        // changes each time (new objects get new IDs, so results are compared by text).
        func prepared(minimum: Int) throws -> ManagedObjectContext {
            let context = ManagedObjectContext(coordinator: coordinator)
            context.parallelScanMinimum = minimum
            var changes = SeededRandom(seed: 11)
            for task in try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("text BEGINSWITH 't1'"), sortDescriptors: [SortKey("text")])) {
                if changes.chance(30) { try task.setValue(.integer(Int64(changes.next() % 4)), forKey: "priority") }
                if changes.chance(10) { context.delete(task) }
            }
            for n in 0..<50 { try context.task("new\(n)", priority: Int64(n % 4)) }
            return context
        }
        func answers(_ context: ManagedObjectContext, _ request: FetchRequest) throws -> [[String]] {
            func text(_ id: ObjectID) throws -> String { try context.object(with: id)["text"].stringValue ?? "?" }
            return [try context.fetch(request).map { $0["text"].stringValue ?? "?" },
                    ["\(try context.count(for: request))"],
                    try context.fetchObjectIDs(request).map(text).sorted(),
                    try context.fetchValues(request, properties: ["text", "priority"]).map { "\($0.values.map(\.value))" }.sorted()]
        }
        var parallelScans = 0
        for round in 0..<25 {
            var request = FetchRequest(entityName: "Task", predicate: try Self.predicate(&random))
            if round % 2 == 1 { request.sortDescriptors = [SortKey("text")] }
            // Each side in a context of its own, so neither finds the other's matches held.
            let one = try prepared(minimum: Int.max), several = try prepared(minimum: 0)
            let serial = try answers(one, request), parallel = try answers(several, request)
            #expect(parallel == serial, "round \(round): \(request.predicate.map(String.init(describing:)) ?? "")")
            #expect(one.parallelScansRun == 0)
            parallelScans += several.parallelScansRun
        }
        // Over a store's rows (the binary store), the threads were used.
        if ParallelVerdicts.threads > 1, kind == .binary || kind == .snapshot {
            #expect(parallelScans > 0)
        } else {
            #expect(parallelScans == 0)
        }
    }

    @Test func aSmallScanStartsNoThread() throws {
        let directory = try TemporaryDirectory()
        let binary = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: directory.file("t.store")))
        for n in 0..<100 { try binary.task("t\(n)", priority: Int64(n % 4)) }
        try binary.save()
        let fresh = ManagedObjectContext(coordinator: binary.coordinator)
        _ = try fresh.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("priority >= 2")))
        #expect(fresh.parallelScansRun == 0)
    }
}

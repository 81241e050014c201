import Foundation
import Testing
@testable import ObjectStore
import ObjectStoreModel

/// A save of this coordinator is told to its own observers once: as a save, never also as
/// another process's change. The poll of the store for other processes' saves could run
/// between a save's commit and its noting as this coordinator's own, and reported it too (a
/// merged save delivered twice).
@Suite struct RemoteChangeRaceTests {
    final class Seen: @unchecked Sendable {
        let lock = NSLock()
        var numbers: [Int64] = []
        func add(_ transactions: [HistoryTransaction]) { lock.withLock { numbers += transactions.map(\.number) } }
    }

    @Test func ownSavesAreNeverReportedAsRemoteChanges() throws {
        let directory = try TemporaryDirectory()
        let coordinator = try PersistentStoreCoordinator(model: TestModel.model, storeURL: directory.file("tasks.store"), history: .all)
        let seen = Seen()
        let token = try coordinator.addRemoteChangeObserver { seen.add($0.transactions) }
        let done = TestFlag(false)
        // Polls as fast as it can while the saves run (the timer polls every half second).
        let poller = Thread {
            while !done.withLock({ $0 }) { coordinator.pollRemoteChanges() }
        }
        poller.start()
        let context = ManagedObjectContext(coordinator: coordinator)
        for round in 0..<300 {
            _ = try context.task("task \(round)")
            try context.save()
        }
        done.withLock { $0 = true }
        while !poller.isFinished { usleep(1_000) }
        coordinator.pollRemoteChanges()
        #expect(seen.numbers.isEmpty, "own transactions reported as remote: \(seen.numbers.prefix(10))")
        withExtendedLifetime(token) {}
    }
}

/// A value behind a lock, for the tests' threads.
final class TestFlag<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
}

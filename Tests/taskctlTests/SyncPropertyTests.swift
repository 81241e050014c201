import Foundation
import ObjectStore
import ObjectStoreModel
import ObjectStoreSync
import Testing
@testable import taskctl

/// Replicas of taskctl's model in one process, changed at random and synced in random
/// order through one server: after a last round of syncs every replica holds the same tasks,
/// key for key, whatever the seed.
@Suite struct SyncPropertyTests {
    final class Replica {
        let coordinator: PersistentStoreCoordinator
        let context: ManagedObjectContext
        let engine: SyncEngine
        var clock: Date

        init(model: ManagedObjectModel, server: any SyncServer, start: Date, history: HistoryRetention = .all) {
            let time = Locked(start)
            coordinator = PersistentStoreCoordinator(inMemoryWith: model, clock: { time.value }, history: history)
            context = ManagedObjectContext(coordinator: coordinator)
            context.transactionAuthor = "taskctl"
            context.mergePolicy = .mergeByPropertyMemoryWins
            clock = start
            self.time = time
            engine = SyncEngine(coordinator: coordinator, mapping: TaskwarriorMapping(now: start), server: server, clock: { time.value })
        }

        let time: Locked

        func tick(_ seconds: Int) {
            clock = clock.addingTimeInterval(TimeInterval(seconds))
            time.value = clock
        }

        func tasks() throws -> [String: [String: String]] {
            let mapping = TaskwarriorMapping(now: clock)
            let fresh = ManagedObjectContext(coordinator: coordinator)
            var all: [String: [String: String]] = [:]
            for task in try mapping.allTasks(in: fresh) {
                var properties = task.properties
                // Set from each replica's own clock when a change is sent, as Taskwarrior does.
                properties["modified"] = nil
                all[task.uuid.uuidString] = properties
            }
            return all
        }
    }

    /// A value a closure reads at each call (the replica's clock).
    final class Locked: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: Date
        init(_ value: Date) { stored = value }
        var value: Date {
            get { lock.withLock { stored } }
            set { lock.withLock { stored = newValue } }
        }
    }

    /// One random change on a replica, saved.
    func change(_ replica: Replica, _ random: inout SeededRandom) throws {
        let context = replica.context
        let tasks = try context.fetch(FetchRequest(entityName: "Task"))
        let pick = tasks.isEmpty ? nil : tasks[Int(random.next() % UInt64(tasks.count))]
        func named(_ entity: String, _ name: String) throws -> ManagedObject {
            let key = try ObjectPredicate(format: "name == %@", .string(name))
            if let found = try context.fetch(FetchRequest(entityName: entity, predicate: key)).first { return found }
            let object = try context.insertObject(entityName: entity)
            try object.setValue(.string(name), forKey: "name")
            return object
        }
        switch (pick, random.next() % 9) {
        case (nil, _), (_, 0):
            let task = try context.insertObject(entityName: "Task")
            try task.setValue(.uuid(UUID()), forKey: "uuid")
            try task.setValue(.string("task \(random.next() % 1000)"), forKey: "title")
            try task.setValue(.date(replica.clock), forKey: "createdAt")
        case (let task?, 1):
            try task.setValue(.string("retitled \(random.next() % 1000)"), forKey: "title")
        case (let task?, 2):
            try task.setValue(.integer(Int64(random.next() % 4)), forKey: "priority")
        case (let task?, 3):
            try task.setValue(random.next() % 2 == 0 ? .null : .date(Date(timeIntervalSince1970: TimeInterval(1_796_000_000 + Int(random.next() % 100) * 86_400))), forKey: "dueDate")
        case (let task?, 4):
            try task.addObject(try named("Tag", "t\(random.next() % 4)"), toKey: "tags")
        case (let task?, 5):
            if let tag = try task.objects(forKey: "tags").first { try task.removeObject(tag, fromKey: "tags") }
        case (let task?, 6):
            try task.setValue(random.next() % 2 == 0 ? "done" : "deleted", forKey: "status")
            try task.setValue(.date(replica.clock), forKey: "completedAt")
        case (let task?, 7):
            try task.setObject(try named("Project", "p\(random.next() % 3)"), forKey: "project")
        case (let task?, _):
            try Annotations.add("note \(random.next() % 1000)", entry: replica.clock, to: task, in: context)
        }
        try context.save()
    }

    func run(seed: UInt64, model: ManagedObjectModel, bucket: Bool = false) throws -> (converged: Bool, detail: String, tasks: Int) {
        var random = SeededRandom(seed: seed)
        let server: any SyncServer
        if bucket {
            // TaskChampion's bucket layout, its snapshots and cleanups decided by the seed.
            let bytes = RandomBytes(seed: seed)
            server = BucketSyncServer(bucket: MemoryBucket(), key: Array(repeating: 1, count: 32), random: { bytes.next() })
        } else {
            server = MemorySyncServer()
        }
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        let replicas = (0..<3).map { index in Replica(model: model, server: server, start: start.addingTimeInterval(TimeInterval(index))) }
        for _ in 0..<24 {
            let replica = replicas[Int(random.next() % 3)]
            replica.tick(1 + Int(random.next() % 120))
            if random.next() % 3 == 0 {
                _ = try replica.engine.sync()
            } else {
                try change(replica, &random)
            }
        }
        for replica in replicas + replicas { replica.tick(1); _ = try replica.engine.sync() }
        let first = try replicas[0].tasks()
        for (index, replica) in replicas.enumerated().dropFirst() {
            let other = try replica.tasks()
            if other != first { return (false, "seed \(seed): replica \(index) differs: \(other) vs \(first)", first.count) }
        }
        return (true, "", first.count)
    }

    /// taskctl's view of a replica at its own clock, for making recurring tasks' instances.
    func app(_ replica: Replica) throws -> App {
        let now = ISO8601DateFormatter().string(from: replica.clock)
        return try App(environment: ["TASKCTL_NOW": now, "TZ": "UTC", "HOME": NSTemporaryDirectory(),
                                     "TASKCTL_STORE": NSTemporaryDirectory() + "sync-property-\(UUID().uuidString).store"], storePath: nil)
    }

    /// Makes the replica's due instances, as every taskctl command that changes something does.
    func makeInstances(_ replica: Replica) throws {
        var recorder = ChangeRecorder(command: "recurrence")
        try RecurringTasks.update(in: replica.context, app: try app(replica), recorder: &recorder)
        if replica.context.hasChanges { try replica.context.save() }
    }

    /// Three replicas add recurring tasks (weekly, daily) and mark their instances done or
    /// deleted at random, each making the instances due with every change, syncing in random
    /// order over weeks: they converge, and every series has one instance per place, whichever
    /// replicas made it (200 seeds; `SYNC_SEEDS=N`).
    @Test func threeReplicasWithRecurringTasksConvergeWithoutDuplicates() async throws {
        let model = try App.modelDirectory().currentModel()
        let seeds = UInt64(ProcessInfo.processInfo.environment["SYNC_SEEDS"].flatMap(Int.init) ?? 200)
        await onThread { outcome in
            var instances = 0
            for seed in 1...seeds {
                var random = SeededRandom(seed: seed &* 7)
                let server = MemorySyncServer(), start = Date(timeIntervalSince1970: 1_795_000_000)
                let replicas = (0..<3).map { Replica(model: model, server: server, start: start.addingTimeInterval(TimeInterval($0))) }
                for _ in 0..<20 {
                    let replica = replicas[Int(random.next() % 3)]
                    // Hours to days pass: instances fall due.
                    replica.tick(3_600 * (1 + Int(random.next() % 40)))
                    switch random.next() % 4 {
                    case 0:
                        _ = try replica.engine.sync()
                        try self.makeInstances(replica)
                    case 1:
                        let task = try replica.context.insertObject(entityName: "Task")
                        try task.setValue(.uuid(UUID()), forKey: "uuid")
                        try task.setValue(.string("series \(random.next() % 1000)"), forKey: "title")
                        try task.setValue(.date(replica.clock), forKey: "createdAt")
                        try task.setValue(.date(replica.clock.addingTimeInterval(TimeInterval(random.next() % 200_000))), forKey: "dueDate")
                        try task.setValue(.string(random.next() % 2 == 0 ? "weekly" : "daily"), forKey: "recurrence")
                        try self.makeInstances(replica)
                    default:
                        let pending = try replica.context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("status == 'pending'")))
                        guard !pending.isEmpty else { continue }
                        let task = pending[Int(random.next() % UInt64(pending.count))]
                        try task.setValue(random.next() % 3 == 0 ? "deleted" : "done", forKey: "status")
                        try task.setValue(.date(replica.clock), forKey: "completedAt")
                        var recorder = ChangeRecorder(command: "done")
                        try RecurringTasks.statusChanged(task, in: replica.context, app: try self.app(replica), recorder: &recorder)
                        try self.makeInstances(replica)
                    }
                }
                // The last rounds: each makes what is due and syncs, until all agree.
                for _ in 0..<3 {
                    for replica in replicas { replica.tick(1); _ = try replica.engine.sync(); try self.makeInstances(replica) }
                }
                for replica in replicas { replica.tick(1); _ = try replica.engine.sync() }
                let first = try replicas[0].tasks()
                for (index, replica) in replicas.enumerated().dropFirst() where try replica.tasks() != first {
                    outcome.set("seed \(seed): replica \(index) differs from replica 0")
                    return
                }
                // One instance per template and place.
                var places: [String: Int] = [:]
                for task in first.values {
                    guard let parent = task["parent"], let place = task["imask"] else { continue }
                    places[parent + " " + place, default: 0] += 1
                    instances += 1
                }
                if let twice = places.first(where: { $0.value > 1 }) {
                    outcome.set("seed \(seed): \(twice.value) instances at \(twice.key)")
                    return
                }
            }
            // Not a vacuous agreement: the replicas made instances (several a seed).
            if instances < Int(seeds) * 3 { outcome.set("only \(instances) instances in \(seeds) seeds") }
        }
    }

    /// 500 seeds (the long run: `SYNC_SEEDS=N`), three replicas, 24 random changes and
    /// syncs each, in-process with the Tasks model.
    @Test func threeReplicasConvergeWhateverTheChangesAndTheirOrder() async throws {
        let model = try App.modelDirectory().currentModel()
        let seeds = UInt64(ProcessInfo.processInfo.environment["SYNC_SEEDS"].flatMap(Int.init) ?? 500)
        // On a thread of its own, awaited without holding a thread of the pool the tests
        // share: the engine waits for its server calls, which run on that pool.
        await onThread { outcome in
            var tasks = 0
            for seed in 1...seeds {
                let (converged, detail, count) = try self.run(seed: seed, model: model)
                tasks += count
                if !converged { outcome.set(detail); break }
            }
            // Not a vacuous agreement: the replicas held tasks (about four a seed).
            if tasks < Int(seeds) * 2 { outcome.set("only \(tasks) tasks in \(seeds) seeds") }
        }
    }

    /// The same through TaskChampion's bucket layout on a bucket in memory (100 seeds; with
    /// `SYNC_SEEDS=N`, N): snapshots and cleanups come at random, as on a real bucket.
    @Test func threeReplicasConvergeThroughTheBucketLayout() async throws {
        let model = try App.modelDirectory().currentModel()
        let seeds = UInt64(ProcessInfo.processInfo.environment["SYNC_SEEDS"].flatMap(Int.init) ?? 100)
        await onThread { outcome in
            var tasks = 0
            for seed in 1...seeds {
                let (converged, detail, count) = try self.run(seed: seed, model: model, bucket: true)
                tasks += count
                if !converged { outcome.set(detail); break }
            }
            if tasks < Int(seeds) * 2 { outcome.set("only \(tasks) tasks in \(seeds) seeds") }
        }
    }

    /// Bytes from a seed, for a server's random choices.
    final class RandomBytes: @unchecked Sendable {
        private let lock = NSLock()
        private var random: SeededRandom
        init(seed: UInt64) { random = SeededRandom(seed: seed &* 31) }
        func next() -> UInt8 { lock.withLock { UInt8(truncatingIfNeeded: random.next()) } }
    }

    /// A replica whose history no longer reaches back to its last sync sends every task
    /// whole, and the others end with its values. (Keys it removed meanwhile are not
    /// removed elsewhere: docs/sync.md says so.)
    @Test func historyThatNoLongerReachesTheLastSyncSendsEveryTask() async throws {
        let model = try App.modelDirectory().currentModel()
        await onThread { outcome in
            let server = MemorySyncServer(), start = Date(timeIntervalSince1970: 1_795_000_000)
            let a = Replica(model: model, server: server, start: start, history: HistoryRetention(transactions: 3))
            let b = Replica(model: model, server: server, start: start)
            var random = SeededRandom(seed: 9)
            for _ in 0..<4 { try self.change(a, &random) }
            _ = try a.engine.sync()
            _ = try b.engine.sync()
            for round in 0..<12 {
                a.tick(60)
                let tasks = try a.context.fetch(FetchRequest(entityName: "Task"))
                let task = tasks[round % tasks.count]
                try task.setValue(.string("changed \(round)"), forKey: "title")
                try task.setValue(.integer(Int64(round % 4)), forKey: "priority")
                try a.context.save()
            }
            a.tick(60)
            let report = try a.engine.sync()
            if !report.sentEverything { outcome.set("the history reached back: \(report)") }
            _ = try b.engine.sync()
            if try a.tasks() != b.tasks() { outcome.set("differ: \(try a.tasks()) vs \(try b.tasks())") }
        }
    }

    /// A replica whose clock is an hour behind stamps a change it makes after receiving
    /// another's after that one (a hybrid logical clock): its operations and the task's
    /// `modified` move forward, so Taskwarrior's "last modified" never goes back and a later
    /// edit is never ranked before the one it followed. The floor is kept in the store.
    @Test func aClockBehindStampsLaterChangesAfterWhatItReceived() async throws {
        let model = try App.modelDirectory().currentModel()
        await onThread { outcome in
            let server = MemorySyncServer(), start = Date(timeIntervalSince1970: 1_795_000_000)
            let a = Replica(model: model, server: server, start: start)
            let b = Replica(model: model, server: server, start: start.addingTimeInterval(-3600))
            let task = try a.context.insertObject(entityName: "Task")
            try task.setValue(.uuid(UUID()), forKey: "uuid")
            try task.setValue(.string("from A"), forKey: "title")
            try task.setValue(.date(a.clock), forKey: "createdAt")
            try a.context.save()
            a.tick(60)
            _ = try a.engine.sync()
            b.tick(60)
            _ = try b.engine.sync()
            // B edits after receiving A's task; B's clock says an hour earlier.
            b.tick(300)
            let mine = try #require(try b.context.fetch(FetchRequest(entityName: "Task")).first)
            try mine.setValue(.integer(3), forKey: "priority")
            try b.context.save()
            _ = try b.engine.sync()
            var versions: [[SyncOperation]] = []
            var parent = nilVersion
            while case .version(let id, _, let operations) = try server.childVersion(of: parent) {
                versions.append(operations)
                parent = id
            }
            func stamps(_ operations: [SyncOperation]) -> [SyncTimestamp] {
                operations.compactMap { if case .update(_, _, _, let time) = $0 { return time } else { return nil } }
            }
            func modified(_ operations: [SyncOperation]) -> Int64? {
                operations.lazy.compactMap { if case .update(_, "modified", let value?, _) = $0 { return Int64(value) } else { return nil } }.first
            }
            guard versions.count == 2, let fromA = stamps(versions[0]).max(), let fromB = stamps(versions[1]).min(),
                  let modifiedB = modified(versions[1]) else {
                outcome.set("unexpected versions: \(versions)")
                return
            }
            if !(fromB > fromA) { outcome.set("B's change is stamped \(fromB), before A's \(fromA) that it followed") }
            if modifiedB < fromA.seconds { outcome.set("modified went back: \(fromA) -> \(modifiedB)") }
            // Without the floor the stamps would have gone back by the clock's hour.
            if fromB.seconds > Int64(start.timeIntervalSince1970) + 120 { outcome.set("stamped far past the floor: \(fromB)") }
        }
    }

    /// A sync of more than a version's megabyte reports each version sent, with the changes
    /// sent so far of all it has to send; the replica that receives them counts versions and
    /// changes as they come. taskctl draws these as its progress line.
    @Test func aLongSyncReportsItsProgress() async throws {
        let model = try App.modelDirectory().currentModel()
        await onThread { outcome in
            let server = MemorySyncServer(), start = Date(timeIntervalSince1970: 1_795_000_000)
            let a = Replica(model: model, server: server, start: start), b = Replica(model: model, server: server, start: start)
            for index in 0..<3_000 {
                let task = try a.context.insertObject(entityName: "Task")
                try task.setValue(.uuid(UUID()), forKey: "uuid")
                try task.setValue(.string("task \(index) " + String(repeating: "x", count: 300)), forKey: "title")
                try task.setValue(.date(a.clock), forKey: "createdAt")
            }
            try a.context.save()
            var sent: [SyncProgress] = [], received: [SyncProgress] = []
            let report = try a.engine.sync { sent.append($0) }
            _ = try b.engine.sync { received.append($0) }
            let total = report.operationsSent
            if report.versionsSent < 2 { outcome.set("one version only: \(report)") }
            if sent.map(\.versions) != Array(1...report.versionsSent) { outcome.set("versions sent: \(sent)") }
            if !sent.allSatisfy({ $0.phase == .sending && $0.total == total }) || sent.last?.changes != total
                || zip(sent, sent.dropFirst()).contains(where: { $0.changes >= $1.changes }) {
                outcome.set("sending: \(sent) of \(total)")
            }
            if received.map(\.versions) != Array(1...report.versionsSent) || received.last?.changes != total
                || !received.allSatisfy({ $0.phase == .receiving && $0.total == nil }) {
                outcome.set("receiving: \(received)")
            }
        }
        // The line taskctl draws: a bar of what was sent, counts of what was received.
        #expect(SyncCommand.progressLine(SyncProgress(phase: .sending, versions: 2, changes: 4_000, total: 10_000), width: 80)
                == "taskctl: sync: sending [============>                  ] 4,000 of 10,000 changes")
        #expect(SyncCommand.progressLine(SyncProgress(phase: .sending, versions: 5, changes: 10_000, total: 10_000), width: 80)
                == "taskctl: sync: sending [===============================] 10,000 of 10,000 changes")
        #expect(SyncCommand.progressLine(SyncProgress(phase: .receiving, versions: 1, changes: 1, total: nil), width: 80)
                == "taskctl: sync: received 1 change in 1 version")
    }

    /// Runs `body` on a thread of its own, awaited without holding a thread of the pool the
    /// tests share (the engine waits for its server calls, which run on that pool); what it
    /// set in the holder, or threw, fails the test.
    func onThread(_ body: @escaping @Sendable (ResultHolder) throws -> Void, sourceLocation: Testing.SourceLocation = #_sourceLocation) async {
        let outcome = ResultHolder()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                do { try body(outcome) } catch { outcome.set("\(error)") }
                done.resume()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        #expect(outcome.get() == nil, "\(outcome.get() ?? "")", sourceLocation: sourceLocation)
    }

    final class ResultHolder: @unchecked Sendable {
        private let lock = NSLock()
        private var detail: String?
        func set(_ text: String) { lock.withLock { detail = text } }
        func get() -> String? { lock.withLock { detail } }
    }
}

import Foundation
import ObjectStore
import ObjectStoreModel

/// What a sync did.
public struct SyncReport: Sendable {
    /// Versions received from the server, and the operations of theirs applied here (after
    /// dropping those a local change wins over).
    public internal(set) var versionsReceived = 0
    /// Operations of the received versions applied here.
    public internal(set) var operationsApplied = 0
    /// Versions and operations sent.
    public internal(set) var versionsSent = 0
    /// Operations sent.
    public internal(set) var operationsSent = 0
    /// Whether every local task was sent (a first sync, or history that no longer reaches
    /// back to the last sync).
    public internal(set) var sentEverything = false
    /// Whether the replica started from the server's snapshot.
    public internal(set) var startedFromSnapshot = false
    /// Whether a snapshot was sent (the server asked for one).
    public internal(set) var snapshotSent = false
    /// The server version the store is at now.
    public internal(set) var baseVersion: UUID?
    /// Values the model refused (kept where they can be), and other things worth saying.
    public internal(set) var warnings: [String] = []
}

/// How far a sync has come, reported after each version received or sent.
public struct SyncProgress: Sendable, Equatable {
    /// Which half of a sync.
    public enum Phase: Sendable, Equatable {
        /// Receiving the server's versions: how many follow is not known until the last.
        case receiving
        /// Sending the local changes, in versions of about a megabyte.
        case sending
    }

    /// The half it is in.
    public internal(set) var phase: Phase
    /// Versions received or sent so far.
    public internal(set) var versions: Int
    /// Changes (operations) received or sent so far.
    public internal(set) var changes: Int
    /// The changes to send in all (nil while receiving).
    public internal(set) var total: Int?

    package init(phase: Phase, versions: Int, changes: Int, total: Int?) {
        self.phase = phase
        self.versions = versions
        self.changes = changes
        self.total = total
    }
}

/// Where a replica stands, read from the store alone (no server is asked).
public struct SyncStatus: Sendable {
    /// The server the last sync was with (nil: never synced).
    public internal(set) var server: String?
    /// The server version the store is at (nil: none yet).
    public internal(set) var baseVersion: UUID?
    /// When the last sync ended.
    public internal(set) var lastSync: Date?
    /// Local transactions not sent yet; nil when never synced or when history no longer
    /// reaches back to the last sync (every task is sent).
    public internal(set) var unsyncedTransactions: Int?
}

/// A sync failed for a reason of the engine's own (the server's are ``SyncServerError``).
public enum SyncError: Error, Sendable, CustomStringConvertible {
    /// The server kept refusing versions: other replicas kept adding theirs.
    case tooManyConflicts(Int)
    /// The server no longer has the versions after this replica's, and no snapshot to start
    /// again from (none, or one at a version whose successors are gone too).
    case goneWithoutSnapshot(UUID)
    /// The server answered with a version this sync already had (its parent, or one before):
    /// following it would loop for ever. A server that replays versions, or a broken one.
    case versionCycle(UUID)

    /// What happened, in a sentence.
    public var description: String {
        switch self {
        case .tooManyConflicts(let tries): return "the server refused \(tries) versions in a row because other replicas added theirs; sync again"
        case .goneWithoutSnapshot(let version):
            return "the server no longer has the versions after \(version.uuidString.lowercased()) and no snapshot this replica can start again from; nothing local was lost"
        case .versionCycle(let version):
            return "the server sent version \(version.uuidString.lowercased()) again, as the child of itself or of a later version: its chain of versions loops, and following it would never end; the sync stopped, nothing local was lost"
        }
    }
}

/// Syncs a store that keeps history with a TaskChampion server, as TaskChampion's replica
/// does: the server's versions after the store's base version are applied (in saves of up to
/// about 200,000 operations, each with the last version it applied as the new base version,
/// so a crash keeps both or neither; operations a local change not yet sent wins over are
/// dropped by TaskChampion's transform), then the local changes since the last sync, read
/// from the store's history, are sent as one version (or several of about a megabyte) on
/// the latest. No store lock is held during a network call.
///
/// The engine's own saves carry the transaction author `sync` and are never sent back.
public final class SyncEngine {
    package static let author = "sync"
    /// About how large a version's operations get before the rest go in the next one.
    package static let versionBytes = 1 << 20
    static let conflictLimit = 20
    /// About how many received operations are applied in one save.
    static let receivedBatch = 200_000

    let coordinator: PersistentStoreCoordinator
    let mapping: any SyncMapping

    /// The model's entities whose objects do not travel, having no UUID attribute (the sync
    /// state's entity aside): each sync names them in its report's warnings too.
    ///
    /// ```swift
    /// let engine = try SyncEngine(coordinator: coordinator, remote: remote)
    /// print(engine.entitiesNotSynced)   // ["Draft"]: drafts stay on this machine
    /// ```
    public var entitiesNotSynced: [String] { mapping.entitiesNotSynced }
    let server: any SyncServer
    let clock: () -> Date

    /// `clock` stamps what a first sync sends (local edits carry their transaction's time).
    package init(coordinator: PersistentStoreCoordinator, mapping: any SyncMapping, server: any SyncServer, clock: @escaping () -> Date = Date.init) {
        self.coordinator = coordinator
        self.mapping = mapping
        self.server = server
        self.clock = clock
        keepsClockFloor = coordinator.model.entity(named: mapping.stateEntity.name)?.properties.contains { $0.name == "clockFloor" } ?? false
    }

    // MARK: State

    struct State {
        var server: String?
        var baseVersion: UUID?
        var syncedTransaction: Int64 = 0
        var lastSync: Date?
        /// The latest time of a change received (a hybrid logical clock's floor): local
        /// changes are stamped after it, so a replica whose clock is behind still wins with
        /// an edit it made after receiving the one it replaces.
        var clockFloor: Date?

        /// A local change's time on the hybrid clock: its own, or just after the floor.
        func stamp(_ time: SyncTimestamp) -> SyncTimestamp {
            guard let clockFloor else { return time }
            return max(time, SyncTimestamp(clockFloor.addingTimeInterval(0.000_001)))
        }
    }

    /// Whether the state entity keeps the clock's floor (an optional date `clockFloor`).
    let keepsClockFloor: Bool

    func readState(_ context: ManagedObjectContext) throws -> (State, ManagedObject?) {
        guard let object = try context.fetch(FetchRequest(entityName: mapping.stateEntity.name)).first else { return (State(), nil) }
        var state = State()
        if case .string(let text) = object["server"] { state.server = text }
        if case .uuid(let uuid) = object["baseVersion"] { state.baseVersion = uuid }
        if case .integer(let number) = object["syncedTransaction"] { state.syncedTransaction = number }
        if case .date(let date) = object["lastSync"] { state.lastSync = date }
        if keepsClockFloor, case .date(let date) = object["clockFloor"] { state.clockFloor = date }
        return (state, object)
    }

    /// Sets the state object's fields in `context` (inserting it the first time).
    func write(_ state: State, existing: ManagedObject?, in context: ManagedObjectContext) throws -> ManagedObject {
        let object = try existing ?? context.insertObject(entityName: mapping.stateEntity.name)
        try object.setValue(state.server.map(Value.string) ?? .null, forKey: "server")
        try object.setValue(state.baseVersion.map(Value.uuid) ?? .null, forKey: "baseVersion")
        try object.setValue(.integer(state.syncedTransaction), forKey: "syncedTransaction")
        try object.setValue(state.lastSync.map(Value.date) ?? .null, forKey: "lastSync")
        if keepsClockFloor { try object.setValue(state.clockFloor.map(Value.date) ?? .null, forKey: "clockFloor") }
        return object
    }

    func newContext() -> ManagedObjectContext {
        let context = ManagedObjectContext(coordinator: coordinator)
        context.transactionAuthor = Self.author
        context.name = "sync"
        context.undoManager = nil
        context.mergePolicy = .mergeByPropertyMemoryWins
        return context
    }

    /// Where the replica stands, from the store alone.
    public func status() throws -> SyncStatus {
        let context = newContext()
        let (state, _) = try readState(context)
        var status = SyncStatus(server: state.server, baseVersion: state.baseVersion, lastSync: state.lastSync)
        if state.lastSync != nil {
            let token = HistoryToken(storeIdentifier: coordinator.storeIdentifier, transactionNumber: state.syncedTransaction)
            status.unsyncedTransactions = try? coordinator.fetchHistory(after: token).filter { $0.author != Self.author }.count
        }
        return status
    }

    // MARK: Local operations

    /// The operations of the local changes after the last sync, and the transaction they
    /// reach to. Every task when never synced with this server or when history no longer
    /// reaches back (`sentEverything`).
    func localOperations(_ state: State, in context: ManagedObjectContext) throws -> (operations: [SyncOperation], through: Int64, everything: Bool) {
        let through = try coordinator.currentHistoryToken.transactionNumber
        var transactions: [HistoryTransaction]?
        // Synced with this server before: the changes since. (A store made by its first
        // sync has sent nothing, transaction 0, and is not new the next time.)
        if state.server == server.identity, state.lastSync != nil {
            let token = HistoryToken(storeIdentifier: coordinator.storeIdentifier, transactionNumber: state.syncedTransaction)
            do {
                transactions = try coordinator.fetchHistory(after: token).filter { $0.number <= through }
            } catch HistoryError.expiredToken {
                transactions = nil
            }
        }
        guard let transactions else {
            let now = state.stamp(SyncTimestamp(clock()))
            var operations: [SyncOperation] = []
            for task in try mapping.allTasks(in: context) {
                operations.append(.create(task.uuid))
                for key in task.properties.keys.sorted() {
                    operations.append(.update(task.uuid, property: key, value: task.properties[key], timestamp: now))
                }
            }
            return (operations, through, true)
        }
        let tombstones = SyncTombstones(transactions)
        // Per task: created, deleted, and each touched key with the time of its latest change.
        struct Touched {
            var created: SyncTimestamp?
            var deleted = false
            var keys: [String: SyncTimestamp] = [:]
            var latest = SyncTimestamp(seconds: 0)
        }
        var touched: [UUID: Touched] = [:]
        var order: [UUID] = []
        for transaction in transactions where transaction.author != Self.author {
            let time = state.stamp(SyncTimestamp(transaction.timestamp))
            for change in transaction.changes {
                for touch in try mapping.touches(of: change, tombstones: tombstones, in: context) {
                    if touched[touch.task] == nil { order.append(touch.task) }
                    var entry = touched[touch.task] ?? Touched()
                    switch touch.kind {
                    case .created:
                        entry.created = time
                        entry.deleted = false
                    case .deleted:
                        entry.deleted = true
                    case .keys(let keys):
                        for key in keys { entry.keys[key] = time }
                    }
                    entry.latest = max(entry.latest, time)
                    touched[touch.task] = entry
                }
            }
        }
        var operations: [SyncOperation] = []
        for uuid in order {
            guard let entry = touched[uuid] else { continue }
            if entry.deleted {
                operations.append(.delete(uuid))
                continue
            }
            // Values as the store has them now: what later transactions changed again is
            // sent once, with the time of its latest change.
            guard let properties = try mapping.task(uuid, in: context) else { continue }
            var keys = entry.keys
            if let created = entry.created {
                operations.append(.create(uuid))
                for key in properties.keys { keys[key] = max(keys[key] ?? created, created) }
            }
            if let modified = mapping.modifiedKey, !keys.isEmpty {
                keys[modified] = nil
                operations.append(.update(uuid, property: modified, value: String(entry.latest.seconds), timestamp: entry.latest))
            }
            for key in keys.keys.sorted() {
                operations.append(.update(uuid, property: key, value: properties[key], timestamp: keys[key] ?? entry.latest))
            }
        }
        return (operations, through, false)
    }

    // MARK: Sync

    /// Pulls the server's versions, then sends the local changes; again while the server
    /// refuses a version because another replica added one first.
    ///
    /// It waits for each server call on the calling thread: call it from a thread of your
    /// own (taskctl: its main thread), not from a task of Swift's concurrency pool, which
    /// runs those calls.
    public func sync(progress: ((SyncProgress) -> Void)? = nil) throws -> SyncReport {
        var report = SyncReport()
        let localOnly = mapping.entitiesNotSynced
        if !localOnly.isEmpty {
            report.warnings.append("objects of \(localOnly.joined(separator: ", ")) stay on this replica: \(localOnly.count == 1 ? "the entity has" : "these entities have") no UUID attribute to travel by (nor do relationships to them)")
        }
        let context = newContext()
        var (state, stateObject) = try readState(context)
        if state.server != server.identity {
            // Another server (or none before): its chain starts from nothing.
            state.baseVersion = nil
        }
        let local = try localOperations(state, in: context)
        report.sentEverything = local.everything
        var pending = local.operations
        var base = state.baseVersion ?? nilVersion
        // Every version this sync stood on: one coming again means the chain loops.
        var seen: Set<UUID> = [base]
        var conflicts = 0
        var receivedOperations = 0
        while true {
            // Pull.
            // Versions are applied together, up to about `receivedBatch` operations in one
            // save with the last one's id: each save checks the uniqueness of what it inserts
            // against the store, which a save per version repeated for every version.
            var received: [SyncOperation] = []
            var receivedThrough: UUID?
            func applyReceived() throws {
                guard let through = receivedThrough else { return }
                report.operationsApplied += try apply(received, version: through, pending: &pending, state: &state, stateObject: &stateObject, context: context, report: &report)
                received = []
                receivedThrough = nil
            }
            pullLoop: while true {
                let child = try server.childVersion(of: base)
                switch child {
                case .upToDate:
                    try applyReceived()
                    break pullLoop
                case .version(let id, _, let operations):
                    guard id != nilVersion, seen.insert(id).inserted else {
                        try applyReceived()
                        throw SyncError.versionCycle(id)
                    }
                    received += operations
                    receivedOperations += operations.count
                    receivedThrough = id
                    report.versionsReceived += 1
                    base = id
                    progress?(SyncProgress(phase: .receiving, versions: report.versionsReceived, changes: receivedOperations, total: nil))
                    if received.count >= Self.receivedBatch { try applyReceived() }
                case .gone:
                    try applyReceived()
                    // Once per sync: a server whose snapshot is at a version it no longer
                    // continues would send the replica round in a circle.
                    guard !report.startedFromSnapshot else { throw SyncError.goneWithoutSnapshot(base) }
                    guard let snapshot = try server.latestSnapshot() else {
                        throw SyncError.goneWithoutSnapshot(base)
                    }
                    if base != nilVersion {
                        report.warnings.append("the server no longer has the versions after this replica's: started again from its snapshot and sent every local task")
                        // Every local task goes again, over what the snapshot says.
                        var fresh = State()
                        fresh.clockFloor = state.clockFloor
                        let everything = try localOperations(fresh, in: context)
                        pending = everything.operations
                        report.sentEverything = true
                    }
                    try applySnapshot(snapshot.tasks, version: snapshot.version, pending: pending, state: &state, stateObject: &stateObject, context: context, report: &report)
                    report.startedFromSnapshot = true
                    base = snapshot.version
                    seen.insert(base)
                }
            }
            // Push.
            if pending.isEmpty {
                state.syncedTransaction = max(state.syncedTransaction, local.through)
                state.server = server.identity
                state.baseVersion = base == nilVersion ? nil : base
                state.lastSync = clock()
                stateObject = try write(state, existing: stateObject, in: context)
                try context.save()
                report.baseVersion = state.baseVersion
                return report
            }
            var batch: [SyncOperation] = []
            var bytes = 0
            for operation in pending {
                bytes += operation.estimatedSize
                batch.append(operation)
                if bytes >= Self.versionBytes { break }
            }
            let parent = base
            let sent = batch
            switch try server.addVersion(parent: parent, operations: sent) {
            case .added(let id, let urgency):
                pending.removeFirst(batch.count)
                base = id
                seen.insert(id)
                report.versionsSent += 1
                report.operationsSent += batch.count
                progress?(SyncProgress(phase: .sending, versions: report.versionsSent, changes: report.operationsSent, total: report.operationsSent + pending.count))
                state.server = server.identity
                state.baseVersion = id
                if pending.isEmpty {
                    state.syncedTransaction = max(state.syncedTransaction, local.through)
                    state.lastSync = clock()
                }
                stateObject = try write(state, existing: stateObject, in: context)
                try context.save()
                if pending.isEmpty {
                    if urgency != .none {
                        let tasks = try mapping.allTasks(in: context).map { task in
                            (uuid: task.uuid, properties: task.properties.keys.sorted().map { (key: $0, value: task.properties[$0] ?? "") })
                        }
                        try server.addSnapshot(version: id, tasks: tasks)
                        report.snapshotSent = true
                    }
                    report.baseVersion = id
                    return report
                }
            case .conflict:
                conflicts += 1
                if conflicts >= Self.conflictLimit { throw SyncError.tooManyConflicts(conflicts) }
            }
        }
    }

    /// Applies versions of the server, the last of them `version`: their operations
    /// transformed against the local ones not yet sent (which are transformed in turn), in
    /// one save with the new base version. Returns how many operations were applied.
    func apply(_ operations: [SyncOperation], version: UUID, pending: inout [SyncOperation], state: inout State,
               stateObject: inout ManagedObject?, context: ManagedObjectContext, report: inout SyncReport) throws -> Int {
        var surviving: [SyncOperation] = []
        for operation in operations {
            if case .update(_, _, _, let timestamp) = operation {
                let date = timestamp.date
                if date > (state.clockFloor ?? .distantPast) { state.clockFloor = date }
            }
            var serverOperation: SyncOperation? = operation
            var transformed: [SyncOperation] = []
            transformed.reserveCapacity(pending.count)
            for localOperation in pending {
                guard let current = serverOperation else {
                    transformed.append(localOperation)
                    continue
                }
                let (server, local) = SyncOperation.transform(current, localOperation)
                serverOperation = server
                if let local { transformed.append(local) }
            }
            pending = transformed
            if let serverOperation { surviving.append(serverOperation) }
        }
        // Each task's keys after the version, from what the store has.
        var tasks: [UUID: [String: String]?] = [:]
        var order: [UUID] = []
        for operation in surviving {
            let uuid = operation.task
            if tasks[uuid] == nil {
                tasks[uuid] = .some(try mapping.task(uuid, in: context))
                order.append(uuid)
            }
            switch operation {
            case .create:
                if tasks[uuid] == .some(nil) { tasks[uuid] = .some([:]) }
            case .delete:
                tasks[uuid] = .some(nil)
            case .update(_, let property, let value, _):
                // An update of a task this replica does not have is ignored, as TaskChampion does.
                if case .some(.some(var properties)) = tasks[uuid] {
                    properties[property] = value
                    tasks[uuid] = .some(properties)
                }
            }
        }
        for uuid in order {
            guard let properties = tasks[uuid] else { continue }
            report.warnings += try mapping.write(properties, for: uuid, in: context)
        }
        report.warnings += try mapping.finishWrites(in: context)
        state.baseVersion = version
        state.server = server.identity
        stateObject = try write(state, existing: stateObject, in: context)
        try context.save()
        return surviving.count
    }

    /// Makes the store's tasks what a snapshot says, except for keys a local operation not
    /// yet sent changes (those are sent after it), in one save with the snapshot's version.
    func applySnapshot(_ snapshot: [(uuid: UUID, properties: [(key: String, value: String)])], version: UUID, pending: [SyncOperation],
                       state: inout State, stateObject: inout ManagedObject?, context: ManagedObjectContext, report: inout SyncReport) throws {
        var localKeys: [UUID: Set<String>] = [:]
        var localDeletes: Set<UUID> = []
        for operation in pending {
            switch operation {
            case .update(let uuid, let property, _, _): localKeys[uuid, default: []].insert(property)
            case .delete(let uuid): localDeletes.insert(uuid)
            case .create: break
            }
        }
        for task in snapshot where !localDeletes.contains(task.uuid) {
            let mine = localKeys[task.uuid] ?? []
            let current = try mapping.task(task.uuid, in: context)
            var properties: [String: String] = [:]
            for (key, value) in task.properties where !mine.contains(key) { properties[key] = value }
            for key in mine { properties[key] = current?[key] }
            report.warnings += try mapping.write(properties, for: task.uuid, in: context)
            report.operationsApplied += 1
        }
        report.warnings += try mapping.finishWrites(in: context)
        state.baseVersion = version
        state.server = server.identity
        stateObject = try write(state, existing: stateObject, in: context)
        try context.save()
    }
}

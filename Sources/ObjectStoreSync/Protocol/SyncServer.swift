import Foundation

/// Where a replica's versions live: TaskChampion's chain of versions, each a batch of
/// operations after its parent, and snapshots of every task. ``HTTPSyncServer`` speaks to
/// a sync server; the engine sees only this.
package protocol SyncServer: Sendable {
    /// A description for messages and for telling servers apart (a URL and a client): a
    /// replica that syncs with another server starts over.
    var identity: String { get }
    /// Sends a version after `parent` (the nil UUID for the first).
    func addVersion(parent: UUID, operations: [SyncOperation]) async throws -> AddVersionResult
    /// The version after `parent`.
    func childVersion(of parent: UUID) async throws -> ChildVersion
    /// Sends a snapshot of every task as of `version`.
    func addSnapshot(version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])]) async throws
    /// The server's latest snapshot and its version, or nil when it has none.
    func latestSnapshot() async throws -> (version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])])?
}

/// What the server answered to a new version.
package enum AddVersionResult: Sendable, Equatable {
    /// Accepted as the new latest version; the server may ask for a snapshot.
    case added(UUID, snapshot: SnapshotUrgency)
    /// Refused: the latest version is another one (sync what it has, then try again).
    case conflict(expectedParent: UUID)
}

/// How much the server wants a snapshot (TaskChampion's `X-Snapshot-Request`).
package enum SnapshotUrgency: Sendable, Equatable {
    case none, low, high
}

/// The version after a given one.
package enum ChildVersion: Sendable, Equatable {
    case version(id: UUID, parent: UUID, operations: [SyncOperation])
    /// The given version is the latest.
    case upToDate
    /// The server no longer has what follows the given version (410): the replica must
    /// start again from a snapshot.
    case gone
}

/// The UUID of no version: the parent of a chain's first version.
package let nilVersion = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

/// Bounds on what a sync server may make a replica read.
package enum SyncLimits {
    /// The largest answer (a version, a snapshot, a listing) a sync takes from a server, or
    /// file it reads from a git remote: 1 GiB, as much as a version may hold once
    /// decompressed. A larger one is refused, named, not buffered.
    package static let answerBytes = 1 << 30
}

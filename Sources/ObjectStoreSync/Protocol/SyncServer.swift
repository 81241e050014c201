import Foundation

/// Where a replica's versions live, as TaskChampion's `Server` trait has it: a chain of
/// versions, each a batch of operations after its parent, and snapshots of every task.
/// The sync server, S3 buckets and git repositories of ``SyncRemote`` are servers; a server
/// of your own (another storage, a test double) is given with
/// ``SyncRemote/custom(identity:open:)``. The engine sees only this.
///
/// A server is synchronous: the engine calls it on the thread that syncs (for
/// the `async` form of ``SyncEngine/sync(progress:)-9bb1l``, a thread of its own), and it may block
/// that thread while it waits for the network. A version's operations are the server's to
/// keep private (the servers of ``SyncRemote`` seal them with the encryption secret).
///
/// ```swift
/// final class RecordingServer: SyncServer, @unchecked Sendable {
///     let inner: any SyncServer
///     init(_ inner: any SyncServer) { self.inner = inner }
///     var identity: String { inner.identity }
///     func addVersion(parent: UUID, operations: [SyncOperation]) throws -> AddVersionResult {
///         print("sending \(operations.count) operations")
///         return try inner.addVersion(parent: parent, operations: operations)
///     }
///     func childVersion(of parent: UUID) throws -> ChildVersion { try inner.childVersion(of: parent) }
///     func addSnapshot(version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])]) throws {
///         try inner.addSnapshot(version: version, tasks: tasks)
///     }
///     func latestSnapshot() throws -> (version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])])? {
///         try inner.latestSnapshot()
///     }
/// }
/// ```
public protocol SyncServer: Sendable {
    /// A description for messages and for telling servers apart (a URL and a client): a
    /// replica that syncs with another server starts over.
    var identity: String { get }
    /// Sends a version after `parent` (the nil UUID, all zeros, for the first): added as the
    /// new latest version, or refused because the latest is another one.
    func addVersion(parent: UUID, operations: [SyncOperation]) throws -> AddVersionResult
    /// The version after `parent` (the nil UUID: the first), ``ChildVersion/upToDate`` when
    /// `parent` is the latest, or ``ChildVersion/gone`` when the server no longer has it.
    func childVersion(of parent: UUID) throws -> ChildVersion
    /// Sends a snapshot of every task as of `version`.
    func addSnapshot(version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])]) throws
    /// The server's latest snapshot and its version, or nil when it has none.
    func latestSnapshot() throws -> (version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])])?
}

/// What the server answered to a new version.
public enum AddVersionResult: Sendable, Equatable {
    /// Accepted as the new latest version; the server may ask for a snapshot.
    case added(UUID, snapshot: SnapshotUrgency)
    /// Refused: the latest version is another one (sync what it has, then try again).
    case conflict(expectedParent: UUID)
}

/// How much the server wants a snapshot (TaskChampion's `X-Snapshot-Request`).
public enum SnapshotUrgency: Sendable, Equatable {
    /// No snapshot is needed.
    case none
    /// A snapshot would help (the chain since the last one is long).
    case low
    /// A snapshot is needed (there is none, or the chain is very long).
    case high
}

/// The version after a given one.
public enum ChildVersion: Sendable, Equatable {
    /// The version `id`, after `parent`, with its operations.
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

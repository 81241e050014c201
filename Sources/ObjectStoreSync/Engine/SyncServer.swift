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

extension HTTPSyncServer: SyncServer {
    package var identity: String { Self.identity(url: baseURL, clientID: clientID) }

    /// What names a server and client in the sync state (before the server is made).
    package static func identity(url: URL, clientID: UUID) -> String {
        "\(directory(url).absoluteString) client \(text(clientID))"
    }
}

/// The UUID of no version: the parent of a chain's first version.
package let nilVersion = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

/// Runs an asynchronous call to its end on the calling thread, which waits: the engine's
/// store work stays on one thread (a context is not Sendable), and no store lock is held
/// while it waits.
package func waitFor<T: Sendable>(_ call: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { box.set(.success(try await call())) } catch { box.set(.failure(error)) }
        done.signal()
    }
    done.wait()
    return try box.get()
}

private final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<T, any Error>?

    func set(_ value: Result<T, any Error>) { lock.withLock { result = value } }

    func get() throws -> T {
        guard let result = lock.withLock({ result }) else { throw SyncServerError.badResponse(url: "", reason: "no answer") }
        return try result.get()
    }
}

/// Bounds on what a sync server may make a replica read.
package enum SyncLimits {
    /// The largest answer (a version, a snapshot, a listing) a sync takes from a server, or
    /// file it reads from a git remote: 1 GiB, as much as a version may hold once
    /// decompressed. A larger one is refused, named, not buffered.
    package static let answerBytes = 1 << 30
}

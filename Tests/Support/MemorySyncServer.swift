// Shared by ObjectStoreSyncTests and taskctlTests (each target has a symbolic link to this file).
import Foundation
import ObjectStoreSync

/// A sync server in memory with the sync server's rules (one chain; a version only on the
/// latest; a version it no longer has is gone), written with the public API alone, as a
/// library user writes a `SyncServer`. It never asks for a snapshot, and keeps one sent.
final class MemorySyncServer: SyncServer, @unchecked Sendable {
    private let lock = NSLock()
    private var children: [UUID: (id: UUID, operations: [SyncOperation])] = [:]
    private var latest = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    private var snapshot: (version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])])?
    private var received = 0
    let identity = "memory"

    /// How many operations the versions added so far carried.
    var operationsReceived: Int { lock.withLock { received } }

    func addVersion(parent: UUID, operations: [SyncOperation]) throws -> AddVersionResult {
        lock.withLock {
            guard parent == latest else { return .conflict(expectedParent: latest) }
            let id = UUID()
            children[parent] = (id, operations)
            latest = id
            received += operations.count
            return .added(id, snapshot: .none)
        }
    }

    func childVersion(of parent: UUID) throws -> ChildVersion {
        lock.withLock {
            guard let child = children[parent] else { return parent == latest ? .upToDate : .gone }
            return .version(id: child.id, parent: parent, operations: child.operations)
        }
    }

    func addSnapshot(version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])]) throws {
        lock.withLock { snapshot = (version, tasks) }
    }

    func latestSnapshot() throws -> (version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])])? {
        lock.withLock { snapshot }
    }
}

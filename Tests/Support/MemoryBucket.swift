// Shared by ObjectStoreSyncTests and taskctlTests (each target has a symbolic link to this file).
import Foundation
import ObjectStoreSync

/// A bucket in memory with S3's conditional writes, for the bucket layout's tests: every
/// write gets a new ETag; `beforeWrite` runs before each write (a racing replica);
/// `clock` stamps what is written.
final class MemoryBucket: ObjectBucket, @unchecked Sendable {
    private let lock = NSLock()
    private var objects: [String: (data: Data, etag: String, modified: Date)] = [:]
    private var writes = 0
    var beforeWrite: ((String) -> Void)?
    var clock: Date = Date(timeIntervalSince1970: 1_795_000_000)

    let identity = "memory bucket"

    var names: [String] { lock.withLock { objects.keys.sorted() } }

    func object(_ name: String) -> Data? { lock.withLock { objects[name]?.data } }

    /// Writes without a condition or the hook (a test's hand in the bucket).
    func set(_ name: String, _ data: Data, modified: Date? = nil) {
        lock.withLock {
            writes += 1
            objects[name] = (data, "\"\(writes)\"", modified ?? clock)
        }
    }

    func get(_ name: String) throws -> (data: Data, etag: String?)? {
        lock.withLock { objects[name].map { ($0.data, $0.etag) } }
    }

    func put(_ name: String, _ data: Data, condition: PutCondition) throws -> Bool {
        beforeWrite?(name)
        return lock.withLock {
            switch condition {
            case .always: break
            case .absent: if objects[name] != nil { return false }
            case .unchanged(let etag): if objects[name]?.etag != etag { return false }
            }
            writes += 1
            objects[name] = (data, "\"\(writes)\"", clock)
            return true
        }
    }

    func delete(_ name: String) throws {
        _ = lock.withLock { objects.removeValue(forKey: name) }
    }

    func list(prefix: String) throws -> [(name: String, modified: Date?)] {
        lock.withLock { objects.filter { $0.key.hasPrefix(prefix) }.map { ($0.key, Optional($0.value.modified)) }.sorted { $0.0 < $1.0 } }
    }
}

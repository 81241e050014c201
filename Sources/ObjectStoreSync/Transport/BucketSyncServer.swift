import Foundation

/// An object store of the kind cloud providers sell (S3 and the services that speak its
/// API): named blobs, listed by prefix, written with a condition. ``S3Bucket`` is one.
package protocol ObjectBucket: Sendable {
    /// A description for messages and for telling servers apart.
    var identity: String { get }
    /// The object's bytes and its ETag, or nil when there is no such object.
    func get(_ name: String) throws -> (data: Data, etag: String?)?
    /// Writes the object; false when `condition` did not hold (nothing was written).
    func put(_ name: String, _ data: Data, condition: PutCondition) throws -> Bool
    /// Removes the object (removing one that is not there is no error).
    func delete(_ name: String) throws
    /// The objects whose names start with `prefix`, in name order, with when each was written.
    func list(prefix: String) throws -> [(name: String, modified: Date?)]
}

/// When a write may happen.
package enum PutCondition: Sendable, Equatable {
    case always
    /// Only when no object has the name (`If-None-Match: *`).
    case absent
    /// Only when the object is still the one with this ETag (`If-Match`).
    case unchanged(etag: String)
}

/// TaskChampion's layout of a sync in a bucket (its `CloudServer`, shared by Taskwarrior 3's
/// AWS and GCP backends), so a bucket can be shared with Taskwarrior 3 replicas:
///
/// - `salt`: 16 random bytes, written once (if absent); the key is derived from the secret
///   with it;
/// - `latest`: the newest version's UUID (32 hex digits), replaced only if unchanged since
///   read (its ETag);
/// - `v-PARENT-CHILD` (32 hex digits each): a version, sealed for the child's UUID;
/// - `s-VERSION`: a snapshot, sealed for its version's UUID.
///
/// A writer puts its version and then swaps `latest`; when the swap fails (another replica
/// was first) it removes its version and names the latest one, as a 409 would. Now and then
/// (about one write in twenty, and after a read that met leftovers) versions that are not on
/// the chain, snapshots before the newest, and versions over half a year old before it are
/// removed, as TaskChampion does.
package final class BucketSyncServer: SyncServer, @unchecked Sendable {
    package let bucket: any ObjectBucket
    let cryptor: SyncCryptor
    let random: @Sendable () -> UInt8
    let now: @Sendable () -> Date
    private let lock = NSLock()
    private var cleanupChance: UInt8 = BucketSyncServer.defaultCleanupChance

    static let latestName = "latest"
    static let saltName = "salt"
    /// A cleanup after about 5% of the versions added (13 of 256).
    static let defaultCleanupChance: UInt8 = 13
    /// Versions older than this are removed once a snapshot follows them.
    static let maximumVersionAge: TimeInterval = 3600 * 24 * 180

    package var identity: String { bucket.identity }

    /// The sync in `bucket` with the key derived from its ``salt(in:)``; `random` gives the
    /// bytes that decide cleanups and snapshot requests.
    package init(bucket: any ObjectBucket, key: [UInt8], random: @escaping @Sendable () -> UInt8 = { UInt8.random(in: 0...255) },
                 now: @escaping @Sendable () -> Date = { Date() }) {
        self.bucket = bucket
        self.cryptor = SyncCryptor(key: key)
        self.random = random
        self.now = now
    }

    /// The bucket's salt; the first replica to ask writes one (only if no other did first).
    package static func salt(in bucket: any ObjectBucket) throws -> [UInt8] {
        for _ in 0..<5 {
            if let salt = try bucket.get(saltName) { return Array(salt.data) }
            var generator = SystemRandomNumberGenerator()
            let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try bucket.put(saltName, Data(salt), condition: .absent)
        }
        throw SyncServerError.badResponse(url: bucket.identity, reason: "its salt object was written but cannot be read back")
    }

    // MARK: Names

    static func simple(_ uuid: UUID) -> String { GitSyncServer.simple(uuid) }

    static func versionName(_ parent: UUID, _ child: UUID) -> String { "v-\(simple(parent))-\(simple(child))" }

    /// `(parent, child)` of a `v-PARENT-CHILD` name.
    static func parseVersionName(_ name: String) -> (parent: UUID, child: UUID)? {
        let utf8 = Array(name.utf8)
        guard utf8.count == 2 + 32 + 1 + 32, name.hasPrefix("v-"), utf8[34] == UInt8(ascii: "-") else { return nil }
        let body = name.dropFirst(2)
        guard let parent = GitSyncServer.uuid(simple: body.prefix(32)), let child = GitSyncServer.uuid(simple: body.suffix(32)) else { return nil }
        return (parent, child)
    }

    static func snapshotName(_ version: UUID) -> String { "s-\(simple(version))" }

    static func parseSnapshotName(_ name: String) -> UUID? {
        guard name.utf8.count == 34, name.hasPrefix("s-") else { return nil }
        return GitSyncServer.uuid(simple: name.dropFirst(2))
    }

    /// A UUID written as 32 hex digits or in the usual form.
    static func parseUUID(_ data: Data) -> UUID? {
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.count == 32 ? GitSyncServer.uuid(simple: Substring(text)) : UUID(uuidString: text)
    }

    // MARK: The chain

    func latest() throws -> UUID? {
        guard let object = try bucket.get(Self.latestName) else { return nil }
        guard let uuid = Self.parseUUID(object.data) else {
            throw SyncServerError.badResponse(url: identity, reason: "its 'latest' object holds no version UUID")
        }
        return uuid
    }

    func children(of parent: UUID) throws -> [UUID] {
        try bucket.list(prefix: "v-\(Self.simple(parent))-").compactMap { Self.parseVersionName($0.name)?.child }
    }

    /// Writes `new` under `name` only if it still holds `expected` (nothing: absent).
    func compareAndSwap(_ name: String, expected: Data?, new: Data) throws -> Bool {
        let current = try bucket.get(name)
        guard let current else {
            return expected == nil ? try bucket.put(name, new, condition: .absent) : false
        }
        guard let expected, current.data == expected else { return false }
        guard let etag = current.etag else {
            throw SyncServerError.badResponse(url: identity, reason: "the bucket gave no ETag for '\(name)', which a safe replacement needs")
        }
        return try bucket.put(name, new, condition: .unchanged(etag: etag))
    }

    // MARK: SyncServer

    package func addVersion(parent: UUID, operations: [SyncOperation]) throws -> AddVersionResult {
        let latest = try latest()
        if let latest, latest != parent { return .conflict(expectedParent: latest) }
        let child = UUID()
        let name = Self.versionName(parent, child)
        let sealed = cryptor.seal(SyncVersion.encode(operations), version: child)
        guard try bucket.put(name, Data(sealed), condition: .always) else {
            throw SyncServerError.badResponse(url: identity, reason: "the bucket refused to write \(name)")
        }
        let old = latest.map { Data(Self.simple($0).utf8) }
        guard try compareAndSwap(Self.latestName, expected: old, new: Data(Self.simple(child).utf8)) else {
            // Another replica moved `latest` first: this version is not on the chain.
            try bucket.delete(name)
            return .conflict(expectedParent: try self.latest() ?? nilVersion)
        }
        try? maybeCleanUp()
        return .added(child, snapshot: try snapshotUrgency())
    }

    package func childVersion(of parent: UUID) throws -> ChildVersion {
        let children = try children(of: parent)
        let latest = try latest()
        var chosen: UUID?
        if !children.isEmpty {
            // Leftovers of a writer that lost the swap: clean up soon.
            if children.count > 1 { lock.withLock { cleanupChance = 255 } }
            chosen = children.first { $0 == latest }
            if chosen == nil {
                for child in children where !(try self.children(of: child)).isEmpty { chosen = child }
            }
        }
        guard let child = chosen, let object = try bucket.get(Self.versionName(parent, child)) else {
            // Nothing follows `parent`: the replica is up to date when it is the latest,
            // else what followed it was removed (after a snapshot), as a 410 says.
            return latest == nil || latest == parent ? .upToDate : .gone
        }
        let operations = try cryptor.open(Array(object.data), version: child, naming: child, blob: Self.versionName(parent, child), server: identity, SyncVersion.decode)
        return .version(id: child, parent: parent, operations: operations)
    }

    package func addSnapshot(version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])]) throws {
        let sealed = cryptor.seal(SyncSnapshot.encode(tasks), version: version)
        guard try bucket.put(Self.snapshotName(version), Data(sealed), condition: .always) else {
            throw SyncServerError.badResponse(url: identity, reason: "the bucket refused to write \(Self.snapshotName(version))")
        }
    }

    package func latestSnapshot() throws -> (version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])])? {
        guard let version = try bucket.list(prefix: "s-").lazy.compactMap({ Self.parseSnapshotName($0.name) }).first,
              let object = try bucket.get(Self.snapshotName(version)) else { return nil }
        return (version, try cryptor.open(Array(object.data), version: version, naming: version, blob: Self.snapshotName(version), server: identity, SyncSnapshot.decode))
    }

    /// TaskChampion's rule for buckets: urgently while there is no snapshot, else now and
    /// then (2 in 256 urgently, 23 in 256 when convenient).
    func snapshotUrgency() throws -> SnapshotUrgency {
        if try bucket.list(prefix: "s-").allSatisfy({ Self.parseSnapshotName($0.name) == nil }) { return .high }
        let byte = random()
        return byte < 2 ? .high : byte < 25 ? .low : .none
    }

    // MARK: Cleanup

    func maybeCleanUp() throws {
        let chance = lock.withLock { cleanupChance }
        guard random() < chance else { return }
        lock.withLock { cleanupChance = Self.defaultCleanupChance }
        try cleanUp()
    }

    /// Removes versions that are not on the chain to `latest`, snapshots but the newest on
    /// it, and versions before that snapshot written over half a year ago.
    package func cleanUp() throws {
        var versions: [(child: UUID, parent: UUID, modified: Date?)] = []
        for object in try bucket.list(prefix: "v-") {
            if let (parent, child) = Self.parseVersionName(object.name) { versions.append((child, parent, object.modified)) }
        }
        var parentOf: [UUID: UUID] = [:]
        for version in versions { parentOf[version.child] = version.parent }
        let latest = try latest()
        var chain: [UUID: UUID] = [:]
        if var current = latest {
            while let parent = parentOf[current] {
                chain[current] = parent
                current = parent
                guard chain.count <= versions.count else {
                    throw SyncServerError.badResponse(url: identity, reason: "its versions form a cycle")
                }
            }
        }
        for version in versions where chain[version.child] != version.parent && version.parent != latest {
            try bucket.delete(Self.versionName(version.parent, version.child))
        }
        let snapshots = Set(try bucket.list(prefix: "s-").compactMap { Self.parseSnapshotName($0.name) })
        var newestSnapshot: UUID?
        if var version = latest {
            while true {
                if snapshots.contains(version) { newestSnapshot = version; break }
                guard let parent = chain[version] else { break }
                version = parent
            }
        }
        guard let newestSnapshot else { return }
        for snapshot in snapshots where snapshot != newestSnapshot {
            try bucket.delete(Self.snapshotName(snapshot))
        }
        let threshold = now().addingTimeInterval(-Self.maximumVersionAge)
        let old = Set(versions.filter { ($0.modified ?? .distantFuture) < threshold }.map(\.child))
        var version = newestSnapshot
        while let parent = chain[version] {
            if old.contains(version) { try bucket.delete(Self.versionName(parent, version)) }
            version = parent
        }
    }
}

import Foundation
import ObjectStore
import ObjectStoreModel

/// Where a store's replicas meet: a TaskChampion sync server, an S3 bucket or a git
/// repository, with the encryption secret every replica shares. The server sees only
/// encrypted versions of the changes.
///
/// ```swift
/// let remote = SyncRemote.server(url: serverURL, clientID: clientID, encryptionSecret: secret,
///                                transport: .urlSession)
/// ```
///
/// The key is derived from the secret with PBKDF2 (600,000 rounds, about 0.4 s); give
/// `keyCache`, a file of its own that only the user can read, to derive it once.
public struct SyncRemote: Sendable {
    /// What names the remote in the sync state: a replica that syncs with another starts over.
    let identity: String
    /// Opens it (a bucket's salt read, a clone made): at the first sync, not before.
    let open: @Sendable () throws -> any SyncServer

    init(identity: String, open: @escaping @Sendable () throws -> any SyncServer) {
        self.identity = identity
        self.open = open
    }

    /// A server of your own (``SyncServer``): `identity` names it in the sync state (a
    /// replica that syncs with a remote of another identity starts over), and `open` makes
    /// it at the first sync.
    ///
    /// ```swift
    /// let recorded = SyncRemote.custom(identity: "recorded " + inner.identity) { RecordingServer(inner) }
    /// ```
    public static func custom(identity: String, open: @escaping @Sendable () throws -> any SyncServer) -> SyncRemote {
        SyncRemote(identity: identity, open: open)
    }

    static func key(_ secret: String, salt: [UInt8], cache: URL?) -> [UInt8] {
        if let cache { return DerivedKeyCache.key(secret: Array(secret.utf8), salt: salt, at: cache) }
        return SyncCryptor(secret: Array(secret.utf8), salt: salt).key
    }

    /// A TaskChampion sync server (taskchampion-sync-server, the one Taskwarrior 3 syncs
    /// with): `clientID` names the task list on it, the same on every replica.
    public static func server(url: URL, clientID: UUID, encryptionSecret: String, keyCache: URL? = nil, transport: SyncTransport) -> SyncRemote {
        SyncRemote(identity: HTTPSyncServer.identity(url: url, clientID: clientID)) {
            let key = key(encryptionSecret, salt: HTTPSyncServer.salt(of: clientID), cache: keyCache)
            return HTTPSyncServer(url: url, clientID: clientID, cryptor: SyncCryptor(key: key), transport: transport.base)
        }
    }

    /// An S3 bucket (Amazon S3, or an S3-compatible service at `endpoint`) used for nothing
    /// else, in TaskChampion's bucket layout. Requests are signed with AWS Signature Version 4
    /// with the access key; the bucket goes in the host name unless `forcePathStyle` (or the
    /// endpoint is an IP address or `localhost`).
    public static func bucket(_ name: String, region: String? = nil, endpoint: URL? = nil, forcePathStyle: Bool = false,
                              accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil,
                              encryptionSecret: String, keyCache: URL? = nil, transport: SyncTransport) -> SyncRemote {
        let bucket = S3Bucket(bucket: name, region: region, endpoint: endpoint, forcePathStyle: forcePathStyle,
                              credentials: AWSCredentials(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey, sessionToken: sessionToken),
                              transport: transport.base)
        return SyncRemote(identity: bucket.identity) {
            let salt = try BucketSyncServer.salt(in: bucket)
            return BucketSyncServer(bucket: bucket, key: key(encryptionSecret, salt: salt, cache: keyCache))
        }
    }

    /// A git repository in TaskChampion's git layout, through the `git` program: this
    /// replica's clone at `localPath` (made when missing), pushed to `remote` (none: the
    /// clone is the only copy) on `branch`.
    public static func git(localPath: URL, remote: String?, branch: String = "main", encryptionSecret: String, keyCache: URL? = nil) -> SyncRemote {
        let identity = GitSyncServer.identity(localPath: localPath, remote: remote, branch: branch)
        return SyncRemote(identity: identity) {
            do {
                return try GitSyncServer(localPath: localPath, remote: remote, branch: branch) { salt in
                    key(encryptionSecret, salt: salt, cache: keyCache)
                }
            } catch let error as SyncServerError {
                throw error
            } catch {
                throw SyncServerError.unreachable(url: identity, reason: "cannot open the git repository at \(localPath.path): \(error.localizedDescription)")
            }
        }
    }
}

/// How a sync sends HTTP requests. ObjectStoreSync itself does no networking (a program
/// linking it does not load Foundation's networking and libcurl); `.urlSession`, from
/// ObjectStoreSyncNetworking, sends them with URLSession.
public struct SyncTransport: Sendable {
    let base: any HTTPTransport

    /// Requests sent through `base`, a transport of your own (a proxy, a recording, a helper
    /// process).
    public init(_ base: any HTTPTransport) {
        self.base = base
    }
}

extension SyncEngine {
    /// An engine that syncs the store of `coordinator` with `remote`, every object of each
    /// entity with a UUID attribute named `uuidAttribute` (marked `"preserveValueOnDeletion":
    /// true`, so a deletion can name the object) as one TaskChampion task: its attributes as
    /// text, a to-one relationship as the other object's UUID, a to-many relationship as a
    /// key per object. The coordinator must keep history (its `history` option), and the
    /// model needs an entity named `stateEntity` with the attributes `server` (string),
    /// `baseVersion` (uuid), `syncedTransaction` (int64, not optional, default 0),
    /// `lastSync` (date) and `clockFloor` (date): where this replica stands, saved in the
    /// same commit as what a sync applies; and optionally `aliases` (string), where the UUIDs
    /// of objects made on two replicas with the same unique values are kept as one.
    ///
    /// The remote is opened at the first sync (a bucket's salt read, a clone made).
    ///
    /// - Throws: ``SyncMappingError`` for a store or model the sync cannot serve.
    public convenience init(coordinator: PersistentStoreCoordinator, remote: SyncRemote, stateEntity: String = "SyncState", uuidAttribute: String = "uuid") throws {
        try Self.checkState(of: coordinator, entity: stateEntity)
        let mapping = try UUIDSyncMapping(model: coordinator.model, stateEntity: SyncStateEntity(name: stateEntity), uuidAttribute: uuidAttribute)
        self.init(coordinator: coordinator, mapping: mapping, server: OpenedOnFirstUse(identity: remote.identity, open: remote.open))
    }

    /// An engine that syncs the store of `coordinator` with `remote` through a mapping of
    /// your own (``SyncMapping``, whose rules it documents): which objects are tasks and what
    /// their keys are. The store and its sync state entity (`mapping.stateEntity`) are as for
    /// the generic mapping.
    ///
    /// ```swift
    /// let generic = try UUIDSyncMapping(model: coordinator.model)
    /// let engine = try SyncEngine(coordinator: coordinator, remote: remote, mapping: DescriptionMapping(generic: generic))
    /// ```
    ///
    /// `clock` is the time the sync stamps on the changes it sends and keeps as the last
    /// sync's (a fixed clock makes a test's versions the same at every run).
    ///
    /// - Throws: ``SyncMappingError`` for a store that keeps no history, or a sync state
    ///   entity that is missing or lacks an attribute.
    public convenience init(coordinator: PersistentStoreCoordinator, remote: SyncRemote, mapping: any SyncMapping,
                            clock: @escaping () -> Date = Date.init) throws {
        try Self.checkState(of: coordinator, entity: mapping.stateEntity.name)
        self.init(coordinator: coordinator, mapping: mapping, server: OpenedOnFirstUse(identity: remote.identity, open: remote.open), clock: clock)
    }

    /// Throws unless the store keeps history and the model has the sync state's entity.
    static func checkState(of coordinator: PersistentStoreCoordinator, entity stateEntity: String) throws {
        guard coordinator.keepsHistory else {
            throw SyncMappingError(reason: "the store keeps no history, which a sync reads its local changes from: open it with the history option")
        }
        guard let state = coordinator.model.entity(named: stateEntity) else {
            throw SyncMappingError(reason: "the model has no entity \(stateEntity) to keep where the sync stands")
        }
        for (name, type) in [("server", AttributeType.string), ("baseVersion", .uuid), ("syncedTransaction", .int64), ("lastSync", .date)]
        where !state.properties.contains(where: { $0.attribute?.name == name && $0.attribute?.type == type }) {
            throw SyncMappingError(reason: "the entity \(stateEntity) needs the attribute \(name) of type \(type.rawValue)")
        }
    }

    /// Syncs (``sync(progress:)``) on a thread of its own, which waits for the network, and
    /// returns what it did: for a caller in Swift's concurrency, whose threads must not wait.
    /// One sync of an engine at a time.
    public func sync(progress: (@Sendable (SyncProgress) -> Void)? = nil) async throws -> SyncReport {
        let engine = UncheckedEngine(engine: self)
        return try await withCheckedThrowingContinuation { (done: CheckedContinuation<SyncReport, any Error>) in
            let thread = Thread {
                do { done.resume(returning: try engine.engine.sync(progress: progress.map { report in { report($0) } })) } catch { done.resume(throwing: error) }
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }
}

/// The engine handed to the thread that syncs (one sync at a time, as documented).
private struct UncheckedEngine: @unchecked Sendable {
    let engine: SyncEngine
}

/// A server opened the first time it is asked: a bucket's salt or a git clone wait for the
/// first sync. The engine calls it from one thread at a time; the lock keeps a second
/// opening out all the same.
final class OpenedOnFirstUse: SyncServer, @unchecked Sendable {
    let identity: String
    let open: @Sendable () throws -> any SyncServer
    private let lock = NSLock()
    private var server: (any SyncServer)?

    init(identity: String, open: @escaping @Sendable () throws -> any SyncServer) {
        self.identity = identity
        self.open = open
    }

    func opened() throws -> any SyncServer {
        try lock.withLock {
            if let server { return server }
            let made = try open()
            server = made
            return made
        }
    }

    func addVersion(parent: UUID, operations: [SyncOperation]) throws -> AddVersionResult {
        try opened().addVersion(parent: parent, operations: operations)
    }

    func childVersion(of parent: UUID) throws -> ChildVersion {
        try opened().childVersion(of: parent)
    }

    func addSnapshot(version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])]) throws {
        try opened().addSnapshot(version: version, tasks: tasks)
    }

    func latestSnapshot() throws -> (version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])])? {
        try opened().latestSnapshot()
    }
}

import Foundation
import Testing
@testable import ObjectStoreSync

/// AWS Signature Version 4 against the examples of Amazon's S3 documentation, and
/// TaskChampion's bucket layout on a bucket in memory.
struct BucketSyncServerTests {
    static let example = AWSCredentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    /// 2013-05-24T00:00:00Z, the examples' time.
    static let exampleDate = Date(timeIntervalSince1970: 1_369_353_600)

    func signature(_ request: HTTPRequest) throws -> String {
        var signed = request
        try AWSSignatureV4.sign(&signed, credentials: Self.example, region: "us-east-1", date: Self.exampleDate)
        #expect(signed.headers["x-amz-date"] == "20130524T000000Z")
        let authorization = try #require(signed.headers["Authorization"])
        #expect(authorization.hasPrefix("AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders="))
        return String(try #require(authorization.split(separator: "=").last))
    }

    /// Amazon's four S3 examples ("Signature Calculations for the Authorization Header"):
    /// a GET with a range, a PUT with a body and a `$` in the name, a query without a value,
    /// and a sorted query.
    @Test func signaturesMatchAmazonsExamples() throws {
        #expect(try signature(HTTPRequest(method: "GET", url: "https://examplebucket.s3.amazonaws.com/test.txt", headers: ["Range": "bytes=0-9"]))
                == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(try signature(HTTPRequest(method: "PUT", url: "https://examplebucket.s3.amazonaws.com/test%24file.text",
                                          headers: ["Date": "Fri, 24 May 2013 00:00:00 GMT", "x-amz-storage-class": "REDUCED_REDUNDANCY"],
                                          body: Data("Welcome to Amazon S3.".utf8)))
                == "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
        #expect(try signature(HTTPRequest(method: "GET", url: "https://examplebucket.s3.amazonaws.com/?lifecycle"))
                == "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")
        #expect(try signature(HTTPRequest(method: "GET", url: "https://examplebucket.s3.amazonaws.com/?prefix=J&max-keys=2"))
                == "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
        #expect(AWSSignatureV4.encode("test$file.text") == "test%24file.text" && AWSSignatureV4.encode("a b/~") == "a%20b%2F~")
    }

    /// Where a bucket's objects are: in the host name at AWS and at a named service, in the
    /// path at an address (or when asked).
    @Test func bucketURLsFollowTheSDKs() {
        func bucket(_ endpoint: String?, pathStyle: Bool = false) -> S3Bucket {
            S3Bucket(bucket: "tasks", region: "eu-west-1", endpoint: endpoint.flatMap(URL.init(string:)), forcePathStyle: pathStyle,
                     credentials: Self.example, transport: NoTransport())
        }
        #expect(bucket(nil).url("latest") == "https://tasks.s3.eu-west-1.amazonaws.com/latest")
        #expect(bucket(nil, pathStyle: true).url("latest") == "https://s3.eu-west-1.amazonaws.com/tasks/latest")
        #expect(bucket("https://r2.example.com").url("salt") == "https://tasks.r2.example.com/salt")
        #expect(bucket("http://127.0.0.1:8333").url("salt") == "http://127.0.0.1:8333/tasks/salt")
        #expect(bucket("http://localhost:9000/", pathStyle: false).url(nil, query: [("list-type", "2"), ("prefix", "v-")])
                == "http://localhost:9000/tasks/?list-type=2&prefix=v-")
    }

    struct NoTransport: HTTPTransport {
        func send(_ request: HTTPRequest) throws -> HTTPResponse { throw HTTPTransportError(reason: "no network in this test") }
    }

    static let key = PBKDF2.sha256(password: Array("secret".utf8), salt: Array(repeating: 3, count: 16), iterations: 1, length: 32)

    /// Sequence of bytes for the server's random choices.
    final class Bytes: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [UInt8]
        init(_ values: [UInt8]) { self.values = values }
        func next() -> UInt8 { lock.withLock { values.isEmpty ? 255 : values.removeFirst() } }
    }

    func server(_ bucket: MemoryBucket, random: Bytes = Bytes([]), now: Date = Date(timeIntervalSince1970: 1_795_000_000)) -> BucketSyncServer {
        BucketSyncServer(bucket: bucket, key: Self.key, random: { random.next() }, now: { now })
    }

    /// Versions are `v-PARENT-CHILD` sealed for the child, `latest` names the head, a stale
    /// parent is told the head, and a snapshot is wanted at once while there is none.
    @Test func theChainIsTaskChampionsLayout() async throws {
        let bucket = MemoryBucket()
        let salt = try BucketSyncServer.salt(in: bucket)
        #expect(salt.count == 16 && bucket.object("salt") == Data(salt))
        #expect(try BucketSyncServer.salt(in: bucket) == salt, "a second replica takes the first one's salt")

        let a = server(bucket), b = server(bucket)
        let task = UUID()
        let first: [SyncOperation] = [.create(task), .update(task, property: "description", value: "milk", timestamp: SyncTimestamp(seconds: 1_795_000_000))]
        #expect(try a.childVersion(of: nilVersion) == .upToDate)
        guard case .added(let v1, let urgency) = try a.addVersion(parent: nilVersion, operations: first) else {
            Issue.record("the first version was not added")
            return
        }
        #expect(urgency == .high, "no snapshot yet")
        let name = "v-" + String(repeating: "0", count: 32) + "-" + BucketSyncServer.simple(v1)
        #expect(bucket.names == ["latest", "salt", name])
        #expect(bucket.object("latest") == Data(BucketSyncServer.simple(v1).utf8))
        let opened = try SyncCryptor(key: Self.key).unseal(Array(try #require(bucket.object(name))), version: v1)
        #expect(try SyncVersion.decode(opened) == first)

        #expect(try b.addVersion(parent: nilVersion, operations: [.create(UUID())]) == .conflict(expectedParent: v1))
        #expect(try b.childVersion(of: nilVersion) == .version(id: v1, parent: nilVersion, operations: first))
        #expect(try b.childVersion(of: v1) == .upToDate)
        #expect(try b.childVersion(of: UUID()) == .gone)

        try b.addSnapshot(version: v1, tasks: [(task, [("description", "milk")])])
        #expect(bucket.names.contains("s-" + BucketSyncServer.simple(v1)))
        let snapshot = try #require(try a.latestSnapshot())
        #expect(snapshot.version == v1 && snapshot.tasks.first?.uuid == task)
        // With a snapshot, the random byte decides: 0-1 urgently, 2-24 when convenient.
        let decided = server(bucket, random: Bytes([255, 1, 255, 24, 255, 25]))
        var parent = v1
        var urgencies: [SnapshotUrgency] = []
        for _ in 0..<3 {
            guard case .added(let id, let urgency) = try decided.addVersion(parent: parent, operations: [.create(UUID())]) else { break }
            parent = id
            urgencies.append(urgency)
        }
        #expect(urgencies == [.high, .low, .none])

        // Another secret opens nothing, and says which version.
        let stranger = BucketSyncServer(bucket: bucket, key: Array(repeating: 9, count: 32))
        #expect(throws: SyncServerError.self) { try stranger.childVersion(of: nilVersion) }
    }

    /// A replica that loses the swap of `latest` to another removes its version and is told
    /// the other's; the chain stays one line.
    @Test func aWriterThatLosesTheSwapRemovesItsVersion() async throws {
        let bucket = MemoryBucket()
        let a = server(bucket), b = server(bucket)
        guard case .added(let v1, _) = try a.addVersion(parent: nilVersion, operations: [.create(UUID())]) else { return }
        // Just before A replaces `latest`, B adds its version (awaited: no thread waits).
        let raced = Box()
        bucket.beforeWrite = { name in
            guard name == "latest" else { return }
            bucket.beforeWrite = nil
            raced.value = try? b.addVersion(parent: v1, operations: [.create(UUID())])
        }
        let lost = try a.addVersion(parent: v1, operations: [.create(UUID())])
        guard case .added(let v2, _)? = raced.value else {
            Issue.record("the racing replica did not add its version: \(String(describing: raced.value))")
            return
        }
        #expect(lost == .conflict(expectedParent: v2))
        #expect(bucket.names.filter { $0.hasPrefix("v-") }.count == 2, "the loser's version is gone: \(bucket.names)")
        #expect(try a.childVersion(of: v1).versionID == v2)
    }

    /// A cleanup removes versions off the chain, snapshots but the newest, and versions
    /// older than half a year before the newest snapshot; a replica behind them is told
    /// they are gone and starts from the snapshot.
    @Test func cleanupKeepsTheChainAfterTheNewestSnapshot() async throws {
        let bucket = MemoryBucket()
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        let a = server(bucket, now: start)
        var chain: [UUID] = []
        var parent = nilVersion
        for _ in 0..<4 {
            guard case .added(let id, _) = try a.addVersion(parent: parent, operations: [.create(UUID())]) else { return }
            chain.append(id)
            parent = id
        }
        try a.addSnapshot(version: chain[0], tasks: [])
        try a.addSnapshot(version: chain[2], tasks: [])
        let leftover = BucketSyncServer.versionName(chain[1], UUID())
        bucket.set(leftover, Data([1, 2, 3]))
        let later = server(bucket, now: start.addingTimeInterval(BucketSyncServer.maximumVersionAge + 1))
        try later.cleanUp()
        let names = bucket.names
        #expect(!names.contains(leftover))
        #expect(!names.contains(BucketSyncServer.snapshotName(chain[0])) && names.contains(BucketSyncServer.snapshotName(chain[2])))
        #expect(names.filter { $0.hasPrefix("v-") } == [BucketSyncServer.versionName(chain[2], chain[3])], "\(names)")
        #expect(try later.childVersion(of: nilVersion) == .gone)
        #expect(try later.childVersion(of: chain[2]).versionID == chain[3])
        #expect(try later.latestSnapshot()?.version == chain[2])
    }
}

/// A result set inside the bucket's hook.
final class Box: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: AddVersionResult?
    var value: AddVersionResult? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

extension ChildVersion {
    var versionID: UUID? {
        if case .version(let id, _, _) = self { return id }
        return nil
    }
}

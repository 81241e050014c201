import Foundation
import ObjectStoreSync
import ObjectStoreSyncNetworking
import Testing
@testable import taskctl

/// `taskctl sync` through an S3 bucket in TaskChampion's layout, against SeaweedFS (a real
/// S3-compatible server: it checks every signature and honours conditional writes),
/// installed and started by the tests. One test at a time, as the other sync suites. No time
/// limit: requests are bounded by the sync's deadline and the server's start by its own wait.
@Suite(.serialized, .enabled(if: ProtocolServer.available, "needs python3 to install SeaweedFS; CI has it"))
struct S3SyncTests {
    /// The salt the tests write into each bucket first, so the key cache below holds its key.
    static let salt = Data(repeating: 5, count: 16)
    static var saltHex: String { salt.map { String(format: "%02x", $0) }.joined() }

    /// The key of the secret and that salt, derived once by Python's hashlib.
    static let keyCache: URL = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("taskctl-sync-s3-keys-\(getpid())/taskctl")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = try? RustReplica.run(ProtocolServer.python ?? "/usr/bin/python3", ["-c", SyncTests.keyScript, SyncTests.secret, "hex:" + saltHex, folder.appendingPathComponent("sync-key").path])
        return folder.deletingLastPathComponent()
    }()

    /// A started server with the tests' salt in its bucket, or nil (and why) where SeaweedFS
    /// cannot be installed; under CI it must be.
    func server() async throws -> SeaweedServer? {
        if let reason = SeaweedServer.unavailable {
            #expect(ProcessInfo.processInfo.environment["CI"] != "true", "CI must run SeaweedFS: \(reason)")
            print("skipped: \(reason)")
            return nil
        }
        let server = try await SeaweedServer.start()
        #expect(try server.bucket().put("salt", S3SyncTests.salt, condition: .absent))
        return server
    }

    /// A replica syncing through the server's bucket; `credentials` are its settings' lines.
    func replica(_ server: SeaweedServer, secret: String = SyncTests.secret, credentials: String? = nil, endpoint: URL? = nil) throws -> TaskctlRunner {
        _ = Self.keyCache
        let runner = try TaskctlRunner()
        let config = runner.directory.appendingPathComponent(".config/taskctl")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try """
            sync.aws.bucket = \(SeaweedServer.bucketName)
            sync.aws.endpoint_url = \((endpoint ?? server.endpoint).absoluteString)
            \(credentials ?? "sync.aws.access_key_id = \(SeaweedServer.accessKeyID)\nsync.aws.secret_access_key = \(SeaweedServer.secretAccessKey)")
            sync.encryption_secret = \(secret)

            """.write(to: config.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        runner.extraEnvironment["XDG_CACHE_HOME"] = Self.keyCache.path
        return runner
    }

    func objects(_ server: SeaweedServer) async throws -> [String] {
        try server.bucket().list(prefix: "").map(\.name)
    }

    /// Replicas converge through the bucket, concurrent edits follow TaskChampion's rules,
    /// every object is one of TaskChampion's, and credentials come from the settings, a
    /// profile of the shared credentials file, or the environment.
    @Test func replicasConvergeThroughAnS3Bucket() async throws {
        guard let server = try await server() else { return }
        let tests = SyncTests()
        let a = try replica(server), b = try replica(server)
        a.now = "2026-11-22T10:00:00Z"
        try a.ok("add", "Through S3", "+shop", "pri:M")
        let first = try tests.sync(a, at: "2026-11-22T10:00:00Z")
        #expect(first.contains("sent ") && first.contains("sent a snapshot"), "\(first)")
        #expect(try tests.sync(b, at: "2026-11-22T10:01:00Z").contains("received"))
        let shared = try tests.uuid(of: "Through S3", in: a)
        a.now = "2026-11-22T11:00:00Z"
        try a.ok("edit", shared, "--priority", "high", "--due", "2026-12-01")
        b.now = "2026-11-22T11:01:00Z"
        try b.ok("edit", shared, "--text", "Through S3, edited")
        try b.ok("add", "From B")
        try tests.sync(a, at: "2026-11-22T11:02:00Z")
        try tests.sync(b, at: "2026-11-22T11:03:00Z")
        try tests.sync(a, at: "2026-11-22T11:04:00Z")
        let onA = try tests.tasks(a)
        #expect(onA == (try tests.tasks(b)) && onA.count == 2)
        #expect(onA[shared]?["text"] == "\"Through S3, edited\"" && onA[shared]?["priority"] == "\"high\"")

        let names = try await objects(server)
        #expect(names.contains("salt") && names.contains("latest"))
        #expect(names.allSatisfy { ["salt", "latest"].contains($0) || $0.hasPrefix("v-") && $0.count == 67 || $0.hasPrefix("s-") && $0.count == 34 }, "\(names)")
        #expect(try a.ok("sync", "--status").contains("server: s3 \(server.endpoint.absoluteString) bucket tasks"))

        // A profile of ~/.aws/credentials, and the AWS environment variables.
        let profiled = try replica(server, credentials: "sync.aws.profile = work\nsync.aws.region = eu-west-1")
        try FileManager.default.createDirectory(at: profiled.directory.appendingPathComponent(".aws"), withIntermediateDirectories: true)
        try "[default]\naws_access_key_id = nobody\naws_secret_access_key = nothing\n\n[work]\naws_access_key_id = \(SeaweedServer.accessKeyID)\naws_secret_access_key = \(SeaweedServer.secretAccessKey)\n"
            .write(to: profiled.directory.appendingPathComponent(".aws/credentials"), atomically: true, encoding: .utf8)
        try tests.sync(profiled, at: "2026-11-22T11:05:00Z")
        #expect(try tests.tasks(profiled) == onA)
        let fromEnvironment = try replica(server, credentials: "sync.aws.default_credentials = true")
        fromEnvironment.extraEnvironment["AWS_ACCESS_KEY_ID"] = SeaweedServer.accessKeyID
        fromEnvironment.extraEnvironment["AWS_SECRET_ACCESS_KEY"] = SeaweedServer.secretAccessKey
        try tests.sync(fromEnvironment, at: "2026-11-22T11:06:00Z")
        #expect(try tests.tasks(fromEnvironment) == onA)
    }

    /// Wrong credentials, a wrong secret, replicas pushing at once, a tampered version and a
    /// server that is gone: each named, exit 3, nothing local lost, and the next sync
    /// converges.
    @Test func faultsThroughS3AreNamedAndLoseNothing() async throws {
        guard let server = try await server() else { return }
        let tests = SyncTests()
        let a = try replica(server), b = try replica(server)
        a.now = "2026-11-22T10:00:00Z"
        try a.ok("add", "First")
        try tests.sync(a, at: "2026-11-22T10:00:00Z")
        try tests.sync(b, at: "2026-11-22T10:01:00Z")

        // A wrong secret access key: S3's code, a hint, never the key itself.
        let wrongKey = try replica(server, credentials: "sync.aws.access_key_id = \(SeaweedServer.accessKeyID)\nsync.aws.secret_access_key = not-the-key-at-all")
        try wrongKey.ok("add", "Only here")
        let denied = try wrongKey.run("sync")
        #expect(denied.status == 3 && denied.err.contains("SignatureDoesNotMatch") && denied.err.contains("check the access key"), "\(denied.err)")
        #expect(!denied.err.contains("not-the-key-at-all") && !denied.out.contains("not-the-key-at-all"))
        #expect(try wrongKey.texts() == ["Only here"])

        // A wrong encryption secret: the version that does not open is named.
        let wrongSecret = try replica(server, secret: "not the secret")
        let wrongCache = wrongSecret.directory.appendingPathComponent("cache/taskctl")
        try FileManager.default.createDirectory(at: wrongCache, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = try RustReplica.run(ProtocolServer.python ?? "/usr/bin/python3", ["-c", SyncTests.keyScript, "not the secret", "hex:" + Self.saltHex, wrongCache.appendingPathComponent("sync-key").path])
        wrongSecret.extraEnvironment["XDG_CACHE_HOME"] = wrongCache.deletingLastPathComponent().path
        let refused = try wrongSecret.run("sync")
        #expect(refused.status == 3 && refused.err.contains("does not decrypt"), "\(refused.err)")

        // Two replicas push at once: one swaps `latest` first, the other pulls and retries.
        a.now = "2026-11-22T10:02:00Z"
        try a.ok("add", "From A")
        b.now = "2026-11-22T10:02:00Z"
        try b.ok("add", "From B")
        a.now = "2026-11-22T10:03:00Z"
        b.now = "2026-11-22T10:03:00Z"
        let (pa, outA, errA) = try a.start(["sync"]), (pb, outB, errB) = try b.start(["sync"])
        for (process, out, err) in [(pa, outA, errA), (pb, outB, errB)] {
            _ = out.fileHandleForReading.readDataToEndOfFile()
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(message)")
        }
        try tests.sync(a, at: "2026-11-22T10:04:00Z")
        try tests.sync(b, at: "2026-11-22T10:04:00Z")
        #expect(try a.texts().sorted() == ["First", "From A", "From B"])
        #expect(try tests.tasks(a) == tests.tasks(b))
        let versions = try await objects(server).filter { $0.hasPrefix("v-") }
        #expect(Set(versions.map { $0.dropFirst(2).prefix(32) }).count == versions.count, "one line of versions, no fork: \(versions)")

        // A version changed in the bucket: named by a replica that reads it; the others keep
        // what they have.
        let bucket = server.bucket()
        let latest = try #require(try bucket.get("latest"))
        let head = String(decoding: latest.data, as: UTF8.self)
        let headName = try #require(versions.first { $0.hasSuffix(head) })
        #expect(try bucket.put(headName, Data("tampered".utf8), condition: .always))
        let fresh = try replica(server)
        let tampered = try fresh.run("sync")
        #expect(tampered.status == 3 && tampered.err.contains("does not decrypt"), "\(tampered.err)")

        // The server gone: named; the change stays for the next sync.
        server.stop()
        b.now = "2026-11-22T10:05:00Z"
        try b.ok("add", "While down")
        let down = try b.run("sync")
        #expect(down.status == 3 && down.err.contains("cannot reach"), "\(down.err)")
        #expect(try b.run("sync", "--status").out.contains("local changes not sent: 1"))
        try b.ok("store", "check")
    }

    /// Through a proxy that fails requests: an S3 error (500) and a lost acknowledgement,
    /// of a version's object and of the swap of `latest`, each fail a sync with exit 3 and
    /// lose nothing; the next syncs send each change once and converge.
    @Test func s3ErrorsAndLostAcknowledgementsLoseNothing() async throws {
        guard let server = try await server() else { return }
        let proxy = try FaultProxy(target: server.endpoint)
        let tests = SyncTests()
        let a = try replica(server, endpoint: proxy.url), b = try replica(server, endpoint: proxy.url)
        a.now = "2026-11-22T10:00:00Z"
        try a.ok("add", "First")
        try tests.sync(a, at: "2026-11-22T10:00:00Z")
        try tests.sync(b, at: "2026-11-22T10:01:00Z")

        b.now = "2026-11-22T10:02:00Z"
        try b.ok("add", "Second")
        try proxy.control("fail-next/1")
        let failed = try b.run("sync")
        #expect(failed.status == 3 && failed.err.contains("500") && failed.err.contains("InternalError"), "\(failed.err)")
        #expect(try b.run("sync", "--status").out.contains("local changes not sent: 1"))
        try tests.sync(b, at: "2026-11-22T10:03:00Z")

        for (minute, lost) in [(4, "v-*"), (6, "latest")] {
            b.now = "2026-11-22T10:0\(minute):00Z"
            try b.ok("add", "Lost \(lost)")
            try proxy.control("lose/\(lost)/1")
            let unanswered = try b.run("sync")
            #expect(unanswered.status == 3 && unanswered.err.contains("acknowledgement lost"), "\(lost): \(unanswered.err)")
            try tests.sync(b, at: "2026-11-22T10:0\(minute + 1):00Z")
        }
        try tests.sync(a, at: "2026-11-22T10:09:00Z")
        #expect(try a.texts().sorted() == ["First", "Lost latest", "Lost v-*", "Second"])
        #expect(try tests.tasks(a) == tests.tasks(b))
        try b.ok("store", "check")
    }

    /// A sync killed at any moment (reading, writing its version, swapping `latest`,
    /// sending a snapshot, applying) leaves the store sound with every local change, the
    /// bucket with one line of versions, and the next sync converges.
    @Test func aSyncThroughS3KilledAtAnyStepLosesNothing() async throws {
        guard let server = try await server() else { return }
        let tests = SyncTests()
        let a = try replica(server), b = try replica(server)
        a.now = "2026-11-22T09:00:00Z"
        for n in 0..<40 { try a.ok("add", "Before \(n)") }
        try tests.sync(a, at: "2026-11-22T09:00:00Z")
        try tests.sync(b, at: "2026-11-22T09:01:00Z")
        try tests.killedSyncsLoseNothing(a, b, delays: [0.02, 0.05, 0.08, 0.12, 0.16, 0.2, 0.3, 0.45], already: 40)
        let versions = try await objects(server).filter { $0.hasPrefix("v-") }
        let latest = try #require(try server.bucket().get("latest"))
        let parents = Dictionary(versions.map { (String($0.suffix(32)), String($0.dropFirst(2).prefix(32))) }, uniquingKeysWith: { first, _ in first })
        var line: Set<String> = [], current = String(decoding: latest.data, as: UTF8.self)
        while let parent = parents[current], line.count <= versions.count {
            line.insert(current)
            current = parent
        }
        // One line from latest back to the first version; anything else is what a killed
        // writer left beside it (put, not swapped in), which a cleanup removes.
        #expect(current == String(repeating: "0", count: 32), "the line from latest ends at \(current)")
        #expect(parents.filter { !line.contains($0.key) }.allSatisfy { line.contains($0.value) || $0.value == current }, "\(versions)")
    }

    /// The bucket operations the layout rests on, on the real server: a write only if
    /// absent, a replacement only if unchanged, listing by prefix with times, and S3's error
    /// named for a wrong key.
    @Test func conditionalWritesHoldOnARealServer() async throws {
        guard let server = try await server() else { return }
        let bucket = server.bucket()
        #expect(try bucket.put("v-x", Data("one".utf8), condition: .absent))
        #expect(try bucket.put("v-x", Data("two".utf8), condition: .absent) == false)
        let read = try #require(try bucket.get("v-x"))
        #expect(read.data == Data("one".utf8))
        let etag = try #require(read.etag)
        #expect(try bucket.put("v-x", Data("three".utf8), condition: .unchanged(etag: etag)))
        #expect(try bucket.put("v-x", Data("four".utf8), condition: .unchanged(etag: etag)) == false)
        #expect(try bucket.get("v-x")?.data == Data("three".utf8))
        let listed = try bucket.list(prefix: "v-")
        #expect(listed.map(\.name) == ["v-x"])
        #expect(abs((listed.first?.modified ?? .distantPast).timeIntervalSinceNow) < 3600)
        try bucket.delete("v-x")
        #expect(try bucket.get("v-x") == nil)
        // A machine whose clock is 20 minutes off: S3 refuses its signatures, and says why.
        let skewed = S3Bucket(bucket: SeaweedServer.bucketName, region: nil, endpoint: server.endpoint, forcePathStyle: false,
                              credentials: AWSCredentials(accessKeyID: SeaweedServer.accessKeyID, secretAccessKey: SeaweedServer.secretAccessKey),
                              transport: URLSessionTransport(), clock: { Date().addingTimeInterval(20 * 60) })
        #expect {
            _ = try skewed.get("salt")
        } throws: { error in
            guard case SyncServerError.status(403, _, let body) = error else { return false }
            return body.contains("RequestTimeTooSkewed") && body.contains("clock is off")
        }
        let stranger = server.bucket(secretAccessKey: "wrong")
        #expect {
            _ = try stranger.get("salt")
        } throws: { error in
            guard case SyncServerError.status(403, _, let body) = error else { return false }
            return body.contains("SignatureDoesNotMatch")
        }
    }
}

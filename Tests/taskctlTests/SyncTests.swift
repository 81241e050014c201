import Foundation
import ObjectStoreSync
import ObjectStoreSyncNetworking
import Testing
@testable import taskctl

/// `taskctl sync` between replicas through a server of TaskChampion's protocol (the test
/// server in Tests/Support, started per test): replicas converge, concurrent edits follow
/// TaskChampion's rules, faults lose nothing. One test at a time: each waits on processes
/// for seconds, holding a thread of the pool every test shares. No time limit: a request's
/// wait is bounded by the sync's own deadline (`sync.timeout`), and a limit measured the
/// machine (one failed at 216 s against 60 s on a busy one).
@Suite(.serialized, .enabled(if: ProtocolServer.available, "needs python3 for the test sync server; CI has it"))
struct SyncTests {
    /// One key cache for the whole run: the key derivation (600,000 rounds) runs once per
    /// secret, not once per replica.
    static let keyCache = FileManager.default.temporaryDirectory.appendingPathComponent("taskctl-sync-keys-\(getpid())")
    static let clientID = "2b7c0f5e-1d1e-4a8e-9a55-0c7d3b1f8e21"
    static let secret = "correct horse battery staple"

    /// Writes taskctl's key cache file: the secret, the salt (`uuid:...` or `hex:...`), the file.
    static let keyScript = """
        import hashlib, hmac, os, sys, uuid
        secret, kind, value = sys.argv[1].encode(), *sys.argv[2].split(":", 1)
        salt = uuid.UUID(value).bytes if kind == "uuid" else bytes.fromhex(value)
        key = hashlib.pbkdf2_hmac("sha256", secret, salt, 600000, 32)
        fingerprint = hmac.new(secret, salt + b"objectstore key cache", hashlib.sha256).digest()
        fd = os.open(sys.argv[3], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, ("1 600000 %s %s %s\\n" % (salt.hex(), fingerprint.hex(), key.hex())).encode())
        os.close(fd)
        """

    /// The key of the secret, derived once for every test into the cache taskctl reads, by
    /// Python's hashlib (a fraction of a second; 600,000 rounds in a debug build take 9 s, and
    /// a test deriving its own held a thread other tests were waiting for). Where Python cannot,
    /// taskctl derives it itself.
    static let keyFile: URL = {
        let folder = keyCache.appendingPathComponent("taskctl")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let file = folder.appendingPathComponent("sync-key")
        _ = try? RustReplica.run(ProtocolServer.python ?? "/usr/bin/python3", ["-c", keyScript, secret, "uuid:" + clientID, file.path])
        return file
    }()

    /// The same for the git tests' repository salt (16 bytes of 7), in a cache of their own.
    static let gitSalt = Data(repeating: 7, count: 16)
    static let gitKeyCache: URL = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("taskctl-sync-git-keys-\(getpid())/taskctl")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = try? RustReplica.run(ProtocolServer.python ?? "/usr/bin/python3", ["-c", keyScript, secret, "hex:" + gitSalt.map { String(format: "%02x", $0) }.joined(), folder.appendingPathComponent("sync-key").path])
        return folder.deletingLastPathComponent()
    }()

    /// A replica: its own store and config, naming `server`.
    func replica(_ server: ProtocolServer, secret: String = SyncTests.secret, url: String? = nil) throws -> TaskctlRunner {
        _ = Self.keyFile
        let runner = try TaskctlRunner()
        let config = runner.directory.appendingPathComponent(".config/taskctl")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try """
            sync.server.url = \(url ?? server.url.absoluteString)
            sync.server.client_id = \(Self.clientID)
            sync.encryption_secret = \(secret)

            """.write(to: config.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        runner.extraEnvironment["XDG_CACHE_HOME"] = Self.keyCache.path
        return runner
    }

    /// Every task as exported, by UUID, without what is local to a replica (ids, urgency).
    func tasks(_ runner: TaskctlRunner) throws -> [String: [String: String]] {
        let result = try runner.run("export", "--all")
        #expect(result.status == 0, "export: \(result.err)")
        guard let array = try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [[String: Any]] else { return [:] }
        var byUUID: [String: [String: String]] = [:]
        for task in array {
            guard let uuid = task["uuid"] as? String else { continue }
            var fields: [String: String] = [:]
            for (key, value) in task where key != "id" && key != "urgency" {
                fields[key] = (try? String(decoding: JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]), as: UTF8.self)) ?? "\(value)"
            }
            byUUID[uuid] = fields
        }
        return byUUID
    }

    func uuid(of text: String, in runner: TaskctlRunner) throws -> String {
        let found = try runner.tasks("--all").first { $0["text"] as? String == text }
        return try #require(found?["uuid"] as? String, "no task '\(text)'")
    }

    @discardableResult
    func sync(_ runner: TaskctlRunner, at now: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        runner.now = now
        let result = try runner.run("sync")
        #expect(result.status == 0, "sync failed: \(result.err)", sourceLocation: sourceLocation)
        return result.out
    }

    /// Two replicas of one task list: A adds `words` at HOUR:00 and syncs, B syncs at HOUR:01.
    func syncedPair(_ server: ProtocolServer, adding words: String..., hour: String) throws -> (TaskctlRunner, TaskctlRunner) {
        let a = try replica(server), b = try replica(server)
        a.now = "2026-11-22T\(hour):00:00Z"
        let added = try a.run(["add"] + words)
        #expect(added.status == 0, "\(added.err)")
        try sync(a, at: "2026-11-22T\(hour):00:00Z")
        try sync(b, at: "2026-11-22T\(hour):01:00Z")
        return (a, b)
    }

    @Test func twoReplicasConvergeAndConcurrentEditsFollowTaskChampionsRules() throws {
        let server = try ProtocolServer()
        let a = try replica(server), b = try replica(server)
        a.now = "2026-11-22T10:00:00Z"
        try a.ok("add", "Buy milk", "+shop", "project:home", "due:2026-11-30", "pri:H")
        try a.ok("add", "Call mom", "loc:home")
        try a.ok("add", "Water plants")
        try a.ok("annotate", "1", "whole milk")
        #expect(try sync(a, at: "2026-11-22T10:00:00Z").contains("sent"))
        #expect(try sync(b, at: "2026-11-22T10:05:00Z").contains("received"))
        #expect(try tasks(a) == tasks(b))
        let milk = try uuid(of: "Buy milk", in: a), mom = try uuid(of: "Call mom", in: a), plants = try uuid(of: "Water plants", in: a)

        // Concurrent edits: A at 11:00, B at 11:01 (later).
        a.now = "2026-11-22T11:00:00Z"
        try a.ok("edit", milk, "--priority", "low")
        try a.ok("edit", mom, "--text", "Call mom tonight")
        try a.ok("done", plants)
        b.now = "2026-11-22T11:01:00Z"
        try b.ok("edit", milk, "--due", "2026-12-05", "--untag", "shop")
        try b.ok("edit", mom, "--text", "Call mother")
        try b.ok("edit", plants, "--text", "Water the plants")
        try b.ok("add", "New on B", "+x")
        try sync(a, at: "2026-11-22T11:02:00Z")
        try sync(b, at: "2026-11-22T11:02:00Z")
        try sync(a, at: "2026-11-22T11:03:00Z")

        let onA = try tasks(a), onB = try tasks(b)
        #expect(onA == onB)
        #expect(onA.count == 4)
        // Different fields of one task: both kept.
        #expect(onA[milk]?["priority"] == "\"low\"" && onA[milk]?["due"] == "\"2026-12-05T23:59:59Z\"")
        #expect(onA[milk]?["tags"] == "[]")
        #expect(onA[milk]?["annotations"]?.contains("whole milk") == true)
        // One field: the later change wins.
        #expect(onA[mom]?["text"] == "\"Call mother\"")
        // Done on one replica, retitled on the other: both.
        #expect(onA[plants]?["status"] == "\"done\"" && onA[plants]?["text"] == "\"Water the plants\"")
        #expect(try a.texts().contains("New on B"))
        // Nothing left to send, and the store is sound.
        #expect(try sync(a, at: "2026-11-22T11:04:00Z").contains("nothing to send"))
        try a.ok("store", "check")
        try b.ok("store", "check")
    }

    @Test func fourReplicasConvergeAfterRandomConcurrentChanges() throws {
        let server = try ProtocolServer()
        let replicas = try (0..<4).map { _ in try replica(server) }
        var random = SeededRandom(seed: 35)
        var minute = 0
        func clock() -> String {
            minute += 1
            return String(format: "2026-11-22T%02d:%02d:00Z", 8 + minute / 60, minute % 60)
        }
        for (index, replica) in replicas.enumerated() {
            replica.now = clock()
            try replica.ok("add", "Task from \(index)", "+r\(index)")
            try sync(replica, at: clock())
        }
        for _ in 0..<24 {
            let replica = replicas[Int(random.next() % 4)]
            replica.now = clock()
            let known = try replica.tasks("--all").compactMap { $0["uuid"] as? String }
            guard let target = known.isEmpty ? nil : known[Int(random.next() % UInt64(known.count))] else { continue }
            switch random.next() % 7 {
            case 0: try replica.ok("add", "Added at \(replica.now)", "pri:M")
            case 1: try replica.ok("edit", target, "--text", "Retitled at \(replica.now)")
            case 2: try replica.ok("edit", target, "--priority", ["low", "medium", "high"][Int(random.next() % 3)], "--due", "2026-12-0\(1 + random.next() % 9)")
            case 3: _ = try replica.run("done", target)
            case 4: try replica.ok("edit", target, "--tag", "t\(random.next() % 3)")
            case 5: _ = try replica.run("delete", target)
            default: try replica.ok("annotate", target, "note at \(replica.now)")
            }
            if random.next() % 3 == 0 { try sync(replica, at: clock()) }
        }
        for replica in replicas + replicas.prefix(3) { try sync(replica, at: clock()) }
        let first = try tasks(replicas[0])
        #expect(first.count >= 4)
        for replica in replicas.dropFirst() {
            let other = try tasks(replica)
            #expect(other == first, "\(first.keys.filter { first[$0] != other[$0] }.map { key in "\(key): \(first[key].map { a in a.filter { other[key]?[$0.key] != $0.value } } ?? [:]) vs \(other[key].map { b in b.filter { first[key]?[$0.key] != $0.value } } ?? [:])" })")
        }
    }

    @Test func faultsLoseNothingAndTheNextSyncConverges() throws {
        let server = try ProtocolServer()
        let (a, b) = try syncedPair(server, adding: "First", hour: "10")

        // A wrong secret: named, exit 3, the store untouched.
        let wrong = try replica(server, secret: "not the secret")
        wrong.now = "2026-11-22T10:02:00Z"
        try wrong.ok("add", "Only here")
        let before = try tasks(wrong)
        let refused = try wrong.run("sync")
        #expect(refused.status == 3)
        #expect(refused.err.contains("does not decrypt") && refused.err.contains("wrong encryption secret"))
        #expect(!refused.err.contains("not the secret") && !refused.out.contains("not the secret"))
        #expect(try tasks(wrong) == before)

        // A dead server: named, exit 3, and the change goes with the next sync.
        let dead = try replica(server, url: "http://127.0.0.1:9/")
        try FileManager.default.copyItem(at: b.store, to: dead.store)
        dead.now = "2026-11-22T10:03:00Z"
        let unreachable = try dead.run("sync")
        #expect(unreachable.status == 3 && unreachable.err.contains("cannot reach the sync server"))

        // An HTTP 500: exit 3; the local change stays unsent and goes next time.
        b.now = "2026-11-22T10:04:00Z"
        try b.ok("add", "Second")
        try server.control("fail-next/1")
        b.now = "2026-11-22T10:05:00Z"
        let failed = try b.run("sync")
        #expect(failed.status == 3 && failed.err.contains("500"))
        #expect(try b.run("sync", "--status").out.contains("local changes not sent: 1"))

        // A lost acknowledgement: the server stored the version, the replica did not hear
        // so; the next sync meets its own version and sends nothing twice.
        try server.control("lose-next/1")
        #expect(try b.run("sync").status == 3)
        try sync(b, at: "2026-11-22T10:06:00Z")
        try sync(a, at: "2026-11-22T10:07:00Z")
        #expect(try a.texts().sorted() == ["First", "Second"])
        #expect(try tasks(a) == tasks(b))
        try b.ok("store", "check")
    }

    /// A bare repository as TaskChampion's git layout starts one: `meta` with no version and
    /// the tests' salt, on branch main.
    func gitRemote(in directory: URL) throws -> URL {
        let remote = directory.appendingPathComponent("remote.git"), seed = directory.appendingPathComponent("seed")
        let git = { (arguments: [String], folder: URL) throws in
            _ = try RustReplica.run("/usr/bin/git", ["-C", folder.path, "-c", "user.email=t@t", "-c", "user.name=t"] + arguments)
        }
        try git(["init", "--bare", "-q", remote.path], directory)
        try git(["init", "-q", "-b", "main", seed.path], directory)
        try "{\"latest_version\":\"00000000000000000000000000000000\",\"salt\":\"\(Self.gitSalt.base64EncodedString())\"}".write(to: seed.appendingPathComponent("meta"), atomically: true, encoding: .utf8)
        try git(["add", "meta"], seed)
        try git(["commit", "-q", "-m", "init taskchampion repo"], seed)
        try git(["push", "-q", remote.path, "main"], seed)
        return remote
    }

    /// A replica syncing through `remote` into a clone of its own.
    func gitReplica(_ remote: URL, secret: String = SyncTests.secret) throws -> TaskctlRunner {
        let runner = try TaskctlRunner()
        let config = runner.directory.appendingPathComponent(".config/taskctl")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try """
            sync.git.local_path = \(runner.directory.appendingPathComponent("clone").path)
            sync.git.remote = \(remote.path)
            sync.encryption_secret = \(secret)

            """.write(to: config.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        runner.extraEnvironment["XDG_CACHE_HOME"] = Self.gitKeyCache.path
        return runner
    }

    /// Pushes `change` (run in a fresh checkout of `remote`'s main) as a commit.
    func commitToRemote(_ remote: URL, in directory: URL, _ change: (URL) throws -> Void) throws {
        let work = directory.appendingPathComponent("hostile-\(UUID().uuidString)")
        let git = { (arguments: [String]) throws in
            _ = try RustReplica.run("/usr/bin/git", ["-C", work.path, "-c", "user.email=t@t", "-c", "user.name=t"] + arguments)
        }
        _ = try RustReplica.run("/usr/bin/git", ["clone", "-q", "-b", "main", remote.path, work.path])
        try change(work)
        try git(["add", "-A"])
        try git(["commit", "-q", "-m", "hostile"])
        try git(["push", "-q", "origin", "main"])
    }

    /// A hostile remote whose `meta` or `snapshot` is a symbolic link out of the clone
    /// (`meta -> ../victim.txt`): the sync is refused, naming the link, and nothing outside
    /// the clone is written or read, whether the link is there at the first clone or arrives
    /// in a clone that synced before. Before, the sync wrote its meta JSON through the link.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/git"), "needs git"), arguments: ["meta", "snapshot"])
    func aLinkInTheGitRemoteIsRefusedNeverFollowed(name: String) throws {
        let folder = try TaskctlRunner()
        let remote = try gitRemote(in: folder.directory)
        // A replica that synced once, before the link arrives.
        let early = try gitReplica(remote)
        try early.ok("add", "Before the link")
        try sync(early, at: "2026-11-22T10:00:00Z")
        try commitToRemote(remote, in: folder.directory) { work in
            let file = work.appendingPathComponent(name)
            try? FileManager.default.removeItem(at: file)
            try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: "../victim.txt")
        }
        for replica in [early, try gitReplica(remote)] {
            let victim = replica.directory.appendingPathComponent("victim.txt")
            let original = "the user's own file\n"
            try original.write(to: victim, atomically: true, encoding: .utf8)
            try replica.ok("add", "After the link")
            replica.now = "2026-11-22T11:00:00Z"
            let refused = try replica.run("sync")
            #expect(refused.status == 3, "\(refused.err)")
            #expect(refused.err.contains("its \(name) is a symbolic link"), "\(refused.err)")
            #expect(try String(contentsOf: victim, encoding: .utf8) == original)
            // Nothing of the link's target was made either, where none was.
            try FileManager.default.removeItem(at: victim)
            #expect(try replica.run("sync").status == 3)
            #expect(!FileManager.default.fileExists(atPath: victim.path))
            // The clone holds no link.
            let clone = replica.directory.appendingPathComponent("clone")
            for file in try FileManager.default.contentsOfDirectory(atPath: clone.path) {
                let attributes = try FileManager.default.attributesOfItem(atPath: clone.appendingPathComponent(file).path)
                #expect(attributes[.type] as? FileAttributeType != .typeSymbolicLink, "\(file) is a link in the clone")
            }
            try replica.ok("store", "check")
        }
    }

    /// Replicas converge through a git repository in TaskChampion's layout; a wrong secret
    /// is named and changes nothing.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/git"), "needs git"))
    func replicasConvergeThroughAGitRepository() throws {
        let folder = try TaskctlRunner()
        let remote = try gitRemote(in: folder.directory)
        let a = try gitReplica(remote), b = try gitReplica(remote)
        a.now = "2026-11-22T10:00:00Z"
        try a.ok("add", "Through git", "+shop", "pri:M")
        #expect(try sync(a, at: "2026-11-22T10:00:00Z").contains("sent"))
        #expect(try sync(b, at: "2026-11-22T10:01:00Z").contains("received"))
        let shared = try uuid(of: "Through git", in: a)
        a.now = "2026-11-22T11:00:00Z"
        try a.ok("edit", shared, "--priority", "high", "--due", "2026-12-01")
        b.now = "2026-11-22T11:01:00Z"
        try b.ok("edit", shared, "--text", "Through git, edited")
        try b.ok("add", "From B")
        try sync(a, at: "2026-11-22T11:02:00Z")
        try sync(b, at: "2026-11-22T11:03:00Z")
        try sync(a, at: "2026-11-22T11:04:00Z")
        let onA = try tasks(a)
        #expect(onA == (try tasks(b)) && onA.count == 2)
        #expect(onA[shared]?["text"] == "\"Through git, edited\"" && onA[shared]?["priority"] == "\"high\"")
        // Every file in the repository is TaskChampion's: meta and v-PARENT-CHILD.
        let files = try FileManager.default.contentsOfDirectory(atPath: a.directory.appendingPathComponent("clone").path).filter { $0 != ".git" }
        #expect(files.contains("meta") && files.filter { $0.hasPrefix("v-") && $0.count == 67 }.count == files.count - 1, "\(files)")
        #expect(try a.ok("sync", "--status").contains("server: git \(remote.path) branch main"))

        let wrong = try gitReplica(remote, secret: "not the secret")
        let wrongCache = wrong.directory.appendingPathComponent("cache/taskctl")
        try FileManager.default.createDirectory(at: wrongCache, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = try RustReplica.run(ProtocolServer.python ?? "/usr/bin/python3", ["-c", Self.keyScript, "not the secret", "hex:" + Self.gitSalt.map { String(format: "%02x", $0) }.joined(), wrongCache.appendingPathComponent("sync-key").path])
        wrong.extraEnvironment["XDG_CACHE_HOME"] = wrongCache.deletingLastPathComponent().path
        try wrong.ok("add", "Only here")
        let refused = try wrong.run("sync")
        #expect(refused.status == 3 && refused.err.contains("does not decrypt"), "\(refused.err)")
        #expect(try wrong.texts() == ["Only here"])
    }

    /// Through git: a sync killed at any moment (while git fetches, commits or pushes)
    /// leaves the store sound with every local change, and the next sync converges; a remote
    /// that is gone is named (it was taken for a remote that had moved on, and the version
    /// kept in the clone alone), and the change goes once it is back.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/git"), "needs git"))
    func aSyncThroughGitKilledAtAnyStepLosesNothing() throws {
        let folder = try TaskctlRunner()
        let remote = try gitRemote(in: folder.directory)
        let a = try gitReplica(remote), b = try gitReplica(remote)
        a.now = "2026-11-22T09:00:00Z"
        for n in 0..<20 { try a.ok("add", "Before \(n)") }
        try sync(a, at: "2026-11-22T09:00:00Z")
        try sync(b, at: "2026-11-22T09:01:00Z")
        try killedSyncsLoseNothing(a, b, delays: [0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.45, 0.6], already: 20)

        // The remote gone: named, exit 3; back, the change goes.
        let moved = remote.deletingLastPathComponent().appendingPathComponent("moved.git")
        try FileManager.default.moveItem(at: remote, to: moved)
        b.now = "2026-11-22T11:02:00Z"
        try b.ok("add", "While the remote is gone")
        let down = try b.run("sync")
        #expect(down.status == 3 && down.err.contains("sync failed"), "\(down.err)")
        try FileManager.default.moveItem(at: moved, to: remote)
        try sync(b, at: "2026-11-22T11:03:00Z")
        try sync(a, at: "2026-11-22T11:04:00Z")
        #expect(try a.texts().contains("While the remote is gone"))
        #expect(try tasks(a) == tasks(b))

        // A version changed in the repository by someone else: a new replica names it.
        let tamperer = folder.directory.appendingPathComponent("tamper")
        let git = { (arguments: [String]) throws in
            _ = try RustReplica.run("/usr/bin/git", ["-C", tamperer.path, "-c", "user.email=t@t", "-c", "user.name=t"] + arguments)
        }
        _ = try RustReplica.run("/usr/bin/git", ["clone", "-q", "-b", "main", "--", remote.path, tamperer.path])
        let versionFile = try #require(try FileManager.default.contentsOfDirectory(atPath: tamperer.path).first { $0.hasPrefix("v-") })
        try Data("tampered".utf8).write(to: tamperer.appendingPathComponent(versionFile))
        try git(["commit", "-q", "-a", "-m", "tampered"])
        try git(["push", "-q", "origin", "HEAD:main"])
        let fresh = try gitReplica(remote)
        let tampered = try fresh.run("sync")
        #expect(tampered.status == 3 && tampered.err.contains("does not decrypt"), "\(tampered.err)")
        try git(["revert", "--no-edit", "HEAD"])
        try git(["push", "-q", "origin", "HEAD:main"])

        // A git killed in a commit (a Ctrl-C) leaves its lock in the clone: the next sync,
        // holding the clone's own lock, knows it for a dead git's and goes on.
        try Data().write(to: a.directory.appendingPathComponent("clone/.git/index.lock"))
        a.now = "2026-11-22T11:05:00Z"
        try a.ok("add", "After a dead git")
        try sync(a, at: "2026-11-22T11:05:00Z")
        try sync(b, at: "2026-11-22T11:06:00Z")
        #expect(try b.texts().contains("After a dead git"))
    }

    /// A recurring task's instance marked done on two replicas before they sync leaves one
    /// series: one template, the instance done, and its next instance once, although both
    /// replicas made it (its UUID is named after the template and its place, UUIDv5).
    @Test func aRecurringTaskDoneOnTwoReplicasMakesOneNextTask() throws {
        let server = try ProtocolServer()
        let (a, b) = try syncedPair(server, adding: "Water plants", "--recur", "weekly", "--due", "2026-11-23T09:00:00Z", hour: "09")
        let plants = try uuid(of: "Water plants", in: a)
        #expect(try tasks(a).count == 2 && (try tasks(b)).count == 2, "a template and its first instance")
        a.now = "2026-11-23T08:00:00Z"
        try a.ok("done", plants)
        b.now = "2026-11-23T10:00:00Z"
        try b.ok("done", plants)
        try sync(a, at: "2026-11-23T11:00:00Z")
        try sync(b, at: "2026-11-23T11:01:00Z")
        try sync(a, at: "2026-11-23T11:02:00Z")
        let onA = try tasks(a)
        #expect(onA == (try tasks(b)))
        let pending = onA.values.filter { $0["status"] == "\"pending\"" }
        #expect(pending.count == 1 && pending.first?["due"] == "\"2026-11-30T09:00:00Z\"", "\(onA)")
        #expect(onA.values.filter { $0["status"] == "\"recurring\"" }.count == 1)
        #expect(onA.count == 3)
        // Done again after a reopen: the same next task, not a second.
        a.now = "2026-11-23T12:00:00Z"
        try a.ok("reopen", plants)
        try a.ok("done", plants)
        #expect(try tasks(a).count == 3)
    }

    @Test func nameBasedUUIDsAreRFC9562Version5() {
        #expect(NameUUID.v5(namespace: UUID(uuidString: "6ba7b810-9dad-11d1-80b4-00c04fd430c8") ?? UUID(), name: "python.org").uuidString.lowercased() == "886313e1-3b8a-5372-9b90-0c9aee199e5d")
        #expect(NameUUID.v5(namespace: UUID(uuidString: "6ba7b811-9dad-11d1-80b4-00c04fd430c8") ?? UUID(), name: "").uuidString.lowercased() == "1b4db7eb-4057-5ddf-91e0-36dec72071f5")
        #expect(NameUUID.v5(namespace: UUID(uuidString: "5f22baa0-9935-4240-86ab-6bd2b598479d") ?? UUID(), name: String(repeating: "x", count: 200)).uuidString.lowercased() == "fbc08f6a-179a-5a33-bb4f-5ddd3d1061aa")
    }

    /// Rounds of B adding and syncing, then A adding and syncing, A's sync killed with
    /// SIGKILL after each of `delays` (seconds): after each, A's store checks clean and
    /// holds every task it had. Then both sync and end with the same tasks, `already` tasks
    /// and one more per round from each.
    func killedSyncsLoseNothing(_ a: TaskctlRunner, _ b: TaskctlRunner, delays: [Double], already: Int,
                                sourceLocation: SourceLocation = #_sourceLocation) throws {
        var added = try a.texts()
        for (round, delay) in delays.enumerated() {
            b.now = "2026-11-22T10:\(10 + round):00Z"
            try b.ok("add", "From B \(round)")
            try b.ok("sync")
            a.now = "2026-11-22T10:\(10 + round):30Z"
            try a.ok("add", "From A \(round)")
            added.append("From A \(round)")
            let (process, out, err) = try a.start(["sync"])
            usleep(useconds_t(delay * 1_000_000))
            // taskctl alone: a git it started goes on to its end (a Ctrl-C, which kills git
            // half-way too, leaves git's lock: the git test plants one).
            kill(process.processIdentifier, SIGKILL)
            _ = out.fileHandleForReading.readDataToEndOfFile()
            _ = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(try a.ok("store", "check").hasPrefix("ok:"), "killed after \(delay) s", sourceLocation: sourceLocation)
            let texts = try a.texts()
            #expect(added.allSatisfy(texts.contains), "killed after \(delay) s: \(texts)", sourceLocation: sourceLocation)
        }
        try sync(a, at: "2026-11-22T11:00:00Z", sourceLocation: sourceLocation)
        try sync(b, at: "2026-11-22T11:01:00Z", sourceLocation: sourceLocation)
        #expect(try tasks(a) == tasks(b), sourceLocation: sourceLocation)
        #expect(try a.texts().count == already + 2 * delays.count, sourceLocation: sourceLocation)
    }

    /// SIGKILL while a sync waits for the server, receives, applies or sends: the store
    /// stays sound, no local change is lost, and the next sync converges.
    @Test func aSyncKilledAtAnyStepLosesNothing() throws {
        let server = try ProtocolServer()
        let (a, b) = try syncedPair(server, adding: "Before", hour: "09")
        // Each answer of the server takes 0.15 s: kills land in every step of a sync.
        try server.control("slow/0.15")
        try killedSyncsLoseNothing(a, b, delays: [0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 1.0, 1.3], already: 1)
        try server.control("slow/0")
    }

    /// Two syncs of one store at once, one through a symbolic link, after another process
    /// compacted the file: both finish, the store checks clean, nothing is applied or sent
    /// twice, and the other replica ends with the same tasks.
    @Test func twoSyncsOfOneStoreAtOnceThroughALink() throws {
        let server = try ProtocolServer()
        let (a, b) = try syncedPair(server, adding: "First", hour: "09")
        b.now = "2026-11-22T09:05:00Z"
        try b.ok("add", "From B")
        try b.ok("sync")
        a.now = "2026-11-22T09:10:00Z"
        for n in 1...5 { try a.ok("add", "From A \(n)") }
        try a.ok("store", "compact")
        let link = a.directory.appendingPathComponent("link.store")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: a.store)
        try server.control("slow/0.2")
        let first = try a.start(["sync"])
        let second = try a.start(["--store", link.path, "sync"])
        for (process, out, err) in [first, second] {
            _ = out.fileHandleForReading.readDataToEndOfFile()
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(message)")
        }
        try server.control("slow/0")
        #expect(try a.ok("store", "check").hasPrefix("ok:"))
        try sync(a, at: "2026-11-22T09:20:00Z")
        try sync(b, at: "2026-11-22T09:21:00Z")
        #expect(try a.texts().sorted() == ["First", "From A 1", "From A 2", "From A 3", "From A 4", "From A 5", "From B"])
        #expect(try tasks(a) == tasks(b))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) != nil, "the link stays a link")
    }

    /// A sync holds no lock while it waits for the server: a command on the same store
    /// runs meanwhile, and its change goes with the next sync.
    @Test func commandsRunWhileASyncWaitsForTheServer() throws {
        let server = try ProtocolServer()
        let a = try replica(server), b = try replica(server)
        a.now = "2026-11-22T09:00:00Z"
        try a.ok("add", "First")
        try sync(a, at: "2026-11-22T09:00:00Z")
        try server.control("slow/1.5")
        let (process, out, err) = try a.start(["sync"])
        usleep(300_000)
        a.now = "2026-11-22T09:01:00Z"
        try a.ok("add", "Added during the sync")
        #expect(process.isRunning, "the add finished while the sync waited")
        _ = out.fileHandleForReading.readDataToEndOfFile()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(message)")
        try server.control("slow/0")
        try sync(a, at: "2026-11-22T09:02:00Z")
        try sync(b, at: "2026-11-22T09:03:00Z")
        #expect(try b.texts().sorted() == ["Added during the sync", "First"])
    }

    @Test func aNewReplicaStartsFromTheSnapshotAndAGoneVersionKeepsLocalChanges() throws {
        let server = try ProtocolServer()
        let (a, b) = try syncedPair(server, adding: "Kept by B", hour: "09")
        b.now = "2026-11-22T09:02:00Z"
        try b.ok("add", "Unsent on B")
        // Ten versions: the server asks for a snapshot, and A sends one.
        var sentSnapshot = false
        for minute in 10..<21 {
            a.now = "2026-11-22T09:\(minute):00Z"
            try a.ok("add", "Task \(minute)")
            sentSnapshot = try sync(a, at: a.now).contains("sent a snapshot") || sentSnapshot
        }
        #expect(sentSnapshot)
        try server.control("forget")

        // A new replica: the versions before the snapshot are gone; it starts from it.
        let c = try replica(server)
        #expect(try sync(c, at: "2026-11-22T10:00:00Z").contains("started from the server's snapshot"))
        #expect(try tasks(c) == tasks(a))

        // B's version is gone too: it starts again from the snapshot and keeps its change.
        let result = try b.run("sync")
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("no longer has the versions"))
        try sync(a, at: "2026-11-22T10:02:00Z")
        try sync(c, at: "2026-11-22T10:03:00Z")
        #expect(try a.texts().contains("Unsent on B"))
        #expect(try tasks(a) == tasks(b))
        #expect(try tasks(a) == tasks(c))
    }

    /// The server as another replica of the tests' task list sees it (as Taskwarrior 3 would
    /// write to it), to send versions of its own.
    func otherReplica(_ server: ProtocolServer) throws -> HTTPSyncServer {
        let clientID = try #require(UUID(uuidString: Self.clientID))
        let key = DerivedKeyCache.key(secret: Array(Self.secret.utf8), salt: HTTPSyncServer.salt(of: clientID), at: Self.keyFile)
        return HTTPSyncServer(url: server.url, clientID: clientID, cryptor: SyncCryptor(key: key), transport: URLSessionTransport())
    }

    /// What another replica (Taskwarrior 3) writes arrives whole: values taskctl does not
    /// model or refuses are kept and named in a warning, and after an edit in taskctl the
    /// server's task is the other replica's, key for key, with only that edit (and
    /// `modified`) changed.
    @Test func foreignKeysTravelUntouchedAndRefusedValuesAreKept() async throws {
        let server = try ProtocolServer()
        let a = try replica(server)
        let other = try otherReplica(server)
        let task = UUID(), blocker = UUID()
        let stamp = SyncTimestamp(seconds: 1_795_000_000)
        let written: [String: String] = [
            "description": "From Taskwarrior", "status": "pending", "entry": "1795000000", "modified": "1795000000",
            "priority": "X", "due": "soon", "estimate": "3", "dep_\(blocker.uuidString.lowercased())": "",
            "tag_home": "", "annotation_1795000100": "a note", "project": "garden", "location": "shed",
        ]
        var operations: [SyncOperation] = [.create(task)]
        for (name, value) in written.sorted(by: { $0.key < $1.key }) { operations.append(.update(task, property: name, value: value, timestamp: stamp)) }
        let batch = operations
        guard case .added(let first, _) = try other.addVersion(parent: nilVersion, operations: batch) else {
            Issue.record("the other replica's version was not added")
            return
        }

        a.now = "2026-11-22T10:00:00Z"
        let received = try a.run("sync")
        #expect(received.status == 0, "\(received.err)")
        #expect(received.err.contains("priority 'X' is not H, M or L; kept as it is"), "\(received.err)")
        #expect(received.err.contains("due 'soon' is not a date"), "\(received.err)")
        let shown = try #require(try a.tasks("--all").first)
        #expect(shown["text"] as? String == "From Taskwarrior" && shown["project"] as? String == "garden" && shown["location"] as? String == "shed")
        #expect(shown["tags"] as? [String] == ["home"] && (shown["annotations"] as? [[String: Any]])?.first?["text"] as? String == "a note")
        let exported = try a.ok("export", "--format", "taskwarrior")
        #expect(exported.contains("\"estimate\":\"3\"") && exported.contains("\"depends\":[\"\(blocker.uuidString.lowercased())\"]"), "\(exported)")

        a.now = "2026-11-22T11:00:00Z"
        try a.ok("edit", task.uuidString, "--text", "Edited in taskctl")
        try sync(a, at: "2026-11-22T11:01:00Z")
        guard case .version(_, _, let sent) = try other.childVersion(of: first) else {
            Issue.record("taskctl sent no version")
            return
        }
        var after = written
        for operation in sent {
            if case .update(let uuid, let name, let value, _) = operation, uuid == task { after[name] = value }
        }
        var expected = written
        expected["description"] = "Edited in taskctl"
        let editTime = try #require(ISO8601DateFormatter().date(from: "2026-11-22T11:00:00Z"))
        expected["modified"] = String(Int(editTime.timeIntervalSince1970))
        #expect(after == expected)
        #expect(Set(sent.compactMap { if case .update(_, let name, _, _) = $0 { return name } else { return nil } }) == ["description", "modified"])
    }

    /// A description taskctl cannot store as a task's text, received for a task it already
    /// has (empty, or longer than 100,000 characters), is named in a warning and kept with
    /// the task (sent back as it came), bounded at 1 MiB; the title says "(no description)"
    /// rather than keep a text no other replica has. Before, it was dropped without a word
    /// and the old title stayed.
    @Test func aDescriptionTaskctlCannotStoreIsKeptAndNamedNeverDropped() async throws {
        let server = try ProtocolServer()
        let a = try replica(server)
        let other = try otherReplica(server)
        let task = UUID()
        var parent = nilVersion
        func send(_ operations: [SyncOperation]) throws {
            guard case .added(let version, _) = try other.addVersion(parent: parent, operations: operations) else {
                Issue.record("the other replica's version was not added")
                return
            }
            parent = version
        }
        let stamp = SyncTimestamp(seconds: 1_795_000_000)
        try send([.create(task), .update(task, property: "description", value: "Old title", timestamp: stamp),
                        .update(task, property: "status", value: "pending", timestamp: stamp),
                        .update(task, property: "entry", value: "1795000000", timestamp: stamp)])
        try sync(a, at: "2026-11-22T10:00:00Z")
        #expect(try a.texts() == ["Old title"])

        let long = String(repeating: "x", count: 100_001)
        for (value, why) in [("", "is empty"), (long, "is longer than the 100000 characters")] {
            try send([.update(task, property: "description", value: value, timestamp: stamp)])
            a.now = "2026-11-22T11:00:00Z"
            let received = try a.run("sync")
            #expect(received.status == 0, "\(received.err)")
            #expect(received.err.contains("description") && received.err.contains(why) && received.err.contains("kept as it is"), "\(received.err.prefix(300))")
            #expect(try a.texts() == ["(no description)"])
            let exported = try a.ok("export", "--format", "taskwarrior")
            #expect(exported.contains("\"description\":\"\(value)\""), "\(exported.prefix(300))")
        }
        // More than 1 MiB: named, and not kept.
        try send([.update(task, property: "description", value: String(repeating: "y", count: (1 << 20) + 1), timestamp: stamp)])
        let huge = try a.run("sync")
        #expect(huge.status == 0 && huge.err.contains("more than the 1048576 bytes taskctl keeps") && huge.err.contains("not kept"), "\(huge.err.prefix(300))")
        #expect(huge.err.count < 2_000, "the warning repeats the whole value")
        #expect(try a.texts() == ["(no description)"])
    }

    /// Two annotations made in one second get two seconds, as in Taskwarrior: each travels
    /// under its own `annotation_SECONDS` key and the other replica gets both. Before, both
    /// had one key and every other replica kept only one.
    @Test func twoAnnotationsInOneSecondBothTravel() throws {
        let server = try ProtocolServer()
        let (a, b) = try syncedPair(server, adding: "Buy milk", hour: "09")
        a.now = "2026-11-22T10:00:00Z"
        try a.ok("annotate", "1", "first")
        try a.ok("annotate", "1", "second")
        try a.ok("annotate", "1", "third")
        let shown = try #require(try a.tasks().first?["annotations"] as? [[String: Any]])
        #expect(shown.compactMap { $0["entry"] as? String } == ["2026-11-22T10:00:00Z", "2026-11-22T10:00:01Z", "2026-11-22T10:00:02Z"])
        try sync(a, at: "2026-11-22T10:00:00Z")
        try sync(b, at: "2026-11-22T10:05:00Z")
        let received = try #require(try b.tasks().first?["annotations"] as? [[String: Any]])
        #expect(received.compactMap { $0["text"] as? String } == ["first", "second", "third"])
        #expect(try tasks(a) == tasks(b))
    }

    /// A replica offline for longer than its history bound (here 10 transactions, and a
    /// small log so compactions drop old ones): what it did first, a tag taken off and a due
    /// date cleared, still reaches the other replica, since the history a sync has not sent
    /// is kept. Before, only the last 1,000 transactions were kept, the replica sent its tasks
    /// whole, and the removals never arrived.
    @Test func removalsMadeLongBeforeASyncStillTravel() throws {
        let server = try ProtocolServer()
        let (a, b) = try syncedPair(server, adding: "Buy milk", "+shop", "+dairy", "due:2026-11-30", hour: "09")
        for runner in [a, b] {
            runner.extraEnvironment["TASKCTL_HISTORY_KEPT"] = "10"
            runner.extraEnvironment["OBJECTSTORE_COMPACTION_THRESHOLD"] = "2000"
        }
        try a.ok("add", "Churn")
        try sync(a, at: "2026-11-22T09:05:00Z")
        try sync(b, at: "2026-11-22T09:06:00Z")
        a.now = "2026-11-22T10:00:00Z"
        let milk = try uuid(of: "Buy milk", in: a)
        try a.ok("edit", milk, "--untag", "shop", "--no-due")
        for round in 0..<40 { try a.ok("edit", "Churn".isEmpty ? "" : try uuid(of: round == 0 ? "Churn" : "Churn \(round - 1)", in: a), "--text", "Churn \(round)") }
        // The history bound was passed many times over, and compactions ran.
        #expect(try a.ok("log", "--limit", "1000").components(separatedBy: "\n#").count > 11)
        try sync(a, at: "2026-11-22T11:00:00Z")
        try sync(b, at: "2026-11-22T11:01:00Z")
        let onB = try #require(try b.tasks().first { $0["uuid"] as? String == milk })
        #expect(onB["tags"] as? [String] == ["dairy"], "\(onB)")
        #expect(onB["due"] is NSNull, "\(onB)")
        #expect(try tasks(a) == tasks(b))
        // Once sent, the bound applies again: the next compaction keeps 10.
        for round in 40..<60 { try a.ok("edit", try uuid(of: "Churn \(round - 1)", in: a), "--text", "Churn \(round)") }
        try a.ok("store", "compact")
        #expect(try a.ok("log", "--limit", "1000").components(separatedBy: "\n#").count <= 21)
    }

    /// A server that never answers, one that sends a byte a second for ever, one that sends
    /// an endless body and one that announces 3 GiB: each sync ends (exit 3) saying what
    /// happened (the deadline, `sync.timeout`, or the size bound), with nothing lost, and the
    /// size bound stops reading instead of buffering the answer. Before, the slow ones kept
    /// `sync` waiting for ever, and a 3 GiB body was buffered whole (2 GB, then killed).
    /// The same server as an S3 endpoint (`sync.aws.*`): the bucket's requests go through the
    /// same helper, bounded the same way.
    /// The helper's memory stays near the size bound while its delegate is held up at the first
    /// chunk (as on a busy machine): a fast server's chunks used to pile up in URLSession's
    /// delegate queue meanwhile (386 MB for half a second here; a CI run OOM-killed it at 24 GB).
    @Test(arguments: ["silent", "trickle", "endless", "huge"], [false, true])
    func aHostileServerCannotHangOrFloodASync(mode: String, asBucket: Bool) throws {
        let server = try HostileServer(mode)
        let a = try replica(try ProtocolServer(), url: server.url)
        let config = a.directory.appendingPathComponent(".config/taskctl/config")
        if asBucket {
            try """
                sync.aws.bucket = tasks
                sync.aws.region = us-east-1
                sync.aws.endpoint_url = \(server.url)
                sync.aws.force_path_style = true
                sync.aws.access_key_id = AKIDEXAMPLE
                sync.aws.secret_access_key = hostile-test-key
                sync.encryption_secret = \(Self.secret)

                """.write(to: config, atomically: true, encoding: .utf8)
        }
        try (try String(contentsOf: config, encoding: .utf8) + "sync.timeout = 2\n").write(to: config, atomically: true, encoding: .utf8)
        // The tests' helper takes at most 20 MB (the product's bound is 1 GiB).
        a.extraEnvironment["TASKCTL_HTTP_ANSWER_LIMIT"] = "20000000"
        a.extraEnvironment["TASKCTL_HTTP_FIRST_CHUNK_PAUSE"] = "0.5"
        let peakFile = a.directory.appendingPathComponent("helper-peak")
        a.extraEnvironment["TASKCTL_HTTP_PEAK_FILE"] = peakFile.path
        try a.ok("add", "Kept")
        let result = try a.run("sync")
        // The helper's peak resident memory (KiB): its own ~35 MB, the 20 MB bound, slack.
        let peak = Int(try String(contentsOf: peakFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? .max
        #expect(peak < 120_000, "the helper held \(peak) KiB")
        #expect(result.status == 3, "\(result.err)")
        let expected = ["silent": "did not finish answering within 2 seconds (the deadline of one request, sync.timeout)",
                        "trickle": "did not finish answering within 2 seconds",
                        "endless": "passed 20000000 bytes, the most a sync takes; the rest was not read",
                        "huge": "is 3221225472 bytes, more than the 20000000 a sync takes; it was not read"][mode] ?? "?"
        #expect(result.err.contains(expected), "\(result.err)")
        #expect(try a.texts() == ["Kept"])
        #expect(try a.ok("sync", "--status").contains("not synced yet"))
        #expect(!result.err.contains("hostile-test-key"))
        // A bad sync.timeout is named with its line.
        try (try String(contentsOf: config, encoding: .utf8) + "sync.timeout = soon\n").write(to: config, atomically: true, encoding: .utf8)
        let refused = try a.run("sync")
        #expect(refused.status == 1 && refused.err.contains("sync.timeout takes the most seconds"), "\(refused.err)")
        withExtendedLifetime(server) {}
    }

    /// Killed while its helper waits for a server that never answers, taskctl leaves no
    /// helper behind (it kept waiting on its socket before).
    @Test func aKilledSyncLeavesNoHelperRunning() throws {
        let server = try HostileServer("silent")
        let a = try replica(try ProtocolServer(), url: server.url)
        try a.ok("add", "Kept")
        let (process, _, _) = try a.start(["sync"])
        // The helper is started at the first request; wait for it (a hang guard, not a timing).
        func helpers() -> [Int32] {
            // Every process whose parent is taskctl (from /proc/PID/stat: "pid (name) state ppid").
            let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }
            return pids.filter { pid in
                guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                return fields.count > 2 && Int32(fields[1]) == process.processIdentifier
            }
        }
        var helper: Int32?
        for _ in 0..<600 where helper == nil {
            helper = helpers().first
            if helper == nil { usleep(50_000) }
        }
        let pid = try #require(helper, "no helper started")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        var gone = false
        for _ in 0..<200 where !gone {
            gone = kill(pid, 0) != 0
            if !gone { usleep(50_000) }
        }
        #expect(gone, "taskctl-http \(pid) still runs after its taskctl was killed")
        #expect(try a.texts() == ["Kept"])
        withExtendedLifetime(server) {}
    }

    /// A git step that fails in the clone (here a commit its hook refuses) is named as what
    /// it is, not as a server that cannot be reached; the change stays to be sent.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/git"), "needs git"))
    func aGitFailureInTheCloneIsNamedNotTakenForAnUnreachableServer() throws {
        let folder = try TaskctlRunner()
        let remote = try gitRemote(in: folder.directory)
        let a = try gitReplica(remote)
        try a.ok("add", "One")
        try sync(a, at: "2026-11-22T10:00:00Z")
        let hook = a.directory.appendingPathComponent("clone/.git/hooks/pre-commit")
        try "#!/bin/sh\necho refused by the hook >&2\nexit 1\n".write(to: hook, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: hook.path)
        try a.ok("add", "Two")
        a.now = "2026-11-22T11:00:00Z"
        let failed = try a.run("sync")
        #expect(failed.status == 3, "\(failed.err)")
        #expect(failed.err.contains("git commit") && failed.err.contains("refused by the hook") && failed.err.contains("in the clone"), "\(failed.err)")
        #expect(!failed.err.contains("cannot reach"), "\(failed.err)")
        try FileManager.default.removeItem(at: hook)
        try sync(a, at: "2026-11-22T11:01:00Z")
        #expect(try a.ok("sync", "--status").contains("local changes not sent: 0"))
    }

    /// Credentials in a server's URL or a git remote are never printed: not by `sync
    /// --status`, not in a failed sync's error, not in git's messages; and no message says
    /// "taskctl:" twice.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/git"), "needs git"))
    func credentialsInAURLAreNeverPrinted() throws {
        let server = try ProtocolServer()
        var components = try #require(URLComponents(url: server.url, resolvingAgainstBaseURL: false))
        components.user = "ada"
        components.password = "hunter2secret"
        let withCredentials = try #require(components.url).absoluteString
        let a = try replica(server, url: withCredentials)
        try a.ok("add", "One")
        try sync(a, at: "2026-11-22T10:00:00Z")
        let status = try a.ok("sync", "--status")
        #expect(status.contains("server: ") && !status.contains("hunter2secret") && !status.contains("ada:"), "\(status)")
        // The server gone: the error names it without the password.
        let gone = try replica(server, url: "http://ada:hunter2secret@127.0.0.1:9/")
        try gone.ok("add", "Two")
        let failed = try gone.run("sync")
        #expect(failed.status == 3 && failed.err.contains("127.0.0.1:9") && !failed.err.contains("hunter2secret"), "\(failed.err)")
        #expect(!failed.err.contains("taskctl: taskctl:"), "\(failed.err)")
        // A git remote with a token.
        let git = try TaskctlRunner()
        let config = git.directory.appendingPathComponent(".config/taskctl")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try """
            sync.git.local_path = \(git.directory.appendingPathComponent("clone").path)
            sync.git.remote = http://ada:TOKEN0123456789@127.0.0.1:9/tasks.git
            sync.encryption_secret = \(Self.secret)

            """.write(to: config.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        git.extraEnvironment["XDG_CACHE_HOME"] = Self.gitKeyCache.path
        let refused = try git.run("sync")
        #expect(refused.status == 3 && refused.err.contains("127.0.0.1:9") && !refused.err.contains("TOKEN0123456789"), "\(refused.err)")
    }

    /// taskctl itself loads no networking (FoundationNetworking, libcurl and the TLS
    /// libraries under it cost every command 7 ms at start); its helper does, for a sync.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/ldd")))
    func taskctlLoadsNoNetworkingAndItsHelperDoes() throws {
        let binary = try #require(TaskctlRunner.binary)
        let helper = binary.deletingLastPathComponent().appendingPathComponent("taskctl-http")
        let runner = try TaskctlRunner()
        let ours = try runner.run(program: "/usr/bin/ldd", [binary.path])
        #expect(ours.status == 0 && !ours.out.isEmpty)
        #expect(!ours.out.contains("curl") && !ours.out.contains("FoundationNetworking"), "\(ours.out)")
        let helpers = try runner.run(program: "/usr/bin/ldd", [helper.path])
        #expect(helpers.out.contains("curl") || helpers.out.contains("FoundationNetworking"), "\(helpers.out)")
    }

    @Test func settingsAreCheckedAndTheStatusNeedsNoServer() throws {
        let server = try ProtocolServer()
        let a = try replica(server)
        #expect(try a.ok("sync", "--status").contains("not synced yet"))
        a.now = "2026-11-22T10:00:00Z"
        try a.ok("add", "One")
        try sync(a, at: "2026-11-22T10:00:00Z")
        try a.ok("add", "Two")
        try a.ok("edit", "1", "--priority", "high", "--due", "tomorrow")
        let status = try a.ok("sync", "--status")
        #expect(status.contains("local changes not sent: 2") && status.contains("last sync: 2026-11-22T10:00:00Z"))
        #expect(!status.contains(Self.secret))

        // Missing and malformed settings: named, with the file's line.
        let bare = try TaskctlRunner()
        let missing = try bare.run("sync")
        #expect(missing.status == 1 && missing.err.contains("sync.server.url, sync.server.client_id, sync.encryption_secret"))
        let config = bare.directory.appendingPathComponent(".config/taskctl")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try "sync.server.client_id = not-a-uuid\n".write(to: config.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        let malformed = try bare.run("sync")
        #expect(malformed.status == 1 && malformed.err.contains("config:1: sync.server.client_id takes a UUID"))
        // A remote that git would read as an option is refused, not run.
        try "sync.git.remote = --upload-pack=touch /tmp/pwned\n".write(to: config.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        let option = try bare.run("sync")
        #expect(option.status == 1 && option.err.contains("config:1: sync.git.remote takes a git URL or path, not an option"), "\(option.err)")
        // S3 settings: each checked with its line; half a key pair, or none, named.
        for (line, expected) in [("sync.aws.bucket = My_Tasks", "config:1: sync.aws.bucket takes a bucket name"),
                                 ("sync.aws.force_path_style = maybe", "config:1: sync.aws.force_path_style takes true or false"),
                                 ("sync.aws.endpoint_url = minio:9000", "config:1: sync.aws.endpoint_url takes the service's http:// or https:// URL"),
                                 ("sync.aws.region = eu west", "config:1: sync.aws.region takes a region")] {
            try "\(line)\n".write(to: config.appendingPathComponent("config"), atomically: true, encoding: .utf8)
            let refused = try bare.run("sync")
            #expect(refused.status == 1 && refused.err.contains(expected), "\(line): \(refused.err)")
        }
        try "sync.aws.bucket = tasks\nsync.encryption_secret = s\nsync.aws.secret_access_key = hidden-key\n".write(to: config.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        let half = try bare.run("sync")
        #expect(half.status == 1 && half.err.contains("needs sync.aws.access_key_id") && !half.err.contains("hidden-key"), "\(half.err)")
        try "sync.aws.bucket = tasks\nsync.encryption_secret = s\n".write(to: config.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        let none = try bare.run("sync")
        #expect(none.status == 1 && none.err.contains("sync.aws.profile, or sync.aws.default_credentials = true"), "\(none.err)")
    }
}

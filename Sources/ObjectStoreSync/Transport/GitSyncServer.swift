import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// TaskChampion's git layout (TaskChampion 3.1, Taskwarrior 3.5): versions, a snapshot and
/// the chain's head as files of a git repository, run through the `git` program.
///
/// - `meta`: JSON `{"latest_version": UUID (32 hex digits), "salt": base64 of 16 bytes}`;
///   the key is derived from the secret with this salt;
/// - `v-PARENT-CHILD` (32 hex digits each): a version, sealed for the child's UUID;
/// - `snapshot`: JSON `{"version_id": UUID, "payload": base64}`, sealed for its version.
///
/// A version is committed with the new `meta` and pushed; a rejected push is undone, the
/// clone reset to the remote, and the version it lost to named (as a 409 would). Without a
/// remote the repository itself is the server.
package final class GitSyncServer: SyncServer, @unchecked Sendable {
    package let localPath: URL
    package let remote: String?
    package let branch: String
    let git: String
    private var cryptor: SyncCryptor?
    private let lock = NSLock()
    /// Whether the clone was made what the remote is since this server was opened: a commit
    /// left in it by a sync killed before its push is not the remote's and must not be read
    /// as a version the remote has.
    private var matchesRemote = false
    /// The clone's lock (`LOCAL_PATH.lock`, beside it), held while this server is open: one
    /// sync at a time works in a clone.
    private var lockFile: Int32 = -1

    package var identity: String { Self.identity(localPath: localPath, remote: remote, branch: branch) }

    /// What names a repository in the sync state (before the clone is opened).
    package static func identity(localPath: URL, remote: String?, branch: String) -> String {
        "git \(remote.flatMap { $0.isEmpty ? nil : $0 } ?? localPath.path) branch \(branch)"
    }

    /// Opens (cloning or creating) the repository at `localPath` and derives the key from
    /// `secret` and the repository's salt, through `deriveKey(salt)` (a cache).
    package init(localPath: URL, remote: String?, branch: String, git: String = "/usr/bin/git", deriveKey: (_ salt: [UInt8]) -> [UInt8]) throws {
        self.localPath = localPath
        self.remote = remote?.isEmpty == true ? nil : remote
        self.branch = branch
        self.git = FileManager.default.isExecutableFile(atPath: git) ? git : "/usr/bin/env"
        // Never an option of git's: a remote or branch given as "--upload-pack=..." would run it.
        guard !(self.remote?.hasPrefix("-") ?? false), !branch.hasPrefix("-"), !branch.isEmpty else {
            throw SyncServerError.badResponse(url: remote ?? localPath.path, reason: "a git remote or branch cannot start with '-'")
        }
        try takeLock()
        let meta = try openRepository()
        cryptor = SyncCryptor(key: deriveKey(meta.salt))
    }

    deinit {
        if lockFile >= 0 { close(lockFile) }
    }

    /// Takes the clone's lock (waiting for another sync in it to end). Holding it, git's own
    /// lock files in the clone are a killed git's (a Ctrl-C in a commit): they are removed,
    /// which git would otherwise refuse to work past.
    func takeLock() throws {
        try FileManager.default.createDirectory(at: localPath.deletingLastPathComponent(), withIntermediateDirectories: true)
        let fd = open(localPath.path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SyncServerError.unreachable(url: identity, reason: "cannot open \(localPath.path).lock") }
        guard flock(fd, LOCK_EX) == 0 else {
            close(fd)
            throw SyncServerError.unreachable(url: identity, reason: "cannot lock \(localPath.path).lock")
        }
        lockFile = fd
        for name in ["index.lock", "HEAD.lock"] {
            try? FileManager.default.removeItem(at: localPath.appendingPathComponent(".git").appendingPathComponent(name))
        }
    }

    // MARK: git

    struct GitFailure: Error, CustomStringConvertible {
        var arguments: [String]
        var output: String
        var description: String { "git \(arguments.joined(separator: " ")) failed" + (output.isEmpty ? "" : ": \(output)") }
    }

    /// Runs git in the repository; `(succeeded, output, exit status)`.
    @discardableResult
    func run(_ arguments: [String], in directory: URL? = nil) throws -> (ok: Bool, output: String, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: git)
        process.arguments = (git == "/usr/bin/env" ? ["git"] : []) + arguments
        process.currentDirectoryURL = directory ?? localPath
        var environment = ProcessInfo.processInfo.environment
        environment["GIT_TERMINAL_PROMPT"] = "0"
        environment["LC_ALL"] = "C"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw SyncServerError.unreachable(url: identity, reason: "cannot run git: \(error.localizedDescription)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus == 0, String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines), process.terminationStatus)
    }

    func must(_ arguments: [String], in directory: URL? = nil) throws {
        let (ok, output, _) = try run(arguments, in: directory)
        guard ok else { throw SyncServerError.unreachable(url: identity, reason: GitFailure(arguments: arguments, output: output).description) }
    }

    // MARK: The layout

    struct Meta {
        var latest: UUID
        var salt: [UInt8]
    }

    static func simple(_ uuid: UUID) -> String { uuid.uuidString.lowercased().replacingOccurrences(of: "-", with: "") }

    static func uuid(simple text: Substring) -> UUID? {
        guard text.count == 32 else { return nil }
        var dashed = String(text)
        for at in [8, 13, 18, 23] { dashed.insert("-", at: dashed.index(dashed.startIndex, offsetBy: at)) }
        return UUID(uuidString: dashed)
    }

    func readMeta() throws -> Meta {
        let url = localPath.appendingPathComponent("meta")
        guard let data = FileManager.default.contents(atPath: url.path),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let latestText = object["latest_version"] as? String, let latest = Self.uuid(simple: Substring(latestText)),
              let saltText = object["salt"] as? String, let salt = Data(base64Encoded: saltText)
        else { throw SyncServerError.badResponse(url: identity, reason: "its meta file is not TaskChampion's {\"latest_version\", \"salt\"}") }
        return Meta(latest: latest, salt: Array(salt))
    }

    func writeMeta(_ meta: Meta) throws {
        let text = "{\"latest_version\":\"\(Self.simple(meta.latest))\",\"salt\":\"\(Data(meta.salt).base64EncodedString())\"}"
        try Data(text.utf8).write(to: localPath.appendingPathComponent("meta"))
    }

    /// Clones or creates the repository, checks out the branch, and makes `meta` (with a new
    /// random salt) when the branch has none.
    func openRepository() throws -> Meta {
        try FileManager.default.createDirectory(at: localPath, withIntermediateDirectories: true)
        if !(try run(["rev-parse", "--git-dir"]).ok) || !FileManager.default.fileExists(atPath: localPath.appendingPathComponent(".git").path) {
            if let remote {
                try must(["clone", "--", remote, localPath.lastPathComponent], in: localPath.deletingLastPathComponent())
            } else {
                try must(["init"])
            }
            try must(["config", "user.email", "taskchampion@local"])
            try must(["config", "user.name", "taskchampion"])
        }
        if !(try run(["checkout", branch]).ok), !(try run(["checkout", "-b", branch]).ok) {
            try must(["symbolic-ref", "HEAD", "refs/heads/\(branch)"])
        }
        if let meta = try? readMeta() { return meta }
        var salt = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for i in salt.indices { salt[i] = UInt8.random(in: 0...255, using: &generator) }
        let meta = Meta(latest: nilVersion, salt: salt)
        try writeMeta(meta)
        try must(["add", "meta"])
        try must(["commit", "-m", "init taskchampion repo"])
        // Pushed at once: a second replica that cloned the remote before this one's first
        // version would make a salt of its own, and a key that opens nothing of this one's.
        if remote != nil, !(try push()) {
            try resetToRemote()
            return try readMeta()
        }
        return meta
    }

    /// The clone made what the remote's branch is (when the remote has it); a remote that
    /// cannot be reached is an error, not an empty one.
    func resetToRemote() throws {
        guard let remote else { return }
        let listed = try run(["ls-remote", "--exit-code", "--heads", remote, branch])
        // Exit status 2: the remote has no such branch (yet).
        if listed.status == 2 { return }
        guard listed.ok else { throw SyncServerError.unreachable(url: identity, reason: GitFailure(arguments: ["ls-remote", remote], output: listed.output).description) }
        try must(["fetch", remote, branch])
        try must(["reset", "--hard", "FETCH_HEAD"])
        try must(["clean", "-f", "--", "v-*", "snapshot", "meta"])
    }

    func push() throws -> Bool {
        guard let remote else { return true }
        return try run(["push", remote, branch]).ok
    }

    func versionFile(after parent: UUID) -> (child: UUID, url: URL)? {
        let prefix = "v-\(Self.simple(parent))-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: localPath.path)) ?? []
        for name in names.sorted() where name.hasPrefix(prefix) {
            if let child = Self.uuid(simple: name.dropFirst(prefix.count)) { return (child, localPath.appendingPathComponent(name)) }
        }
        return nil
    }

    func key() throws -> SyncCryptor {
        guard let cryptor else { throw SyncServerError.badResponse(url: identity, reason: "no key") }
        return cryptor
    }

    // MARK: SyncServer

    package func addVersion(parent: UUID, operations: [SyncOperation]) async throws -> AddVersionResult {
        try lock.withLock {
            var meta = try readMeta()
            if meta.latest != nilVersion && parent != meta.latest {
                try resetToRemote()
                meta = try readMeta()
                if parent != meta.latest { return .conflict(expectedParent: meta.latest) }
            }
            let child = UUID()
            let sealed = try key().seal(SyncVersion.encode(operations), version: child)
            let name = "v-\(Self.simple(parent))-\(Self.simple(child))"
            try Data(sealed).write(to: localPath.appendingPathComponent(name))
            meta.latest = child
            try writeMeta(meta)
            try must(["add", name, "meta"])
            try must(["commit", "-m", "add version"])
            guard try push() else {
                // Undone whole (the version's file and meta too); then either another replica
                // pushed first (take the remote's and name its head) or the remote cannot be
                // reached (an error: nothing was sent).
                try must(["reset", "--hard", "HEAD~1"])
                try? FileManager.default.removeItem(at: localPath.appendingPathComponent(name))
                try resetToRemote()
                return .conflict(expectedParent: try readMeta().latest)
            }
            return .added(child, snapshot: snapshotUrgency(latest: child))
        }
    }

    package func childVersion(of parent: UUID) async throws -> ChildVersion {
        try lock.withLock {
            if !matchesRemote {
                try resetToRemote()
                matchesRemote = true
            }
            var found = versionFile(after: parent)
            if found == nil {
                try resetToRemote()
                found = versionFile(after: parent)
            }
            guard let (child, url) = found else {
                // No version after it, and it is not the head: those versions are gone
                // (removed after a snapshot), as the HTTP server's 410 says.
                let latest = try readMeta().latest
                return parent == latest || (parent == nilVersion && latest == nilVersion) ? .upToDate : .gone
            }
            guard let data = FileManager.default.contents(atPath: url.path) else { throw SyncServerError.badResponse(url: identity, reason: "cannot read \(url.lastPathComponent)") }
            let operations = try key().open(Array(data), version: child, naming: child, blob: url.lastPathComponent, server: identity, SyncVersion.decode)
            return .version(id: child, parent: parent, operations: operations)
        }
    }

    package func addSnapshot(version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])]) async throws {
        try lock.withLock {
            try resetToRemote()
            let sealed = try key().seal(SyncSnapshot.encode(tasks), version: version)
            let text = "{\"version_id\":\"\(Self.simple(version))\",\"payload\":\"\(Data(sealed).base64EncodedString())\"}"
            try Data(text.utf8).write(to: localPath.appendingPathComponent("snapshot"))
            try must(["add", "snapshot"])
            try must(["commit", "-m", "add snapshot"])
            guard try push() else {
                try must(["reset", "--hard", "HEAD~1"])
                try resetToRemote()
                throw SyncServerError.unreachable(url: identity, reason: "another replica pushed first; the snapshot goes another time")
            }
        }
    }

    package func latestSnapshot() async throws -> (version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])])? {
        try lock.withLock {
            try resetToRemote()
            guard let data = FileManager.default.contents(atPath: localPath.appendingPathComponent("snapshot").path) else { return nil }
            guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let versionText = object["version_id"] as? String, let version = Self.uuid(simple: Substring(versionText)),
                  let payloadText = object["payload"] as? String, let payload = Data(base64Encoded: payloadText)
            else { throw SyncServerError.badResponse(url: identity, reason: "its snapshot file is not TaskChampion's {\"version_id\", \"payload\"}") }
            return (version, try key().open(Array(payload), version: version, naming: version, blob: "snapshot", server: identity, SyncSnapshot.decode))
        }
    }

    /// TaskChampion's rule for git: a snapshot is wanted after 50 versions since the last
    /// one, urgently after 100.
    func snapshotUrgency(latest: UUID) -> SnapshotUrgency {
        var parents: [UUID: UUID] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: localPath.path)) ?? [] where name.hasPrefix("v-") && name.count == 67 {
            let body = name.dropFirst(2)
            if let parent = Self.uuid(simple: body.prefix(32)), let child = Self.uuid(simple: body.suffix(32)) { parents[child] = parent }
        }
        var stop = nilVersion
        if let data = FileManager.default.contents(atPath: localPath.appendingPathComponent("snapshot").path),
           let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
           let text = object["version_id"] as? String, let version = Self.uuid(simple: Substring(text)) {
            stop = version
        }
        var count = 0
        var current = latest
        while current != stop, current != nilVersion, let parent = parents[current], count <= parents.count {
            count += 1
            current = parent
        }
        return count <= 50 ? .none : count <= 100 ? .low : .high
    }
}

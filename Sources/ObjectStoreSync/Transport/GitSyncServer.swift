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
        guard ok else {
            let failure = GitFailure(arguments: arguments, output: output).description
            // Only the commands that talk to the remote mean it could not be reached; a
            // commit or a reset fails in the clone, and is named as such.
            let command = arguments.first { !$0.hasPrefix("-") && !$0.contains("=") } ?? ""
            if ["clone", "fetch", "ls-remote", "push", "pull"].contains(command) {
                throw SyncServerError.unreachable(url: identity, reason: failure)
            }
            throw SyncServerError.failed(url: identity, reason: "in the clone \(localPath.path): \(failure)")
        }
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
        guard let data = try readFile("meta", limit: 1 << 16),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let latestText = object["latest_version"] as? String, let latest = Self.uuid(simple: Substring(latestText)),
              let saltText = object["salt"] as? String, let salt = Data(base64Encoded: saltText)
        else { throw SyncServerError.badResponse(url: identity, reason: "its meta file is not TaskChampion's {\"latest_version\", \"salt\"}") }
        return Meta(latest: latest, salt: Array(salt))
    }

    func writeMeta(_ meta: Meta) throws {
        let text = "{\"latest_version\":\"\(Self.simple(meta.latest))\",\"salt\":\"\(Data(meta.salt).base64EncodedString())\"}"
        try writeFile("meta", Array(text.utf8))
    }

    // MARK: Files of the clone, never through a link

    /// The largest file of the repository read (a version or a snapshot): the cap on what a
    /// server may send (``SyncLimits/answerBytes``).
    static let fileLimit = SyncLimits.answerBytes

    /// Reads the clone's file `name` (one path component), or nil when there is none. A
    /// file that is not a regular one (a symbolic link a hostile remote committed, a FIFO, a
    /// directory) is refused, never followed: read through a link, `meta` could be any file
    /// of the user's.
    func readFile(_ name: String, limit: Int = GitSyncServer.fileLimit) throws -> Data? {
        let path = localPath.appendingPathComponent(name).path
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw notRegular(name, "a symbolic link") }
            throw SyncServerError.unreachable(url: identity, reason: "cannot read \(name) in \(localPath.path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SyncServerError.unreachable(url: identity, reason: "cannot read \(name): \(String(cString: strerror(errno)))") }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw notRegular(name, "not a regular file") }
        guard Int(info.st_size) <= limit else {
            throw SyncServerError.badResponse(url: identity, reason: "its file \(name) is \(info.st_size) bytes, more than the \(limit) a sync reads")
        }
        var data = Data(count: Int(info.st_size))
        var done = 0
        while done < data.count {
            let n = data.withUnsafeMutableBytes { pread(fd, $0.baseAddress.map { $0 + done }, $0.count - done, off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            done += n
        }
        return data.prefix(done)
    }

    /// Writes the clone's file `name` (one path component) as a new file renamed over the
    /// old one: a link planted at the name is replaced, never written through, and nothing
    /// outside the clone is touched.
    func writeFile(_ name: String, _ bytes: [UInt8]) throws {
        let path = localPath.appendingPathComponent(name).path
        var info = stat()
        if lstat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG {
            throw notRegular(name, (info.st_mode & S_IFMT) == S_IFLNK ? "a symbolic link" : "not a regular file")
        }
        let temporary = localPath.appendingPathComponent(".\(name).tmp-\(getpid())").path
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SyncServerError.unreachable(url: identity, reason: "cannot write \(name) in \(localPath.path): \(String(cString: strerror(errno)))") }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress.map { $0 + written }, bytes.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            written += n
        }
        close(fd)
        guard written == bytes.count, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw SyncServerError.unreachable(url: identity, reason: "cannot write \(name) in \(localPath.path): \(reason)")
        }
    }

    func notRegular(_ name: String, _ what: String) -> SyncServerError {
        .badResponse(url: identity, reason: "its \(name) is \(what) in the clone \(localPath.path); TaskChampion's layout has only regular files, and a sync never follows a link (a repository that holds one may point outside the clone)")
    }

    /// Refuses a checked-out tree with an entry that is not a regular file: a symbolic link
    /// (git mode 120000) or a submodule (160000). The clone checks links out as plain files
    /// (`core.symlinks=false`), so even a link missed here is never followed.
    func requireRegularTree() throws {
        let (ok, output, _) = try run(["ls-files", "-s", "-z"])
        guard ok else { return }
        for entry in output.split(separator: "\0") {
            let fields = entry.split(separator: "\t", maxSplits: 1)
            guard fields.count == 2 else { continue }
            let mode = fields[0].prefix { $0 != " " }
            if mode == "120000" { throw notRegular(String(fields[1]), "a symbolic link") }
            if mode == "160000" { throw notRegular(String(fields[1]), "a submodule") }
        }
    }

    /// Clones or creates the repository, checks out the branch, and makes `meta` (with a new
    /// random salt) when the branch has none.
    func openRepository() throws -> Meta {
        try FileManager.default.createDirectory(at: localPath, withIntermediateDirectories: true)
        if !(try run(["rev-parse", "--git-dir"]).ok) || !FileManager.default.fileExists(atPath: localPath.appendingPathComponent(".git").path) {
            if let remote {
                // Not checked out until links are made plain files (below).
                try must(["-c", "core.symlinks=false", "clone", "--no-checkout", "--", remote, localPath.lastPathComponent], in: localPath.deletingLastPathComponent())
            } else {
                try must(["init"])
            }
            try must(["config", "user.email", "taskchampion@local"])
            try must(["config", "user.name", "taskchampion"])
            try must(["config", "core.symlinks", "false"])
            // The files of a clone made with --no-checkout (none when the remote is empty).
            if remote != nil, try run(["rev-parse", "--verify", "-q", "HEAD"]).ok {
                try must(["reset", "--hard", "-q"])
            }
        }
        // Set at every opening, so a clone an older taskctl made gets it too: a link the
        // remote holds is checked out as a plain file, never as a link.
        try must(["config", "core.symlinks", "false"])
        if !(try run(["checkout", branch]).ok), !(try run(["checkout", "-b", branch]).ok) {
            try must(["symbolic-ref", "HEAD", "refs/heads/\(branch)"])
        }
        try requireRegularTree()
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
        try requireRegularTree()
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

    package func addVersion(parent: UUID, operations: [SyncOperation]) throws -> AddVersionResult {
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
            try writeFile(name, sealed)
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

    package func childVersion(of parent: UUID) throws -> ChildVersion {
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
            guard let data = try readFile(url.lastPathComponent) else { throw SyncServerError.badResponse(url: identity, reason: "cannot read \(url.lastPathComponent)") }
            let operations = try key().open(Array(data), version: child, naming: child, blob: url.lastPathComponent, server: identity, SyncVersion.decode)
            return .version(id: child, parent: parent, operations: operations)
        }
    }

    package func addSnapshot(version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])]) throws {
        try lock.withLock {
            try resetToRemote()
            let sealed = try key().seal(SyncSnapshot.encode(tasks), version: version)
            let text = "{\"version_id\":\"\(Self.simple(version))\",\"payload\":\"\(Data(sealed).base64EncodedString())\"}"
            try writeFile("snapshot", Array(text.utf8))
            try must(["add", "snapshot"])
            try must(["commit", "-m", "add snapshot"])
            guard try push() else {
                try must(["reset", "--hard", "HEAD~1"])
                try resetToRemote()
                throw SyncServerError.unreachable(url: identity, reason: "another replica pushed first; the snapshot goes another time")
            }
        }
    }

    package func latestSnapshot() throws -> (version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])])? {
        try lock.withLock {
            try resetToRemote()
            guard let data = try readFile("snapshot") else { return nil }
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
        if let data = try? readFile("snapshot"),
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

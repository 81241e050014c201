import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which file a descriptor or path refers to, whatever its name: device and inode.
package struct FileIdentity: Hashable {
    package var device: UInt64
    package var inode: UInt64

    package init(_ info: stat) {
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
    }
}

/// The lock every process sharing a store takes: `flock` on the store file itself, so every
/// name of the file (the real path, a symbolic link, a hard link) shares one lock, where a
/// side file per path string would give each name its own.
///
/// A store file can be replaced by a rename (a JSON save, a compaction, a migration) while
/// others wait for its lock; a waiter that then finds its path naming another file retries
/// on the new one. Saves hold the lock exclusively; readers share it, so they never see a
/// commit half written. Within one process a per-file recursive lock serialises threads
/// and lets a thread that holds the lock take it again (a migration opens the store it
/// holds), since `flock` would make two descriptors of one process wait for each other.
package final class FileLock: Sendable {
    /// The path as given (a symbolic link stays one; see ``resolvedPath``).
    package let storePath: String

    package init(storePath: String) {
        self.storePath = storePath
    }

    /// The file the path names now: symbolic links followed, also to a file that does not
    /// exist yet. Files are written beside this path, so a link keeps pointing at the store.
    package var resolvedPath: String { FileIO.resolve(storePath) }

    /// Creates a store file with the bytes `make` returns unless it exists. The new file is
    /// written whole under a temporary name and linked in place, which fails when another
    /// process created it first: the store is created once, complete, without a lock.
    package func createIfMissing(readOnly: Bool, _ make: () throws -> [UInt8]) throws {
        let path = resolvedPath
        guard !FileIO.exists(path) else { return }
        guard !readOnly else { throw StoreError.io(path: storePath, reason: "no such store") }
        try FileIO.createExclusively(try make(), at: path)
    }

    /// One file's in-process lock. `depth` and `exclusive` (of the thread holding `lock`)
    /// are read and written only by that thread, while it holds `lock`; `users` only under
    /// the table's lock: the locks are what protect them, which the compiler cannot see
    /// (hence `@unchecked`).
    private final class Holder: @unchecked Sendable {
        let lock = NSRecursiveLock()
        /// Nesting depth of the thread that holds `lock`.
        var depth = 0
        /// Whether the outermost hold of that thread is exclusive.
        var exclusive = false
        /// Threads that took this holder from the table and have not given it back.
        var users = 0
    }

    /// The holders of files some thread is locking or waiting for: an entry leaves when its
    /// last user gives it back, so the table holds what is in use, not every file (every
    /// compaction's new inode) ever locked.
    private static let holders = Locked([FileIdentity: Holder]())

    private static func holder(for identity: FileIdentity) -> Holder {
        holders.withLock { holders in
            let holder = holders[identity] ?? Holder()
            holder.users += 1
            holders[identity] = holder
            return holder
        }
    }

    private static func giveBack(_ holder: Holder, of identity: FileIdentity) {
        holders.withLock { holders in
            holder.users -= 1
            if holder.users == 0 && holders[identity] === holder { holders[identity] = nil }
        }
    }

    /// How many files have a holder now (tests: the table shrinks back).
    package static var holderCount: Int { holders.withLock { $0.count } }

    /// Runs `body` holding the lock: exclusive for writers, shared for readers. `body` gets
    /// a descriptor of the locked file (open for writing when exclusive) and its resolved path.
    ///
    /// - Throws: ``StoreError/readOnly(path:)`` when writing to a file nobody may write (mode
    ///   0444, say): a save would otherwise replace it with a writable one.
    package func withLock<T>(exclusive: Bool = true, _ body: (_ fd: Int32, _ path: String) throws -> T) throws -> T {
        var attempts = 0
        while true {
            attempts += 1
            let path = resolvedPath
            try FileIO.requireRegularFile(path)
            let fd = open(path, (exclusive ? O_RDWR : O_RDONLY) | O_CLOEXEC)
            if fd < 0 && exclusive && (errno == EACCES || errno == EROFS) { throw StoreError.readOnly(path: storePath) }
            guard fd >= 0 else { throw StoreError.io(path: storePath, reason: "cannot open: \(FileIO.errorText())") }
            var info = stat()
            guard fstat(fd, &info) == 0 else {
                close(fd)
                throw StoreError.io(path: storePath, reason: "cannot read: \(FileIO.errorText())")
            }
            if exclusive && (info.st_mode & 0o222) == 0 {
                close(fd)
                throw StoreError.readOnly(path: storePath)
            }
            let identity = FileIdentity(info)
            let holder = Self.holder(for: identity)
            defer { Self.giveBack(holder, of: identity) }
            holder.lock.lock()
            defer { holder.lock.unlock() }
            // A thread that holds the lock already (through another descriptor) nests; a
            // write inside a read would run under the shared lock only, so it is refused.
            let outermost = holder.depth == 0
            if !outermost && exclusive && !holder.exclusive {
                close(fd)
                throw StoreError.invalidRequest(path: storePath, reason: "a write was asked for while this thread holds the store's shared (reading) lock")
            }
            if outermost {
                while flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0 {
                    guard errno == EINTR else {
                        let reason = FileIO.errorText()
                        close(fd)
                        throw StoreError.io(path: storePath, reason: "cannot lock: \(reason)")
                    }
                }
            }
            // The file may have been replaced while we waited: lock the one the path names.
            var now = stat()
            guard !outermost || (stat(path, &now) == 0 && FileIdentity(now) == identity) else {
                flock(fd, LOCK_UN)
                close(fd)
                guard attempts < 1_000 else { throw StoreError.io(path: storePath, reason: "the file keeps being replaced; cannot lock it") }
                continue
            }
            if outermost { holder.exclusive = exclusive }
            holder.depth += 1
            defer {
                holder.depth -= 1
                if outermost { flock(fd, LOCK_UN) }
                close(fd)
            }
            return try body(fd, path)
        }
    }
}

/// Small POSIX file helpers with errors that name the file.
package enum FileIO {
    package static func errorText() -> String { String(cString: strerror(errno)) }

    /// Marks one file-changing step (a write, a flush, a truncation, a rename, a link) just
    /// before it happens. In a debug build (the tests') the stepped kill harness reads two
    /// variables: `OBJECTSTORE_STEP_LOG=FILE` appends each step's number, name and file to
    /// FILE, and `OBJECTSTORE_KILL_AT_STEP=N` kills the process with SIGKILL instead of
    /// taking step N, so a test can stop a command at every write, flush and rename in turn.
    /// A release build does nothing here.
    @inline(__always)
    package static func step(_ name: StaticString, _ path: String) {
        #if DEBUG
        KillPoints.step(name, path)
        #endif
    }

    /// Sets a file's size (cutting what lies past it).
    package static func truncate(_ fd: Int32, to size: Int, path: String) throws {
        step("truncate", path)
        guard ftruncate(fd, off_t(size)) == 0 else { throw StoreError.io(path: path, reason: "cannot set the file size: \(errorText())") }
    }

    /// Throws unless `path` is a readable regular file.
    package static func requireRegularFile(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { throw StoreError.io(path: path, reason: "cannot read: \(errorText())") }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw StoreError.foreignFile(path: path, reason: "it is a directory") }
        if (info.st_mode & S_IFMT) != S_IFREG { throw StoreError.foreignFile(path: path, reason: "it is not a regular file") }
    }

    package static func readAll(_ fd: Int32, path: String, from offset: Int) throws -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var position = off_t(offset)
        while true {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, position) }
            if n < 0 {
                if errno == EINTR { continue }
                throw StoreError.io(path: path, reason: "cannot read: \(errorText())")
            }
            if n == 0 { return result }
            result.append(contentsOf: buffer[0..<n])
            position += off_t(n)
        }
    }

    #if DEBUG
    /// The reads ``read(_:count:at:path:)`` made, per file descriptor (a debug build's, for
    /// tests that count what a search reads from a file they opened).
    package static let readsByDescriptor = Locked<[Int32: Int]>([:])
    #endif

    /// Reads up to `count` bytes at an offset (fewer at the end of the file).
    package static func read(_ fd: Int32, count: Int, at offset: Int, path: String) throws -> [UInt8] {
        #if DEBUG
        readsByDescriptor.withLock { $0[fd, default: 0] += 1 }
        #endif
        // Not zeroed first: pread fills what it reads, and only that is kept.
        return try [UInt8](unsafeUninitializedCapacity: max(0, count)) { buffer, initialized in
            var done = 0
            defer { initialized = done }
            while done < count {
                let n = pread(fd, buffer.baseAddress.map { UnsafeMutableRawPointer($0 + done) }, count - done, off_t(offset + done))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw StoreError.io(path: path, reason: "cannot read: \(errorText())")
                }
                if n == 0 { break }
                done += n
            }
        }
    }

    /// Writes all bytes at an offset.
    package static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int, path: String) throws {
        step("write", path)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress.map { $0 + written }, bytes.count - written, off_t(offset + written)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw StoreError.io(path: path, reason: "cannot write: \(errorText())")
            }
            written += n
        }
    }

    package static func sync(_ fd: Int32, path: String) throws {
        step("sync", path)
        guard fsync(fd) == 0 else { throw StoreError.io(path: path, reason: "cannot flush to disk: \(errorText())") }
    }

    /// Flushes a file's data and what reading it back needs (its size), not its times.
    package static func syncData(_ fd: Int32, path: String) throws {
        #if os(Linux)
        step("sync", path)
        guard fdatasync(fd) == 0 else { throw StoreError.io(path: path, reason: "cannot flush to disk: \(errorText())") }
        #else
        try sync(fd, path: path)
        #endif
    }

    /// Flushes a directory entry (after a rename).
    package static func syncDirectory(of path: String) {
        step("sync directory", path)
        let directory = (path as NSString).deletingLastPathComponent
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// Replaces a file atomically: a temporary file in the same directory, flushed, then
    /// renamed over the target. The new file keeps the old one's permissions. A file with
    /// several hard links is refused: the rename would give only one of its names the new
    /// contents, and the names would go separate ways.
    ///
    /// - Returns: a descriptor of the new file (the caller closes it), so the caller reads
    ///   back exactly what it wrote even if someone replaces the file again at once.
    package static func replace(_ path: String, with bytes: [UInt8]) throws -> Int32 {
        try replace(path, with: [bytes])
    }

    /// ``replace(_:with:)`` with the file's bytes in pieces, written one after another
    /// (a compaction's header, metadata and snapshot, without copying them into one array).
    /// With `backup`, the file being replaced keeps that second name, given it once the new
    /// file is written and flushed and before the rename (an upgrade's backup: the original
    /// file itself, not a copy).
    package static func replace(_ path: String, with pieces: [[UInt8]], backup: String? = nil) throws -> Int32 {
        var info = stat()
        var mode: mode_t = 0o600
        if stat(path, &info) == 0 {
            guard info.st_nlink <= 1 else {
                throw StoreError.io(path: path, reason: "the file has \(info.st_nlink) hard links, and rewriting it would leave the others behind; use a symbolic link to share a store")
            }
            mode = info.st_mode & 0o7777
        }
        let temporary = try writeTemporary(pieces, beside: path, mode: mode)
        if let backup { step("link", backup) }
        if let backup, link(path, backup) != 0 {
            let reason = errorText()
            unlink(temporary)
            throw StoreError.io(path: path, reason: "cannot keep a backup of the store at \(backup): \(reason); the store was left as it was")
        }
        let fd = open(temporary, O_RDONLY | O_CLOEXEC)
        step("rename", path)
        guard fd >= 0, rename(temporary, path) == 0 else {
            let reason = errorText()
            if fd >= 0 { close(fd) }
            unlink(temporary)
            if let backup { unlink(backup) }
            throw StoreError.io(path: path, reason: "cannot replace the file: \(reason)")
        }
        syncDirectory(of: path)
        return fd
    }

    /// Creates `path` with `bytes` unless it exists (then does nothing): the file is written
    /// and flushed under a temporary name, then linked in, so nobody sees it half written.
    package static func createExclusively(_ bytes: [UInt8], at path: String) throws {
        let temporary = try writeTemporary([bytes], beside: path, mode: 0o600)
        defer { unlink(temporary) }
        step("link", path)
        if link(temporary, path) != 0 {
            if errno == EEXIST { return }
            throw StoreError.io(path: path, reason: "cannot create the store: \(errorText())")
        }
        syncDirectory(of: path)
    }

    private static func writeTemporary(_ pieces: [[UInt8]], beside path: String, mode: mode_t) throws -> String {
        // Before a new copy, the copies killed processes left: every whole-file write (a
        // compaction, a JSON save, a store's creation) comes here, and costs far more than
        // the directory listing; an open, which should not, does not list it.
        removeLeftoversOfDeadProcesses(beside: path)
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        step("create", temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError.io(path: path, reason: "cannot create \(temporary): \(errorText())") }
        do {
            var offset = 0
            for bytes in pieces {
                try write(fd, bytes, at: offset, path: temporary)
                offset += bytes.count
            }
            _ = fchmod(fd, mode)
            try sync(fd, path: temporary)
            close(fd)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        return temporary
    }

    /// `path` with symbolic links followed: the real file, or where a dangling link points.
    package static func resolve(_ path: String) -> String {
        if let real = realpath(path, nil) {
            defer { free(real) }
            return String(cString: real)
        }
        // A missing file (not created yet), perhaps behind a link: follow links by hand.
        var current = path
        for _ in 0..<40 {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(current, &buffer, buffer.count - 1)
            guard n > 0 else { break }
            let target = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = target.hasPrefix("/") ? target : ((current as NSString).deletingLastPathComponent as NSString).appendingPathComponent(target)
        }
        let directory = (current as NSString).deletingLastPathComponent
        if !directory.isEmpty, let real = realpath(directory, nil) {
            defer { free(real) }
            return (String(cString: real) as NSString).appendingPathComponent((current as NSString).lastPathComponent)
        }
        return current
    }

    /// Identity, size and modification time of an open file, to notice a change made in place.
    package static func fingerprint(_ fd: Int32) -> [Int64]? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        #if canImport(Darwin)
        let time = info.st_mtimespec
        #else
        let time = info.st_mtim
        #endif
        return [Int64(truncatingIfNeeded: info.st_dev), Int64(truncatingIfNeeded: info.st_ino), Int64(info.st_size), Int64(time.tv_sec), Int64(time.tv_nsec)]
    }

    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// Whether no process has the id (`kill(pid, 0)` finds none). A process of another user
    /// answers EPERM: it exists.
    package static func processIsGone(_ pid: Int32) -> Bool {
        pid > 0 && kill(pid, 0) != 0 && errno == ESRCH
    }

    /// The id of the process a leftover's name says made it: `STORE.tmp-PID-N` (a compaction's
    /// or a save's copy) or `STORE.migrating-pPID-...` (a migration step).
    package static func leftoverOwner(_ name: String, store: String) -> Int32? {
        for marker in [".tmp-", ".migrating-p"] where name.hasPrefix(store + marker) {
            let digits = name.dropFirst(store.count + marker.count).prefix { $0.isASCII && $0.isNumber }
            return digits.isEmpty ? nil : Int32(digits)
        }
        return nil
    }

    /// Removes what killed processes left beside the store at `path`: temporary copies
    /// (`STORE.tmp-PID-N`, a whole store each when a compaction was killed) and migration
    /// steps (`STORE.migrating-pPID-...`), each only when the process that made it is gone,
    /// so a copy another process is writing now is never touched.
    package static func removeLeftoversOfDeadProcesses(beside path: String) {
        let directory = (path as NSString).deletingLastPathComponent
        let store = (path as NSString).lastPathComponent
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory) else { return }
        for name in names {
            guard let owner = leftoverOwner(name, store: store), processIsGone(owner) else { continue }
            unlink((directory as NSString).appendingPathComponent(name))
        }
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive lock on a side file (`STORE.lock`) held around every save, so processes that
/// share a store take turns. The lock file is never renamed, unlike the store it guards.
final class FileLock: @unchecked Sendable {
    private let path: String
    private let storePath: String
    private let lock = NSLock()

    init(storePath: String) {
        self.storePath = storePath
        self.path = storePath + ".lock"
    }

    /// Creates a store file with `make` unless it exists (checked again under the lock, so
    /// two processes opening a missing store at once create it once).
    func createIfMissing(readOnly: Bool, _ make: () throws -> Void) throws {
        guard !FileIO.exists(storePath) else { return }
        guard !readOnly else { throw StoreError.io(path: storePath, reason: "no such store") }
        try withLock {
            if !FileIO.exists(storePath) { try make() }
        }
    }

    /// Runs `body` holding both the in-process lock and the file lock.
    func withLock<T>(_ body: () throws -> T) throws -> T {
        try lock.withLock {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw StoreError.io(path: path, reason: "cannot open the lock file: \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            while flock(fd, LOCK_EX) != 0 {
                guard errno == EINTR else { throw StoreError.io(path: path, reason: "cannot lock: \(String(cString: strerror(errno)))") }
            }
            defer { _ = flock(fd, LOCK_UN) }
            return try body()
        }
    }
}

/// Small POSIX file helpers with errors that name the file.
enum FileIO {
    static func errorText() -> String { String(cString: strerror(errno)) }

    /// Throws unless `path` is a readable regular file.
    static func requireRegularFile(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { throw StoreError.io(path: path, reason: "cannot read: \(errorText())") }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw StoreError.foreignFile(path: path, reason: "it is a directory") }
        if (info.st_mode & S_IFMT) != S_IFREG { throw StoreError.foreignFile(path: path, reason: "it is not a regular file") }
    }

    /// Reads a whole file.
    static func read(_ path: String) throws -> [UInt8] {
        try requireRegularFile(path)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError.io(path: path, reason: "cannot open: \(errorText())") }
        defer { close(fd) }
        return try readAll(fd, path: path, from: 0)
    }

    static func readAll(_ fd: Int32, path: String, from offset: Int) throws -> [UInt8] {
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

    /// Reads up to `count` bytes at an offset (fewer at the end of the file).
    static func read(_ fd: Int32, count: Int, at offset: Int, path: String) throws -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = result.withUnsafeMutableBytes { pread(fd, $0.baseAddress.map { $0 + done }, count - done, off_t(offset + done)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw StoreError.io(path: path, reason: "cannot read: \(errorText())")
            }
            if n == 0 { break }
            done += n
        }
        return Array(result[0..<done])
    }

    /// Writes all bytes at an offset.
    static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int, path: String) throws {
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

    static func sync(_ fd: Int32, path: String) throws {
        guard fsync(fd) == 0 else { throw StoreError.io(path: path, reason: "cannot flush to disk: \(errorText())") }
    }

    /// Flushes a directory entry (after a rename).
    static func syncDirectory(of path: String) {
        let directory = (path as NSString).deletingLastPathComponent
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// Replaces a file atomically: a temporary file (0600) in the same directory, flushed,
    /// then renamed over the target.
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws {
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError.io(path: path, reason: "cannot create \(temporary): \(errorText())") }
        do {
            try write(fd, bytes, at: 0, path: temporary)
            try sync(fd, path: temporary)
            close(fd)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let reason = errorText()
            unlink(temporary)
            throw StoreError.io(path: path, reason: "cannot replace the file: \(reason)")
        }
        syncDirectory(of: path)
    }

    /// Identity and size of a file, to notice that another process changed it.
    static func fingerprint(_ path: String) -> [Int64]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return [Int64(info.st_dev), Int64(info.st_ino), Int64(info.st_size), Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec)]
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }
}

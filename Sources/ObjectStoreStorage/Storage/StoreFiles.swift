import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A store's file as a migration changes it: the store's lock, the new file written beside
/// it, the backup kept under a second name and the rename that puts the new file in place,
/// and what killed runs left behind. The migrator above the engine calls these, never the
/// file calls themselves; each file-changing call is a stepped kill point.
package enum StoreFiles {
    /// Runs `body` holding the exclusive lock of the store at `storeURL` (every name of the
    /// file shares it), with the file's real path (a symbolic link resolved).
    package static func withLock<T>(of storeURL: URL, _ body: (_ realURL: URL) throws -> T) throws -> T {
        try FileLock(storePath: storeURL.path).withLock { (_: Int32, realPath: String) in try body(URL(fileURLWithPath: realPath)) }
    }

    /// Whether a file exists at `url`.
    package static func exists(_ url: URL) -> Bool { FileIO.exists(url.path) }

    /// How many names the file at `url` has (0 when it has none).
    package static func linkCount(of url: URL) -> Int {
        var info = stat()
        return stat(url.path, &info) == 0 ? Int(info.st_nlink) : 0
    }

    /// Where step `step` of a migration of `finalURL` writes its store: beside it, named with
    /// this process's id, so a later open can tell a killed run's leftover from a running
    /// migration's (``removeLeftovers(of:)``).
    package static func stepURL(beside finalURL: URL, step: Int, json: Bool) -> URL {
        URL(fileURLWithPath: finalURL.path + ".migrating-p\(getpid())-\(step)-\(UUID().uuidString.prefix(8))" + (json ? ".json" : ""))
    }

    /// Puts `newFile` in place of `storeURL` with one rename, after giving the original a
    /// second name at `backup` when one is asked for: a crash before the rename leaves the
    /// original, one after it the new store (and the backup). The directory is flushed.
    package static func replace(_ storeURL: URL, with newFile: URL, keepingBackupAt backup: URL?) throws {
        if let backup {
            FileIO.step("link", backup.path)
            guard link(storeURL.path, backup.path) == 0 else {
                throw StoreError.io(path: storeURL.path, reason: "cannot keep a backup of the store at \(backup.path): \(FileIO.errorText()); the store was left as it was")
            }
        }
        FileIO.step("rename", storeURL.path)
        guard rename(newFile.path, storeURL.path) == 0 else {
            throw StoreError.io(path: storeURL.path, reason: "cannot put the migrated store in place: \(FileIO.errorText())")
        }
        FileIO.syncDirectory(of: storeURL.path)
    }

    /// A free name for a backup of `url` written by model version (or format) `version`:
    /// `STORE.VERSION-backup`, then `-2`, `-3`...
    package static func backupURL(for url: URL, version: String) -> URL {
        let safe = version.replacingOccurrences(of: " ", with: "-")
        var candidate = URL(fileURLWithPath: url.path + ".\(safe)-backup")
        var n = 2
        // lstat: a name taken by a symbolic link, even a dangling one, is taken (stat said
        // it was free, and the link then failed with "File exists").
        var info = stat()
        while lstat(candidate.path, &info) == 0 {
            candidate = URL(fileURLWithPath: url.path + ".\(safe)-backup-\(n)")
            n += 1
        }
        return candidate
    }

    /// Removes the backups of earlier migrations of a store (``BackupPolicy/keepLatest``):
    /// regular files beside it named `STORE.NAME-backup` or `STORE.NAME-backup-N`, except
    /// `keeping`.
    package static func removeBackups(of storeURL: URL, keeping: URL) {
        let directory = storeURL.deletingLastPathComponent().path
        let prefix = storeURL.lastPathComponent + "."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(prefix) && name != keeping.lastPathComponent {
            let rest = name.dropFirst(prefix.count)
            guard let range = rest.range(of: "-backup", options: .backwards), range.lowerBound > rest.startIndex else { continue }
            let tail = rest[range.upperBound...]
            guard tail.isEmpty || (tail.hasPrefix("-") && tail.dropFirst().allSatisfy(\.isNumber) && tail.count > 1) else { continue }
            let path = directory + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            unlink(path)
        }
    }

    /// Removes a temporary file of a migration.
    package static func remove(_ url: URL) {
        unlink(url.path)
    }

    /// Leftovers of a migration that was killed: temporary stores beside `storeURL`.
    /// Removes backup names that are the store itself: a migration killed after it linked the
    /// backup and before it renamed the new store in leaves the original in place under two
    /// names, which would make every later migration refuse the store for its hard links.
    /// Such a name holds nothing the store does not (it is the same file); a backup of a
    /// finished migration is another file and stays.
    package static func removeStaleBackups(of storeURL: URL, version: String) {
        var store = stat()
        guard stat(storeURL.path, &store) == 0, store.st_nlink > 1 else { return }
        let safe = version.replacingOccurrences(of: " ", with: "-")
        var names = [storeURL.path + ".\(safe)-backup"]
        var n = 2
        while FileIO.exists(names[names.count - 1]) {
            names.append(storeURL.path + ".\(safe)-backup-\(n)")
            n += 1
        }
        for name in names {
            var backup = stat()
            if lstat(name, &backup) == 0, backup.st_ino == store.st_ino, backup.st_dev == store.st_dev { unlink(name) }
        }
    }

    /// Removes temporary stores of migrations that were killed, beside `storeURL`: those
    /// whose process is gone, and those of versions that did not name it.
    package static func removeLeftovers(of storeURL: URL) {
        let directory = storeURL.deletingLastPathComponent()
        let store = storeURL.lastPathComponent
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where name.hasPrefix(store + ".migrating-") {
            if let owner = FileIO.leftoverOwner(name, store: store), !FileIO.processIsGone(owner) { continue }
            unlink(directory.appendingPathComponent(name).path)
        }
    }
}

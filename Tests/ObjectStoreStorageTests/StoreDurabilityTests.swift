import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

/// Format 3's rule: commits the header does not claim yet count when complete (a save that
/// flushed its commit and was stopped before it moved the header; `.normal` saves), the first
/// incomplete one ends the log, and the header only ever claims flushed commits.
@Suite struct StoreDurabilityTests {
    private func context(_ url: URL, durability: BinaryStore.Durability = .full) throws -> ManagedObjectContext {
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url, durability: durability))
        context.undoManager = nil
        return context
    }

    private func texts(_ url: URL) throws -> [String] {
        try context(url).fetch(FetchRequest(entityName: "Task", sortDescriptors: [SortKey("text")])).compactMap { $0["text"].stringValue }
    }

    /// A store with saves "a" and "b", its bytes after them, and its bytes after a third save "c".
    private func threeSaves(_ url: URL) throws -> (afterTwo: [UInt8], afterThree: [UInt8]) {
        let writer = try context(url)
        try writer.task("a")
        try writer.save()
        try writer.task("b")
        try writer.save()
        let afterTwo = Array(try Data(contentsOf: url))
        try writer.task("c")
        try writer.save()
        return (afterTwo, Array(try Data(contentsOf: url)))
    }

    @Test func aFullSaveMovesTheHeaderPastItsCommit() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let (afterTwo, afterThree) = try threeSaves(url)
        #expect(try StoreHeader.claimedLength(url) == afterThree.count)
        #expect(afterThree[8] == UInt8(BinaryStore.formatVersion), "the current format")
        #expect(afterTwo.count < afterThree.count)
    }

    @Test func aCommitWhoseHeaderWriteWasLostCountsAndTheNextSaveClaimsIt() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let (afterTwo, afterThree) = try threeSaves(url)
        // A crash after the third commit was flushed, before the header was rewritten.
        try Data(Array(afterTwo[0..<64]) + afterThree[64...]).write(to: url)
        #expect(try StoreHeader.claimedLength(url) == afterTwo.count)
        #expect(try texts(url) == ["a", "b", "c"])
        let writer = try context(url)
        try writer.task("d")
        try writer.save()
        #expect(try StoreHeader.claimedLength(url) == (try Data(contentsOf: url)).count)
        #expect(try texts(url) == ["a", "b", "c", "d"])
        #expect(try writer.coordinator.checkIntegrity().problems.isEmpty)
    }

    @Test func anIncompleteUnclaimedCommitIsATornTailThatTheNextSaveOverwrites() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let (afterTwo, afterThree) = try threeSaves(url)
        let header = Array(afterTwo[0..<64])
        // Cut anywhere inside the third commit, or one of its bytes changed: not a commit.
        var torn: [[UInt8]] = stride(from: afterTwo.count, to: afterThree.count, by: 3).map { header + afterThree[64..<$0] }
        for offset in [afterTwo.count, afterTwo.count + 5, afterTwo.count + 9, afterThree.count - 1] {
            var flipped = header + afterThree[64...]
            flipped[offset] ^= 0x5A
            torn.append(flipped)
        }
        // A file extended by the system but never written: zeros.
        torn.append(afterTwo + [UInt8](repeating: 0, count: 40))
        for bytes in torn {
            try Data(bytes).write(to: url)
            #expect(try texts(url) == ["a", "b"], "a tail of \(bytes.count - afterTwo.count) bytes")
            let writer = try context(url)
            try writer.task("z")
            try writer.save()
            #expect(try texts(url) == ["a", "b", "z"])
            #expect(try StoreHeader.claimedLength(url) == (try Data(contentsOf: url)).count)
        }
    }

    @Test func damageInsideTheClaimedBytesIsStillReported() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let (_, afterThree) = try threeSaves(url)
        var damaged = afterThree
        damaged[afterThree.count - 2] ^= 0x5A
        try Data(damaged).write(to: url)
        #expect(throws: StoreError.self) { try texts(url) }
        #expect(Array(try Data(contentsOf: url)) == damaged, "the file is left untouched")
    }

    @Test func normalSavesAreSeenByOtherStoresAndClaimedAtACheckpoint() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let writer = try context(url, durability: .normal)
        try writer.task("first")
        try writer.save()
        let reader = try context(url)
        let header = try StoreHeader.claimedLength(url)
        #expect(try reader.count(for: FetchRequest(entityName: "Task")) == 1)
        for i in 0..<5 {
            try writer.task("n\(i)")
            try writer.save()
        }
        #expect(try StoreHeader.claimedLength(url) == header, "a .normal save leaves the header alone")
        #expect(try reader.count(for: FetchRequest(entityName: "Task")) == 6, "an open store sees unclaimed commits")
        #expect(try texts(url).count == 6, "so does a new one")
        // Past 64 KiB of unclaimed commits, a save flushes and moves the header: saves of
        // 200 tasks until more than twice that was written since the first.
        let start = try Data(contentsOf: url).count
        var i = 0
        while try Data(contentsOf: url).count - start <= 2 * (64 << 10) {
            for j in 0..<200 { try writer.task("m\(i)-\(j)") }
            try writer.save()
            i += 1
        }
        #expect(try StoreHeader.claimedLength(url) > header)
        #expect(try (Data(contentsOf: url)).count - StoreHeader.claimedLength(url) <= 64 << 10)
        // A full save of another store claims everything before it.
        try reader.task("full")
        try reader.save()
        #expect(try StoreHeader.claimedLength(url) == (try Data(contentsOf: url)).count)
        #expect(try texts(url).count == 7 + 200 * i)
        #expect(try reader.coordinator.checkIntegrity().problems.isEmpty)
    }
}

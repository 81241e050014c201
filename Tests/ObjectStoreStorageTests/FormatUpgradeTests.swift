import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

/// Store format 1.0 and the pre-release formats before it: a pre-release file is read only
/// to upgrade it (with a backup), and the header's feature bits keep a 1.0 program from
/// reading or changing what a later 1.x wrote with features it does not know.
@Suite struct FormatUpgradeTests {
    /// taskctl's stores in the pre-release formats (Tests/taskctlTests/Fixtures).
    static let fixtures = TasksFixtures.repository.appendingPathComponent("Tests/taskctlTests/Fixtures")

    /// Every task's text and due date, read with the legacy reader (as the program that
    /// wrote the file read it) or with the current one.
    static func tasks(_ url: URL, legacy: Bool) throws -> [String] {
        let metadata = try BinaryStore.metadata(at: url)
        let model = try metadata.storedModel()
        let store = try BinaryStore(url: url, model: model, readOnly: true, identifier: nil, readingLegacy: legacy)
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(model: model, store: store))
        return try context.fetch(FetchRequest(entityName: "Task")).map { task in
            "\(task.objectID.primaryKey ?? -1) \(task["title"].stringValue ?? "?") \(task["dueDate"]) \(try task.objects(forKey: "tags").count)"
        }.sorted()
    }

    /// A copy of the fixture of `format` (format 2 is format 3's file with the version of
    /// ObjectStore 0.3, which wrote the same layout; the version is outside the checksum).
    static func legacyFile(_ format: Int, in directory: TemporaryDirectory) throws -> URL {
        var bytes = Array(try Data(contentsOf: fixtures.appendingPathComponent("format\(max(format, 3)).store")))
        if format == 2 { bytes[8] = 2 }
        let url = directory.file("tasks.store")
        try Data(bytes).write(to: url)
        return url
    }

    @Test(arguments: [2, 3, 5, 7])
    func aPreReleaseFileIsRefusedUntilUpgradedThenReadsAsBefore(format: Int) throws {
        let directory = try TemporaryDirectory()
        let url = try Self.legacyFile(format, in: directory)
        let original = try Data(contentsOf: url)
        let models = try TasksFixtures.tasksDirectory()
        let current = try models.currentModel()
        let before = try Self.tasks(url, legacy: true)
        #expect(before.count > 40)

        // Opened as a store of 1.0, read-only or not, directly or through the migrator read-only.
        #expect(throws: StoreError.legacyFormat(path: url.path, version: format)) {
            try PersistentStoreCoordinator(model: current, storeURL: url)
        }
        #expect(throws: StoreError.legacyFormat(path: url.path, version: format)) {
            try PersistentStoreCoordinator(model: current, storeURL: url, readOnly: true)
        }
        #expect(throws: StoreError.self) { try StoreMigrator(models: models).openStore(at: url, readOnly: true) }
        #expect(try Data(contentsOf: url) == original, "refused without a change")

        // The migrator upgrades it (and migrates its model), keeping the original.
        let (coordinator, result) = try StoreMigrator(models: models).openStore(at: url)
        let outcome = try #require(result)
        #expect(outcome.upgradedFormat == format)
        #expect(try Data(contentsOf: outcome.backupURL) == original)
        #expect(try Data(contentsOf: url)[8] == UInt8(BinaryStore.formatVersion))
        #expect(try coordinator.checkIntegrity().problems.isEmpty)
        #expect(try Self.tasks(url, legacy: false) == before)
        // Upgraded once: the next open does nothing.
        let (_, next) = try StoreMigrator(models: models).openStore(at: url)
        #expect(next == nil)
    }

    /// A file the legacy reader cannot read whole (a damaged row) is not upgraded: the
    /// original stays as it was, and no backup is left behind.
    @Test func aDamagedPreReleaseFileIsLeftAsItWas() throws {
        let directory = try TemporaryDirectory()
        let url = try Self.legacyFile(7, in: directory)
        var bytes = Array(try Data(contentsOf: url))
        // A byte of a row's text in the snapshot (its row checksum then fails).
        let text = Array("Task 29 of the format-3 fixture".utf8)
        let at = try #require((0...(bytes.count - text.count)).first { Array(bytes[$0..<$0 + text.count]) == text })
        bytes[at + 3] ^= 0x20
        try Data(bytes).write(to: url)
        #expect(throws: StoreError.self) { try StoreMigrator(models: try TasksFixtures.tasksDirectory()).openStore(at: url) }
        #expect(try Data(contentsOf: url) == Data(bytes))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0 != "tasks.store" }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// Sets feature bits in a 1.0 file's header (its checksum made to match).
    static func setFeatures(_ url: URL, read: UInt64, write: UInt64) throws {
        var bytes = Array(try Data(contentsOf: url))
        for (offset, value) in [(64, read), (72, write)] {
            for b in 0..<8 { bytes[offset + b] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(b))) }
        }
        let crc = CRC32.checksum(bytes[16..<BinaryStore.headerSize])
        for b in 0..<4 { bytes[12 + b] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(b))) }
        try Data(bytes).write(to: url)
    }

    /// A read feature this version does not know: the file is not read. A write feature it
    /// does not know (one a later version defines): the file is read, but neither a save
    /// nor a compaction changes it.
    @Test func unknownFeaturesKeepAnOlderProgramFromMisreadingOrChangingAFile() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let writer = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url))
        for name in ["a", "b"] { try writer.task(name) }
        try writer.save()

        try Self.setFeatures(url, read: 1 << 5, write: 0)
        #expect(throws: StoreError.newerFeatures(path: url.path, features: 1 << 5, writing: false)) {
            try PersistentStoreCoordinator(model: TestModel.model, storeURL: url)
        }

        try Self.setFeatures(url, read: 0, write: 1 << 6)
        let bytes = try Data(contentsOf: url)
        let reader = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url))
        #expect(try reader.fetch(FetchRequest(entityName: "Task")).compactMap { $0["text"].stringValue }.sorted() == ["a", "b"])
        try reader.task("c")
        #expect(throws: StoreError.newerFeatures(path: url.path, features: 1 << 6, writing: true)) { try reader.save() }
        #expect(throws: StoreError.self) { try reader.coordinator.compactStore() }
        #expect(try Data(contentsOf: url) == bytes, "unchanged")
    }

    /// Records from tag 16 on are skippable: a reader passes over one it does not know
    /// (tags 18 to 255 are not defined in 1.0), and later saves keep working.
    @Test func aSkippableRecordIsPassedOver() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let writer = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url))
        try writer.task("a")
        try writer.save()
        // A commit of one record of tag 30 (5 bytes) and one of tag 200 (empty), appended
        // past the header's claim: a reader counts it once it is whole.
        let payload: [UInt8] = [30, 5, 1, 2, 3, 4, 5, 200, 0]
        let frame = BinaryStore.frame(payload)
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        try handle.write(contentsOf: frame)
        try handle.close()
        let reader = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url))
        #expect(try reader.fetch(FetchRequest(entityName: "Task")).compactMap { $0["text"].stringValue } == ["a"])
        try reader.task("b")
        try reader.save()
        let again = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url))
        #expect(try again.fetch(FetchRequest(entityName: "Task")).compactMap { $0["text"].stringValue }.sorted() == ["a", "b"])
        #expect(try again.coordinator.checkIntegrity().problems.isEmpty)
    }
}

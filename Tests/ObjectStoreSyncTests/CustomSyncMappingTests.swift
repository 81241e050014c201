import Foundation
import Testing
import ObjectStore
import ObjectStoreModel
import ObjectStoreSync

/// A sync mapping written as a library user writes one, with the public API alone (this
/// file imports nothing @testable): the generic mapping, with a note's `text` travelling
/// as Taskwarrior's `description`.
struct DescriptionMapping: SyncMapping {
    let generic: UUIDSyncMapping
    var stateEntity: SyncStateEntity { generic.stateEntity }
    var entitiesNotSynced: [String] { generic.entitiesNotSynced }
    var modifiedKey: String? { nil }

    func renamed(_ keys: [String: String]) -> [String: String] {
        var keys = keys
        keys["description"] = keys.removeValue(forKey: "text")
        return keys
    }
    func allTasks(in context: ManagedObjectContext) throws -> [(uuid: UUID, properties: [String: String])] {
        try generic.allTasks(in: context).map { ($0.uuid, renamed($0.properties)) }
    }
    func task(_ uuid: UUID, in context: ManagedObjectContext) throws -> [String: String]? {
        try generic.task(uuid, in: context).map(renamed)
    }
    func touches(of change: HistoryChange, tombstones: SyncTombstones, in context: ManagedObjectContext) throws -> [SyncTouch] {
        try generic.touches(of: change, tombstones: tombstones, in: context).map { touch in
            guard case .keys(let keys) = touch.kind else { return touch }
            return SyncTouch(task: touch.task, kind: .keys(Set(keys.map { $0 == "text" ? "description" : $0 })))
        }
    }
    func write(_ properties: [String: String]?, for uuid: UUID, in context: ManagedObjectContext) throws -> [String] {
        var keys = properties
        if let text = keys?.removeValue(forKey: "description") { keys?["text"] = text }
        return try generic.write(keys, for: uuid, in: context)
    }
    func finishWrites(in context: ManagedObjectContext) throws -> [String] { try generic.finishWrites(in: context) }
}

@Suite struct CustomSyncMappingTests {
    static let schema = """
        { "entities": [
            { "name": "Note", "attributes": [
                { "name": "uuid", "type": "uuid", "optional": false, "preserveValueOnDeletion": true },
                { "name": "text", "type": "string" } ] },
            { "name": "SyncState", "attributes": [
                { "name": "server", "type": "string" }, { "name": "baseVersion", "type": "uuid" },
                { "name": "syncedTransaction", "type": "int64", "optional": false, "default": 0 },
                { "name": "lastSync", "type": "date" }, { "name": "clockFloor", "type": "date" } ] }
        ] }
        """

    /// Two replicas with the mapping share a note through a git repository; a replica with
    /// the generic mapping receives `description`, a key its model does not have, and says so.
    @Test func aMappingOfYourOwnChoosesTheKeysThatTravel() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("custom-mapping-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let bare = folder.appendingPathComponent("remote.git")
        let git = Process()
        git.executableURL = URL(fileURLWithPath: "/usr/bin/git")
        git.arguments = ["init", "--bare", "-q", bare.path]
        try git.run()
        git.waitUntilExit()
        try #require(git.terminationStatus == 0)
        let model = try ManagedObjectModel(schema: Self.schema)
        func replica(_ name: String, custom: Bool) throws -> (PersistentStoreCoordinator, SyncEngine) {
            let coordinator = PersistentStoreCoordinator(inMemoryWith: model, history: .all)
            let remote = SyncRemote.git(localPath: folder.appendingPathComponent(name), remote: bare.path, encryptionSecret: "a long passphrase",
                                        keyCache: folder.appendingPathComponent("key-\(name)"))
            let engine = custom
                ? try SyncEngine(coordinator: coordinator, remote: remote, mapping: DescriptionMapping(generic: try UUIDSyncMapping(model: model)))
                : try SyncEngine(coordinator: coordinator, remote: remote)
            return (coordinator, engine)
        }
        let (laptop, laptopSync) = try replica("laptop", custom: true)
        let (desktop, desktopSync) = try replica("desktop", custom: true)
        let (plain, plainSync) = try replica("plain", custom: false)
        let context = ManagedObjectContext(coordinator: laptop)
        let note = try context.insertObject(entityName: "Note")
        let uuid = UUID()
        try note.setValue(.uuid(uuid), forKey: "uuid")
        try note.setValue("Buy milk", forKey: "text")
        try context.save()
        #expect(try laptopSync.sync().operationsSent > 0)

        _ = try desktopSync.sync()
        let desktopReader = ManagedObjectContext(coordinator: desktop)
        let there = try desktopReader.fetch(FetchRequest(entityName: "Note"))
        #expect(there.map { $0["text"] } == ["Buy milk"])
        #expect(there.first?["uuid"] == .uuid(uuid))

        let report = try plainSync.sync()
        #expect(report.warnings.contains { $0.contains("description") }, "\(report.warnings)")
        let plainReader = ManagedObjectContext(coordinator: plain)
        let plainNotes = try plainReader.fetch(FetchRequest(entityName: "Note"))
        #expect(plainNotes.count == 1 && plainNotes.first?["text"] == .null)

        // An edit on the desktop comes back to the laptop through the same renaming.
        let edited = ManagedObjectContext(coordinator: desktop)
        try edited.fetch(FetchRequest(entityName: "Note")).first?.setValue("Buy oat milk", forKey: "text")
        try edited.save()
        _ = try desktopSync.sync()
        _ = try laptopSync.sync()
        let laptopReader = ManagedObjectContext(coordinator: laptop)
        #expect(try laptopReader.fetch(FetchRequest(entityName: "Note")).first?["text"] == "Buy oat milk")
    }
}

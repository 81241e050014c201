import Foundation
import ObjectStore
import ObjectStoreModel
import Testing
@testable import ObjectStoreSync

/// A model of the library user's own synced through TaskChampion's layout with the generic
/// mapping: objects with a UUID, attributes of every type, a to-one relationship with its
/// to-many inverse, and a many-to-many pair.
struct UUIDSyncMappingTests {
    static let schema = #"""
    { "entities": [
        { "name": "Folder",
          "attributes": [{ "name": "uuid", "type": "uuid", "optional": false, "preserveValueOnDeletion": true }, { "name": "name", "type": "string" }],
          "relationships": [{ "name": "notes", "destination": "Note", "inverse": "folder", "toMany": true, "deleteRule": "nullify" }] },
        { "name": "Note",
          "attributes": [{ "name": "uuid", "type": "uuid", "optional": false, "preserveValueOnDeletion": true }, { "name": "title", "type": "string" },
                         { "name": "pinned", "type": "boolean", "optional": false, "default": false }, { "name": "rating", "type": "double" },
                         { "name": "count", "type": "int64" }, { "name": "created", "type": "date" }, { "name": "blob", "type": "binary" }],
          "relationships": [{ "name": "folder", "destination": "Folder", "inverse": "notes", "deleteRule": "nullify" },
                            { "name": "labels", "destination": "Label", "inverse": "notes", "toMany": true, "deleteRule": "nullify" }] },
        { "name": "Label",
          "attributes": [{ "name": "uuid", "type": "uuid", "optional": false, "preserveValueOnDeletion": true }, { "name": "name", "type": "string" }],
          "relationships": [{ "name": "notes", "destination": "Note", "inverse": "labels", "toMany": true, "deleteRule": "nullify" }] },
        { "name": "SyncState",
          "attributes": [{ "name": "server", "type": "string" }, { "name": "baseVersion", "type": "uuid" },
                         { "name": "syncedTransaction", "type": "int64", "optional": false, "default": 0 }, { "name": "lastSync", "type": "date" },
                         { "name": "clockFloor", "type": "date" }] }
    ] }
    """#

    final class Replica {
        let context: ManagedObjectContext
        let engine: SyncEngine
        init(model: ManagedObjectModel, server: any SyncServer) throws {
            let coordinator = PersistentStoreCoordinator(inMemoryWith: model, history: .all)
            context = ManagedObjectContext(coordinator: coordinator)
            context.mergePolicy = .mergeByPropertyMemoryWins
            engine = SyncEngine(coordinator: coordinator, mapping: try UUIDSyncMapping(model: model), server: server)
        }

        func insert(_ entity: String, _ values: [String: Value] = [:]) throws -> ManagedObject {
            let object = try context.insertObject(entityName: entity)
            try object.setValue(.uuid(UUID()), forKey: "uuid")
            for (key, value) in values { try object.setValue(value, forKey: key) }
            return object
        }

        func sync() throws {
            context.reset()
            _ = try engine.sync()
        }

        /// Every object as text, by UUID: entity, attributes, relationships as UUIDs.
        func dump() throws -> [String: String] {
            let fresh = ManagedObjectContext(coordinator: context.coordinator)
            var all: [String: String] = [:]
            for entity in ["Folder", "Note", "Label"] {
                for object in try fresh.fetch(FetchRequest(entityName: entity)) {
                    guard case .uuid(let uuid) = object["uuid"] else { continue }
                    var parts = [entity]
                    for property in object.entity.properties {
                        if let relationship = property.relationship {
                            let targets = try relationship.isToMany ? object.objects(forKey: property.name) : [object.object(forKey: property.name)].compactMap { $0 }
                            parts.append("\(property.name)=" + targets.map { "\($0["uuid"])" }.sorted().joined(separator: ","))
                        } else if property.name != "uuid" {
                            parts.append("\(property.name)=\(object[property.name])")
                        }
                    }
                    all[uuid.uuidString] = parts.joined(separator: " ")
                }
            }
            return all
        }
    }

    /// Runs `body` on a thread of its own (the engine waits for its server there), awaited.
    func onThread(_ body: @escaping @Sendable () throws -> Void) async throws {
        let failure = Failure()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                do { try body() } catch { failure.set("\(error)") }
                done.resume()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        if let message = failure.get() { Issue.record(Comment(rawValue: message)) }
    }

    final class Failure: @unchecked Sendable {
        private let lock = NSLock()
        private var message: String?
        func set(_ text: String) { lock.withLock { message = message ?? text } }
        func get() -> String? { lock.withLock { message } }
    }

    func server() -> BucketSyncServer {
        BucketSyncServer(bucket: MemoryBucket(), key: Array(repeating: 7, count: 32), random: { 255 })
    }

    /// A graph of objects reaches the other replica whole; concurrent changes to different
    /// properties and relationships are both kept, a deletion wins over an edit.
    @Test func aModelOfOnesOwnSyncsWithItsRelationships() async throws {
        let model = try ManagedObjectModel(schema: Self.schema, file: "notes")
        let server = server()
        try await onThread {
            let a = try Replica(model: model, server: server), b = try Replica(model: model, server: server)
            let inbox = try a.insert("Folder", ["name": "Inbox"])
            let urgent = try a.insert("Label", ["name": "urgent"]), home = try a.insert("Label", ["name": "home"])
            let first = try a.insert("Note", ["title": "First", "pinned": .bool(true), "rating": .double(4.5), "count": .integer(-3),
                                              "created": .date(Date(timeIntervalSince1970: 1_795_000_000.25)), "blob": .data(Data([0, 1, 254, 255]))])
            try first.setObject(inbox, forKey: "folder")
            try first.setObjects([urgent, home], forKey: "labels")
            let second = try a.insert("Note", ["title": "Second"])
            try second.setObject(inbox, forKey: "folder")
            try a.context.save()
            try a.sync()
            try b.sync()
            let shared = try a.dump()
            guard shared.count == 5, try b.dump() == shared else {
                throw SyncMappingError(reason: "B received \(try b.dump()), A has \(shared)")
            }

            // A retitles the first note and takes a label off; B moves it to a new folder,
            // unpins it and deletes the second note.
            let firstID = try #require(first["uuid"].uuidValue), secondID = try #require(second["uuid"].uuidValue)
            let onA = try #require(try a.context.fetch(FetchRequest(entityName: "Note", predicate: ObjectPredicate(format: "uuid == %@", .uuid(firstID)))).first)
            try onA.setValue(.string("First, retitled"), forKey: "title")
            try onA.removeObject(try #require(try onA.objects(forKey: "labels").first { $0["name"] == .string("home") }), fromKey: "labels")
            try a.context.save()
            let onB = try #require(try b.context.fetch(FetchRequest(entityName: "Note", predicate: ObjectPredicate(format: "uuid == %@", .uuid(firstID)))).first)
            let archive = try b.insert("Folder", ["name": "Archive"])
            try onB.setObject(archive, forKey: "folder")
            try onB.setValue(.bool(false), forKey: "pinned")
            let secondOnB = try #require(try b.context.fetch(FetchRequest(entityName: "Note", predicate: ObjectPredicate(format: "uuid == %@", .uuid(secondID)))).first)
            b.context.delete(secondOnB)
            try b.context.save()
            try a.sync()
            try b.sync()
            try a.sync()
            let endA = try a.dump(), endB = try b.dump()
            guard endA == endB else { throw SyncMappingError(reason: "differ: \(endA) vs \(endB)") }
            let archiveID = try #require(archive["uuid"].uuidValue), urgentID = try #require(urgent["uuid"].uuidValue)
            let expected = "Note blob=<4 bytes> count=-3 created=2026-11-18T11:06:40.25Z folder=\(archiveID.uuidString) labels=\(urgentID.uuidString) "
                + "pinned=false rating=4.5 title=\"First, retitled\""
            guard endA[firstID.uuidString] == expected, endA[secondID.uuidString] == nil, endA.count == 5,
                  endA[archiveID.uuidString] == "Folder name=\"Archive\" notes=\(firstID.uuidString)"
            else { throw SyncMappingError(reason: "not the merged graph: \(endA)") }
        }
    }

    /// Three replicas, random changes (objects made and deleted, attributes set, to-one and
    /// many-to-many relationships changed) and syncs in random order: after a last round they
    /// hold the same objects, property for property (60 seeds).
    @Test func threeReplicasOfAModelOfOnesOwnConverge() async throws {
        let model = try ManagedObjectModel(schema: Self.schema, file: "notes")
        try await onThread {
            var tasks = 0
            for seed in 1...60 as ClosedRange<UInt64> {
                var random = seed &* 0x9E37_79B9_7F4A_7C15
                func next(_ bound: Int) -> Int {
                    random ^= random << 13; random ^= random >> 7; random ^= random << 17
                    return Int(random % UInt64(bound))
                }
                let server = server()
                let replicas = try (0..<3).map { _ in try Replica(model: model, server: server) }
                for _ in 0..<30 {
                    let replica = replicas[next(3)]
                    if next(4) == 0 { try replica.sync(); continue }
                    let context = replica.context
                    let notes = try context.fetch(FetchRequest(entityName: "Note")), folders = try context.fetch(FetchRequest(entityName: "Folder"))
                    let labels = try context.fetch(FetchRequest(entityName: "Label"))
                    switch next(7) {
                    case 0: _ = try replica.insert("Note", ["title": .string("n\(next(100))")])
                    case 1: _ = try replica.insert(next(2) == 0 ? "Folder" : "Label", ["name": .string("x\(next(100))")])
                    case 2: if !notes.isEmpty { try notes[next(notes.count)].setValue(.string("t\(next(100))"), forKey: "title") }
                    case 3: if !notes.isEmpty { try notes[next(notes.count)].setObject(folders.isEmpty ? nil : folders[next(folders.count)], forKey: "folder") }
                    case 4: if !notes.isEmpty, !labels.isEmpty { try notes[next(notes.count)].addObject(labels[next(labels.count)], toKey: "labels") }
                    case 5: if !notes.isEmpty { let note = notes[next(notes.count)]; if let label = try note.objects(forKey: "labels").first { try note.removeObject(label, fromKey: "labels") } }
                    default:
                        let all = notes + folders + labels
                        if !all.isEmpty { context.delete(all[next(all.count)]) }
                    }
                    try context.save()
                }
                for replica in replicas + replicas { try replica.sync() }
                let first = try replicas[0].dump()
                tasks += first.count
                for replica in replicas.dropFirst() where try replica.dump() != first {
                    throw SyncMappingError(reason: "seed \(seed): \(try replica.dump()) vs \(first)")
                }
            }
            if tasks < 60 * 3 { throw SyncMappingError(reason: "only \(tasks) objects in 60 seeds") }
        }
    }

    /// A model the mapping cannot serve is named: a UUID attribute not kept on deletion.
    @Test func aUUIDNotKeptOnDeletionIsRefused() throws {
        let model = try ManagedObjectModel(schema: #"{ "entities": [{ "name": "Item", "attributes": [{ "name": "uuid", "type": "uuid" }] }] }"#)
        #expect(throws: SyncMappingError.self) { try UUIDSyncMapping(model: model) }
        #expect(UUIDSyncMapping.value("2.5", as: .double) == .double(2.5) && UUIDSyncMapping.value("yes", as: .boolean) == nil)
        #expect(UUIDSyncMapping.text(.date(Date(timeIntervalSince1970: 1.5))) == "1.5")
    }
}

extension Value {
    var uuidValue: UUID? {
        if case .uuid(let uuid) = self { return uuid }
        return nil
    }
}

/// A server without the key that replays versions: it answers the child of version P with
/// a genuine version (one it stored earlier), under an ID the sync already stood on. The
/// sync stops with an error naming the loop; before, it followed the chain for ever.
struct SyncCycleTests {
    /// Wraps a server; once it holds a chain, answers every child request with its first
    /// version (each time P's child is that same version, under its own ID).
    final class ReplayingServer: SyncServer, @unchecked Sendable {
        let inner: any SyncServer
        private let lock = NSLock()
        private var first: (UUID, [SyncOperation])?
        var replaying = false
        init(_ inner: any SyncServer) { self.inner = inner }
        var identity: String { inner.identity }
        func addVersion(parent: UUID, operations: [SyncOperation]) throws -> AddVersionResult {
            try inner.addVersion(parent: parent, operations: operations)
        }
        func childVersion(of parent: UUID) throws -> ChildVersion {
            let answer = try inner.childVersion(of: parent)
            if case .version(let id, _, let operations) = answer, lock.withLock({ first == nil }) { lock.withLock { first = (id, operations) } }
            guard lock.withLock({ replaying }), let (id, operations) = lock.withLock({ first }) else { return answer }
            return .version(id: id, parent: parent, operations: operations)
        }
        func addSnapshot(version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])]) throws {
            try inner.addSnapshot(version: version, tasks: tasks)
        }
        func latestSnapshot() throws -> (version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])])? {
            try inner.latestSnapshot()
        }
    }

    @Test func aServerThatReplaysAVersionStopsTheSyncWithAnError() async throws {
        let model = try ManagedObjectModel(schema: UUIDSyncMappingTests.schema, file: "notes")
        let bucket = BucketSyncServer(bucket: MemoryBucket(), key: Array(repeating: 7, count: 32), random: { 255 })
        let server = ReplayingServer(bucket)
        try await UUIDSyncMappingTests().onThread {
            let a = try UUIDSyncMappingTests.Replica(model: model, server: server)
            _ = try a.insert("Folder", ["name": "Inbox"])
            try a.context.save()
            try a.sync()
            let b = try UUIDSyncMappingTests.Replica(model: model, server: server)
            // B reads the first version, then is sent it again as its own child.
            server.replaying = true
            #expect {
                try b.sync()
            } throws: { error in
                guard case SyncError.versionCycle = error else { return false }
                return "\(error)".contains("its chain of versions loops")
            }
        }
    }
}

/// Entities without the UUID attribute do not travel, and say so: the engine names them,
/// and every sync's report warns (before, their objects stayed behind without a word).
struct EntitiesNotSyncedTests {
    @Test func entitiesWithoutAUUIDAreNamedByTheEngineAndEachSync() async throws {
        let schema = UUIDSyncMappingTests.schema.replacingOccurrences(of: #"{ "name": "SyncState","#, with: #"""
            { "name": "Draft", "attributes": [{ "name": "body", "type": "string" }] },
            { "name": "SyncState",
            """#)
        let model = try ManagedObjectModel(schema: schema, file: "notes")
        let server = BucketSyncServer(bucket: MemoryBucket(), key: Array(repeating: 7, count: 32), random: { 255 })
        try await UUIDSyncMappingTests().onThread {
            let a = try UUIDSyncMappingTests.Replica(model: model, server: server)
            #expect(a.engine.entitiesNotSynced == ["Draft"])
            a.context.reset()
            let report = try a.engine.sync()
            #expect(report.warnings.contains { $0.contains("objects of Draft stay on this replica") }, "\(report.warnings)")
        }
    }
}

/// Objects with a uniqueness constraint made on two replicas (a Folder "Finance" on each,
/// with different UUIDs): every replica ends with one Folder under one UUID (the smaller),
/// notes filed in either one before the sync are in it, and so are notes filed later, on
/// three replicas and a fourth that joins afterwards. Before, each replica merged locally
/// under its own UUID, a note filed later arrived without its folder, and the replicas
/// stayed different for good.
struct UniqueValuesConvergeTests {
    static let schema = UUIDSyncMappingTests.schema
        .replacingOccurrences(of: #""relationships": [{ "name": "notes", "destination": "Note", "inverse": "folder", "toMany": true, "deleteRule": "nullify" }] },"#,
                              with: #""relationships": [{ "name": "notes", "destination": "Note", "inverse": "folder", "toMany": true, "deleteRule": "nullify" }], "uniquenessConstraints": [["name"]] },"#)
        .replacingOccurrences(of: #"{ "name": "clockFloor", "type": "date" }"#, with: #"{ "name": "clockFloor", "type": "date" }, { "name": "aliases", "type": "string" }"#)

    @Test func aFolderMadeOnTwoReplicasIsOneEverywhere() async throws {
        #expect(Self.schema.contains(#""uniquenessConstraints": [["name"]]"#) && Self.schema.contains(#""aliases""#))
        let model = try ManagedObjectModel(schema: Self.schema, file: "notes")
        let server = BucketSyncServer(bucket: MemoryBucket(), key: Array(repeating: 7, count: 32), random: { 255 })
        try await UUIDSyncMappingTests().onThread {
            let a = try UUIDSyncMappingTests.Replica(model: model, server: server)
            let b = try UUIDSyncMappingTests.Replica(model: model, server: server)
            let c = try UUIDSyncMappingTests.Replica(model: model, server: server)
            // Each of A and B makes Finance and files a note in it, offline.
            for (replica, title) in [(a, "from A"), (b, "from B")] {
                let folder = try replica.insert("Folder", ["name": "Finance"])
                let note = try replica.insert("Note", ["title": .string(title)])
                try note.setObject(folder, forKey: "folder")
                try replica.context.save()
            }
            try a.sync()
            try c.sync()
            try b.sync()
            try a.sync()
            try c.sync()
            // Notes filed later on each replica, in the Finance it has.
            for (replica, title) in [(a, "later A"), (b, "later B"), (c, "later C")] {
                replica.context.reset()
                let finance = try #require(try replica.context.fetch(FetchRequest(entityName: "Folder")).first)
                let note = try replica.insert("Note", ["title": .string(title)])
                try note.setObject(finance, forKey: "folder")
                try replica.context.save()
            }
            for replica in [a, b, c, a, b] { try replica.sync() }
            let d = try UUIDSyncMappingTests.Replica(model: model, server: server)
            try d.sync()
            let dumps = try [a, b, c, d].map { try $0.dump() }
            for (index, dump) in dumps.enumerated() {
                let folders = dump.values.filter { $0.hasPrefix("Folder ") }
                #expect(folders.count == 1, "replica \(index): \(folders)")
                let notes = dump.values.filter { $0.hasPrefix("Note ") }
                #expect(notes.count == 5, "replica \(index): \(notes)")
                let folderUUID = dump.first { $0.value.hasPrefix("Folder ") }?.key.lowercased() ?? "?"
                #expect(notes.allSatisfy { $0.lowercased().contains("folder=\(folderUUID)") }, "replica \(index): \(notes)")
                #expect(dump == dumps[0], "replica \(index) differs")
            }
        }
    }
}

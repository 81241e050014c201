import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

/// A compaction of a large entity writes its rows on all the cores, a part each, and merges
/// what the parts give the columns and indexes: the file must be the one a single core
/// writes, byte for byte.
@Suite struct ParallelCompactionTests {
    static let model: ManagedObjectModel = {
        do {
            return try ManagedObjectModel(schema: #"""
            { "entities": [
                { "name": "Item",
                  "attributes": [
                    { "name": "title", "type": "string" },
                    { "name": "code", "type": "string", "collation": "caseInsensitive" },
                    { "name": "due", "type": "date" },
                    { "name": "rank", "type": "int64" },
                    { "name": "ratio", "type": "double" },
                    { "name": "done", "type": "boolean" },
                    { "name": "tag", "type": "uuid" }
                  ],
                  "relationships": [{ "name": "owner", "destination": "Owner", "inverse": "items" }],
                  "uniquenessConstraints": [["code"]],
                  "indexes": [{ "name": "byDue", "properties": ["due"] }, { "name": "byTitle", "properties": ["title"] },
                              { "name": "byOwner", "properties": ["owner"] }, { "name": "byTag", "properties": ["tag"] }] },
                { "name": "Chore", "parent": "Item", "attributes": [{ "name": "room", "type": "string" }] },
                { "name": "Owner", "attributes": [{ "name": "name", "type": "string" }],
                  "relationships": [{ "name": "items", "destination": "Item", "inverse": "owner", "toMany": true }],
                  "uniquenessConstraints": [["name"]] }
            ] }
            """#, file: "parts")
        } catch {
            preconditionFailure("the test model does not load: \(error)")
        }
    }()

    /// Items and chores (a sub-entity sharing the items' uniqueness constraint) with strings
    /// the dictionary takes and ones it does not, non-ASCII codes, missing values, fractional
    /// and whole dates, a NaN ratio in the last part (no column for ratio then), rows in the
    /// snapshot, rows written again in the log, deleted rows: compacted on one core and in
    /// three parts (a boundary off a byte of the null bitmaps), the files are equal, check
    /// clean, and the indexes find what a scan finds.
    @Test func aCompactionOnAllCoresWritesWhatOneCoreDoes() throws {
        let directory = try TemporaryDirectory()
        let original = directory.file("parts.store")
        let base = Date(timeIntervalSinceReferenceDate: 800_000_000)
        do {
            let coordinator = try PersistentStoreCoordinator(model: Self.model, storeURL: original)
            let context = ManagedObjectContext(coordinator: coordinator)
            let owners = try (0..<7).map { o -> ManagedObject in
                let owner = try context.insertObject(entityName: "Owner")
                try owner.setValue(.string("owner \(o)"), forKey: "name")
                return owner
            }
            var items: [ManagedObject] = []
            for i in 0..<3_001 {
                let item = try context.insertObject(entityName: i % 5 == 0 ? "Chore" : "Item")
                try item.setValue(.string(i % 3 == 0 ? "water the plants" : "item \(i)"), forKey: "title")
                try item.setValue(.string(i % 4 == 0 ? "C\u{00E9}de-\(i)" : "code-\(i)"), forKey: "code")
                if i % 7 != 0 { try item.setValue(.date(base.addingTimeInterval(Double(i) * (i % 2 == 0 ? 3600 : 0.25))), forKey: "due") }
                try item.setValue(.integer(Int64(i % 11) - 5), forKey: "rank")
                if i % 9 != 0 { try item.setValue(.double(i == 2_990 ? .nan : Double(i) / 8), forKey: "ratio") }
                try item.setValue(.bool(i % 2 == 0), forKey: "done")
                if i % 6 != 0 { try item.setValue(.uuid(UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", i)) ?? UUID()), forKey: "tag") }
                if i % 13 != 0 { try item.setObject(owners[i % owners.count], forKey: "owner") }
                if i % 5 == 0 { try item.setValue(.string("room \(i % 4)"), forKey: "room") }
                items.append(item)
            }
            try context.save()
            try coordinator.compactStore()
            // Rows in the log over the snapshot: edited, and deleted.
            for i in stride(from: 1, to: 3_001, by: 10) {
                try items[i].setValue(.string("edited \(i)"), forKey: "title")
                try items[i].setValue(.integer(100), forKey: "rank")
            }
            for i in stride(from: 4, to: 3_001, by: 60) { context.delete(items[i]) }
            try context.save()
        }
        let serialURL = directory.file("serial.store"), partsURL = directory.file("parts-of.store")
        try FileManager.default.copyItem(at: original, to: serialURL)
        try FileManager.default.copyItem(at: original, to: partsURL)
        let serial = try BinaryStore(url: serialURL, model: Self.model)
        serial.parallelCompaction = (rows: .max, parts: 1)
        let parts = try BinaryStore(url: partsURL, model: Self.model)
        parts.parallelCompaction = (rows: 2, parts: 3)
        try serial.compact()
        try parts.compact()
        let written = try Data(contentsOf: partsURL)
        #expect(written == (try Data(contentsOf: serialURL)))
        #expect(written != (try Data(contentsOf: original)))

        let coordinator = PersistentStoreCoordinator(model: Self.model, store: parts)
        #expect(try coordinator.checkIntegrity().problems.isEmpty)
        let context = ManagedObjectContext(coordinator: coordinator)
        let all = try context.fetch(FetchRequest(entityName: "Item"))
        #expect(all.count == 3_001 - 50)  // every 60th from 4 deleted
        // Each index against the same test made on every object.
        for (predicate, test) in [
            ("due > %@", { (o: ManagedObject) in (o["due"].dateValue.map { $0 > base.addingTimeInterval(500_000) }) ?? false }),
            ("title == 'water the plants'", { $0["title"] == .string("water the plants") }),
            ("owner.name == 'owner 3'", { (try? $0.value(forKeyPath: "owner.name").value) == .string("owner 3") }),
            ("tag == %@", { $0["tag"] == .uuid(UUID(uuidString: "00000000-0000-0000-0000-000000002999") ?? UUID()) }),
        ] as [(String, (ManagedObject) -> Bool)] {
            let arguments: [Value] = predicate.hasPrefix("due") ? [.date(base.addingTimeInterval(500_000))]
                : predicate.hasPrefix("tag") ? [.uuid(UUID(uuidString: "00000000-0000-0000-0000-000000002999") ?? UUID())] : []
            let found = try context.fetch(FetchRequest(entityName: "Item", predicate: try ObjectPredicate(format: predicate, arguments: arguments)))
            #expect(Set(found.map(\.objectID)) == Set(all.filter(test).map(\.objectID)), "\(predicate)")
        }
        // The merged uniqueness index still refuses a code another part's row holds.
        let clash = try context.insertObject(entityName: "Chore")
        try clash.setValue(.string("CODE-2999"), forKey: "code")
        #expect(throws: ValidationError.self) { try context.save() }
    }

    /// An unreadable row in a part: the compaction throws what the serial loop throws (the
    /// first such row in key order, whichever part's thread met its own first), and rows
    /// that all read give the bytes the serial loop writes.
    @Test func anUnreadableRowInAPartIsTheErrorOneCoreMeets() throws {
        let codec = RowCodec(entityNames: ["Item", "Chore", "Owner"], storeIdentifier: "S", model: Self.model)
        let shape = codec.shape(entity: 0)
        let entity = try #require(Self.model.entity(named: "Item"))
        let title = try #require(entity.slot(of: "title")), rank = try #require(entity.slot(of: "rank")), code = try #require(entity.slot(of: "code"))
        func row(_ i: Int) throws -> [UInt8] {
            var slots = shape.blanks
            slots[title] = .value(.string("item \(i)"))
            slots[rank] = .value(.integer(Int64(i % 7)))
            slots[code] = .value(.string("code-\(i)"))
            var writer = ByteWriter()
            try codec.encodeRow(slots, shape: shape, into: &writer)
            return writer.bytes
        }
        // A typed row's mark, then a bitmap holding every slot and no values.
        let unreadable = [UInt8(0)] + [UInt8](repeating: 0xFF, count: shape.count / 8) + (shape.count % 8 == 0 ? [] : [UInt8(1 << (shape.count % 8) - 1)])
        func rewrite(unreadableAt bad: Set<Int>) throws -> BinaryStore.Core.Rewrite {
            let rows = try (0..<100).map { i in (key: Int64(i + 1), version: Int64(1), bytes: bad.contains(i) ? unreadable : try row(i), start: 0) }
            return BinaryStore.Core.Rewrite(rows: rows, table: 0, codec: codec, target: codec, codes: codec.codes(in: codec), model: Self.model, path: "/forged.store")
        }
        func derived() -> DerivedParts { DerivedParts(model: Self.model, codec: codec, rowCounts: [100, 0, 0]) }

        let good = try rewrite(unreadableAt: [])
        var one = derived(), three = derived()
        let serial = try good.rows(0..<100, into: &one), inParts = try good.rowsInParts(3, into: &three)
        #expect(inParts.map(\.key) == serial.map(\.key))
        #expect(inParts.map { Array($0.source[$0.start..<$0.start + $0.length]) } == serial.map { Array($0.source[$0.start..<$0.start + $0.length]) })

        // Rows 40 and 80 (keys 41 and 81) in the second and third of three parts.
        let bad = try rewrite(unreadableAt: [40, 80])
        var serialError = "", partsError = ""
        do {
            var into = derived()
            _ = try bad.rows(0..<100, into: &into)
        } catch { serialError = String(describing: error) }
        do {
            var into = derived()
            _ = try bad.rowsInParts(3, into: &into)
        } catch { partsError = String(describing: error) }
        #expect(serialError.contains("unreadable row") && serialError.contains("41"), "\(serialError)")
        #expect(partsError == serialError)
    }
}

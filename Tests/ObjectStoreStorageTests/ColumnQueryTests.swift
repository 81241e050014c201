import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

/// A compacted binary store keeps a column per fixed-width attribute (integers, doubles,
/// dates, booleans), and a fetch or count comparing such attributes with constants takes the
/// snapshot's verdicts from the columns instead of decoding rows. These tests hold the
/// columns to the rows' answers: the in-memory store, which tests objects, is the reference.
@Suite struct ColumnQueryTests {
    static let model = makeModel(indexes: "")
    /// The same rows with a schema index on every fixed-width attribute and one on the
    /// string (a text index): queries narrowed by the indexes must answer as the columns and
    /// the objects do.
    static let indexedModel = makeModel(indexes: #"""
        "indexes": [{ "name": "byI", "properties": ["i"] }, { "name": "byS", "properties": ["s", "i"] },
                    { "name": "byD", "properties": ["d"] }, { "name": "byF", "properties": ["f"] },
                    { "name": "byT", "properties": ["t"] }, { "name": "byB", "properties": ["b"] },
                    { "name": "byLabel", "properties": ["label"] }],
        """#)

    static func makeModel(indexes: String) -> ManagedObjectModel {
        let schema = #"""
        {
          "entities": [
            { "name": "Row",
              INDEXES
              "attributes": [
                { "name": "label", "type": "string" },
                { "name": "i", "type": "int64" },
                { "name": "s", "type": "int16" },
                { "name": "d", "type": "double" },
                { "name": "f", "type": "float" },
                { "name": "t", "type": "date" },
                { "name": "b", "type": "boolean" }
              ]
            }
          ]
        }
        """#.replacingOccurrences(of: "INDEXES", with: indexes)
        do {
            return try ManagedObjectModel(schema: schema, file: "rows")
        } catch {
            preconditionFailure("the test model does not load: \(error)")
        }
    }

    static let base = Date(timeIntervalSinceReferenceDate: 800_000_000)
    static let integers: [Int64] = [.min, -7, -1, 0, 1, 2, 3, 42, .max]
    static let doubles: [Double] = [-.infinity, -1.5, -0.0, 0.0, 0.25, 1, 2, 3, 1e300, .infinity]
    static let dates: [Date] = [-2, -1, 0, 1, 2, 30].map { base.addingTimeInterval(Double($0) * 86_400) }

    /// Values for one row's attributes: nil one time in five.
    static func values(_ g: inout SeededRandom) -> [String: Value] {
        func maybe(_ value: Value) -> Value { g.chance(20) ? .null : value }
        return ["i": maybe(.integer(g.pick(integers))), "s": maybe(.integer(g.pick([0, 1, 2, 3, -5]))),
                "d": maybe(.double(g.pick(doubles))), "f": maybe(.double(g.pick([0.5, 1.0, 2.0]))),
                "t": maybe(.date(g.pick(dates))), "b": maybe(.bool(g.chance(50)))]
    }

    /// A constant for a comparison with `key`: usually of its type, sometimes another numeric
    /// type, nil, or (for numbers) a value no row has.
    static func constant(for key: String, _ g: inout SeededRandom) -> Value {
        if g.chance(10) { return .null }
        switch key {
        case "i", "s": return g.chance(15) ? .double(g.pick([0.5, 2.0, -0.0])) : .integer(g.pick(integers + [5]))
        case "d", "f": return g.chance(15) ? .integer(g.pick([0, 2, 3])) : .double(g.pick(doubles + [0.5, .nan]))
        case "t": return .date(g.pick(dates + [base.addingTimeInterval(3_600)]))
        default: return .bool(g.chance(50))
        }
    }

    /// A random predicate over the attributes, as a format with arguments.
    static func predicate(_ g: inout SeededRandom, depth: Int = 0) -> (String, [Value]) {
        if depth < 2 && g.chance(45) {
            let (a, x) = predicate(&g, depth: depth + 1), (b, y) = predicate(&g, depth: depth + 1)
            return (g.chance(50) ? "(\(a)) AND (\(b))" : "(\(a)) OR (\(b))", x + y)
        }
        if depth < 3 && g.chance(10) {
            let (a, x) = predicate(&g, depth: depth + 1)
            return ("NOT (\(a))", x)
        }
        if g.chance(12) {
            // A string has no column: the columns decide the rest of the predicate around it.
            let label: Value = .string("r\(g.next() % 40)")
            return (g.pick(["label BEGINSWITH %@", "label == %@", "label != %@", "label < %@"]), [label])
        }
        let key = g.pick(["i", "s", "d", "f", "t", "b"])
        if g.chance(12) {
            let items = (0..<Int(1 + g.next() % 3)).map { _ in constant(for: key, &g) }
            return ("\(key) IN {\(items.map { _ in "%@" }.joined(separator: ", "))}", items)
        }
        let op = g.pick(["==", "!=", "<", "<=", ">", ">="])
        let value = constant(for: key, &g)
        return g.chance(20) ? ("%@ \(op) \(key)", [value]) : ("\(key) \(op) %@", [value])
    }

    /// The same rows and the same later changes in two stores.
    private func fill(_ contexts: [ManagedObjectContext], compacting store: BinaryStore) throws {
        var g = SeededRandom(seed: 0x5EED_1234_ABCD_0001)
        var rows: [[String: Value]] = (0..<400).map { _ in Self.values(&g) }
        for context in contexts {
            for (n, values) in rows.enumerated() {
                let row = try context.insertObject(entityName: "Row")
                try row.setValue(.string("r\(n)"), forKey: "label")
                for (key, value) in values { try row.setValue(value, forKey: key) }
            }
            try context.save()
        }
        try store.compact()
        #expect(try Data(contentsOf: store.url)[8] == UInt8(BinaryStore.formatVersion), "compacted in store format 1.0")
        // Changes after the compaction live in the log, over the snapshot's rows.
        let edits = (0..<40).map { _ in (Int(g.next() % 400), Self.values(&g)) }
        let deletions = Set((0..<25).map { _ in Int(g.next() % 400) })
        let inserts = (0..<20).map { _ in Self.values(&g) }
        for context in contexts {
            let all = try context.fetch(FetchRequest(entityName: "Row"))
            let byLabel = Dictionary(uniqueKeysWithValues: all.map { ($0["label"].stringValue ?? "", $0) })
            for (n, values) in edits {
                for (key, value) in values { try byLabel["r\(n)"]?.setValue(value, forKey: key) }
            }
            for n in deletions { if let row = byLabel["r\(n)"] { context.delete(row) } }
            for (k, values) in inserts.enumerated() {
                let row = try context.insertObject(entityName: "Row")
                try row.setValue(.string("new\(k)"), forKey: "label")
                for (key, value) in values { try row.setValue(value, forKey: key) }
            }
            try context.save()
        }
        rows.removeAll()
    }

    private func labels(_ context: ManagedObjectContext, _ predicate: ObjectPredicate) throws -> [String] {
        try context.fetch(FetchRequest(entityName: "Row", predicate: predicate, sortDescriptors: [SortKey("label")])).map { $0["label"].stringValue ?? "?" }
    }

    @Test(arguments: [false, true])
    func columnVerdictsAgreeWithTestingEveryObject(indexed: Bool) throws {
        let model = indexed ? Self.indexedModel : Self.model
        let directory = try TemporaryDirectory()
        let url = directory.file("rows.store")
        let store = try BinaryStore(url: url, model: model)
        store.compactionThreshold = .max
        let binary = PersistentStoreCoordinator(model: model, store: store)
        let memory = PersistentStoreCoordinator(model: model, store: InMemoryStore(model: model))
        try fill([ManagedObjectContext(coordinator: binary), ManagedObjectContext(coordinator: memory)], compacting: store)
        #expect(store.sizes.log > 0, "changes over the snapshot")

        // Contexts holding every object: registered objects are tested on their slots.
        let heldMemory = ManagedObjectContext(coordinator: memory), heldBinary = ManagedObjectContext(coordinator: binary)
        let held = try heldMemory.fetch(FetchRequest(entityName: "Row")) + heldBinary.fetch(FetchRequest(entityName: "Row"))
        #expect(held.count > 700)

        var g = SeededRandom(seed: 0xC0FF_EE00_1234_5678)
        var matched = 0
        for _ in 0..<400 {
            let (format, arguments) = Self.predicate(&g)
            let predicate = try ObjectPredicate(format: format, arguments: arguments)
            // Fresh contexts: every row comes from the store, none from registered objects;
            // the in-memory store's rows go through the compiled predicate.
            let expected = try labels(ManagedObjectContext(coordinator: memory), predicate)
            matched += expected.isEmpty ? 0 : 1
            #expect(try labels(ManagedObjectContext(coordinator: binary), predicate) == expected, "\(format) \(arguments)")
            #expect(try labels(heldMemory, predicate) == expected, "registered objects: \(format) \(arguments)")
            #expect(try labels(heldBinary, predicate) == expected, "registered objects: \(format) \(arguments)")
            #expect(try ManagedObjectContext(coordinator: binary).count(for: FetchRequest(entityName: "Row", predicate: predicate)) == expected.count,
                    "count of \(format) \(arguments)")
            // A store opened anew has read no rows: an index's few rows are read one by one.
            let reopened = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
            #expect(try labels(reopened, predicate) == expected, "reopened: \(format) \(arguments)")
        }
        #expect(matched > 100, "the predicates are not all empty")
    }

    /// With the index on `i`, `i >= 42` finds 8 of 50 rows: the store lists only those, and
    /// the rows of objects the context holds, which are tested as they are.
    @Test(arguments: [false, true])
    func unsavedChangesOverrideTheColumnsVerdicts(indexed: Bool) throws {
        let directory = try TemporaryDirectory()
        let model = indexed ? Self.indexedModel : Self.model
        let store = try compactedStore(directory.file("rows.store"), rows: 50, model: model) { n in (String(format: "r%02d", n), Int64(n)) }
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(model: model, store: store))
        let rows = try context.fetch(FetchRequest(entityName: "Row", sortDescriptors: [SortKey("label")]))
        try rows[3].setValue(.integer(100), forKey: "i")     // the column says no, the object yes
        try rows[44].setValue(.integer(1), forKey: "i")      // the column says yes, the object no
        context.delete(rows[45])
        let predicate = try ObjectPredicate("i >= 42")
        var request = FetchRequest(entityName: "Row", predicate: predicate, sortDescriptors: [SortKey("label")])
        #expect(try context.fetch(request).map { $0["label"].stringValue ?? "" } == ["r03", "r42", "r43", "r46", "r47", "r48", "r49"])
        #expect(try context.count(for: request) == 7)
        request.includesPendingChanges = false
        // As saved: the edited rows' old values, the deleted row.
        #expect(try context.fetch(request).map { $0["label"].stringValue ?? "" } == ["r42", "r43", "r44", "r45", "r46", "r47", "r48", "r49"])
    }

    /// Every bound of every comparison an index can serve, on integers, doubles (with -0.0
    /// beside 0.0) and dates, constant on either side, alone and ANDed with a test the index
    /// cannot make: the rows found are those the objects' own test finds.
    /// A binary store (compacted, so its snapshot has the indexes) and an in-memory store of
    /// the indexed model, the same rows saved in both by `fill`.
    private static func indexedStores(in directory: TemporaryDirectory, fill: (ManagedObjectContext) throws -> Void) throws
        -> (binary: PersistentStoreCoordinator, memory: PersistentStoreCoordinator, url: URL) {
        let url = directory.file("rows.store")
        let binary = try PersistentStoreCoordinator(model: indexedModel, storeURL: url)
        let memory = PersistentStoreCoordinator(inMemoryWith: indexedModel)
        for coordinator in [binary, memory] {
            let context = ManagedObjectContext(coordinator: coordinator)
            try fill(context)
            try context.save()
        }
        try binary.compactStore()
        return (binary, memory, url)
    }

    @Test func indexRangesFindExactlyTheirRows() throws {
        let model = Self.indexedModel
        let directory = try TemporaryDirectory()
        let (binary, memory, url) = try Self.indexedStores(in: directory) { context in
            for n in 0..<600 {
                let row = try context.insertObject(entityName: "Row")
                let step = n % 60 - 30
                try row.setValue(.string("r\(n)"), forKey: "label")
                guard n % 17 != 0 else { continue }  // nil in every indexed attribute
                try row.setValue(.integer(Int64(step)), forKey: "i")
                try row.setValue(.double(n % 120 == 30 ? -0.0 : Double(step) / 2), forKey: "d")
                try row.setValue(.date(Self.base.addingTimeInterval(Double(step) * 86_400)), forKey: "t")
            }
        }
        let constants: [(String, [Value])] = [
            ("i", [-31, -30, -29, -25, 0, 28, 29, 30].map { .integer($0) }),
            ("d", [-15.5, -15, -14.5, -0.0, 0.0, 14.5, 15].map { .double($0) }),
            ("t", [-31, -30, -26, 29, 30].map { .date(Self.base.addingTimeInterval(Double($0) * 86_400)) }),
        ]
        var checked = 0
        // The reference: one context of the in-memory store, holding every object.
        let reference = ManagedObjectContext(coordinator: memory)
        for (key, values) in constants {
            for (position, value) in values.enumerated() {
                for op in ["==", "<", "<=", ">", ">="] {
                    // Alone, either way round, with a test the index cannot make, and as one
                    // end of a range whose other end is each of the constants in turn.
                    var cases: [(String, [Value])] = [("\(key) \(op) %@", [value]), ("%@ \(op) \(key)", [value]),
                                                      ("\(key) \(op) %@ AND label ENDSWITH '7'", [value]), ("\(key) \(op) %@ AND i != 3", [value])]
                    // The same value (equal bounds) and another.
                    for other in [value, values[(position + 3) % values.count]] {
                        cases.append(("\(key) \(op) %@ AND \(key) \(op == "<" || op == "<=" ? ">=" : "<") %@", [value, other]))
                        cases.append(("%@ > \(key) AND \(key) \(op) %@", [other, value]))
                    }
                    for (format, arguments) in cases {
                        let predicate = try ObjectPredicate(format: format, arguments: arguments)
                        let expected = try labels(reference, predicate)
                        #expect(try labels(ManagedObjectContext(coordinator: binary), predicate) == expected, "\(format) \(arguments)")
                        let reopened = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
                        #expect(try reopened.count(for: FetchRequest(entityName: "Row", predicate: predicate)) == expected.count, "count of \(format) \(arguments)")
                        checked += expected.isEmpty ? 0 : 1
                    }
                }
            }
        }
        #expect(checked > 300)
    }

    /// A count the index decides is counted from the index's spans, and the log's rows are
    /// tested: rows the log deleted, moved out of the range or into it, and new rows count
    /// as they are, in a context that holds none of the rows and in one that holds some.
    @Test func indexCountsFollowTheLog() throws {
        let directory = try TemporaryDirectory()
        let (binary, memory, url) = try Self.indexedStores(in: directory) { context in
            for n in 0..<800 {
                let row = try context.insertObject(entityName: "Row")
                try row.setValue(.string("r\(n)"), forKey: "label")
                try row.setValue(.integer(Int64(n % 100)), forKey: "i")
            }
        }
        // Another opening of the file, through a symbolic link, opened before the changes: it
        // reads the commits (and the compactions) the first opening writes.
        let link = directory.file("link.store")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        let other = try PersistentStoreCoordinator(model: Self.indexedModel, storeURL: link)
        #expect(try ManagedObjectContext(coordinator: other).count(for: FetchRequest(entityName: "Row", predicate: try ObjectPredicate("i == 50"))) == 8)
        var random = SeededRandom(seed: 0xC0_17)
        let predicates = try ["i >= 10 AND i < 12", "i == 50", "i < 3", "i > 97", "i >= 40 AND i <= 41"].map { try ObjectPredicate($0) }
        for round in 0..<6 {
            // The same changes to both stores, by label.
            let changes = (0..<40).map { _ in (label: "r\(Int(random.next() % 900))", value: Int64(random.next() % 100), delete: random.chance(25)) }
            for coordinator in [binary, memory] {
                let context = ManagedObjectContext(coordinator: coordinator)
                for change in changes {
                    let found = try context.fetch(FetchRequest(entityName: "Row", predicate: try ObjectPredicate(format: "label == %@", .string(change.label))))
                    if let row = found.first {
                        if change.delete { context.delete(row) } else { try row.setValue(.integer(change.value), forKey: "i") }
                    } else if !change.delete {
                        let row = try context.insertObject(entityName: "Row")
                        try row.setValue(.string(change.label), forKey: "label")
                        try row.setValue(.integer(change.value), forKey: "i")
                    }
                }
                try context.save()
            }
            // Every other round the writer compacts: the other opening's index changes under it.
            if round % 2 == 1 { try binary.compactStore() }
            let reference = ManagedObjectContext(coordinator: memory)
            let holding = ManagedObjectContext(coordinator: binary)
            _ = try holding.fetch(FetchRequest(entityName: "Row", predicate: try ObjectPredicate("i < 20")))
            for predicate in predicates {
                let expected = try labels(reference, predicate).count
                let request = FetchRequest(entityName: "Row", predicate: predicate)
                #expect(try ManagedObjectContext(coordinator: binary).count(for: request) == expected, "round \(round): \(predicate)")
                #expect(try holding.count(for: request) == expected, "round \(round), holding rows: \(predicate)")
                #expect(try ManagedObjectContext(coordinator: other).count(for: request) == expected, "round \(round), through the link: \(predicate)")
            }
        }
    }

    /// An index declared on a parent entity serves its sub-entities' rows too: a fetch of
    /// the parent (sub-entities included) and of the child find what the objects' test finds,
    /// with edits in the log and unsaved changes over them.
    @Test func aParentsIndexServesItsSubentities() throws {
        let model = try ManagedObjectModel(schema: #"""
        { "entities": [
            { "name": "Item", "indexes": [{ "name": "byN", "properties": ["n"] }],
              "attributes": [{ "name": "n", "type": "int64" }, { "name": "label", "type": "string" }] },
            { "name": "Special", "parent": "Item", "attributes": [{ "name": "extra", "type": "boolean" }] }
        ] }
        """#, file: "items")
        let directory = try TemporaryDirectory()
        let url = directory.file("items.store")
        let binary = try PersistentStoreCoordinator(model: model, storeURL: url)
        let memory = PersistentStoreCoordinator(inMemoryWith: model)
        let contexts = [ManagedObjectContext(coordinator: binary), ManagedObjectContext(coordinator: memory)]
        for context in contexts {
            for k in 0..<600 {
                let item = try context.insertObject(entityName: k % 2 == 0 ? "Item" : "Special")
                try item.setValue(.integer(Int64(k % 30)), forKey: "n")
                try item.setValue(.string("i\(k)"), forKey: "label")
            }
            try context.save()
        }
        try binary.compactStore()
        for context in contexts {
            // Saved edits (in the log) and unsaved ones, moving rows into and out of n == 4.
            let items = try context.fetch(FetchRequest(entityName: "Item", sortDescriptors: [SortKey("label")]))
            for item in items.prefix(40) { try item.setValue(.integer(4), forKey: "n") }
            try context.save()
            for item in items.dropFirst(100).prefix(30) { try item.setValue(.integer(4), forKey: "n") }
            for item in items.dropFirst(40).prefix(60) where item["n"] == .integer(4) { try item.setValue(.integer(99), forKey: "n") }
        }
        for format in ["n == 4", "n <= 1", "n > 27 AND NOT label ENDSWITH '0'", "4 == n"] {
            for entity in ["Item", "Special"] {
                let request = FetchRequest(entityName: entity, predicate: try ObjectPredicate(format), sortDescriptors: [SortKey("label")])
                let expected = try contexts[1].fetch(request).map { $0["label"].stringValue ?? "" }
                #expect(!expected.isEmpty)
                #expect(try contexts[0].fetch(request).map { $0["label"].stringValue ?? "" } == expected, "\(entity): \(format)")
                #expect(try contexts[0].count(for: request) == expected.count, "count \(entity): \(format)")
                // As saved, from a store opened anew.
                let saved = try ManagedObjectContext(coordinator: memory).fetch(request).map { $0["label"].stringValue ?? "" }
                let reopened = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
                #expect(try reopened.fetch(request).map { $0["label"].stringValue ?? "" } == saved, "saved \(entity): \(format)")
            }
        }
        #expect(try binary.checkIntegrity().problems.isEmpty)
    }

    /// An index entry that names another row than its position holds (a forged file) is
    /// reported by the query that reads it and by `checkIntegrity()`.
    @Test func queriesReadTheIndexesAndIntegrityChecksThem() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("rows.store")
        try compactedStore(url, rows: 40, model: Self.indexedModel) { n in ("r\(n)", 7_000 + Int64(n)) }
        // The index of `i`: entries of (value 2, position 1, key 1) (the values fit 16 bits,
        // 40 rows and keys 8 bits); row 5 has key 6.
        var bytes = Array(try Data(contentsOf: url))
        func little(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        let entry = little(7_004, 2) + little(4, 1) + little(5, 1) + little(7_005, 2) + little(5, 1) + little(6, 1)  // with the entry before it
        let keyAt = entry.count - 1
        let entrySize = 4
        let starts = (0...(bytes.count - entry.count)).filter { Array(bytes[$0..<$0 + entry.count]) == entry }
        #expect(starts.count == 1)
        guard let start = starts.first else { return }
        bytes[start + keyAt] = 9  // the key of another row
        // As damage (the index's checksum no longer matches) and as a forgery (it is made to).
        let damaged = directory.file("damaged.store")
        try Data(bytes).write(to: damaged)
        let snapshotOffset = Int(StoreHeader.field(bytes, at: 32))
        let entities = Int(bytes[snapshotOffset + 4]), indexes = Int(bytes[snapshotOffset + 8])
        var columns = 0
        for e in 0..<entities { columns += Int(bytes[snapshotOffset + 16 + e * 40 + 36]) }
        for k in 0..<indexes {
            let part = snapshotOffset + 16 + entities * 40 + k * 32
            let count = Int(StoreHeader.field(bytes, at: part + 8)), offset = snapshotOffset + Int(StoreHeader.field(bytes, at: part + 16))
            guard (offset..<offset + count * entrySize).contains(start) else { continue }
            let crc = crc32(Array(bytes[offset..<offset + count * entrySize]))
            for b in 0..<4 { bytes[part + 24 + b] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(b))) }
        }
        let tableCRC = crc32(Array(bytes[(snapshotOffset + 16)..<(snapshotOffset + 16 + entities * 40 + indexes * 32 + columns * 24)]))
        for b in 0..<4 { bytes[snapshotOffset + 12 + b] = UInt8(truncatingIfNeeded: tableCRC >> (8 * UInt32(b))) }
        try Data(bytes).write(to: url)
        for (file, problem) in [(url, "index of Row (schema index 1) does not match its rows"), (damaged, "index of Row (schema index 1) is damaged")] {
            let reader = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: Self.indexedModel, storeURL: file))
            #expect(try reader.count(for: FetchRequest(entityName: "Row", predicate: try ObjectPredicate("i == 7004"))) == 1, "another entry")
            #expect(throws: StoreError.self) { try reader.fetch(FetchRequest(entityName: "Row", predicate: try ObjectPredicate("i == 7005"))) }
            let problems = try reader.coordinator.checkIntegrity().problems
            #expect(problems.contains { $0.contains(problem) }, "\(problems)")
        }
    }

    /// A column that disagrees with its rows (a forged file with a valid checksum) shows that
    /// queries take the column's word, and `checkIntegrity()` reports it (2-byte values:
    /// these fit in 16 bits).
    @Test func queriesReadTheColumnsAndIntegrityChecksThem() throws {
        let width = 2
        let directory = try TemporaryDirectory()
        let url = directory.file("rows.store")
        try compactedStore(url, rows: 10) { n in ("r\(n)", 1_000 + Int64(n)) }
        // Find the column of `i`: ten little-endian values 1000...1009 after a 2-byte bitmap.
        var bytes = Array(try Data(contentsOf: url))
        let needle = (0..<10).flatMap { n in (0..<width).map { UInt8(truncatingIfNeeded: (1_000 + n) >> (8 * $0)) } }
        guard let start = (0...(bytes.count - needle.count)).first(where: { Array(bytes[$0..<$0 + needle.count]) == needle }) else {
            Issue.record("no column of i in the file")
            return
        }
        // Row 0's value becomes 5000, and the column's checksum is made to match.
        bytes[start] = 0x88
        bytes[start + 1] = 0x13
        let column = Array(bytes[(start - 2)..<(start + 10 * width)])
        let crc = crc32(column)
        var patched = 0
        // The column table entry holds the old checksum: replace it wherever it is.
        let old = crc32(Array(bytes[(start - 2)..<start]) + needle)
        let oldBytes = (0..<4).map { UInt8(truncatingIfNeeded: old >> (8 * UInt32($0))) }
        for i in 0...(bytes.count - 4) where Array(bytes[i..<i + 4]) == oldBytes {
            for k in 0..<4 { bytes[i + k] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(k))) }
            patched += 1
        }
        #expect(patched == 1)
        // The tables' own checksum covers that entry: recompute it too (snapshot prefix).
        let snapshotOffset = Int(StoreHeader.field(bytes, at: 32))
        let entities = Int(bytes[snapshotOffset + 4]), indexes = Int(bytes[snapshotOffset + 8])
        var columns = 0
        for e in 0..<entities { columns += Int(bytes[snapshotOffset + 16 + e * 40 + 36]) }
        let tables = Array(bytes[(snapshotOffset + 16)..<(snapshotOffset + 16 + entities * 40 + indexes * 32 + columns * 24)])
        let tableCRC = crc32(tables)
        for k in 0..<4 { bytes[snapshotOffset + 12 + k] = UInt8(truncatingIfNeeded: tableCRC >> (8 * UInt32(k))) }
        try Data(bytes).write(to: url)

        let reader = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: Self.model, storeURL: url))
        #expect(try reader.count(for: FetchRequest(entityName: "Row", predicate: try ObjectPredicate("i >= 5000"))) == 1, "the column answered")
        let problems = try reader.coordinator.checkIntegrity().problems
        #expect(problems.contains { $0.contains("column Row.i does not match its rows") }, "\(problems)")
    }

    /// Sorting by numbers, dates and booleans (which compares them as plain numbers) gives
    /// the order the sort keys define: nil first when ascending, -0.0 equal to 0.0, ties
    /// by the next key and then by the object's key; with a string key too (compared as
    /// values) the same.
    @Test func sortingByNumbersDatesAndBooleansFollowsTheSortKeys() throws {
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(model: Self.model, store: InMemoryStore(model: Self.model)))
        var g = SeededRandom(seed: 0xABCD_EF01_2345_6789)
        for n in 0..<300 {
            let row = try context.insertObject(entityName: "Row")
            try row.setValue(.string("r\(n % 7)"), forKey: "label")
            // Few distinct values, so ties are common.
            for (key, value) in Self.values(&g) where key != "d" || g.chance(70) { try row.setValue(value, forKey: key) }
        }
        try context.save()
        func key(_ object: ManagedObject) -> Int64 { if case .permanent(let k) = object.objectID.key { return k } else { return -1 } }
        func before(_ a: Value, _ b: Value) -> Bool? {
            if a.isNull != b.isNull { return a.isNull }
            if a.isNull { return nil }
            guard let order = a.compare(to: b), order != .orderedSame else { return nil }
            return order == .orderedAscending
        }
        for _ in 0..<60 {
            var keys = (0..<Int(1 + g.next() % 3)).map { _ in SortKey(g.pick(["i", "s", "d", "t", "b"]), ascending: g.chance(50)) }
            if g.chance(25) { keys.append(SortKey("label", ascending: g.chance(50))) }
            let fetched = try context.fetch(FetchRequest(entityName: "Row", sortDescriptors: keys))
            let expected = fetched.sorted { a, b in
                for sortKey in keys {
                    if let first = before(a[sortKey.keyPath], b[sortKey.keyPath]) { return sortKey.ascending ? first : !first }
                }
                return key(a) < key(b)
            }
            #expect(fetched.map(key) == expected.map(key), "\(keys.map { "\($0.keyPath) \($0.ascending)" })")
        }
    }

    /// A snapshot row is checked against its checksum when it is read: a damaged row that a
    /// query's columns reject is not read (and the query answers); one that is read is
    /// reported, and so is it by `checkIntegrity()`.
    @Test func aDamagedRowIsReportedWhenReadAndNotWhenTheColumnsRejectIt() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("rows.store")
        try compactedStore(url, rows: 40) { n in (n == 7 ? "seven-is-here" : "r\(n)", Int64(n)) }
        var bytes = Array(try Data(contentsOf: url))
        let needle = Array("seven-is-here".utf8)
        let at = (0...(bytes.count - needle.count)).filter { Array(bytes[$0..<$0 + needle.count]) == needle }
        #expect(at.count == 1, "the label once, in the snapshot's row")
        bytes[(at.first ?? 0) + 2] ^= 0x20
        try Data(bytes).write(to: url)

        func open() throws -> ManagedObjectContext { ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: Self.model, storeURL: url)) }
        #expect(try labels(try open(), try ObjectPredicate("i < 5")) == ["r0", "r1", "r2", "r3", "r4"])
        #expect(try labels(try open(), try ObjectPredicate("i >= 8")) == (8..<40).map { "r\($0)" }.sorted())
        #expect(throws: StoreError.self) { try labels(try open(), try ObjectPredicate("i >= 7 AND i < 8")) }
        #expect(throws: StoreError.self) { try labels(try open(), try ObjectPredicate("i >= 5")) }
        let reader = try open()
        #expect(throws: StoreError.self) { try reader.fetch(FetchRequest(entityName: "Row")).map { try $0.value(forKey: "label") } }
        #expect(throws: StoreError.self) { try open().coordinator.checkIntegrity() }
        // Registered as a fault first, as a relationship's destination is: a fetch that meets
        // it throws, never leaves it out as if it had been deleted.
        for predicate in ["i == 7", "i >= 5", "label BEGINSWITH 'seven'", "label MATCHES 's.*'", "i + 1 == 8", "TRUEPREDICATE"] {
            let holder = try open()
            let fault = try holder.object(with: ObjectID(entityName: "Row", storeIdentifier: holder.coordinator.storeIdentifier, key: .permanent(8)))
            #expect(throws: StoreError.self, "\(predicate)") { try holder.fetch(FetchRequest(entityName: "Row", predicate: try ObjectPredicate(predicate))) }
            withExtendedLifetime(fault) {}
        }
    }

    /// A store of `rows` rows with the label and `i` that `row(n)` gives, saved and compacted.
    @discardableResult
    private func compactedStore(_ url: URL, rows: Int, model: ManagedObjectModel = ColumnQueryTests.model,
                                _ row: (Int) -> (String, Int64)) throws -> BinaryStore {
        let store = try BinaryStore(url: url, model: model)
        let setup = ManagedObjectContext(coordinator: PersistentStoreCoordinator(model: model, store: store))
        for n in 0..<rows {
            let (label, i) = row(n)
            let object = try setup.insertObject(entityName: "Row")
            try object.setValue(.string(label), forKey: "label")
            try object.setValue(.integer(i), forKey: "i")
        }
        try setup.save()
        try store.compact()
        #expect(try Data(contentsOf: url)[8] == UInt8(BinaryStore.formatVersion), "compacted in store format 1.0")
        return store
    }

    private func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }
}

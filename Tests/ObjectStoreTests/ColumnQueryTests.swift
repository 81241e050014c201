import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

/// A compacted binary store keeps a column per fixed-width attribute (integers, doubles,
/// dates, booleans), and a fetch or count comparing such attributes with constants takes the
/// snapshot's verdicts from the columns instead of decoding rows. These tests hold the
/// columns to the rows' answers: the in-memory store, which tests objects, is the reference.
@Suite struct ColumnQueryTests {
    static let model: ManagedObjectModel = {
        let schema = #"""
        {
          "entities": [
            { "name": "Row",
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
        """#
        do {
            return try ManagedObjectModel(schema: schema, file: "rows")
        } catch {
            preconditionFailure("the test model does not load: \(error)")
        }
    }()

    /// A reproducible generator (xorshift), so a failure names a predicate that fails again.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        mutating func pick<T>(_ items: [T]) -> T { items[Int(next() % UInt64(items.count))] }
        mutating func chance(_ percent: UInt64) -> Bool { next() % 100 < percent }
    }

    static let base = Date(timeIntervalSinceReferenceDate: 800_000_000)
    static let integers: [Int64] = [.min, -7, -1, 0, 1, 2, 3, 42, .max]
    static let doubles: [Double] = [-.infinity, -1.5, -0.0, 0.0, 0.25, 1, 2, 3, 1e300, .infinity]
    static let dates: [Date] = [-2, -1, 0, 1, 2, 30].map { base.addingTimeInterval(Double($0) * 86_400) }

    /// Values for one row's attributes: nil one time in five.
    static func values(_ g: inout Generator) -> [String: Value] {
        func maybe(_ value: Value) -> Value { g.chance(20) ? .null : value }
        return ["i": maybe(.integer(g.pick(integers))), "s": maybe(.integer(g.pick([0, 1, 2, 3, -5]))),
                "d": maybe(.double(g.pick(doubles))), "f": maybe(.double(g.pick([0.5, 1.0, 2.0]))),
                "t": maybe(.date(g.pick(dates))), "b": maybe(.bool(g.chance(50)))]
    }

    /// A constant for a comparison with `key`: usually of its type, sometimes another numeric
    /// type, nil, or (for numbers) a value no row has.
    static func constant(for key: String, _ g: inout Generator) -> Value {
        if g.chance(10) { return .null }
        switch key {
        case "i", "s": return g.chance(15) ? .double(g.pick([0.5, 2.0, -0.0])) : .integer(g.pick(integers + [5]))
        case "d", "f": return g.chance(15) ? .integer(g.pick([0, 2, 3])) : .double(g.pick(doubles + [0.5, .nan]))
        case "t": return .date(g.pick(dates + [base.addingTimeInterval(3_600)]))
        default: return .bool(g.chance(50))
        }
    }

    /// A random predicate over the attributes, as a format with arguments.
    static func predicate(_ g: inout Generator, depth: Int = 0) -> (String, [Value]) {
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
        var g = Generator(state: 0x5EED_1234_ABCD_0001)
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

    @Test func columnVerdictsAgreeWithTestingEveryObject() throws {
        let directory = try TemporaryDirectory()
        let store = try BinaryStore(url: directory.file("rows.store"), model: Self.model)
        store.compactionThreshold = .max
        let binary = PersistentStoreCoordinator(model: Self.model, store: store)
        let memory = PersistentStoreCoordinator(model: Self.model, store: InMemoryStore(model: Self.model))
        try fill([ManagedObjectContext(coordinator: binary), ManagedObjectContext(coordinator: memory)], compacting: store)
        #expect(store.sizes.log > 0, "changes over the snapshot")

        // Contexts holding every object: registered objects are tested on their slots.
        let heldMemory = ManagedObjectContext(coordinator: memory), heldBinary = ManagedObjectContext(coordinator: binary)
        let held = try heldMemory.fetch(FetchRequest(entityName: "Row")) + heldBinary.fetch(FetchRequest(entityName: "Row"))
        #expect(held.count > 700)

        var g = Generator(state: 0xC0FF_EE00_1234_5678)
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
        }
        #expect(matched > 100, "the predicates are not all empty")
    }

    @Test func unsavedChangesOverrideTheColumnsVerdicts() throws {
        let directory = try TemporaryDirectory()
        let store = try compactedStore(directory.file("rows.store"), rows: 50) { n in (String(format: "r%02d", n), Int64(n)) }
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(model: Self.model, store: store))
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

    /// A column that disagrees with its rows (a forged file with a valid checksum) shows that
    /// queries take the column's word, and `checkIntegrity()` reports it.
    @Test func queriesReadTheColumnsAndIntegrityChecksThem() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("rows.store")
        try compactedStore(url, rows: 10) { n in ("r\(n)", 1_000 + Int64(n)) }
        // Find the column of `i`: ten little-endian values 1000...1009 after a 2-byte bitmap.
        var bytes = Array(try Data(contentsOf: url))
        let needle = (0..<10).flatMap { n in (0..<8).map { UInt8(truncatingIfNeeded: (1_000 + n) >> (8 * $0)) } }
        guard let start = (0...(bytes.count - needle.count)).first(where: { Array(bytes[$0..<$0 + needle.count]) == needle }) else {
            Issue.record("no column of i in the file")
            return
        }
        // Row 0's value becomes 5000, and the column's checksum is made to match.
        bytes[start] = 0x88
        bytes[start + 1] = 0x13
        let column = Array(bytes[(start - 2)..<(start + 80)])
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
        var g = Generator(state: 0xABCD_EF01_2345_6789)
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
        try compactedStore(url, rows: 10) { n in (n == 7 ? "seven-is-here" : "r\(n)", Int64(n)) }
        var bytes = Array(try Data(contentsOf: url))
        let needle = Array("seven-is-here".utf8)
        let at = (0...(bytes.count - needle.count)).filter { Array(bytes[$0..<$0 + needle.count]) == needle }
        #expect(at.count == 1, "the label once, in the snapshot's row")
        bytes[(at.first ?? 0) + 2] ^= 0x20
        try Data(bytes).write(to: url)

        func open() throws -> ManagedObjectContext { ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: Self.model, storeURL: url)) }
        #expect(try labels(try open(), try ObjectPredicate("i < 5")) == ["r0", "r1", "r2", "r3", "r4"])
        #expect(throws: StoreError.self) { try labels(try open(), try ObjectPredicate("i >= 5")) }
        let reader = try open()
        #expect(throws: StoreError.self) { try reader.fetch(FetchRequest(entityName: "Row")).map { try $0.value(forKey: "label") } }
        #expect(throws: StoreError.self) { try open().coordinator.checkIntegrity() }
    }

    /// A store of `rows` rows with the label and `i` that `row(n)` gives, saved and compacted.
    @discardableResult
    private func compactedStore(_ url: URL, rows: Int, _ row: (Int) -> (String, Int64)) throws -> BinaryStore {
        let store = try BinaryStore(url: url, model: Self.model)
        let setup = ManagedObjectContext(coordinator: PersistentStoreCoordinator(model: Self.model, store: store))
        for n in 0..<rows {
            let (label, i) = row(n)
            let object = try setup.insertObject(entityName: "Row")
            try object.setValue(.string(label), forKey: "label")
            try object.setValue(.integer(i), forKey: "i")
        }
        try setup.save()
        try store.compact()
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

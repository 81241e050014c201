import Foundation
import Testing
@testable import ObjectStore
import ObjectStoreModel
import ObjectStoreStorage

/// A fetch over many rows shares its slot-predicate tests among the cores
/// (``ParallelScan``). What it finds, in what order, and what it counts must be what the
/// serial scan finds, whatever the context holds: unsaved edits, deletions and insertions,
/// objects it holds unchanged, rows in the snapshot and in the log.
@Suite struct ParallelScanTests {
    static let n = 2_000

    /// Predicates the store's slot predicate decides alone (strings, which no column holds;
    /// numbers its columns decide; references; nil), and ones it only prefilters (a key path
    /// through a to-one, a derived attribute) before the compiled test.
    static let predicates: [(format: String, arguments: [Value])] = [
        ("text == 't1234'", []),
        ("text CONTAINS[c] 'T7'", []),
        ("text BEGINSWITH 't1' AND priority >= 2", []),
        ("priority == 3 OR text ENDSWITH '99'", []),
        ("NOT (text LIKE 't*5')", []),
        ("code == nil AND ratio < 1500", []),
        ("status == 'done' AND location.name == 'L1'", []),
        ("text ENDSWITH '3' AND isOverdue == YES", []),
        ("dueDate < %@ AND text IN {'t1', 't3', 't2999', 'x100', 't7new2'}", [.date(TestModel.now)]),
    ]

    /// A context over `coordinator` holding the same unsaved changes each time it is made:
    /// 20 tasks renamed and raised, 20 deleted, 5 inserted, 200 held unchanged.
    static func preparedContext(_ coordinator: PersistentStoreCoordinator, parallelFrom minimumRows: Int) throws -> ManagedObjectContext {
        let context = ManagedObjectContext(coordinator: coordinator)
        context.parallelScanMinimumRows = minimumRows
        for task in try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "text ENDSWITH '00'"))) {
            guard case .string(let text) = task["text"] else { continue }
            try task.setValue(.string("x" + text.dropFirst()), forKey: "text")
            try task.setValue(.integer(3), forKey: "priority")
        }
        for task in try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "text ENDSWITH '11'"))) {
            context.delete(task)
        }
        _ = try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "text ENDSWITH '7'")))
        for i in 0..<5 {
            let task = try context.insertObject(entityName: "Task")
            try task.setValue(.string("t7new\(i)"), forKey: "text")
            try task.setValue(.integer(Int64(i % 4)), forKey: "priority")
        }
        return context
    }

    /// What a fetch found, in its order: each task's text and priority (texts are unique).
    static func found(_ context: ManagedObjectContext, _ request: FetchRequest) throws -> [String] {
        try context.fetch(request).map { "\($0["text"])/\($0["priority"])" }
    }

    @Test(arguments: StoreKind.allCases)
    func aParallelScanFindsWhatTheSerialOneDoes(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let coordinator = try kind.open(in: directory, memory: &memory)
        do {
            let context = ManagedObjectContext(coordinator: coordinator)
            context.undoManager = nil
            let locations = try (0..<3).map { i in
                let location = try context.insertObject(entityName: "Location")
                try location.setValue(.string("L\(i)"), forKey: "name")
                return location
            }
            // Two saves: on the binary stores the second's rows are in the log over the
            // first's snapshot (the `snapshot` kind compacts them into it).
            for i in 0..<Self.n {
                let task = try context.insertObject(entityName: "Task")
                try task.setValue(.string("t\(i)"), forKey: "text")
                try task.setValue(.integer(Int64(i % 4)), forKey: "priority")
                try task.setValue(i % 5 == 0 ? .string("done") : .string("open"), forKey: "status")
                if i % 7 == 0 { try task.setValue(.string("ABC"), forKey: "code") }
                if i % 2 == 1 { try task.setValue(.date(TestModel.now.addingTimeInterval(Double(i - Self.n / 2) * 3_600)), forKey: "dueDate") }
                try task.setValue(.double(Double(i)), forKey: "ratio")
                try task.setObject(locations[i % 3], forKey: "location")
                if i == 1_400 { try context.save() }
            }
            try context.save()
        }
        let serial = try Self.preparedContext(coordinator, parallelFrom: .max)
        let parallel = try Self.preparedContext(coordinator, parallelFrom: 0)
        let home = try #require(try serial.fetch(FetchRequest(entityName: "Location", predicate: try ObjectPredicate(format: "name == 'L1'"))).first)
        _ = try parallel.fetch(FetchRequest(entityName: "Location", predicate: try ObjectPredicate(format: "name == 'L1'")))
        var cases = Self.predicates
        cases.append(("location == %@ AND priority != 0", [.uri(home.objectID.uriRepresentation)]))
        for (format, arguments) in cases {
            for includesPendingChanges in [true, false] {
                var request = FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: format, arguments: arguments))
                request.includesPendingChanges = includesPendingChanges
                let expected = try Self.found(serial, request)
                #expect(!expected.isEmpty && expected.count < Self.n, "\(format) should find some tasks, not all")
                #expect(try Self.found(parallel, request) == expected, "\(kind): \(format), pending changes \(includesPendingChanges)")
                #expect(try parallel.count(for: request) == serial.count(for: request), "\(kind): count of \(format)")
                // Values without objects (as taskctl's list reads them), in contexts that
                // hold only the prepared changes (the fetches above registered the
                // matches, whose values then come from the objects): some attributes,
                // and every property, derived ones too (the rows decoded whole).
                let every = TestModel.model.entity(named: "Task")?.properties.map(\.name) ?? []
                let freshSerial = try Self.preparedContext(coordinator, parallelFrom: .max)
                let freshParallel = try Self.preparedContext(coordinator, parallelFrom: 0)
                for properties in [["text", "priority", "dueDate"], every] {
                    let values = { (context: ManagedObjectContext) in try context.fetchValues(request, properties: properties).map { "\($0.values)" } }
                    let serialValues = try values(freshSerial)
                    #expect(serialValues.count == expected.count, "\(kind): \(format) read as values")
                    #expect(try values(freshParallel) == serialValues, "\(kind): values of \(format), \(properties.count) properties")
                }
                request.sortDescriptors = [SortKey("priority", ascending: false), SortKey("text")]
                request.fetchOffset = 3
                request.fetchLimit = 40
                #expect(try Self.found(parallel, request) == Self.found(serial, request), "\(kind): first 40 of \(format)")
            }
        }
        // Stores of encoded rows are scanned row by row, and the scans were shared; the
        // others test objects through the context, and share nothing. A context as made
        // shares no scan of these 2,000 rows (the threshold is 16,384).
        let plain = ManagedObjectContext(coordinator: coordinator)
        for (format, arguments) in cases { _ = try plain.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: format, arguments: arguments))) }
        #expect(plain.parallelScans == 0)
        #expect(serial.parallelScans == 0)
        if kind == .binary || kind == .snapshot {
            #expect(parallel.parallelScans >= cases.count)
        } else {
            #expect(parallel.parallelScans == 0)
        }
    }

    /// The shared scan over a store that another coordinator, through a symbolic link to
    /// it, edited and then compacted (replaced by a rename) after this one's contexts had
    /// read it: the fetches read the new file's rows, see the other side's changes, and the
    /// shared and serial scans still agree.
    @Test func aParallelScanAfterAnotherCompactedThroughALink() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store"), link = directory.file("link.store")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        let first = try PersistentStoreCoordinator(model: TestModel.model, storeURL: url, clock: { TestModel.now })
        do {
            let context = ManagedObjectContext(coordinator: first)
            context.undoManager = nil
            for i in 0..<Self.n {
                let task = try context.insertObject(entityName: "Task")
                try task.setValue(.string("t\(i)"), forKey: "text")
                try task.setValue(.integer(Int64(i % 3)), forKey: "priority")
            }
            try context.save()
            try first.compactStore()
        }
        let serial = ManagedObjectContext(coordinator: first)
        serial.parallelScanMinimumRows = .max
        let parallel = ManagedObjectContext(coordinator: first)
        parallel.parallelScanMinimumRows = 0
        let before = FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "text ENDSWITH '5'"))
        #expect(try Self.found(parallel, before) == Self.found(serial, before))
        do {
            // The other side: renames the tasks ending in 3, raises those ending in 9,
            // deletes those ending in 1, adds ten, and compacts the file.
            let second = try PersistentStoreCoordinator(model: TestModel.model, storeURL: link, clock: { TestModel.now })
            let other = ManagedObjectContext(coordinator: second)
            other.undoManager = nil
            for task in try other.fetch(FetchRequest(entityName: "Task")) {
                guard case .string(let text) = task["text"] else { continue }
                if text.hasSuffix("3") { try task.setValue(.string("x" + text.dropFirst()), forKey: "text") }
                if text.hasSuffix("9") { try task.setValue(.integer(3), forKey: "priority") }
                if text.hasSuffix("1") { other.delete(task) }
            }
            for i in 0..<10 { try other.insertObject(entityName: "Task").setValue(.string("tnew\(i)"), forKey: "text") }
            try other.save()
            try second.compactStore()
        }
        // The counts as the other side left the tasks (tnew1 and tnew5 are among the ten).
        let raisedWith19 = (0..<Self.n).filter { $0 % 10 == 9 && "t\($0)".contains("19") }.count
        for (format, count) in [("text BEGINSWITH 'x'", Self.n / 10), ("priority == 3 AND text CONTAINS '19'", raisedWith19), ("text ENDSWITH '1'", 1),
                                ("text BEGINSWITH 'tnew' OR text == 't1234'", 11), ("text ENDSWITH '5'", Self.n / 10 + 1)] {
            let request = FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: format))
            let expected = try Self.found(serial, request)
            #expect(expected.count == count, "\(format): the other side's changes")
            #expect(try Self.found(parallel, request) == expected, "\(format)")
            let values = { (context: ManagedObjectContext) in try context.fetchValues(request, properties: ["text", "priority"]).map { "\($0.values)" } }
            #expect(try values(parallel) == values(serial), "values of \(format)")
        }
        #expect(parallel.parallelScans > 0)
        #expect(try FileManager.default.attributesOfItem(atPath: link.path)[.type] as? FileAttributeType == .typeSymbolicLink)
    }
}

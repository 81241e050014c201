import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

/// A `CONTAINS` without options whose needle no snapshot row holds (searched for in the
/// snapshot's bytes, its dictionary of strings and the attribute's initial value) rejects
/// every snapshot row without reading one. These tests hold it to the answer of testing
/// every object, and to what `contains` finds by canonical equivalence.
@Suite struct SubstringRejectionTests {
    static let model: ManagedObjectModel = {
        let schema = #"""
        {
          "entities": [
            { "name": "Note",
              "attributes": [
                { "name": "label", "type": "string" },
                { "name": "text", "type": "string", "optional": true },
                { "name": "remark", "type": "string", "default": "default-remark" },
                { "name": "i", "type": "int64" }
              ]
            }
          ]
        }
        """#
        do {
            return try ManagedObjectModel(schema: schema, file: "notes")
        } catch {
            preconditionFailure("the test model does not load: \(error)")
        }
    }()

    /// Every code point whose canonical or compatibility decomposition has an ASCII
    /// character, tested with `contains` against each such character: those it contains
    /// without holding the character's byte are exactly ``StringMatching/heldByOtherCodePoints``
    /// (a needle with one of them is never decided from bytes).
    @Test func theCharactersOtherCodePointsHoldAreListed() {
        var found: Set<UInt8> = []
        for value in UInt32(0x80)...0x10_FFFF {
            guard let scalar = Unicode.Scalar(value), scalar.properties.generalCategory != .unassigned,
                  scalar.properties.generalCategory != .privateUse else { continue }
            let text = String(Character(scalar))
            let decomposed = Array(text.decomposedStringWithCanonicalMapping.utf8) + Array(text.decomposedStringWithCompatibilityMapping.utf8)
            for byte in Set(decomposed.filter { $0 < 0x80 }) where !text.utf8.contains(byte) {
                if StringMatching.contains(text, String(UnicodeScalar(byte)), []) { found.insert(byte) }
            }
        }
        #expect(found == StringMatching.heldByOtherCodePoints, "\(found.map { String(UnicodeScalar($0)) })")
        #expect(!StringMatching.isFoundOnlyByItsBytes("Kelvin"))
        #expect(StringMatching.isFoundOnlyByItsBytes("\"depends\""))
        #expect(!StringMatching.isFoundOnlyByItsBytes("caf\u{E9}"))
        #expect(!StringMatching.isFoundOnlyByItsBytes(""))
    }

    /// Rows in a compacted snapshot and in the log after it, one text repeated often enough
    /// to go into the store's dictionary, a KELVIN SIGN, accented text and a default value:
    /// each needle finds in the binary store what it finds in the in-memory store, fetched,
    /// counted, in a context holding objects with unsaved texts, and reopened.
    @Test func aNeedleNoRowHoldsFindsWhatTheObjectsFind() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("notes.store")
        let store = try BinaryStore(url: url, model: Self.model)
        store.compactionThreshold = .max
        let binary = PersistentStoreCoordinator(model: Self.model, store: store)
        let memory = PersistentStoreCoordinator(inMemoryWith: Self.model)
        func fill(_ rows: Range<Int>, _ text: (Int) -> String?) throws {
            for coordinator in [binary, memory] {
                let context = ManagedObjectContext(coordinator: coordinator)
                for n in rows {
                    let note = try context.insertObject(entityName: "Note")
                    try note.setValue(.string(String(format: "n%03d", n)), forKey: "label")
                    try note.setValue(.integer(Int64(n)), forKey: "i")
                    if let text = text(n) { try note.setValue(.string(text), forKey: "text") }
                    if n % 3 == 0 { try note.setValue(.string("set-remark \(n)"), forKey: "remark") }
                }
                try context.save()
            }
        }
        try fill(0..<120) { n in
            switch n % 8 {
            case 0: return "shared pending text"
            case 1: return "the \u{212A}elvin scale"
            case 2: return "caf\u{E9} au lait \(n)"
            case 3: return nil
            default: return "plain words \(n)"
            }
        }
        try store.compact()
        let bytes = Array(try Data(contentsOf: url))
        let shared = Array("shared pending text".utf8)
        let copies = (0...(bytes.count - shared.count)).filter { Array(bytes[$0..<$0 + shared.count]) == shared }.count
        #expect(copies < 15, "the text of 15 rows written by its number in the store's dictionary (\(copies) copies)")
        // The log after the snapshot: new rows, a changed text, a deletion.
        try fill(120..<130) { n in n == 125 ? "only in the log: needle-in-log" : "later \(n)" }
        for coordinator in [binary, memory] {
            let context = ManagedObjectContext(coordinator: coordinator)
            let notes = try context.fetch(FetchRequest(entityName: "Note", sortDescriptors: [SortKey("label")]))
            try notes[4].setValue(.string("edited: needle-in-edit"), forKey: "text")
            context.delete(notes[9])
            try context.save()
        }
        #expect(store.sizes.log > 0, "changes over the snapshot")

        let needles = ["needle-in-log", "needle-in-edit", "nowhere at all", "pending", "K", "elvin", "caf", "au lait", "default-rem",
                       "set-remark", "words 4", "\"", "n00"]
        let keys = ["text", "remark", "label"]
        var found = 0
        for needle in needles {
            for key in keys {
                let predicate = try ObjectPredicate(format: "%K CONTAINS %@", .string(key), .string(needle))
                let expected = try labels(ManagedObjectContext(coordinator: memory), predicate)
                found += expected.isEmpty ? 0 : 1
                #expect(try labels(ManagedObjectContext(coordinator: binary), predicate) == expected, "\(key) CONTAINS \(needle)")
                #expect(try ManagedObjectContext(coordinator: binary).count(for: FetchRequest(entityName: "Note", predicate: predicate)) == expected.count,
                        "count: \(key) CONTAINS \(needle)")
                let reopened = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: Self.model, storeURL: url))
                #expect(try labels(reopened, predicate) == expected, "reopened: \(key) CONTAINS \(needle)")
                let anded = ObjectPredicate.and(try ObjectPredicate("i >= 2"), predicate)
                #expect(try labels(ManagedObjectContext(coordinator: binary), anded) == labels(ManagedObjectContext(coordinator: memory), anded),
                        "i >= 2 AND \(key) CONTAINS \(needle)")
            }
        }
        #expect(found >= 10, "the needles find rows in the three attributes")

        // Objects held with unsaved texts are tested as they are.
        let heldBinary = ManagedObjectContext(coordinator: binary), heldMemory = ManagedObjectContext(coordinator: memory)
        for context in [heldBinary, heldMemory] {
            let notes = try context.fetch(FetchRequest(entityName: "Note", sortDescriptors: [SortKey("label")]))
            try notes[20].setValue(.string("unsaved nowhere at all"), forKey: "text")
            try notes[0].setValue(.string("no longer shared"), forKey: "text")
        }
        for needle in ["nowhere at all", "shared pending", "needle-in-log"] {
            let predicate = try ObjectPredicate(format: "text CONTAINS %@", .string(needle))
            #expect(try labels(heldBinary, predicate) == labels(heldMemory, predicate), "held: text CONTAINS \(needle)")
            #expect(try heldBinary.count(for: FetchRequest(entityName: "Note", predicate: predicate)) == labels(heldMemory, predicate).count)
        }
        // The one unsaved text that holds a needle no row holds is found.
        #expect(try labels(heldBinary, try ObjectPredicate("text CONTAINS 'nowhere at all'")) == ["n021"])
    }

    /// The rejection reads no row: with a snapshot row damaged, a needle no row holds answers
    /// (before, every row was read and the damage reported), one that rows hold still meets
    /// the damage.
    @Test func aNeedleNoRowHoldsReadsNoRow() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("notes.store")
        try compactedNotes(at: url, count: 40) { n in n == 7 ? "seven-is-here" : "text \(n)" }
        var bytes = Array(try Data(contentsOf: url))
        let mark = Array("seven-is-here".utf8)
        let at = (0...(bytes.count - mark.count)).filter { Array(bytes[$0..<$0 + mark.count]) == mark }
        #expect(at.count == 1, "the text once, in the snapshot's row")
        bytes[(at.first ?? 0) + 3] ^= 0x20
        try Data(bytes).write(to: url)

        func open() throws -> ManagedObjectContext { ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: Self.model, storeURL: url)) }
        #expect(try labels(try open(), try ObjectPredicate("text CONTAINS 'absent'")).isEmpty)
        #expect(try open().count(for: FetchRequest(entityName: "Note", predicate: try ObjectPredicate("text CONTAINS 'absent' AND label != 'x'"))) == 0)
        #expect(throws: StoreError.self) { try labels(try open(), try ObjectPredicate("text CONTAINS 'text'")) }
        // With options the needle is not looked for in bytes: rows are read.
        #expect(throws: StoreError.self) { try labels(try open(), try ObjectPredicate("text CONTAINS[c] 'absent'")) }
    }

    /// The rows' bytes searched from the file in pieces find a needle wherever it falls,
    /// across a boundary between two pieces too, and find no needle the rows lack.
    @Test func theRowsReadInPiecesFindANeedleAcrossTheirBoundaries() throws {
        let directory = try TemporaryDirectory()
        let store = try compactedNotes(at: directory.file("notes.store"), count: 12) { n in n == 7 ? "seven-is-here" : "text \(n)" }
        let found = try store.readRows { reader -> [Int: (present: Bool, absent: Bool)] in
            guard let binary = reader as? BinaryStore.Reader, let snapshot = binary.core.state.cache.snapshot,
                  let table = binary.codec.entityIndex["Note"] else { return [:] }
            var found: [Int: (present: Bool, absent: Bool)] = [:]
            for piece in 1...300 {
                found[piece] = (try snapshot.rows(ofEntity: table, contain: Array("seven-is-here".utf8), fd: binary.fd, path: binary.path, piece: piece),
                                try snapshot.rows(ofEntity: table, contain: Array("seven-is-gone".utf8), fd: binary.fd, path: binary.path, piece: piece))
            }
            return found
        }
        #expect(found?.count == 300)
        for (piece, result) in (found ?? [:]).sorted(by: { $0.key < $1.key }) {
            #expect(result.present && !result.absent, "pieces of \(piece) bytes")
        }
    }

    /// A store opened anew answers a `CONTAINS` no row holds without reading the entity's
    /// part into memory: the part is not among the store's loaded ones afterwards.
    @Test func aNeedleNoRowHoldsLeavesThePartUnread() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("notes.store")
        try compactedNotes(at: url, count: 50) { n in "text \(n)" }
        let reopened = try BinaryStore(url: url, model: Self.model)
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(model: Self.model, store: reopened))
        func loaded() throws -> Bool? {
            try reopened.readRows { reader in
                guard let binary = reader as? BinaryStore.Reader, let table = binary.codec.entityIndex["Note"] else { return nil }
                return binary.core.state.cache.loaded[table] != nil
            } ?? nil
        }
        #expect(try context.fetch(FetchRequest(entityName: "Note", predicate: try ObjectPredicate("text CONTAINS 'absent'"))).isEmpty)
        #expect(try loaded() == false, "the part was read into memory")
        // Objects the context holds are tested as they are (one changed to hold the needle,
        // unsaved), their rows read one by one, the part still not read.
        let scope = ObjectID(entityName: "Note", storeIdentifier: context.coordinator.storeIdentifier, key: .permanent(1))
        let held = try (1...3).map { try context.existingObject(with: ObjectID(entityName: scope.entityName, storeIdentifier: scope.storeIdentifier, key: .permanent($0))) }
        try held[1].setValue(.string("now absent-ish"), forKey: "text")
        let found = try context.fetch(FetchRequest(entityName: "Note", predicate: try ObjectPredicate("text CONTAINS 'absent'")))
        #expect(found.map(\.objectID) == [held[1].objectID])
        #expect(try context.count(for: FetchRequest(entityName: "Note", predicate: try ObjectPredicate("text CONTAINS 'absent'"))) == 1)
        #expect(try loaded() == false, "the part was read into memory for three held objects")
        #expect(try context.fetch(FetchRequest(entityName: "Note", predicate: try ObjectPredicate("text CONTAINS 'text 4'"))).count == 11)
        #expect(try loaded() == true, "a needle the rows hold reads them")
    }

    /// A second opening of the store through a symbolic link, holding the part in memory or
    /// not, sees a needle that the first opening wrote and compacted into the snapshot: the
    /// rejection reads the snapshot the store's state has after reading the other's commits.
    @Test func anotherOpeningsCompactionIsSeen() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("notes.store")
        let writer = try compactedNotes(at: url, count: 30) { n in "text \(n)" }
        let link = directory.file("link.store")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        let reader = PersistentStoreCoordinator(model: Self.model, store: try BinaryStore(url: link, model: Self.model))
        let warm = PersistentStoreCoordinator(model: Self.model, store: try BinaryStore(url: link, model: Self.model))
        #expect(try ManagedObjectContext(coordinator: warm).fetch(FetchRequest(entityName: "Note")).count == 30, "this opening holds the part")
        for coordinator in [reader, warm] {
            #expect(try labels(ManagedObjectContext(coordinator: coordinator), try ObjectPredicate("text CONTAINS 'late-word'")).isEmpty)
        }
        let writing = ManagedObjectContext(coordinator: PersistentStoreCoordinator(model: Self.model, store: writer))
        for (n, text) in [(30, "a late-word in the log"), (31, "another late-word, compacted")].enumerated() {
            let note = try writing.insertObject(entityName: "Note")
            try note.setValue(.string("note \(text.0)"), forKey: "label")
            try note.setValue(.string(text.1), forKey: "text")
            try writing.save()
            for coordinator in [reader, warm] {
                #expect(try labels(ManagedObjectContext(coordinator: coordinator), try ObjectPredicate("text CONTAINS 'late-word'")).count == n + 1,
                        "after \(n == 0 ? "a save" : "a save and a compaction") by the other opening")
            }
            if n == 0 { try writer.compact() }
        }
        for coordinator in [reader, warm] {
            #expect(try labels(ManagedObjectContext(coordinator: coordinator), try ObjectPredicate("text CONTAINS 'late-word'")) == ["note 30", "note 31"])
        }
    }

    /// A binary store at `url` of `count` notes labelled "note N" with the text `text(N)`,
    /// saved and compacted (their rows in the snapshot).
    @discardableResult
    private func compactedNotes(at url: URL, count: Int, text: (Int) -> String) throws -> BinaryStore {
        let store = try BinaryStore(url: url, model: Self.model)
        let setup = ManagedObjectContext(coordinator: PersistentStoreCoordinator(model: Self.model, store: store))
        for n in 0..<count {
            let note = try setup.insertObject(entityName: "Note")
            try note.setValue(.string("note \(n)"), forKey: "label")
            try note.setValue(.string(text(n)), forKey: "text")
        }
        try setup.save()
        try store.compact()
        return store
    }

    private func labels(_ context: ManagedObjectContext, _ predicate: ObjectPredicate) throws -> [String] {
        try context.fetch(FetchRequest(entityName: "Note", predicate: predicate, sortDescriptors: [SortKey("label")])).map { $0["label"].stringValue ?? "?" }
    }
}

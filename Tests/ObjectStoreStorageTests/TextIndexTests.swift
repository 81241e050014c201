import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

/// A schema index whose first property is a string (format 4): compaction files every row's
/// value under the hash of its index key (case and diacritics folded, canonically
/// decomposed), and an equality or `IN` list of strings, with any comparison options, lists
/// only the rows filed under its constants' keys and tests them. These tests hold the key
/// to the comparisons (every pair of tricky strings they find equal shares a key) and the
/// indexed queries to the in-memory store's answers.
@Suite struct TextIndexTests {
    static let model: ManagedObjectModel = {
        do {
            return try ManagedObjectModel(schema: #"""
            { "entities": [
                { "name": "Item", "indexes": [{ "name": "byName", "properties": ["name"] }, { "name": "byRef", "properties": ["ref"] }],
                  "attributes": [{ "name": "name", "type": "string" }, { "name": "n", "type": "int64" },
                                 { "name": "note", "type": "string" }, { "name": "ref", "type": "uuid" }] },
                { "name": "Special", "parent": "Item", "attributes": [{ "name": "extra", "type": "boolean" }] }
            ] }
            """#, file: "items")
        } catch {
            preconditionFailure("the test model does not load: \(error)")
        }
    }()

    /// Pieces whose case or diacritics fold in uncommon ways: precomposed and decomposed
    /// accents, the Kelvin sign, dotted and dotless i, sharp s, final sigma, a titlecase
    /// digraph, ligatures, and an empty piece.
    static let pieces = ["a", "A", "\u{E1}", "a\u{301}", "\u{C1}", "A\u{301}", "k", "K", "\u{212A}", "i", "I", "\u{130}", "\u{131}",
                         "i\u{307}", "\u{DF}", "ss", "SS", "\u{1E9E}", "\u{3A3}", "\u{3C3}", "\u{3C2}", "\u{1C4}", "\u{1C5}", "\u{1C6}",
                         "\u{152}", "\u{153}", "e", "\u{E9}", "E\u{301}", "\u{F8}", "\u{D8}", "o", " ", "-", ""]

    static let options = ["", "[c]", "[d]", "[cd]", "[n]", "[cdn]"]

    /// Every string of up to two pieces.
    static let strings: [String] = {
        var result: [String] = []
        for a in pieces { for b in pieces { result.append(a + b) } }
        return result
    }()

    @Test func stringsEqualUnderAnyOptionsShareAnIndexKey() throws {
        let keys = Self.strings.map(StringMatching.indexKey)
        var equalPairs = 0
        for optionText in Self.options {
            let predicate = try ObjectPredicate("SELF ==\(optionText) 'x'")
            guard case .comparison(let comparison) = predicate else { Issue.record("not a comparison"); return }
            // The folds done once per string; equal folds are equal strings.
            let folded = Self.strings.map { StringMatching.fold($0, comparison.options) }
            for i in Self.strings.indices {
                for j in Self.strings.indices where j > i && folded[i] == folded[j] {
                    equalPairs += 1
                    #expect(keys[i] == keys[j], "\(Self.strings[i].unicodeScalars.map { String($0.value, radix: 16) }) ==\(optionText) \(Self.strings[j].unicodeScalars.map { String($0.value, radix: 16) })")
                }
            }
        }
        #expect(equalPairs > 1_000)
        // The ASCII shortcut gives what the general path gives.
        for byte in UInt8(0)..<0x80 {
            let text = "x" + String(UnicodeScalar(byte)) + "Y"
            #expect(StringMatching.indexKey(text) == StringMatching.foldedIndexKey(text), "\(byte)")
        }
    }

    /// CONTAINS's byte search (both strings ASCII) answers as the general path does, for
    /// every tricky string and ASCII one in which each piece or ASCII string is looked for,
    /// with each option.
    @Test func containsAnswersAsTheGeneralPathDoes() throws {
        let ascii = ["", "a", "A", "ab", "AB", "abc", "xaBcx", "depends", "\"depends\"", "{\"depends\":[]}", "aaab", "aab", " ", "-"]
        let all = Self.strings + ascii
        var compared = 0
        for optionText in Self.options {
            let predicate = try ObjectPredicate("SELF CONTAINS\(optionText) 'x'")
            guard case .comparison(let comparison) = predicate else { Issue.record("not a comparison"); return }
            for haystack in all {
                for needle in Self.pieces + ascii {
                    let general = StringMatching.fold(haystack, comparison.options).contains(StringMatching.fold(needle, comparison.options))
                    #expect(StringMatching.contains(haystack, needle, comparison.options) == general, "\(haystack) CONTAINS\(optionText) \(needle)")
                    compared += 1
                }
            }
        }
        #expect(compared > 100_000)
    }

    /// Names drawn from the tricky strings, compacted into a text index, with saved edits in
    /// the log and unsaved ones over them: every equality and IN list of strings, with each
    /// option, either way round and ANDed with other tests, fetches and counts the rows the
    /// in-memory store's objects find.
    @Test func indexedEqualitiesFindExactlyTheRowsTheObjectsFind() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("items.store")
        let binary = try PersistentStoreCoordinator(model: Self.model, storeURL: url)
        let memory = PersistentStoreCoordinator(inMemoryWith: Self.model)
        var generator = SeededRandom(seed: 0x5EED_7E47)
        let names = (0..<900).map { n in n % 41 == 0 ? nil : generator.pick(Self.strings) }
        let contexts = [ManagedObjectContext(coordinator: binary), ManagedObjectContext(coordinator: memory)]
        for context in contexts { context.undoManager = nil }  // the undo stack would keep every object
        for context in contexts {
            for (n, name) in names.enumerated() {
                let item = try context.insertObject(entityName: n % 3 == 0 ? "Special" : "Item")
                try item.setValue(name.map { .string($0) } ?? .null, forKey: "name")
                try item.setValue(.integer(Int64(n)), forKey: "n")
                try item.setValue(.string("note \(n % 7)"), forKey: "note")
            }
            try context.save()
        }
        try binary.compactStore()
        // Saved edits (in the log) and unsaved ones, in both stores alike.
        let edits = (0..<60).map { _ in (Int(generator.next() % 900), generator.pick(Self.strings)) }
        for context in contexts {
            do {
                let items = try context.fetch(FetchRequest(entityName: "Item", sortDescriptors: [SortKey("n")]))
                for (n, name) in edits.prefix(30) { try items[n].setValue(.string(name), forKey: "name") }
                try context.save()
                for (n, name) in edits.dropFirst(30) { try items[n].setValue(.string(name), forKey: "name") }
            }
            // Hold only the edited objects (below a quarter of the rows: the index still pays).
            context.releaseCleanObjects()
            #expect(context.registeredObjects.count < 225)
        }
        var checked = 0
        for round in 0..<30 {
            let reopened = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: Self.model, storeURL: url))
            let saved = ManagedObjectContext(coordinator: memory)
            let option = Self.options[round % Self.options.count]
            let a = generator.pick(Self.strings), b = generator.pick(Self.strings)
            let cases: [(String, [Value])] = [
                ("name ==\(option) %@", [.string(a)]),
                ("%@ ==\(option) name", [.string(a)]),
                ("name IN\(option) {%@, %@}", [.string(a), .string(b)]),
                ("name ==\(option) %@ AND n < 600", [.string(a)]),
                ("name ==\(option) %@ AND name ==[cd] %@", [.string(a), .string(b)]),
                ("name ==\(option) %@ AND note ENDSWITH '3'", [.string(a)]),
            ]
            for (format, arguments) in cases {
                let predicate = try ObjectPredicate(format: format, arguments: arguments)
                for entity in ["Item", "Special"] {
                    let request = FetchRequest(entityName: entity, predicate: predicate, sortDescriptors: [SortKey("n")])
                    let expected = try contexts[1].fetch(request).map { $0["n"] }
                    #expect(try contexts[0].fetch(request).map { $0["n"] } == expected, "\(entity): \(format) \(arguments)")
                    #expect(try contexts[0].count(for: request) == expected.count, "count \(entity): \(format) \(arguments)")
                    // As saved, from a store opened anew.
                    #expect(try reopened.fetch(request).map { $0["n"] } == saved.fetch(request).map { $0["n"] }, "saved \(entity): \(format) \(arguments)")
                    checked += expected.isEmpty ? 0 : 1
                }
            }
        }
        #expect(checked > 100)
        #expect(try binary.checkIntegrity().problems.isEmpty)
    }

    /// A schema index on a UUID attribute files each value under a hash of its 16 bytes:
    /// `ref == %@`, either way round, and `ref IN` a list of UUIDs find what the objects
    /// find (with rows edited in the log), a comparison with a string is answered without
    /// it, and `checkIntegrity()` finds the index matching its rows.
    @Test func aUUIDIndexFindsExactlyTheRowsTheObjectsFind() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("items.store")
        let binary = try PersistentStoreCoordinator(model: Self.model, storeURL: url)
        let memory = PersistentStoreCoordinator(inMemoryWith: Self.model)
        let refs = (0..<300).map { _ in UUID() }
        var generator = SeededRandom(seed: 0xC0FF_EE11)
        let assigned = (0..<900).map { n in n % 37 == 0 ? nil : generator.pick(refs) }
        let contexts = [ManagedObjectContext(coordinator: binary), ManagedObjectContext(coordinator: memory)]
        for context in contexts { context.undoManager = nil }  // the undo stack would keep every object
        for context in contexts {
            for (n, ref) in assigned.enumerated() {
                let item = try context.insertObject(entityName: n % 4 == 0 ? "Special" : "Item")
                try item.setValue(ref.map { .uuid($0) } ?? .null, forKey: "ref")
                try item.setValue(.integer(Int64(n)), forKey: "n")
            }
            try context.save()
        }
        try binary.compactStore()
        let moved = (0..<20).map { _ in (Int(generator.next() % 900), generator.pick(refs)) }
        for context in contexts {
            let items = try context.fetch(FetchRequest(entityName: "Item", sortDescriptors: [SortKey("n")]))
            for (n, ref) in moved { try items[n].setValue(.uuid(ref), forKey: "ref") }
            try context.save()
        }
        var checked = 0
        for round in 0..<40 {
            let a = generator.pick(refs), b = generator.pick(refs)
            let cases: [(String, [Value])] = [
                ("ref == %@", [.uuid(a)]), ("%@ == ref", [.uuid(a)]), ("ref IN {%@, %@}", [.uuid(a), .uuid(b)]),
                ("ref == %@ AND n < 450", [.uuid(a)]), ("ref == %@ OR n == 3", [.uuid(a)]),
            ] + (round % 10 == 0 ? [("ref == %@", [.uuid(UUID())])] : [])
            for (format, arguments) in cases {
                let request = FetchRequest(entityName: "Item", predicate: try ObjectPredicate(format: format, arguments: arguments), sortDescriptors: [SortKey("n")])
                let expected = try contexts[1].fetch(request).map { $0["n"] }
                let reopened = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: Self.model, storeURL: url))
                #expect(try reopened.fetch(request).map { $0["n"] } == expected, "\(format) \(arguments)")
                #expect(try reopened.count(for: request) == expected.count, "count \(format) \(arguments)")
                checked += expected.isEmpty ? 0 : 1
            }
        }
        #expect(checked > 100)
        #expect(try binary.checkIntegrity().problems.isEmpty)
    }

    /// Items with a string, a UUID and a date attribute, each with a schema index.
    static func sparseModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(schema: #"""
            { "entities": [
                { "name": "Item", "indexes": [{ "name": "byName", "properties": ["name"] }, { "name": "byRef", "properties": ["ref"] },
                                              { "name": "byDue", "properties": ["due"] }],
                  "attributes": [{ "name": "name", "type": "string" }, { "name": "n", "type": "int64" },
                                 { "name": "ref", "type": "uuid" }, { "name": "due", "type": "date" }] }
            ] }
            """#, file: "sparse")
    }

    /// `name != nil` read through the index by an opening through a symbolic link, warm,
    /// while another opening through the link gives and takes names and saves (the rows in
    /// its log), then compacts (the file replaced), and a third through the real path does
    /// the same: each answer is what a filter of every item finds, with the index in use
    /// (the saved rows in the log are read besides it).
    @Test func notNilFollowsAnotherOpeningsSavesAndCompactions() throws {
        let model = try Self.sparseModel()
        let directory = try TemporaryDirectory()
        let url = directory.file("items.store")
        let link = directory.file("link.store")
        let writer = try PersistentStoreCoordinator(model: model, storeURL: url)
        let setup = ManagedObjectContext(coordinator: writer)
        for n in 0..<2_000 {
            let item = try setup.insertObject(entityName: "Item")
            try item.setValue(.integer(Int64(n)), forKey: "n")
            if n % 10 == 3 { try item.setValue(.string("every \(n % 7) days"), forKey: "name") }
        }
        try setup.save()
        try writer.compactStore()
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        let reader = try PersistentStoreCoordinator(model: model, storeURL: link)
        let entity = try #require(model.entity(named: "Item"))
        let named = try #require(SlotPredicate(try ObjectPredicate("name != nil"), entity: entity))
        func expectAgreement(_ moment: String) throws {
            let context = ManagedObjectContext(coordinator: reader)
            let found = try context.fetch(FetchRequest(entityName: "Item", predicate: try ObjectPredicate("name != nil"), sortDescriptors: [SortKey("n")])).map { $0["n"] }
            let all = try ManagedObjectContext(coordinator: reader).fetch(FetchRequest(entityName: "Item", sortDescriptors: [SortKey("n")]))
            #expect(found == all.filter { $0["name"] != .null }.map { $0["n"] }, "\(moment)")
            #expect(try context.count(for: FetchRequest(entityName: "Item", predicate: try ObjectPredicate("name != nil"))) == found.count, "count \(moment)")
            #expect(try reader.store.readRows { try $0.indexCandidates(ofEntity: "Item", predicate: named, limit: 500) } != nil, "indexed \(moment)")
        }
        try expectAgreement("before")
        try expectAgreement("again, warm")
        func rename(through coordinator: PersistentStoreCoordinator, giving given: Int, taking taken: Int) throws {
            let edit = ManagedObjectContext(coordinator: coordinator)
            for item in try edit.fetch(FetchRequest(entityName: "Item")) {
                guard let n = item["n"].integerValue else { continue }
                if n % 97 == given { try item.setValue(.string("given \(n)"), forKey: "name") }
                if n % 10 == 3 && n % 89 == taken { try item.setValue(.null, forKey: "name") }
            }
            try edit.save()
        }
        let other = try PersistentStoreCoordinator(model: model, storeURL: link)
        try rename(through: other, giving: 1, taking: 3)
        try expectAgreement("after the other's save, in the log")
        try other.compactStore()
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) != nil, "the link is still a link")
        try expectAgreement("after the other's compaction")
        let third = try PersistentStoreCoordinator(model: model, storeURL: url)
        try rename(through: third, giving: 2, taking: 13)
        try expectAgreement("after the third's save")
        try third.compactStore()
        try expectAgreement("after the third's compaction")
        #expect(try reader.checkIntegrity().problems.isEmpty)
    }

    /// `a != nil` on an attribute with a schema index (a string's text index, a UUID's, a
    /// date's range index) lists every entry of it: the rows with a value, no others. With
    /// few values the index is what the store reads (its candidates are exactly the saved
    /// rows with a value), and fetches and counts find what the in-memory store finds, with
    /// saved edits in the log, unsaved ones (values given and taken away), either way round,
    /// ANDed with other tests or with an equality of the same attribute, and under OR.
    @Test func notNilListsEveryEntryOfTheIndex() throws {
        let model = try Self.sparseModel()
        let directory = try TemporaryDirectory()
        let url = directory.file("items.store")
        let binary = try PersistentStoreCoordinator(model: model, storeURL: url)
        let memory = PersistentStoreCoordinator(inMemoryWith: model)
        let contexts = [ManagedObjectContext(coordinator: binary), ManagedObjectContext(coordinator: memory)]
        let base = Date(timeIntervalSinceReferenceDate: 800_000_000)
        for context in contexts {
            context.undoManager = nil
            for n in 0..<2_000 {
                let item = try context.insertObject(entityName: "Item")
                try item.setValue(.integer(Int64(n)), forKey: "n")
                if n % 10 == 3 { try item.setValue(.string(n % 20 == 3 ? "weekly" : "P\(n % 7)D"), forKey: "name") }
                if n % 20 == 7 { try item.setValue(.uuid(UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n % 40)) ?? UUID()), forKey: "ref") }
                if n % 8 == 1 { try item.setValue(.date(base.addingTimeInterval(Double(n % 50) * 86_400)), forKey: "due") }
            }
            try context.save()
        }
        try binary.compactStore()
        // The store reads the index (of two, the one with fewer entries): exactly the saved
        // rows with a value are its candidates.
        let entity = try #require(model.entity(named: "Item"))
        for (format, expected) in [("name != nil", 200), ("nil != name", 200), ("ref != nil", 100), ("due != nil", 250), ("name != nil AND due != nil", 200)] {
            let slotPredicate = try #require(SlotPredicate(try ObjectPredicate(format), entity: entity))
            let found = try binary.store.readRows { try $0.indexCandidates(ofEntity: "Item", predicate: slotPredicate, limit: 500) }
            #expect(found??.count == expected, "\(format)")
        }
        // Saved edits (in the log), then unsaved ones, alike in both stores.
        for context in contexts {
            do {
                let items = try context.fetch(FetchRequest(entityName: "Item", sortDescriptors: [SortKey("n")]))
                for n in stride(from: 0, to: 2_000, by: 97) { try items[n].setValue(.string("daily"), forKey: "name") }
                for n in stride(from: 3, to: 2_000, by: 110) { try items[n].setValue(.null, forKey: "name") }
                for n in stride(from: 1, to: 2_000, by: 160) { try items[n].setValue(.null, forKey: "due") }
                try context.save()
                for n in stride(from: 5, to: 2_000, by: 301) { try items[n].setValue(.string("monthly"), forKey: "name") }
                for n in stride(from: 13, to: 2_000, by: 200) { try items[n].setValue(.null, forKey: "name") }
            }
            // Hold only the edited objects (below a quarter of the rows: the index still pays).
            context.releaseCleanObjects()
            #expect(context.registeredObjects.count < 500)
        }
        let formats = ["name != nil", "nil != name", "ref != nil", "due != nil", "nil != due", "name != nil AND n < 1500",
                       "name != nil AND due != nil", "name != nil AND name ==[c] 'WEEKLY'", "name != nil OR n < 5",
                       "name != nil AND ref != nil", "NOT (name == nil)"]
        for format in formats {
            let request = FetchRequest(entityName: "Item", predicate: try ObjectPredicate(format), sortDescriptors: [SortKey("n")])
            let expected = try contexts[1].fetch(request).map { $0["n"] }
            #expect(!expected.isEmpty, "\(format)")
            #expect(try contexts[0].fetch(request).map { $0["n"] } == expected, "\(format)")
            #expect(try contexts[0].count(for: request) == expected.count, "count \(format)")
            // As saved, from a store opened anew (the saved edits are in its log).
            let reopened = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
            var asSaved = request
            asSaved.includesPendingChanges = false
            #expect(try reopened.fetch(request).map { $0["n"] } == contexts[1].fetch(asSaved).map { $0["n"] }, "saved \(format)")
        }
        #expect(try binary.checkIntegrity().problems.isEmpty)
    }

    /// Two openings of one file, one through a symbolic link: the rows one has read by
    /// itself through the index are not taken for current after the other renamed, deleted
    /// or compacted (the file replaced under it), nor are its index and snapshot.
    @Test func rowsReadThroughTheIndexFollowAnotherOpeningsSavesAndCompactions() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("items.store")
        let link = directory.file("link.store")
        let writer = try PersistentStoreCoordinator(model: Self.model, storeURL: url)
        let setup = ManagedObjectContext(coordinator: writer)
        for n in 0..<400 {
            let item = try setup.insertObject(entityName: "Item")
            try item.setValue(.string("name \(n)"), forKey: "name")
            try item.setValue(.integer(Int64(n)), forKey: "n")
        }
        try setup.save()
        try writer.compactStore()
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        let reader = try PersistentStoreCoordinator(model: Self.model, storeURL: link)
        func numbers(_ name: String) throws -> [Value] {
            let request = FetchRequest(entityName: "Item", predicate: try ObjectPredicate(format: "name ==[c] %@", .string(name)), sortDescriptors: [SortKey("n")])
            return try ManagedObjectContext(coordinator: reader).fetch(request).map { $0["n"] }
        }
        #expect(try numbers("NAME 5") == [.integer(5)])
        #expect(try numbers("name 6") == [.integer(6)])
        let items = try setup.fetch(FetchRequest(entityName: "Item", predicate: try ObjectPredicate("n IN {5, 6}"), sortDescriptors: [SortKey("n")]))
        try items[0].setValue(.string("renamed"), forKey: "name")
        setup.delete(items[1])
        try setup.save()
        #expect(try numbers("name 5").isEmpty, "renamed in the log")
        #expect(try numbers("renamed") == [.integer(5)])
        #expect(try numbers("name 6").isEmpty, "deleted in the log")
        // Compacted by a third opening through the link: the file is replaced.
        let compactor = try PersistentStoreCoordinator(model: Self.model, storeURL: link)
        let edit = ManagedObjectContext(coordinator: compactor)
        let seven = try #require(edit.fetch(FetchRequest(entityName: "Item", predicate: try ObjectPredicate("n == 7"))).first)
        try seven.setValue(.string("name 5"), forKey: "name")
        try edit.save()
        try compactor.compactStore()
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) != nil, "the link is still a link")
        #expect(try numbers("name 5") == [.integer(7)])
        #expect(try numbers("renamed") == [.integer(5)])
        #expect(try numbers("name 7").isEmpty)
        #expect(try numbers("name 8") == [.integer(8)])
        #expect(try reader.checkIntegrity().problems.isEmpty)
    }

    /// The steps an opening's index searches keep (per snapshot) are never taken for another
    /// snapshot's: a reader through a symbolic link looks up names and UUIDs in 3,000 items
    /// (its searches take several steps each, kept); another opening gives a third of the
    /// items other names and UUIDs of the same sizes (so the new file's indexes lie where
    /// the old ones did, their entries different) and compacts, replacing the file; then
    /// it adds items, and a third opening saves over the new snapshot. Each lookup of the
    /// reader, warm or not, finds what a filter of every item finds.
    @Test func keptSearchStepsFollowAnotherOpeningsCompaction() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("items.store")
        let link = directory.file("link.store")
        let writer = try PersistentStoreCoordinator(model: Self.model, storeURL: url)
        let setup = ManagedObjectContext(coordinator: writer)
        func uuid(_ n: Int) -> UUID { UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n)) ?? UUID() }
        func insert(_ numbers: Range<Int>, into context: ManagedObjectContext) throws {
            for n in numbers {
                let item = try context.insertObject(entityName: "Item")
                try item.setValue(.string("name \(n)"), forKey: "name")
                try item.setValue(.integer(Int64(n)), forKey: "n")
                try item.setValue(.uuid(uuid(n)), forKey: "ref")
            }
        }
        try insert(0..<3_000, into: setup)
        try setup.save()
        try writer.compactStore()
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        let reader = try PersistentStoreCoordinator(model: Self.model, storeURL: link)
        let context = ManagedObjectContext(coordinator: reader)
        func found(_ predicate: ObjectPredicate) throws -> [Value] {
            context.reset()
            return try context.fetch(FetchRequest(entityName: "Item", predicate: predicate, sortDescriptors: [SortKey("n")])).map { $0["n"] }
        }
        /// Every probe's answer through the index against a filter of every item.
        func expectLookupsAgree(_ probes: [Int], _ moment: String) throws {
            context.reset()
            let all = try context.fetch(FetchRequest(entityName: "Item", sortDescriptors: [SortKey("n")]))
            for n in probes {
                let name = "name \(n)"
                #expect(try found(try ObjectPredicate(format: "name == %@", .string(name))) == all.filter { $0["name"] == .string(name) }.map { $0["n"] },
                        "\(moment): \(name)")
                #expect(try found(try ObjectPredicate(format: "ref == %@", .uuid(uuid(n)))) == all.filter { $0["ref"] == .uuid(uuid(n)) }.map { $0["n"] },
                        "\(moment): ref of \(n)")
            }
        }
        let probes = Array(stride(from: 0, to: 4_000, by: 97)) + [2_999, 3_000, 3_999]
        try expectLookupsAgree(probes, "before")
        try expectLookupsAgree(probes, "again, the steps kept")
        // Another opening through the link gives every third item a name and UUID of the same
        // size another item does not have (`mane n`, n + 5,000), and compacts.
        let other = try PersistentStoreCoordinator(model: Self.model, storeURL: link)
        let edit = ManagedObjectContext(coordinator: other)
        for item in try edit.fetch(FetchRequest(entityName: "Item")) {
            guard let n = item["n"].integerValue, n % 3 == 0 else { continue }
            try item.setValue(.string("mane \(n)"), forKey: "name")
            try item.setValue(.uuid(uuid(Int(n) + 5_000)), forKey: "ref")
        }
        try edit.save()
        try expectLookupsAgree(probes, "after the other's save, in the log")
        try other.compactStore()
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) != nil, "the link is still a link")
        try expectLookupsAgree(probes, "after the other's compaction")
        try expectLookupsAgree(probes.map { $0 + 5_000 }, "the new UUIDs")
        #expect(try found(try ObjectPredicate("name == 'mane 3'")) == [.integer(3)])
        // Then it adds a thousand items and compacts again.
        try insert(3_000..<4_000, into: edit)
        try edit.save()
        try other.compactStore()
        try expectLookupsAgree(probes, "after the second compaction")
        // A third opening (of the real path) saves over the new snapshot.
        let third = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: Self.model, storeURL: url))
        let moved = try #require(try third.fetch(FetchRequest(entityName: "Item", predicate: try ObjectPredicate("n == 1"))).first)
        try moved.setValue(.string("name 0"), forKey: "name")
        try third.save()
        try expectLookupsAgree(probes, "after a third opening's save")
        #expect(try found(try ObjectPredicate("name == 'name 0'")) == [.integer(1)])
        #expect(try reader.checkIntegrity().problems.isEmpty)
    }

    /// The index is what the query reads: an entry moved to another row's position (with its
    /// checksum made right again) makes the indexed query report damage, and
    /// `checkIntegrity()` names the index; a compaction rebuilds it.
    @Test func aQueryReadsTheTextIndexAndIntegrityChecksIt() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("items.store")
        let store = try BinaryStore(url: url, model: Self.model)
        let setup = ManagedObjectContext(coordinator: PersistentStoreCoordinator(model: Self.model, store: store))
        for n in 0..<40 {
            let item = try setup.insertObject(entityName: "Item")
            try item.setValue(.string("Name \(n)"), forKey: "name")
            try item.setValue(.integer(Int64(n)), forKey: "n")
        }
        try setup.save()
        try store.compact()
        // The entry of "NAME 5" (key 6, position 5): hash 8, position 1, key 1 (format 5
        // packs 40 positions and keys in a byte each).
        func little(_ value: UInt64, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }
        let entry = little(BinaryStore.textHash("NAME 5"), 8) + little(5, 1) + little(6, 1)
        var bytes = Array(try Data(contentsOf: url))
        let starts = (0...(bytes.count - entry.count)).filter { Array(bytes[$0..<$0 + entry.count]) == entry }
        #expect(starts.count == 1)
        guard let start = starts.first else { return }
        // Position 9 holds key 10: the entry no longer names its row. The index's checksum
        // and the tables' are made to match (a forgery, not damage).
        bytes[start + 8] = 9
        let snapshotOffset = Int(StoreHeader.field(bytes, at: 32))
        let entities = Int(bytes[snapshotOffset + 4]), indexes = Int(bytes[snapshotOffset + 8])
        var columns = 0
        for e in 0..<entities { columns += Int(bytes[snapshotOffset + 16 + e * 40 + 36]) }
        var patched = 0
        for k in 0..<indexes {
            let part = snapshotOffset + 16 + entities * 40 + k * 32
            let count = Int(StoreHeader.field(bytes, at: part + 8)), offset = snapshotOffset + Int(StoreHeader.field(bytes, at: part + 16))
            guard (offset..<offset + count * entry.count).contains(start) else { continue }
            bytes.replaceSubrange(part + 24..<part + 28, with: little(UInt64(CRC32.checksum(bytes[offset..<offset + count * entry.count])), 4))
            patched += 1
        }
        #expect(patched == 1)
        let tables = bytes[(snapshotOffset + 16)..<(snapshotOffset + 16 + entities * 40 + indexes * 32 + columns * 24)]
        bytes.replaceSubrange(snapshotOffset + 12..<snapshotOffset + 16, with: little(UInt64(CRC32.checksum(tables)), 4))
        try Data(bytes).write(to: url)

        let coordinator = try PersistentStoreCoordinator(model: Self.model, storeURL: url)
        let request = FetchRequest(entityName: "Item", predicate: try ObjectPredicate("name ==[c] 'name 5'"))
        let context = ManagedObjectContext(coordinator: coordinator)
        #expect(throws: StoreError.self) { try context.fetch(request) }
        #expect(try coordinator.checkIntegrity().problems.contains { $0.contains("schema index 1") && $0.contains("does not match its rows") })
        try coordinator.compactStore()
        #expect(try context.fetch(request).map { try $0.value(forKey: "n") } == [.integer(5)])
        #expect(try coordinator.checkIntegrity().problems.isEmpty)
    }
}

import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

/// A limited fetch sorted by an attribute with a schema index reads the index's order up
/// to a cut and widens it until the window is full: its answers must be the whole fetch's,
/// with ties, nils, rows saved after the index was written and unsaved changes.
@Suite struct IndexedLimitedFetchTests {
    /// A context of a store of rows whose every fixed-width attribute has a schema index.
    static func open(_ url: URL) throws -> ManagedObjectContext {
        ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: ColumnQueryTests.indexedModel, storeURL: url))
    }

    @Test func aFetchCutAtAnIndexedValueIsTheWindowOfTheWholeFetch() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("rows.store")
        func open() throws -> ManagedObjectContext { try Self.open(url) }
        var g = SeededRandom(seed: 0x5EED_1234)
        let base = Date(timeIntervalSinceReferenceDate: 800_000_000)
        func fill(_ row: ManagedObject) throws {
            // Few distinct values: long runs of ties; a fifth of each without a value.
            try row.setValue(g.chance(20) ? .null : .integer(Int64(g.next() % 12)), forKey: "i")
            try row.setValue(g.chance(20) ? .null : .double(Double(g.next() % 50) / 10), forKey: "d")
            try row.setValue(g.chance(20) ? .null : .date(base.addingTimeInterval(Double(g.next() % 30) * 3600)), forKey: "t")
            try row.setValue(g.chance(20) ? .null : .bool(g.chance(50)), forKey: "b")
            try row.setValue(.string(g.pick(["a", "b", "c"]) + "\(g.next() % 5)"), forKey: "label")
        }
        let setup = try open()
        // Enough rows that a cut may widen (64, then 256 of an index's 1,040 or so entries).
        for _ in 0..<1_300 { try fill(try setup.insertObject(entityName: "Row")) }
        try setup.save()
        try setup.coordinator.compactStore()
        // Saved after the index was written: edits, inserts, deletions in the log.
        let written = try setup.fetch(FetchRequest(entityName: "Row"))
        for row in written.prefix(40) { try fill(row) }
        for row in written.dropFirst(40).prefix(20) { setup.delete(row) }
        for _ in 0..<30 { try fill(try setup.insertObject(entityName: "Row")) }
        try setup.save()

        let context = try open()
        // Unsaved: edits (some to the smallest and greatest values), an insert, deletions.
        let held = try context.fetch(FetchRequest(entityName: "Row"))
        for row in held.dropFirst(100).prefix(15) { try fill(row) }
        try held[200].setValue(.integer(-5), forKey: "i")
        try held[201].setValue(.double(99), forKey: "d")
        for row in held.dropFirst(300).prefix(10) { context.delete(row) }
        for _ in 0..<5 { try fill(try context.insertObject(entityName: "Row")) }

        // The last but one is rare enough that ten matches need a wider cut.
        let predicates: [String?] = [nil, "i != nil", "i >= 3", "d >= 1.5 AND i < 9", "t < %@", "label BEGINSWITH 'a' AND i != nil",
                                     "label == 'a1' AND i != nil AND d != nil AND t != nil", "b == YES OR i == 2"]
        let keys = ["i", "d", "t", "b"]
        var compared = 0
        for format in predicates {
            let predicate = try format.map { try ObjectPredicate(format: $0, arguments: $0.contains("%@") ? [.date(base.addingTimeInterval(20 * 3600))] : []) }
            for key in keys {
                for ascending in [true, false] {
                    let whole = FetchRequest(entityName: "Row", predicate: predicate, sortDescriptors: [SortKey(key, ascending: ascending)])
                    let expected = try context.fetch(whole).map(\.objectID)
                    for (offset, limit) in [(0, 1), (0, 10), (7, 20), (0, 70), (60, 80), (400, 30), (1_340, 20)] {
                        var limited = whole
                        limited.fetchOffset = offset
                        limited.fetchLimit = limit
                        let got = try context.fetch(limited).map(\.objectID)
                        #expect(got == Array(expected.dropFirst(offset).prefix(limit)),
                                "\(format ?? "nil") by \(key) \(ascending ? "ascending" : "descending"), offset \(offset), limit \(limit)")
                        compared += 1
                    }
                }
            }
        }
        #expect(compared == 8 * 4 * 2 * 7)
    }

    /// Another opening of the file (another process) moves a row to the front of the
    /// order and compacts, so the index is written anew, between two fetches of this one.
    @Test func aCutSeesWhatAnotherOpeningSavedAndCompacted() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("rows.store")
        func open() throws -> ManagedObjectContext { try Self.open(url) }
        let setup = try open()
        for i in 0..<500 {
            let row = try setup.insertObject(entityName: "Row")
            try row.setValue(.integer(Int64(100 + i)), forKey: "i")
        }
        try setup.save()
        try setup.coordinator.compactStore()
        // The reader opens the store through a symbolic link, as a second name of the file.
        let link = directory.file("link.store")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        let reader = try Self.open(link)
        var request = FetchRequest(entityName: "Row", predicate: try ObjectPredicate(format: "i != nil"), sortDescriptors: [SortKey("i")])
        request.fetchLimit = 3
        let before = try reader.fetch(request).map { $0["i"] }
        #expect(before == [100, 101, 102])

        let writer = try open()
        let last = try #require(try writer.fetch(FetchRequest(entityName: "Row", predicate: try ObjectPredicate(format: "i == 599"))).first)
        try last.setValue(.integer(1), forKey: "i")
        try writer.save()
        #expect(try reader.fetch(request).map { $0["i"] } == [1, 100, 101])  // from the log
        try writer.coordinator.compactStore()
        #expect(try reader.fetch(request).map { $0["i"] } == [1, 100, 101])  // from the new index
        request.sortDescriptors = [SortKey("i", ascending: false)]
        #expect(try reader.fetch(request).map { $0["i"] } == [598, 597, 596])

        // The file replaced under the reader by a compacted copy in which the first row
        // moved to the end: the next cut reads the new file's index.
        let copy = directory.file("copy.store")
        try FileManager.default.copyItem(at: url, to: copy)
        let elsewhere = try Self.open(copy)
        let first = try #require(try elsewhere.fetch(FetchRequest(entityName: "Row", predicate: try ObjectPredicate(format: "i == 1"))).first)
        try first.setValue(.integer(5_000), forKey: "i")
        try elsewhere.save()
        try elsewhere.coordinator.compactStore()
        #expect(rename(copy.path, url.path) == 0)
        // Objects the reader still holds answer as they loaded until it lets them go
        // (Sources/ObjectStore/ObjectStore.docc/Contexts.md), in a limited fetch as in a whole one.
        var whole = request
        whole.fetchLimit = 0
        #expect(try reader.fetch(request).map(\.objectID) == Array(try reader.fetch(whole).map(\.objectID).prefix(3)))
        reader.releaseCleanObjects()
        #expect(try reader.fetch(request).map { $0["i"] } == [5_000, 598, 597])
        request.sortDescriptors = [SortKey("i")]
        #expect(try reader.fetch(request).map { $0["i"] } == [100, 101, 102])
    }
}

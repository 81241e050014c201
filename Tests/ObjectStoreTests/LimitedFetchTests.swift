import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

/// A fetch with a limit over the binary store orders the matches before it makes objects,
/// and only those in the window become objects. It must return exactly what the same
/// request without limit and offset returns, cut to the window: whatever the predicate,
/// the sort keys, and the context's unsaved inserts, edits and deletions.
@Suite struct LimitedFetchTests {
    static func open(_ url: URL) throws -> ManagedObjectContext {
        ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url, clock: { TestModel.now }))
    }

    /// 60 tasks with repeated priorities and texts, some without a due date, spread over
    /// three locations; and circles, a sub-entity of the abstract Shape.
    static func seed(_ url: URL) throws {
        let context = try open(url)
        let locations = try ["Home", "office", "Garden"].map { try context.location($0) }
        for i in 0..<60 {
            let task = try context.task("task \(i % 7) \(["b", "A", "c"][i % 3])", priority: Int64(i % 4))
            if i % 5 != 0 { try task.setValue(.date(TestModel.now.addingTimeInterval(Double((i * 37) % 23) * 3600)), forKey: "dueDate") }
            if i % 6 != 0 { try task.setObject(locations[i % 3], forKey: "location") }
        }
        for i in 0..<8 {
            let shape = try context.insertObject(entityName: "Circle")  // Shape is abstract
            try shape.setValue(.string("shape \(i % 3)"), forKey: "label")
        }
        try context.save()
    }

    static let predicates: [String?] = [nil, "priority >= 2", "dueDate != nil AND priority < 3", "location.name ==[c] 'home' OR priority == 0", "text BEGINSWITH 'task 1'"]
    static let sorts: [[SortKey]] = [
        [],
        [SortKey("priority")],
        [SortKey("dueDate", ascending: false)],
        [SortKey("priority", ascending: false), SortKey("text")],
        [SortKey("text", comparison: .caseInsensitive)],
        [SortKey("location.name"), SortKey("dueDate")],
    ]

    @Test(arguments: [false, true])
    func aLimitedFetchIsTheWindowOfTheUnlimitedOne(withPendingChanges: Bool) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        try Self.seed(url)
        let context = try Self.open(url)
        if withPendingChanges {
            // An edit that moves a task in every order, an insert, a deletion.
            let all = try context.fetch(FetchRequest(entityName: "Task", sortDescriptors: [SortKey("text")]))
            try all[3].setValue(3, forKey: "priority")
            try all[3].setValue("a moved task", forKey: "text")
            try all[3].setValue(.date(TestModel.now.addingTimeInterval(-86_400)), forKey: "dueDate")
            context.delete(all[10])
            try context.task("task 1 new", priority: 2).setValue(.date(TestModel.now), forKey: "dueDate")
        }
        var compared = 0
        for pending in [true, false] {
            for format in Self.predicates {
                for sort in Self.sorts {
                    var whole = FetchRequest(entityName: "Task", predicate: try format.map { try ObjectPredicate(format: $0) }, sortDescriptors: sort)
                    whole.includesPendingChanges = pending
                    let expected = try context.fetch(whole).map(\.objectID)
                    for (offset, limit) in [(0, 1), (0, 5), (3, 4), (7, 100), (58, 10)] {
                        var limited = whole
                        limited.fetchOffset = offset
                        limited.fetchLimit = limit
                        let got = try context.fetch(limited).map(\.objectID)
                        let window = Array(expected.dropFirst(offset).prefix(limit))
                        #expect(got == window, "\(format ?? "nil") sorted by \(sort.map(\.keyPath)), offset \(offset), limit \(limit), pending \(pending)")
                        compared += 1
                    }
                }
            }
        }
        #expect(compared == 2 * 5 * 6 * 5)
    }

    @Test func aLimitedFetchIncludesSubentitiesAndUnsavedChanges() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        try Self.seed(url)
        let context = try Self.open(url)
        // Unsaved: an insert at the front of the order, an edit moving a task to the front,
        // a deletion of what was first.
        let before = try context.fetch(FetchRequest(entityName: "Task", sortDescriptors: [SortKey("dueDate")]))
        let first = try #require(before.first { $0["dueDate"] != .null })
        context.delete(first)
        let moved = try #require(before.last)
        try moved.setValue(.date(TestModel.now.addingTimeInterval(-1_000)), forKey: "dueDate")
        let inserted = try context.task("task new", priority: 1)
        try inserted.setValue(.date(TestModel.now.addingTimeInterval(-2_000)), forKey: "dueDate")
        var request = FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "dueDate != nil"), sortDescriptors: [SortKey("dueDate")])
        request.fetchLimit = 2
        let got = try context.fetch(request)
        #expect(got.map(\.objectID) == [inserted.objectID, moved.objectID])
        #expect(!got.contains { $0.objectID == first.objectID })

        var shapes = FetchRequest(entityName: "Shape", sortDescriptors: [SortKey("label", ascending: false)])
        shapes.fetchLimit = 3
        let limitedShapes = try context.fetch(shapes).map(\.objectID)
        shapes.fetchLimit = 0
        let allShapes = try context.fetch(shapes).map(\.objectID)
        #expect(limitedShapes == Array(allShapes.prefix(3)))
        #expect(limitedShapes.allSatisfy { $0.entityName == "Circle" })
    }

    @Test func onlyTheWindowBecomesObjects() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        try Self.seed(url)
        let context = try Self.open(url)
        var request = FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "priority >= 1"), sortDescriptors: [SortKey("dueDate", ascending: false)])
        request.fetchLimit = 4
        let got = try context.fetch(request)
        #expect(got.count == 4)
        #expect(context.registeredObjects.count == 4)
        #expect(got.allSatisfy { $0.isFault })
        #expect(try got.allSatisfy { try $0.value(forKey: "priority") != .integer(0) })
    }
}

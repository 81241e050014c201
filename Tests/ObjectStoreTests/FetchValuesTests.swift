import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

/// `fetchValues` reads rows without making objects; whatever it reads must be what the
/// objects of a fetch hold, on every store kind, with the context's unsaved changes.
@Suite struct FetchValuesTests {
    static let properties = ["text", "priority", "dueDate", "status", "isOverdue", "doubled", "scratch", "location", "tags"]

    /// The same properties read from objects.
    static func expected(_ objects: [ManagedObject], _ names: [String] = properties) throws -> [[SlotValue]] {
        try objects.map { object in
            try names.map { name in
                switch object.entity.property(named: name) {
                case .relationship(let relationship)?:
                    let ids = try object.objectIDs(forRelationship: name)
                    return relationship.isToMany ? .toMany(ids) : .toOne(ids.first)
                default:
                    return .value(try object.value(forKey: name))
                }
            }
        }
    }

    static func store(_ kind: String, in directory: TemporaryDirectory) throws -> any PersistentStore {
        switch kind {
        case "binary": return try BinaryStore(url: directory.file("tasks.store"), model: TestModel.model)
        case "json": return try JSONStore(url: directory.file("tasks.json"), model: TestModel.model)
        default: return InMemoryStore(model: TestModel.model)
        }
    }

    @Test(arguments: ["binary", "json", "memory"])
    func valuesAreWhatFetchedObjectsHold(kind: String) throws {
        let directory = try TemporaryDirectory()
        let coordinator = PersistentStoreCoordinator(model: TestModel.model, store: try Self.store(kind, in: directory), clock: { TestModel.now })
        let writer = ManagedObjectContext(coordinator: coordinator)
        let home = try writer.location("Home")
        let tag = try writer.insertObject(entityName: "Tag")
        try tag.setValue("red", forKey: "label")
        for n in 0..<60 {
            let task = try writer.task("t\(n)", priority: Int64(n % 4))
            if n % 3 == 0 { try task.setValue(.date(TestModel.now.addingTimeInterval(Double(n - 30) * 3_600)), forKey: "dueDate") }
            if n % 5 == 0 { try task.setObject(home, forKey: "location") }
            if n % 7 == 0 { try task.addObject(tag, toKey: "tags") }
        }
        try writer.save()

        // A context with changes of its own: an edit, a deletion, an insert.
        let context = ManagedObjectContext(coordinator: coordinator)
        let some = try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("priority == 1")))
        try some[0].setValue(.integer(3), forKey: "priority")
        context.delete(some[1])
        try context.task("fresh", priority: 3)
        let registered = context.registeredObjects.count

        let predicates: [ObjectPredicate?] = [nil, try ObjectPredicate("priority >= 2"), try ObjectPredicate("isOverdue == YES"),
                                              try ObjectPredicate("location.name == 'Home'"), try ObjectPredicate("text BEGINSWITH 't1'")]
        for predicate in predicates {
            for (offset, limit) in [(0, 0), (3, 5), (100, 0)] {
                var request = FetchRequest(entityName: "Task", predicate: predicate)
                request.fetchOffset = offset
                request.fetchLimit = limit
                let values = try context.fetchValues(request, properties: Self.properties)
                #expect(values.map(\.values) == (try Self.expected(context.fetch(request))), "\(String(describing: predicate)) \(offset) \(limit)")
                #expect(values.map(\.objectID) == (try context.fetch(request).map(\.objectID)))
            }
            // Every property in slot order: rows are handed over as decoded, derived values
            // (a slot test and an expression) filled in place.
            let every = TestModel.model.entity(named: "Task")?.properties.map(\.name) ?? []
            let all = FetchRequest(entityName: "Task", predicate: predicate)
            #expect(try context.fetchValues(all, properties: every).map(\.values) == (try Self.expected(context.fetch(all), every)))
            var sorted = FetchRequest(entityName: "Task", predicate: predicate, sortDescriptors: [SortKey("priority", ascending: false), SortKey("text")])
            sorted.fetchLimit = 10
            #expect(try context.fetchValues(sorted, properties: Self.properties).map(\.objectID) == context.fetch(sorted).map(\.objectID))
        }
        // A fresh context reads rows without registering objects for them.
        let fresh = ManagedObjectContext(coordinator: coordinator)
        let listed = try fresh.fetchValues(FetchRequest(entityName: "Task"), properties: ["text", "isOverdue"])
        #expect(listed.count == 60)
        #expect(listed.filter { $0.values[1] == .value(.bool(true)) }.count == 10, "tasks 0, 3, ..., 27 are due before now")
        #expect(fresh.registeredObjects.isEmpty, "rows are read without objects")
        #expect(context.registeredObjects.count >= registered)
        #expect(throws: ObjectStoreError.unknownKey(entity: "Task", key: "priorty", suggestion: "priority")) {
            try context.fetchValues(FetchRequest(entityName: "Task"), properties: ["priorty"])
        }
    }
}

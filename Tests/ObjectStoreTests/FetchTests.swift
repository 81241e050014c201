import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

@Suite struct FetchTests {
    /// A binary store in `directory`, or an in-memory store, of the test model.
    private static func coordinator(binary: Bool, in directory: TemporaryDirectory) throws -> PersistentStoreCoordinator {
        binary ? try PersistentStoreCoordinator(model: TestModel.model, storeURL: directory.file("t.store"), clock: { TestModel.now })
            : PersistentStoreCoordinator(inMemoryWith: TestModel.model, clock: { TestModel.now })
    }

    private func names(_ objects: [ManagedObject], _ key: String = "text") -> [String] {
        objects.map { if case .string(let s) = $0[key] { return s } else { return "nil" } }
    }

    @Test func sortKeysOrderByEachKeyInTurnWithNilFirstAscending() throws {
        let context = try PredicateEvaluationTests.graph()
        let byDue = FetchRequest(entityName: "Task", sortDescriptors: [SortKey("dueDate"), SortKey("text")])
        #expect(names(try context.fetch(byDue)) == ["Draft", "Outline", "Milk", "Mom", "Report"])
        let byDueDescending = FetchRequest(entityName: "Task", sortDescriptors: [SortKey("dueDate", ascending: false), SortKey("text")])
        #expect(names(try context.fetch(byDueDescending)) == ["Report", "Mom", "Milk", "Draft", "Outline"])
        let byPriorityThenText = FetchRequest(entityName: "Task", sortDescriptors: [SortKey("priority", ascending: false), SortKey("text", ascending: false)])
        #expect(names(try context.fetch(byPriorityThenText)) == ["Milk", "Draft", "Mom", "Report", "Outline"])
        let throughToOne = FetchRequest(entityName: "Task", sortDescriptors: [SortKey("location.name"), SortKey("text")])
        #expect(names(try context.fetch(throughToOne)) == ["Mom", "Milk", "Draft", "Outline", "Report"])
    }

    /// The IDs of a filtered fetch come without objects for the rows the context does not
    /// hold, in the order `fetch` gives, with the context's unsaved changes counted.
    @Test(arguments: StoreKind.allCases)
    func filteredObjectIDsMakeNoObjectsAndSeeUnsavedChanges(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let setup = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        for n in 0..<50 { try setup.task("t\(n)", priority: Int64(n % 4)) }
        try setup.save()
        let context = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        let request = FetchRequest(entityName: "Task", predicate: try ObjectPredicate("priority >= 2"))
        let ids = try context.fetchObjectIDs(request)
        #expect(ids.count == 24)
        #expect(context.registeredObjects.isEmpty, "no object was made")
        #expect(ids == (try ManagedObjectContext(coordinator: context.coordinator).fetch(request).map(\.objectID)))
        // Unsaved: an edit out of and one into the result, a delete, an insert.
        let first = try context.existingObject(with: ids[0])
        try first.setValue(0, forKey: "priority")
        let low = try #require(try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("priority == 1"))).first)
        try low.setValue(3, forKey: "priority")
        context.delete(try context.existingObject(with: ids[1]))
        let new = try context.task("new", priority: 2)
        let changed = try context.fetchObjectIDs(request)
        #expect(changed == (try context.fetch(request).map(\.objectID)))
        #expect(Set(changed) == Set(ids.dropFirst(2) + [low.objectID, new.objectID]))
        var limited = request
        limited.fetchOffset = 2
        limited.fetchLimit = 3
        #expect(try context.fetchObjectIDs(limited) == Array(changed[2..<5]))
    }

    @Test func stringComparisonsForSorting() throws {
        let context = TestModel.context()
        for name in ["file10", "File2", "file1", "éclair", "Eclair", "apple"] { try context.location(name) }
        func sorted(_ comparison: SortKey.Comparison) throws -> [String] {
            names(try context.fetch(FetchRequest(entityName: "Location", sortDescriptors: [SortKey("name", comparison: comparison)])), "name")
        }
        #expect(try sorted(.exact) == ["Eclair", "File2", "apple", "file1", "file10", "éclair"])
        #expect(try sorted(.caseInsensitive) == ["apple", "Eclair", "file1", "file10", "File2", "éclair"])
        #expect(try sorted(.localized).prefix(3) == ["apple", "Eclair", "éclair"])
        #expect(try sorted(.natural) == ["apple", "Eclair", "éclair", "file1", "File2", "file10"])
    }

    @Test func tiesAreBrokenDeterministically() throws {
        let context = try PredicateEvaluationTests.graph()
        let request = FetchRequest(entityName: "Task", sortDescriptors: [SortKey("priority")])
        let first = try context.fetch(request).map(\.objectID)
        let again = try ManagedObjectContext(coordinator: context.coordinator).fetch(request).map(\.objectID)
        #expect(first == again)
    }

    @Test func limitAndOffset() throws {
        let context = try PredicateEvaluationTests.graph()
        var request = FetchRequest(entityName: "Task", sortDescriptors: [SortKey("text")])
        request.fetchOffset = 1
        request.fetchLimit = 2
        #expect(names(try context.fetch(request)) == ["Milk", "Mom"])
        #expect(try context.count(for: request) == 2)
        #expect(try context.fetchObjectIDs(request).count == 2)
        request.fetchOffset = 10
        #expect(try context.fetch(request).isEmpty)
        #expect(try context.count(for: request) == 0)
    }

    @Test func subEntitiesAreIncludedUnlessTurnedOff() throws {
        let context = TestModel.context()
        try context.insertObject(entityName: "Circle")
        var request = FetchRequest(entityName: "Shape")
        #expect(try context.fetch(request).count == 1)
        request.includesSubentities = false
        #expect(try context.fetch(request).isEmpty)
        #expect(throws: ObjectStoreError.self) { try context.fetch(FetchRequest(entityName: "Shap")) }
    }

    @Test func countsAndIDsWithoutKeepingObjects() throws {
        let context = try PredicateEvaluationTests.graph()
        #expect(try context.count(for: FetchRequest(entityName: "Task")) == 5)
        #expect(try context.count(for: FetchRequest(entityName: "Task", predicate: try ObjectPredicate("priority == 3"))) == 2)
        #expect(context.registeredObjects.isEmpty, "counting leaves nothing registered")
        #expect(try context.fetchObjectIDs(FetchRequest(entityName: "Task")).count == 5)
    }

    @Test func dictionariesWithChosenPropertiesAndDistinctRows() throws {
        let context = try PredicateEvaluationTests.graph()
        let request = FetchRequest(entityName: "Task", predicate: try ObjectPredicate("location != nil"), sortDescriptors: [SortKey("text")])
        let rows = try context.fetchDictionaries(request, properties: ["text", "location.name"])
        #expect(rows.first == ["text": "Draft", "location.name": "Work"])
        let distinct = try context.fetchDictionaries(request, properties: ["location.name"], distinct: true)
        #expect(distinct == [["location.name": "Work"], ["location.name": "Home"]])
        // A key path asked for twice is one key of each row (it trapped before).
        #expect(try context.fetchDictionaries(request, properties: ["location.name", "location.name"], distinct: true) == distinct)
        #expect(try context.fetchGroups(request, groupBy: ["location.name", "location.name"], aggregates: []) == distinct)
    }

    @Test func groupByWithAggregates() throws {
        let context = try PredicateEvaluationTests.graph()
        let request = FetchRequest(entityName: "Task", sortDescriptors: [SortKey("location.name")])
        let groups = try context.fetchGroups(request, groupBy: ["location.name"], aggregates: [
            PropertyAggregate("n", .count, of: "text"), PropertyAggregate("total", .sum, of: "priority"),
            PropertyAggregate("top", .max, of: "priority"), PropertyAggregate("mean", .average, of: "priority"),
        ])
        #expect(groups == [
            ["location.name": .null, "n": 1, "total": 2, "top": 2, "mean": 2.0],
            ["location.name": "Home", "n": 1, "total": 3, "top": 3, "mean": 3.0],
            ["location.name": "Work", "n": 3, "total": 4, "top": 3, "mean": .double(4.0 / 3.0)],
        ])
    }

    /// Groups and dictionaries of attributes only are read from the rows (no object made),
    /// and say what the objects say: computed here from `fetch`'s objects, over a binary
    /// and an in-memory store, with unsaved edits, an insert and a deletion pending.
    /// A count of an attribute only counted (not grouped by, not folded otherwise) reads
    /// whether each row holds a value, not the value: counts of optional strings and decimals
    /// with nulls, of a string left at its default (a row's blank), from compacted rows, rows
    /// saved since (the log) and unsaved changes, equal the counts made from fetched objects.
    @Test(arguments: [false, true])
    func countsOfOptionalValuesMatchTheObjects(binary: Bool) throws {
        let directory = try TemporaryDirectory()
        let shared = try Self.coordinator(binary: binary, in: directory)
        let setup = ManagedObjectContext(coordinator: shared)
        for n in 0..<120 {
            let task = try setup.task("t\(n)", priority: Int64(n % 4))
            if n % 3 == 0 { try task.setValue("ABC", forKey: "code") }
            if n % 4 == 1 { try task.setValue(.decimal(Decimal(n) / 4), forKey: "estimate") }
            if n % 5 == 0 { try task.setValue("done", forKey: "status") }
        }
        try setup.save()
        try shared.compactStore()
        // Saved again after the compaction: these rows are read from the log.
        for task in try setup.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("text IN {'t0', 't1', 't3', 't7', 't9'}"))) {
            try task.setValue(task["code"] == .null ? "XYZ" : .null, forKey: "code")
        }
        try setup.save()

        let aggregates = [PropertyAggregate("codes", .count, of: "code"), PropertyAggregate("estimates", .count, of: "estimate"),
                          PropertyAggregate("statuses", .count, of: "status"), PropertyAggregate("texts", .count, of: "text"),
                          PropertyAggregate("top", .max, of: "code")]
        func expected(_ objects: [ManagedObject]) -> [[String: Value]] {
            var order: [Value] = [], members: [Value: [ManagedObject]] = [:]
            for object in objects {
                if members[object["priority"]] == nil { order.append(object["priority"]) }
                members[object["priority"], default: []].append(object)
            }
            return order.map { key in
                let group = members[key] ?? []
                func count(_ name: String) -> Value { .integer(Int64(group.filter { $0[name] != .null }.count)) }
                return ["priority": key, "codes": count("code"), "estimates": count("estimate"), "statuses": count("status"), "texts": count("text"),
                        "top": group.compactMap { $0["code"].stringValue }.max().map { .string($0) } ?? .null]
            }
        }
        let request = FetchRequest(entityName: "Task", predicate: try ObjectPredicate("priority != 2"))
        let context = ManagedObjectContext(coordinator: shared)
        let groups = try context.fetchGroups(request, groupBy: ["priority"], aggregates: aggregates)
        #expect(context.registeredObjects.isEmpty, "no object was made")
        let reference = ManagedObjectContext(coordinator: shared)
        let saved = expected(try reference.fetch(request))
        #expect(groups == saved)
        #expect(saved.map { $0["codes"] } != saved.map { $0["texts"] }, "some codes are nil")
        // Counted without the maximum of the same attribute, which decodes it.
        let countsOnly = try context.fetchGroups(request, groupBy: ["priority"], aggregates: Array(aggregates.dropLast()))
        #expect(countsOnly == saved.map { $0.filter { $0.key != "top" } })

        // Unsaved changes count as fetch counts them.
        let objects = try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("text IN {'t3', 't4', 't6'}")))
        try objects[0].setValue("QRS", forKey: "code")
        try objects[1].setValue(.null, forKey: "estimate")
        context.delete(objects[2])
        let new = try context.task("new", priority: 1)
        try new.setValue("NEW", forKey: "code")
        let pending = expected(try context.fetch(request))
        #expect(try context.fetchGroups(request, groupBy: ["priority"], aggregates: Array(aggregates.dropLast())) == pending.map { $0.filter { $0.key != "top" } })
        #expect(pending != saved)
    }

    @Test(arguments: [false, true])
    func groupsAndDictionariesOfAttributesReadTheRows(binary: Bool) throws {
        let directory = try TemporaryDirectory()
        let shared = try Self.coordinator(binary: binary, in: directory)
        let setup = ManagedObjectContext(coordinator: shared)
        for n in 0..<300 {
            let task = try setup.task("t\(n)", priority: Int64(n % 4))
            if n % 5 != 0 { try task.setValue(.date(TestModel.now.addingTimeInterval(Double(n % 9 - 4) * 86_400)), forKey: "dueDate") }
            if n % 7 == 0 { try task.setValue(.double(Double(n) / 8), forKey: "ratio") }
        }
        try setup.save()
        try shared.compactStore()

        let context = ManagedObjectContext(coordinator: shared)
        let request = FetchRequest(entityName: "Task", predicate: try ObjectPredicate("priority >= 1"))
        let aggregates = [PropertyAggregate("n", .count, of: "text"), PropertyAggregate("latest", .max, of: "dueDate"),
                          PropertyAggregate("first", .min, of: "dueDate"), PropertyAggregate("sum", .sum, of: "priority"),
                          PropertyAggregate("mean", .average, of: "ratio")]
        let groups = try context.fetchGroups(request, groupBy: ["priority", "isOverdue"], aggregates: aggregates)
        #expect(context.registeredObjects.isEmpty, "no object was made")
        let distinct = try context.fetchDictionaries(request, properties: ["isOverdue", "priority", "isOverdue"], distinct: true)
        #expect(context.registeredObjects.isEmpty)

        /// The groups and distinct rows computed from the objects `fetch` returns.
        func expected(_ objects: [ManagedObject]) -> (groups: [[String: Value]], distinct: [[String: Value]]) {
            var order: [[Value]] = [], members: [[Value]: [ManagedObject]] = [:]
            var rows: [[String: Value]] = [], seen = Set<[Value]>()
            for object in objects {
                let key = [object["priority"], object["isOverdue"]]
                if members[key] == nil { order.append(key) }
                members[key, default: []].append(object)
                if seen.insert([object["isOverdue"], object["priority"], object["isOverdue"]]).inserted {
                    rows.append(["isOverdue": object["isOverdue"], "priority": object["priority"]])
                }
            }
            let groups = order.map { key -> [String: Value] in
                let group = members[key] ?? []
                let dates = group.compactMap { $0["dueDate"].dateValue }
                let ratios = group.compactMap { $0["ratio"].doubleValue }
                return ["priority": key[0], "isOverdue": key[1], "n": .integer(Int64(group.count)),
                        "latest": dates.max().map { .date($0) } ?? .null, "first": dates.min().map { .date($0) } ?? .null,
                        "sum": .integer(group.reduce(0) { $0 + ($1["priority"].integerValue ?? 0) }),
                        "mean": ratios.isEmpty ? .null : .double(ratios.reduce(0, +) / Double(ratios.count))]
            }
            return (groups, rows)
        }
        let reference = ManagedObjectContext(coordinator: shared)
        let saved = expected(try reference.fetch(request))
        #expect(groups == saved.groups)
        #expect(distinct == saved.distinct)
        #expect(groups.count >= 6 && distinct.count == groups.count)

        // Unsaved changes count as fetch counts them.
        let objects = try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("text IN {'t1', 't2', 't3'}")))
        try objects[0].setValue(.integer(3), forKey: "priority")
        try objects[1].setValue(.date(TestModel.now.addingTimeInterval(-86_400)), forKey: "dueDate")
        context.delete(objects[2])
        try context.task("new", priority: 2)
        let pending = expected(try context.fetch(request))
        #expect(try context.fetchGroups(request, groupBy: ["priority", "isOverdue"], aggregates: aggregates) == pending.groups)
        #expect(try context.fetchDictionaries(request, properties: ["isOverdue", "priority", "isOverdue"], distinct: true) == pending.distinct)
        #expect(pending.groups != saved.groups)

        // One key path, after saved edits of the first tasks (their rows now after the
        // others' in a binary store's log): groups still come in order of their first task,
        // as fetch orders the tasks.
        context.rollback()
        let early = try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("text IN {'t1', 't2', 't4', 't5'}")))
        for (index, task) in early.enumerated() { try task.setValue(.integer(Int64(3 - index % 3)), forKey: "priority") }
        try context.save()
        let byPriority = try context.fetchGroups(request, groupBy: ["priority"], aggregates: aggregates)
        let rereading = ManagedObjectContext(coordinator: shared)
        let objects2 = try rereading.fetch(request)
        var firsts: [Value] = []
        for object in objects2 where !firsts.contains(object["priority"]) { firsts.append(object["priority"]) }
        #expect(byPriority.map { $0["priority"] } == firsts)
        #expect(byPriority.map { $0["n"] } == firsts.map { key in .integer(Int64(objects2.filter { $0["priority"] == key }.count)) })
        #expect(byPriority.map { $0["sum"] } == firsts.map { key in .integer(Int64(objects2.filter { $0["priority"] == key }.count) * (key.integerValue ?? 0)) })
    }

    /// A fetch without sort descriptors lists its objects by entity name, then saved ones by
    /// key, then unsaved ones in the order they were inserted, whatever order the candidates
    /// come in: one entity's saved objects (in order already), an entity whose sub-entities'
    /// names sort before and after its own (the candidates come entity by entity, parent
    /// first), saved only and then with unsaved objects of each, the context holding every
    /// object or none.
    @Test(arguments: [false, true])
    func anUnsortedFetchListsObjectsByEntityThenKey(binary: Bool) throws {
        let model = try ManagedObjectModel(schema: #"""
            { "entities": [
                { "name": "Item", "attributes": [{ "name": "label", "type": "string" }, { "name": "n", "type": "int64" }] },
                { "name": "Aside", "parent": "Item", "attributes": [{ "name": "flag", "type": "boolean" }] },
                { "name": "Special", "parent": "Item", "attributes": [{ "name": "extra", "type": "boolean" }] }
            ] }
            """#, file: "order")
        let directory = try TemporaryDirectory()
        let coordinator = binary ? try PersistentStoreCoordinator(model: model, storeURL: directory.file("t.store")) : PersistentStoreCoordinator(inMemoryWith: model)
        let context = ManagedObjectContext(coordinator: coordinator)
        var labels: [String: [String]] = [:]
        for n in 0..<30 {
            let entity = ["Item", "Special", "Aside"][n % 3]
            let object = try context.insertObject(entityName: entity)
            let label = entity.prefix(1).lowercased() + String(n)
            try object.setValue(.string(label), forKey: "label")
            try object.setValue(.integer(Int64(n)), forKey: "n")
            labels[entity, default: []].append(label)
        }
        try context.save()
        func check(_ everything: [String], _ specials: [String], _ moment: String) throws {
            for holding in [true, false] {
                if !holding { context.releaseCleanObjects() }
                let all = try context.fetch(FetchRequest(entityName: "Item", predicate: try ObjectPredicate("n >= 0")))
                #expect(all.map { $0["label"].stringValue ?? "?" } == everything, "\(moment), holding \(holding)")
                #expect(try context.fetch(FetchRequest(entityName: "Item")).map { $0["label"].stringValue ?? "?" } == everything, "\(moment), holding \(holding)")
                let fewer = try context.fetch(FetchRequest(entityName: "Special", predicate: try ObjectPredicate("n < 100")))
                #expect(fewer.map { $0["label"].stringValue ?? "?" } == specials, "\(moment), holding \(holding)")
            }
        }
        let (asides, items, specials) = (labels["Aside"] ?? [], labels["Item"] ?? [], labels["Special"] ?? [])
        try check(asides + items + specials, specials, "saved")
        // Unsaved: temporary IDs, after the saved ones of their entity, in insertion order.
        for (entity, label) in [("Special", "new s1"), ("Item", "new i1"), ("Aside", "new a1"), ("Item", "new i2")] {
            let object = try context.insertObject(entityName: entity)
            try object.setValue(.string(label), forKey: "label")
            try object.setValue(.integer(100), forKey: "n")
        }
        try check(asides + ["new a1"] + items + ["new i1", "new i2"] + specials + ["new s1"], specials, "unsaved")
    }

    /// One key's groups are found by comparing keys while there are few (up to
    /// `Groups.fewGroups`) and by hashing past that: 14 groups whose members keep coming
    /// back after the ninth group is made, with nil and NaN among the keys (a NaN equals
    /// nothing, so each NaN task is a group of its own, as fetch's objects say), give what
    /// counting `fetch`'s objects gives, in their order.
    @Test(arguments: [false, true])
    func manyGroupsOfOneKeyCountEveryMember(binary: Bool) throws {
        let directory = try TemporaryDirectory()
        let coordinator = try Self.coordinator(binary: binary, in: directory)
        let setup = ManagedObjectContext(coordinator: coordinator)
        for n in 0..<200 {
            let task = try setup.task("t\(n)", priority: Int64(n % 3))
            switch n % 14 {
            case 12: break  // no ratio
            case 13: if n < 60 { try task.setValue(.double(.nan), forKey: "ratio") }
            default: try task.setValue(.double(Double(n % 14) / 2), forKey: "ratio")
            }
        }
        try setup.save()
        let context = ManagedObjectContext(coordinator: coordinator)
        let request = FetchRequest(entityName: "Task")
        let groups = try context.fetchGroups(request, groupBy: ["ratio"], aggregates: [
            PropertyAggregate("n", .count, of: "text"), PropertyAggregate("sum", .sum, of: "priority")])
        var keys: [Value] = [], counts: [Int64] = [], sums: [Int64] = []
        let reference = ManagedObjectContext(coordinator: coordinator)
        for task in try reference.fetch(request) {
            let ratio = task["ratio"], priority = task["priority"].integerValue ?? 0
            if let at = keys.firstIndex(of: ratio) {
                counts[at] += 1
                sums[at] += priority
            } else {
                keys.append(ratio)
                counts.append(1)
                sums.append(priority)
            }
        }
        #expect(keys.count == 12 + 1 + 4, "12 ratios, nil and four NaNs")
        #expect(groups.count == keys.count)
        #expect(groups.map { $0["ratio"] ?? .null }.map { $0.doubleValue?.isNaN == true ? "NaN" : "\($0)" }
                == keys.map { $0.doubleValue?.isNaN == true ? "NaN" : "\($0)" })
        #expect(groups.map { $0["n"] } == counts.map { .integer($0) })
        #expect(groups.map { $0["sum"] } == sums.map { .integer($0) })
    }

    /// A sub-entity's rows come after its parent entity's, while fetch orders objects by
    /// entity name first: groups still come in order of their first object as fetch orders
    /// them, over a binary and an in-memory store.
    @Test(arguments: [false, true])
    func groupsOfSubentitiesComeInFetchOrder(binary: Bool) throws {
        let model = try ManagedObjectModel(schema: #"""
            { "entities": [
                { "name": "Thing", "attributes": [{ "name": "color", "type": "string" }, { "name": "weight", "type": "double" }] },
                { "name": "Gadget", "parent": "Thing", "attributes": [] }
            ] }
            """#, file: "things")
        let directory = try TemporaryDirectory()
        let coordinator = binary ? try PersistentStoreCoordinator(model: model, storeURL: directory.file("t.store"))
            : PersistentStoreCoordinator(inMemoryWith: model)
        let setup = ManagedObjectContext(coordinator: coordinator)
        for (entity, color, weight) in [("Thing", "red", 1.0), ("Thing", "blue", 2.0), ("Gadget", "green", 4.0), ("Gadget", "blue", 8.0), ("Thing", "red", 16.0)] {
            let object = try setup.insertObject(entityName: entity)
            try object.setValue(.string(color), forKey: "color")
            try object.setValue(.double(weight), forKey: "weight")
        }
        try setup.save()
        let context = ManagedObjectContext(coordinator: coordinator)
        let request = FetchRequest(entityName: "Thing")
        let groups = try context.fetchGroups(request, groupBy: ["color"], aggregates: [PropertyAggregate("total", .sum, of: "weight"), PropertyAggregate("n", .count, of: "weight")])
        let objects = try context.fetch(request)
        var firsts: [Value] = []
        for object in objects where !firsts.contains(object["color"]) { firsts.append(object["color"]) }
        #expect(firsts == ["green", "blue", "red"])
        #expect(groups == [["color": "green", "total": 4.0, "n": 1], ["color": "blue", "total": 10.0, "n": 2], ["color": "red", "total": 17.0, "n": 2]])
    }

    /// A count of a relationship counts the objects that have one (not its members); the
    /// other aggregates fold a to-many key path's members, as `@sum` and `@max` do.
    @Test func aggregatesOfRelationshipKeyPaths() throws {
        let context = try PredicateEvaluationTests.graph()
        let groups = try context.fetchGroups(FetchRequest(entityName: "Task"), groupBy: ["priority"], aggregates: [PropertyAggregate("located", .count, of: "location")])
        let tasks = try context.fetch(FetchRequest(entityName: "Task"))
        var firsts: [Value] = []
        for task in tasks where !firsts.contains(task["priority"]) { firsts.append(task["priority"]) }
        #expect(groups.map { $0["priority"] } == firsts)
        #expect(groups.map { $0["located"] } == firsts.map { key in
            .integer(Int64(tasks.filter { $0["priority"] == key && (try? $0.object(forKey: "location")) != nil }.count))
        })
    }

    @Test func templatesSubstituteTheirVariables() throws {
        let context = try PredicateEvaluationTests.graph()
        let request = try FetchRequest(template: "tasksDueSooner", in: TestModel.model, variables: ["DUE_DATE": .date(TestModel.now + 3 * 86_400)])
        #expect(names(try context.fetch(request)) == ["Milk", "Mom"])
        #expect(throws: PredicateVariableError.self) { try FetchRequest(template: "tasksDueSooner", in: TestModel.model) }
        #expect(throws: ObjectStoreError.unknownFetchRequestTemplate("tasksDueSoon", suggestion: "tasksDueSooner")) {
            try FetchRequest(template: "tasksDueSoon", in: TestModel.model)
        }
    }

    @Test func fetchedPropertiesEvaluateLazilyAndCacheUntilRefresh() throws {
        let context = try PredicateEvaluationTests.graph()
        let work = try #require(context.fetch(FetchRequest(entityName: "Location", predicate: try ObjectPredicate("name == 'Work'"))).first)
        let property = try #require(work.entity.fetchedProperty(named: "highPriTasks"))
        #expect(names(try context.fetchedPropertyObjects(property, of: work)) == ["Draft"])
        // Through a key path too.
        #expect(try work.value(forKeyPath: "highPriTasks.@count").value == 1)
        let outline = try #require(context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("text == 'Outline'"))).first)
        try outline.setValue(3, forKey: "priority")
        #expect(try context.fetchedPropertyObjects(property, of: work).count == 1, "cached")
        context.refresh(work, mergeChanges: true)
        #expect(try context.fetchedPropertyObjects(property, of: work).count == 2)
    }

    @Test func derivedAttributesFollowTheClock() throws {
        let late = Date(timeIntervalSince1970: 2_000_000_000)
        let model = TestModel.model
        let coordinator = PersistentStoreCoordinator(model: model, store: InMemoryStore(model: model), clock: { late })
        let context = ManagedObjectContext(coordinator: coordinator)
        let task = try context.task("Mom", priority: 2)
        try task.setValue(.date(TestModel.now), forKey: "dueDate")
        #expect(task["isOverdue"] == true)
        #expect(task["doubled"] == 4)
        #expect(throws: ObjectStoreError.readOnly(entity: "Task", key: "isOverdue")) { try task.setValue(false, forKey: "isOverdue") }
        let early = ManagedObjectContext(coordinator: TestModel.coordinator())
        let other = try early.task("Mom")
        try other.setValue(.date(TestModel.now + 1), forKey: "dueDate")
        #expect(other["isOverdue"] == false)
    }

    /// Derivations made of stored attributes and now() are tested on the slots, made for the
    /// clock's reading: a clock that moves past a due date must flip the value within one
    /// context, nil dates never count as past, and edits count before they are saved.
    @Test func derivedPredicatesFollowAMovingClockAndUnsavedEdits() throws {
        final class Clock: @unchecked Sendable {
            private let lock = NSLock()
            private var value = TestModel.now
            var now: Date {
                get { lock.withLock { value } }
                set { lock.withLock { value = newValue } }
            }
        }
        let clock = Clock()
        let model = TestModel.model
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(model: model, store: InMemoryStore(model: model), clock: { clock.now }))
        var tasks: [ManagedObject] = []
        for offset in [-7200.0, -1, 0, 1, 7200] {
            let task = try context.task("t\(offset)")
            try task.setValue(.date(TestModel.now + offset), forKey: "dueDate")
            tasks.append(task)
        }
        tasks.append(try context.task("no date"))
        for step in [-10_000.0, -3600, 0, 0.5, 3600, 10_000, 0] {
            clock.now = TestModel.now + step
            for task in tasks {
                let due: Date? = if case .date(let d) = task["dueDate"] { d } else { nil }
                let expected = due.map { $0 < clock.now } ?? false
                #expect(task["isOverdue"] == .bool(expected), "due \(String(describing: due)) at \(step)")
                #expect(task["doubled"] == 0)
            }
        }
        clock.now = TestModel.now
        try tasks[4].setValue(.date(TestModel.now - 5), forKey: "dueDate")
        #expect(tasks[4]["isOverdue"] == true)
        try tasks[0].setValue(.null, forKey: "dueDate")
        #expect(tasks[0]["isOverdue"] == false)
    }

    @Test func groupedResultsTrackInsertsDeletesMovesAndUpdates() throws {
        let context = try PredicateEvaluationTests.graph()
        let request = FetchRequest(entityName: "Task", predicate: try ObjectPredicate("location != nil"), sortDescriptors: [SortKey("location.name"), SortKey("text")])
        let results = FetchedResultsController(request: request, context: context, sectionKeyPath: "location.name")
        var changes: [FetchedResultsController.Change] = []
        results.onChange = { changes.append($0) }
        try results.performFetch()
        #expect(results.sections.map(\.name) == ["Home", "Work"])
        #expect(results.sections.map(\.count) == [1, 3])
        #expect(names(results.sections[1].objects) == ["Draft", "Outline", "Report"])

        // Insert into a new section.
        let cafe = try #require(context.fetch(FetchRequest(entityName: "Location", predicate: try ObjectPredicate("name == 'Café'"))).first)
        let tea = try context.task("Tea")
        try tea.setObject(cafe, forKey: "location")
        context.processPendingChanges()
        #expect(results.sections.map(\.name) == ["Café", "Home", "Work"])
        #expect(changes.last?.insertedSections == [0])
        #expect(changes.last?.inserted == [.init(section: 0, row: 0)])

        // Rename so the row moves within its section; an edit in place is an update.
        let outline = try #require(results.object(at: .init(section: 2, row: 1)))
        try outline.setValue("Zebra", forKey: "text")
        context.processPendingChanges()
        #expect(changes.last?.moved.map { "\($0.from)>\($0.to)" } == ["2.1>2.2"], "one row moved: Outline, renamed Zebra")
        let draft = try #require(results.object(at: .init(section: 2, row: 0)))
        try draft.setValue(2, forKey: "priority")
        context.processPendingChanges()
        #expect(changes.last?.updated == [.init(section: 2, row: 0)])

        // Delete.
        context.delete(tea)
        context.processPendingChanges()
        #expect(changes.last?.deletedSections == [0])
        #expect(changes.last?.deleted == [.init(section: 0, row: 0)])
        #expect(results.sections.map(\.name) == ["Home", "Work"])
    }
}

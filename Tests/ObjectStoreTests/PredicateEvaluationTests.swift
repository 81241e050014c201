import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

/// Evaluation of every construct against a small fixed graph, on saved (store) objects.
@Suite struct PredicateEvaluationTests {
    static let day: TimeInterval = 86_400

    /// Five tasks in three locations:
    ///   Milk     p3 due now-1d  Home   tags: errand, food
    ///   Mom      p2 due now+2d  —      tags: phone
    ///   Report   p1 due now+7d  Work   subtasks: Outline, Draft
    ///   Outline  p0 no due      Work
    ///   Draft    p3 no due      Work   code ABC, estimate 2.50, ratio 0.25
    static func graph(_ coordinator: PersistentStoreCoordinator = TestModel.coordinator()) throws -> ManagedObjectContext {
        let setup = ManagedObjectContext(coordinator: coordinator)
        let home = try setup.location("Home"), work = try setup.location("Work")
        _ = try setup.location("Café")
        let errand = try setup.insertObject(entityName: "Tag"), food = try setup.insertObject(entityName: "Tag"), phone = try setup.insertObject(entityName: "Tag")
        try errand.setValue("errand", forKey: "label")
        try food.setValue("food", forKey: "label")
        try phone.setValue("phone", forKey: "label")
        let milk = try setup.task("Milk", priority: 3)
        try milk.setValue(.date(TestModel.now - day), forKey: "dueDate")
        try milk.setObject(home, forKey: "location")
        try milk.setObjects([errand, food], forKey: "tags")
        let mom = try setup.task("Mom", priority: 2)
        try mom.setValue(.date(TestModel.now + 2 * day), forKey: "dueDate")
        try mom.setObjects([phone], forKey: "tags")
        let report = try setup.task("Report", priority: 1)
        try report.setValue(.date(TestModel.now + 7 * day), forKey: "dueDate")
        try report.setObject(work, forKey: "location")
        let outline = try setup.task("Outline", priority: 0)
        let draft = try setup.task("Draft", priority: 3)
        try draft.setValue("ABC", forKey: "code")
        try draft.setValue(.decimal(Decimal(string: "2.50")!), forKey: "estimate")
        try draft.setValue(0.25, forKey: "ratio")
        for sub in [outline, draft] { try sub.setObject(work, forKey: "location") }
        try report.setObjects([outline, draft], forKey: "subtasks")
        try setup.save()
        return ManagedObjectContext(coordinator: coordinator)
    }

    private func texts(_ context: ManagedObjectContext, _ predicate: String, entity: String = "Task") throws -> [String] {
        let request = FetchRequest(entityName: entity, predicate: try ObjectPredicate(predicate), sortDescriptors: [SortKey(entity == "Task" ? "text" : "name")])
        return try context.fetch(request).map { object in
            if case .string(let s) = object[entity == "Task" ? "text" : "name"] { return s }
            return "?"
        }
    }

    static let constructs: [(String, [String])] = [
        // Comparisons and numbers across integer, double and decimal.
        ("priority == 3", ["Draft", "Milk"]),
        ("priority = 3.0", ["Draft", "Milk"]),
        ("priority != 3", ["Mom", "Outline", "Report"]),
        ("priority <> 3", ["Mom", "Outline", "Report"]),
        ("priority < 2", ["Outline", "Report"]),
        ("priority <= 1", ["Outline", "Report"]),
        ("priority =< 1", ["Outline", "Report"]),
        ("priority > 2", ["Draft", "Milk"]),
        ("priority >= 2", ["Draft", "Milk", "Mom"]),
        ("priority => 2", ["Draft", "Milk", "Mom"]),
        ("priority BETWEEN {1, 2}", ["Mom", "Report"]),
        ("priority IN {0, 3}", ["Draft", "Milk", "Outline"]),
        ("estimate == 2.5", ["Draft"]),
        ("estimate > 2", ["Draft"]),
        ("ratio < CAST('0.5', 'NSDecimalNumber')", ["Draft"]),
        // nil equals only nil; ordering with nil is false.
        ("dueDate == nil", ["Draft", "Outline"]),
        ("dueDate != nil", ["Milk", "Mom", "Report"]),
        ("code < 'ZZZ'", ["Draft"]),
        ("NOT code < 'ZZZ'", ["Milk", "Mom", "Outline", "Report"]),
        // Strings and their options.
        ("text CONTAINS 'o'", ["Mom", "Report"]),
        ("text CONTAINS[c] 'm'", ["Milk", "Mom"]),
        ("text BEGINSWITH 'M'", ["Milk", "Mom"]),
        ("text ENDSWITH[c] 'T'", ["Draft", "Report"]),
        ("text LIKE 'M*'", ["Milk", "Mom"]),
        ("text LIKE '?om'", ["Mom"]),
        ("text LIKE[c] 'd*T'", ["Draft"]),
        ("text MATCHES 'M[a-z]{2}'", ["Mom"]),
        ("text MATCHES '[A-Z][a-z]+'", ["Draft", "Milk", "Mom", "Outline", "Report"]),
        ("text MATCHES[c] 'mil.'", ["Milk"]),
        ("'il' IN text", ["Milk"]),
        ("text IN {'Mom', 'Milk'}", ["Milk", "Mom"]),
        ("text ==[c] 'MILK'", ["Milk"]),
        ("location.name ==[cd] 'cafe' OR location.name ==[c] 'home'", ["Milk"]),
        // Logic and precedence.
        ("priority == 3 OR priority == 2 AND text == 'Milk'", ["Draft", "Milk"]),
        ("(priority == 3 OR priority == 2) AND text BEGINSWITH 'M'", ["Milk", "Mom"]),
        ("NOT priority == 3 AND dueDate != nil", ["Mom", "Report"]),
        ("TRUEPREDICATE", ["Draft", "Milk", "Mom", "Outline", "Report"]),
        ("FALSEPREDICATE", []),
        // Relationships and aggregates.
        ("location.name == 'Work'", ["Draft", "Outline", "Report"]),
        ("location == nil", ["Mom"]),
        ("ANY tags.label == 'food'", ["Milk"]),
        ("ALL tags.label BEGINSWITH 'e' ", ["Draft", "Outline", "Report"]),
        ("NONE tags.label == 'phone'", ["Draft", "Milk", "Outline", "Report"]),
        ("tags.label == 'phone'", ["Mom"]),
        ("tags.@count == 2", ["Milk"]),
        ("subtasks.@count > 0", ["Report"]),
        ("subtasks.@sum.priority == 3", ["Report"]),
        ("subtasks.@avg.priority == 1.5", ["Report"]),
        ("subtasks.@max.priority == 3 AND subtasks.@min.priority == 0", ["Report"]),
        // Attributes compared with constants, ANDed with what needs objects.
        ("priority >= 2 AND location.name == 'Home'", ["Milk"]),
        ("priority == 3 AND ANY tags.label == 'food'", ["Milk"]),
        ("NOT (priority < 3) AND location != nil", ["Draft", "Milk"]),
        ("location.name == 'Work' AND priority IN {0, 1}", ["Outline", "Report"]),
        ("parent.text == 'Report'", ["Draft", "Outline"]),
        ("subtasks[FIRST].text == 'Outline'", ["Report"]),
        ("subtasks[LAST].text == 'Draft'", ["Report"]),
        ("subtasks[SIZE] == 2", ["Report"]),
        ("subtasks[1].text == 'Draft'", ["Report"]),
        ("SUBQUERY(subtasks, $s, $s.priority == 3).@count == 1", ["Report"]),
        ("SUBQUERY(tags, $t, $t.label BEGINSWITH 'e' OR $t.label == 'food').@count == 2", ["Milk"]),
        // Arithmetic, functions, dates and derived attributes.
        ("priority * 2 + 1 == 7", ["Draft", "Milk"]),
        ("priority ** 2 == 9", ["Draft", "Milk"]),
        ("-priority == -1", ["Report"]),
        ("priority / 2 == 1.5", ["Draft", "Milk"]),
        ("abs(priority - 3) == 3", ["Outline"]),
        ("dueDate < now()", ["Milk"]),
        ("dueDate < daysFromNow(3)", ["Milk", "Mom"]),
        ("dueDate > now() + 86400 * 3", ["Report"]),
        ("isOverdue == TRUE", ["Milk"]),
        ("doubled == 6", ["Draft", "Milk"]),
        ("length(text) == 3 AND uppercase(text) == 'MOM'", ["Mom"]),
        ("lowercase(concat(text, '!')) == 'milk!'", ["Milk"]),
        ("max(priority, 2) == 2", ["Mom", "Outline", "Report"]),
    ]

    @Test(arguments: constructs)
    func evaluatesEveryConstruct(predicate: String, expected: [String]) throws {
        let context = try Self.graph()
        #expect(try texts(context, predicate) == expected, "\(predicate)")
    }

    @Test(arguments: [StoreKind.json, .binary, .snapshot])
    func fileStoresGiveTheSameResults(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var unused: InMemoryStore?
        _ = try Self.graph(try kind.open(in: directory, memory: &unused))
        let coordinator = try kind.open(in: directory, memory: &unused)
        for (predicate, expected) in Self.constructs {
            // A fresh context each time, so every row is tested as the store hands it over
            // (objects an earlier fetch registered are tested as objects).
            #expect(try texts(ManagedObjectContext(coordinator: coordinator), predicate) == expected, "\(kind): \(predicate)")
        }
    }

    /// The binary store tests rows it hands over in bulk, decoding only what the predicate
    /// reads; unsaved edits, deletions and inserts must overlay them as they overlay rows
    /// read one by one (the in-memory store's path), with pending changes and without.
    @Test(arguments: [StoreKind.binary, .snapshot])
    func unsavedChangesOverlayTheStoresRowsLikeTheInMemoryStore(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        func edited(_ context: ManagedObjectContext) throws -> ManagedObjectContext {
            let tasks = try context.fetch(FetchRequest(entityName: "Task", sortDescriptors: [SortKey("text")]))
            let byText = Dictionary(uniqueKeysWithValues: tasks.map { ($0["text"].stringValue ?? "", $0) })
            try byText["Mom"]?.setValue(0, forKey: "priority")
            try byText["Outline"]?.setValue(.date(TestModel.now - 3 * Self.day), forKey: "dueDate")
            try byText["Outline"]?.setValue("scratched", forKey: "scratch")
            if let milk = byText["Milk"] { context.delete(milk) }
            let fresh = try context.task("Fresh", priority: 3)
            try fresh.setValue(.date(TestModel.now - Self.day), forKey: "dueDate")
            return context
        }
        let reference = try edited(Self.graph(try StoreKind.inMemory.open(in: directory, memory: &memory)))
        _ = try Self.graph(try kind.open(in: directory, memory: &memory))
        let scanned = try edited(ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory)))
        let predicates = Self.constructs.map(\.0) + ["isOverdue == YES", "scratch == 'scratched'", "scratch == nil AND priority == 3", "doubled >= 4"]
        for pending in [true, false] {
            for predicate in predicates {
                var request = FetchRequest(entityName: "Task", predicate: try ObjectPredicate(predicate), sortDescriptors: [SortKey("text")])
                request.includesPendingChanges = pending
                let expected = try reference.fetch(request).map { $0["text"] }
                #expect(try scanned.fetch(request).map { $0["text"] } == expected, "\(kind), pending changes \(pending): \(predicate)")
                #expect(try scanned.count(for: request) == expected.count, "\(kind), pending changes \(pending): count of \(predicate)")
            }
        }
    }

    /// The direct comparisons a fetch tests rows and objects with (nil, strings, dates,
    /// integers against a constant) give what the general comparison gives, for values of
    /// every kind, including the other numeric types and the ends of the integers.
    @Test func directComparisonsAgreeWithTheGeneralOne() throws {
        let date = Date(timeIntervalSinceReferenceDate: 1_000)
        let values: [Value] = [
            .null, .integer(.min), .integer(-1), .integer(0), .integer(1), .integer(2), .integer(3), .integer(.max),
            .double(1.5), .double(2.0), .double(-0.0), .double(.nan), .bool(true), .string("2"), .string("home"), .string(""),
            .date(date), .date(date.addingTimeInterval(-1)), .date(date.addingTimeInterval(1)), .decimal(Decimal(2)),
        ]
        let constants: [Value] = [.null, .integer(.min), .integer(0), .integer(2), .integer(.max), .string("home"), .date(date)]
        var direct = 0
        for op in [PredicateComparison.Operator.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual] {
            for constant in constants {
                let general = PredicateCompiler.test(for: op, options: [], constantRight: constant)
                guard let fast = DirectTest(op, .value(constant)) else { continue }
                direct += 1
                for value in values {
                    // What a fetch does: the direct verdict, or the general one where it has none.
                    let verdict = try fast.test(value) ?? general(.value(value), .value(constant))
                    #expect(try verdict == general(.value(value), .value(constant)), "\(value) \(op.rawValue) \(constant)")
                }
            }
        }
        #expect(direct >= 6 * 3 + 4 + 2)  // every integer, the dates' four, nil's two
    }

    /// A predicate made only of ANDed direct comparisons is tested as a flat list (a fetch
    /// over held objects does so); it must give the tree's verdict for every combination of
    /// values, nil and values of a type the direct tests leave to the general comparison
    /// included, and predicates of other shapes must not be flattened.
    @Test func flatConjunctionsAgreeWithThePredicateTree() throws {
        let entity = try #require(TestModel.model.entity(named: "Task"))
        let priority = try #require(entity.slot(of: "priority")), due = try #require(entity.slot(of: "dueDate"))
        let text = try #require(entity.slot(of: "text"))
        let initial = entity.properties.map(SlotValue.initial(for:))
        let date = TestModel.now
        let flat = [
            "priority >= 2 AND dueDate < %@", "text == 'Milk' AND priority != 3", "priority > 0 AND priority < 3 AND text != 'Mom'",
            "dueDate <= %@ AND text == nil", "priority == 2",
        ]
        let notFlat = ["priority >= 2 OR dueDate < %@", "text ==[c] 'milk' AND priority == 2", "NOT (priority == 2)", "2 <= priority AND priority < 3"]
        let priorities: [SlotValue] = [.value(.null), .value(.integer(0)), .value(.integer(2)), .value(.integer(3)), .value(.double(2.5)), .value(.string("2"))]
        let dates: [SlotValue] = [.value(.null), .value(.date(date.addingTimeInterval(-1))), .value(.date(date)), .value(.date(date.addingTimeInterval(1))), .value(.integer(5))]
        let texts: [SlotValue] = [.value(.null), .value(.string("Milk")), .value(.string("Mom")), .value(.string("milk")), .value(.integer(1))]
        for (source, shouldBeFlat) in flat.map({ ($0, true) }) + notFlat.map({ ($0, false) }) {
            let predicate = try #require(SlotPredicate(try ObjectPredicate(format: source, arguments: source.contains("%@") ? [.date(date)] : []), entity: entity), "\(source)")
            let test = SlotTest(predicate)
            #expect(test.isFlat == shouldBeFlat, "\(source)")
            for p in priorities {
                for d in dates {
                    for t in texts {
                        var values = initial
                        values[priority] = p
                        values[due] = d
                        values[text] = t
                        #expect(try test.matches(values) == predicate.matches(values), "\(source) with \(p), \(d), \(t)")
                    }
                }
            }
        }
    }

    @Test func emptyCollectionsFollowTheQuantifierRules() throws {
        let context = try Self.graph()
        // Outline has no tags: ANY false, ALL true, NONE true.
        #expect(try texts(context, "text == 'Outline' AND ANY tags.label == 'x'").isEmpty)
        #expect(try texts(context, "text == 'Outline' AND ALL tags.label == 'x'") == ["Outline"])
        #expect(try texts(context, "text == 'Outline' AND NONE tags.label == 'x'") == ["Outline"])
    }

    @Test func selfAndVariablesAndFormatArguments() throws {
        let context = try Self.graph()
        let milk = try #require(context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("text == 'Milk'"))).first)
        let home = try #require(try milk.object(forKey: "location"))
        let bySelf = FetchRequest(entityName: "Location", predicate: try ObjectPredicate("SELF == $L").substituting(["L": .uri(home.objectID.uriRepresentation)]))
        #expect(try context.fetch(bySelf).map(\.objectID) == [home.objectID])
        #expect(try texts(context, "ANY tasks.priority == 3", entity: "Location") == ["Home", "Work"])
        let formatted = FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "%K == %@ AND priority >= %d", "location.name", "Work", 1))
        #expect(try context.fetch(formatted).count == 2)
        let unbound = FetchRequest(entityName: "Task", predicate: try ObjectPredicate("priority == $P"))
        #expect(throws: PredicateEvaluationError.self) { try context.fetch(unbound) }
    }

    @Test func pendingChangesAreOverlaid() throws {
        let context = try Self.graph()
        let milk = try #require(context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("text == 'Milk'"))).first)
        try milk.setValue(0, forKey: "priority")
        try context.task("Eggs", priority: 3)
        let draft = try #require(context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("text == 'Draft'"))).first)
        context.delete(draft)
        #expect(try texts(context, "priority == 3") == ["Eggs"])
        var saved = FetchRequest(entityName: "Task", predicate: try ObjectPredicate("priority == 3"))
        saved.includesPendingChanges = false
        #expect(try context.count(for: saved) == 2, "the store still has Draft and Milk at 3")
        #expect(try context.count(for: FetchRequest(entityName: "Task", predicate: try ObjectPredicate("priority == 3"))) == 1)
    }

    @Test func keyPathsThroughToManyRelationshipsReachEachObjectOnce() throws {
        let context = try Self.graph()
        // Milk has two tags; each step through tags and their tasks would double without
        // taking each object once (2^60 paths here).
        let path = "tags" + String(repeating: ".tasks.tags", count: 60) + ".label"
        #expect(try texts(context, "ANY \(path) == 'food'") == ["Milk"])
        #expect(try texts(context, "\(path.replacingOccurrences(of: ".label", with: "")).@count == 2") == ["Milk"])
    }

    @Test func aCatastrophicMatchesPatternIsStoppedWithAnError() throws {
        let context = TestModel.context()
        try context.task(String(repeating: "a", count: 40) + "!")
        try context.task("abab")
        #expect {
            _ = try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("text MATCHES '(a+)+b'")))
        } throws: { error in
            (error as? PredicateEvaluationError)?.message.contains("took more than 100 ms") == true
        }
        #expect(try texts(context, "text MATCHES '(ab)+'") == ["abab"])
    }

    /// A length of `a`s on which `(a|a?)+b` takes at least `milliseconds` to fail (the time
    /// doubles with every few characters, so the first such length takes well under 100 ms).
    static func slowLength(milliseconds: Double) throws -> Int {
        let regex = try NSRegularExpression(pattern: "^(?:(a|a?)+b)$")
        for length in 8...40 {
            let text = String(repeating: "a", count: length)
            let start = Date()
            _ = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text))
            if Date().timeIntervalSince(start) * 1000 >= milliseconds { return length }
        }
        return 40
    }

    /// MATCHES is bounded per query, not only per value: 300 values that each take a few
    /// milliseconds (under the 100 ms a value may take) stop the query once it has spent
    /// 1 s and 1 ms a value; before, 500 such values took 30 s. Ordinary values do not
    /// count against it: 20,000 matched quickly pass.
    @Test func matchesIsBoundedForTheWholeQuery() throws {
        let length = try Self.slowLength(milliseconds: 8)
        let context = TestModel.context()
        for _ in 0..<300 { try context.task(String(repeating: "a", count: length)) }
        #expect {
            _ = try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("text MATCHES '(a|a?)+b'")))
        } throws: { error in
            let message = (error as? PredicateEvaluationError)?.message ?? ""
            // Under load a value may pass 100 ms itself: that stops the query too.
            return message.contains("in this query for") || message.contains("took more than 100 ms on one value")
        }
        let many = TestModel.context()
        for i in 0..<20_000 { try many.task("task \(i)") }
        #expect(try many.count(for: FetchRequest(entityName: "Task", predicate: try ObjectPredicate("text MATCHES 'task [0-9]*5'"))) == 2_000)
    }
}

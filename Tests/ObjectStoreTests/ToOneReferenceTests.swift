import Foundation
import Testing
@testable import ObjectStore
import ObjectStoreModel

/// A key path through a to-one relationship compared with constants (`project.name ==[c]
/// 'home'`) is answered by the planner as a reference test against the matching destinations.
/// These tests hold its answers to the key path's meaning, computed here in Swift from the
/// objects as the context sees them: on every kind of store, with unsaved changes, in a child
/// context, with nil relationships and names, under NOT, AND and OR.
@Suite struct ToOneReferenceTests {
    /// A random predicate over people: its text and the same test in plain Swift.
    indirect enum Tree {
        case atom(String, (ManagedObject) throws -> Bool)
        case not(Tree)
        case and(Tree, Tree)
        case or(Tree, Tree)

        var text: String {
            switch self {
            case .atom(let text, _): return text
            case .not(let inner): return "NOT (\(inner.text))"
            case .and(let a, let b): return "(\(a.text)) AND (\(b.text))"
            case .or(let a, let b): return "(\(a.text)) OR (\(b.text))"
            }
        }

        func holds(for object: ManagedObject) throws -> Bool {
            switch self {
            case .atom(_, let test): return try test(object)
            case .not(let inner): return try !inner.holds(for: object)
            case .and(let a, let b): return try a.holds(for: object) && b.holds(for: object)
            case .or(let a, let b): return try a.holds(for: object) || b.holds(for: object)
            }
        }
    }

    static let projectNames = ["home", "Home", "work", "garden", "homework", nil]
    static let personNames = ["ann", "bob", "cy", nil]

    static func name(_ object: ManagedObject?) throws -> String? {
        guard let object, case .string(let name)? = try? object.value(forKey: "name") else { return nil }
        return name
    }

    /// The object a to-one relationship reaches, as a key path reads it: nil when it is gone
    /// (a child context's parent deleted it).
    static func reached(_ object: ManagedObject?, _ key: String) -> ManagedObject? {
        guard let object, let reached = try? object.object(forKey: key) else { return nil }
        return reached
    }

    static func projectName(_ person: ManagedObject) throws -> String? { try name(reached(person, "project")) }

    static func atom(_ random: inout SeededRandom) -> Tree {
        let wanted = random.pick(["home", "HOME", "work", "garden", "nothing"])
        switch random.next() % 9 {
        case 0:
            return .atom("project.name ==[c] '\(wanted)'") { try projectName($0)?.lowercased() == wanted.lowercased() }
        case 1:
            return .atom("project.name == '\(wanted)'") { try projectName($0) == wanted }
        case 2:
            // True for a person without a project: left as written, and still right.
            return .atom("project.name != '\(wanted)'") { try projectName($0) != wanted }
        case 3:
            return .atom("project.name == nil") { try projectName($0) == nil }
        case 4:
            return .atom("project.name BEGINSWITH[c] 'ho'") { try projectName($0)?.lowercased().hasPrefix("ho") ?? false }
        case 5:
            return .atom("project.name IN {'home', 'garden'}") { ["home", "garden"].contains(try projectName($0)) }
        case 6:
            let lead = random.pick(["ann", "bob", "cy"])
            return .atom("project.lead.name == '\(lead)'") { try name(reached(reached($0, "project"), "lead")) == lead }
        case 7:
            let spouse = random.pick(["ann", "bob", "cy"])
            return .atom("spouse.name < '\(spouse)'") { (try name(reached($0, "spouse"))).map { $0 < spouse } ?? false }
        default:
            let own = random.pick(["ann", "bob", "cy"])
            return .atom("name == '\(own)'") { try name($0) == own }
        }
    }

    static func tree(_ random: inout SeededRandom, depth: Int) -> Tree {
        if depth == 0 || random.chance(35) { return atom(&random) }
        switch random.next() % 3 {
        case 0: return .not(tree(&random, depth: depth - 1))
        case 1: return .and(tree(&random, depth: depth - 1), tree(&random, depth: depth - 1))
        default: return .or(tree(&random, depth: depth - 1), tree(&random, depth: depth - 1))
        }
    }

    /// Projects, people (more of them than projects) with projects, leads and spouses.
    static func populate(_ context: ManagedObjectContext, _ random: inout SeededRandom, projects: Int, people: Int) throws {
        var made: [ManagedObject] = []
        for _ in 0..<projects {
            let project = try context.insertObject(entityName: "Project")
            if let name = random.pick(projectNames) { try project.setValue(.string(name), forKey: "name") }
            made.append(project)
        }
        var persons: [ManagedObject] = []
        for _ in 0..<people {
            let person = try context.insertObject(entityName: "Person")
            if let name = random.pick(personNames) { try person.setValue(.string(name), forKey: "name") }
            if random.chance(75) { try person.setObject(random.pick(made), forKey: "project") }
            persons.append(person)
        }
        for project in made where random.chance(60) { try project.setObject(random.pick(persons), forKey: "lead") }
        for person in persons where random.chance(30) { try person.setObject(random.pick(persons), forKey: "spouse") }
    }

    /// Unsaved changes: renamed and new projects, people moved, new people.
    static func change(_ context: ManagedObjectContext, _ random: inout SeededRandom) throws {
        let projects = try context.fetch(FetchRequest(entityName: "Project"))
        let people = try context.fetch(FetchRequest(entityName: "Person"))
        for project in projects where random.chance(20) {
            try project.setValue(random.pick(projectNames).map(Value.string) ?? .null, forKey: "name")
        }
        for person in people where random.chance(15) {
            try person.setObject(random.chance(20) ? nil : random.pick(projects), forKey: "project")
        }
        try populate(context, &random, projects: 2, people: 6)
        // Deleted and not saved: still reached through the relationship until the save.
        for project in projects where random.chance(10) { context.delete(project) }
        for person in people where random.chance(5) { context.delete(person) }
    }

    /// Every random predicate gives, as fetch, IDs and count, exactly the people its Swift
    /// test accepts.
    static func check(_ context: ManagedObjectContext, _ random: inout SeededRandom, rounds: Int, label: String) throws {
        // The delete rules run first, as they do for every fetch.
        context.processPendingChanges()
        let everyone = try context.fetch(FetchRequest(entityName: "Person"))
        #expect(!everyone.isEmpty)
        for _ in 0..<rounds {
            let tree = tree(&random, depth: 3)
            let expected = Set(try everyone.filter { try tree.holds(for: $0) }.map(\.objectID))
            let request = FetchRequest(entityName: "Person", predicate: try ObjectPredicate(tree.text))
            #expect(Set(try context.fetch(request).map(\.objectID)) == expected, "\(label): \(tree.text)")
            #expect(Set(try context.fetchObjectIDs(request)) == expected, "\(label): \(tree.text)")
            #expect(try context.count(for: request) == expected.count, "\(label): \(tree.text)")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func answersAsTheKeyPathDoesOnEveryStore(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        var random = SeededRandom(seed: 0x70_0E + UInt64(kind.rawValue.count))
        do {
            let context = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
            try Self.populate(context, &random, projects: 12, people: 60)
            try context.save()
        }
        // A fresh context (every object read from the store), then one with unsaved changes.
        let context = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        try Self.check(context, &random, rounds: 60, label: "saved")
        try Self.change(context, &random)
        try Self.check(context, &random, rounds: 60, label: "unsaved")
        // A child context sees its parent's unsaved changes and its own.
        let child = ManagedObjectContext(parent: context)
        try Self.change(child, &random)
        try Self.check(child, &random, rounds: 60, label: "child")
    }

    @Test func aDeletedDestinationCountsAsTheRelationshipReadsIt() throws {
        let context = TestModel.context()
        let home = try context.location("home")
        let task = try context.task("a")
        try task.setObject(home, forKey: "location")
        try context.save()
        let request = FetchRequest(entityName: "Task", predicate: try ObjectPredicate("location.name == 'home'"))
        #expect(try context.count(for: request) == 1)
        // A fetch runs the delete rules first: nullified, the task has no location.
        context.delete(home)
        #expect(try context.count(for: request) == 0)
        #expect(try task.object(forKey: "location") == nil)
        #expect(try context.count(for: FetchRequest(entityName: "Task", predicate: try ObjectPredicate("NOT (location.name == 'home')"))) == 1)
        // Under a rule that keeps the link until the save (deny, no action), the deleted
        // destination is still reached, and found.
        let project = try context.insertObject(entityName: "Project")
        try project.setValue(.string("home"), forKey: "name")
        let person = try context.insertObject(entityName: "Person")
        try person.setObject(project, forKey: "project")
        try context.save()
        context.delete(project)
        context.processPendingChanges()
        #expect(try person.object(forKey: "project") === project)
        let people = FetchRequest(entityName: "Person", predicate: try ObjectPredicate("project.name == 'home'"))
        #expect(try FetchExecutor.planned(people, in: context).request.predicate != people.predicate, "rewritten")
        #expect(try context.count(for: people) == 1)
        #expect(try context.count(for: FetchRequest(entityName: "Person", predicate: try ObjectPredicate("NOT (project.name == 'home')"))) == 0)
    }

    @Test func thePlanAsksTheDestinationsOnlyWhereItMeansTheSame() throws {
        let context = TestModel.context()
        var random = SeededRandom(seed: 7)
        try Self.populate(context, &random, projects: 5, people: 20)
        try context.save()
        func planned(_ text: String, entity: String = "Person") throws -> ObjectPredicate? {
            try FetchExecutor.planned(FetchRequest(entityName: entity, predicate: try ObjectPredicate(text)), in: context).request.predicate
        }
        // Rewritten: a reference test.
        guard case .comparison(let c)? = try planned("project.name ==[c] 'home'") else {
            Issue.record("not a comparison")
            return
        }
        #expect(c.lhs == .keyPath(.evaluatedObject, ["project"]) && c.op == .in)
        #expect(try planned("NOT (project.lead.name == 'ann')") != (try ObjectPredicate("NOT (project.lead.name == 'ann')")))
        // True for nil: kept as written.
        for text in ["project.name == nil", "project.name != 'home'", "project.name IN {'home', nil}", "ANY project.members.name == 'ann'"] {
            #expect(try planned(text) == (try ObjectPredicate(text)), "\(text)")
        }
        // Through a to-many, or to more destinations than sources: kept.
        #expect(try planned("project.members.name == 'ann'") == (try ObjectPredicate("project.members.name == 'ann'")))
        #expect(try planned("lead.name == 'ann'", entity: "Project") == (try ObjectPredicate("lead.name == 'ann'")))
        // A misspelt key is named as written.
        #expect(throws: PredicateTypeError.self) { try context.fetch(FetchRequest(entityName: "Person", predicate: try ObjectPredicate("project.nmae == 'x'"))) }
    }
}

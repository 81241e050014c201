import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

/// Uniqueness conflicts resolved by the merge policy, as Core Data does: an inserted object
/// whose unique values an existing object has is merged into it ("upsert").
@Suite struct UpsertTests {
    static let model: ManagedObjectModel = {
        let schema = #"""
        {
          "entities": [
            { "name": "Person",
              "attributes": [
                { "name": "email", "type": "string", "optional": false, "collation": "caseInsensitive" },
                { "name": "name", "type": "string" },
                { "name": "age", "type": "int64", "optional": false, "default": 0 }
              ],
              "relationships": [
                { "name": "pets", "destination": "Pet", "inverse": "owner", "toMany": true },
                { "name": "team", "destination": "Team", "inverse": "members" }
              ],
              "uniquenessConstraints": [["email"]]
            },
            { "name": "Pet", "attributes": [{ "name": "name", "type": "string" }],
              "relationships": [{ "name": "owner", "destination": "Person", "inverse": "pets" }] },
            { "name": "Team", "attributes": [{ "name": "name", "type": "string" }],
              "relationships": [{ "name": "members", "destination": "Person", "inverse": "team", "toMany": true }] }
          ]
        }
        """#
        do {
            return try ManagedObjectModel(schema: schema, file: "people")
        } catch {
            preconditionFailure("the test model does not load: \(error)")
        }
    }()

    /// A store holding Old <a@example.com>, 40, with the pet Rex and the team Blue.
    private func seeded(_ kind: StoreKind, in directory: TemporaryDirectory, memory: inout InMemoryStore?) throws -> ObjectID {
        let context = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory, model: Self.model))
        let person = try context.insertObject(entityName: "Person")
        try person.setValue("a@example.com", forKey: "email")
        try person.setValue("Old", forKey: "name")
        try person.setValue(40, forKey: "age")
        let rex = try context.insertObject(entityName: "Pet")
        try rex.setValue("Rex", forKey: "name")
        try rex.setObject(person, forKey: "owner")
        let team = try context.insertObject(entityName: "Team")
        try team.setValue("Blue", forKey: "name")
        try person.setObject(team, forKey: "team")
        try context.save()
        return person.objectID
    }

    /// Inserts New <A@EXAMPLE.COM> with the pet Fido and the team Red, under a policy.
    private func insertDuplicate(into context: ManagedObjectContext) throws -> ManagedObject {
        let person = try context.insertObject(entityName: "Person")
        try person.setValue("A@EXAMPLE.COM", forKey: "email")
        try person.setValue("New", forKey: "name")
        let fido = try context.insertObject(entityName: "Pet")
        try fido.setValue("Fido", forKey: "name")
        try fido.setObject(person, forKey: "owner")
        let team = try context.insertObject(entityName: "Team")
        try team.setValue("Red", forKey: "name")
        try person.setObject(team, forKey: "team")
        return person
    }

    private func people(_ context: ManagedObjectContext) throws -> [ManagedObject] {
        try context.fetch(FetchRequest(entityName: "Person"))
    }

    @Test(arguments: StoreKind.allCases)
    func objectTrumpUpdatesTheExistingObjectWithTheNewValues(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let existing = try seeded(kind, in: directory, memory: &memory)
        let context = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory, model: Self.model))
        context.mergePolicy = .mergeByPropertyObjectTrump
        _ = try insertDuplicate(into: context)
        try context.save()

        let reopened = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory, model: Self.model))
        let all = try people(reopened)
        #expect(all.map(\.objectID) == [existing], "one person, the existing one (its ID kept)")
        let person = try #require(all.first)
        #expect(person["name"] == "New", "the new value wins")
        #expect(person["age"] == 40, "a value left at the model default does not overwrite")
        #expect(person["email"] == "A@EXAMPLE.COM")
        #expect(try person.objects(forKey: "pets").map { $0["name"] }.sorted { $0.description < $1.description } == ["Fido", "Rex"], "to-many edges are merged")
        #expect(try person.object(forKey: "team")?["name"] == "Red", "a to-one set on the new object wins")
        #expect(try reopened.coordinator.checkIntegrity().problems.isEmpty, "inverses agree")
    }

    @Test func overwriteTakesEveryValueAndStoreTrumpKeepsTheStoredOnes() throws {
        for (policy, name, age, team) in [(MergePolicy.overwrite, "New", Int64(0), "Red"), (.mergeByPropertyStoreTrump, "Old", 40, "Blue"), (.rollback, "Old", 40, "Blue")] {
            let directory = try TemporaryDirectory()
            var memory: InMemoryStore?
            _ = try seeded(.binary, in: directory, memory: &memory)
            let context = ManagedObjectContext(coordinator: try StoreKind.binary.open(in: directory, memory: &memory, model: Self.model))
            context.mergePolicy = policy
            _ = try insertDuplicate(into: context)
            try context.save()
            let person = try #require(try people(context).first)
            #expect(try people(context).count == 1)
            #expect(person["name"] == .string(name) && person["age"] == .integer(age), "\(policy)")
            #expect(try person.object(forKey: "team")?["name"] == .string(team), "\(policy)")
            #expect(try person.objects(forKey: "pets").count == 2, "\(policy): pets are merged under every policy")
        }
    }

    @Test func theErrorPolicyStillRefuses() throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        _ = try seeded(.binary, in: directory, memory: &memory)
        let context = ManagedObjectContext(coordinator: try StoreKind.binary.open(in: directory, memory: &memory, model: Self.model))
        _ = try insertDuplicate(into: context)
        #expect(throws: ValidationError.self) { try context.save() }
    }

    @Test func duplicatesInsertedInOneContextBecomeOneObject() throws {
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(model: Self.model, store: InMemoryStore(model: Self.model)))
        context.mergePolicy = .mergeByPropertyObjectTrump
        for (email, name) in [("b@example.com", "First"), ("B@example.com", "Second"), ("c@example.com", "Other")] {
            let person = try context.insertObject(entityName: "Person")
            try person.setValue(.string(email), forKey: "email")
            try person.setValue(.string(name), forKey: "name")
        }
        try context.save()
        let names = try people(context).map { $0["name"].stringValue ?? "" }.sorted()
        #expect(names == ["Other", "Second"], "the later insert's values win, in the earlier object")
    }

    @Test func anEditedAwayOrDeletedHolderDoesNotCount() throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        _ = try seeded(.snapshot, in: directory, memory: &memory)
        let context = ManagedObjectContext(coordinator: try StoreKind.snapshot.open(in: directory, memory: &memory, model: Self.model))
        context.mergePolicy = .mergeByPropertyObjectTrump
        let old = try #require(try people(context).first)
        try old.setValue("moved@example.com", forKey: "email")
        let fresh = try insertDuplicate(into: context)
        try context.save()
        #expect(try people(context).count == 2, "the old address was given up in the same save")
        #expect(!fresh.isDeleted && fresh.objectID != old.objectID)
    }

    @Test func anImportOfManyMergesThroughOneReadOfTheStore() throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        _ = try seeded(.snapshot, in: directory, memory: &memory)
        let context = ManagedObjectContext(coordinator: try StoreKind.snapshot.open(in: directory, memory: &memory, model: Self.model))
        context.mergePolicy = .mergeByPropertyObjectTrump
        for i in 0..<1_500 {
            let person = try context.insertObject(entityName: "Person")
            try person.setValue(.string(i == 700 ? "a@example.com" : "p\(i)@example.com"), forKey: "email")
            try person.setValue(.string("P\(i)"), forKey: "name")
        }
        try context.save()
        let reopened = ManagedObjectContext(coordinator: try StoreKind.snapshot.open(in: directory, memory: &memory, model: Self.model))
        #expect(try reopened.count(for: FetchRequest(entityName: "Person")) == 1_500)
        let a = try reopened.fetch(FetchRequest(entityName: "Person", predicate: try ObjectPredicate("email ==[c] 'a@example.com'")))
        #expect(a.map { $0["name"] } == ["P700"] && a.first?["age"] == 40)
    }

    /// A constraint of two attributes (one folding case): merged in a small save and in a
    /// bulk one (over 1,000 inserted), refused under the error policy by the context (two
    /// new objects) and by the store (a saved one), and a pair that differs in one value
    /// is no clash.
    @Test(arguments: [10, 1_200])
    func aConstraintOfTwoAttributesMergesAndRefusesByBothValues(count: Int) throws {
        let schema = #"""
        { "entities": [{ "name": "Seat",
            "attributes": [{ "name": "row", "type": "string", "collation": "caseInsensitive" }, { "name": "number", "type": "int64" },
                           { "name": "holder", "type": "string" }],
            "uniquenessConstraints": [["row", "number"]] }] }
        """#
        let model = try ManagedObjectModel(schema: schema, file: "seats")
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("seats.store")
        func context() throws -> ManagedObjectContext {
            ManagedObjectContext(coordinator: PersistentStoreCoordinator(model: model, store: try BinaryStore(url: url, model: model)))
        }
        func seat(_ row: String, _ number: Int64, _ holder: String, in context: ManagedObjectContext) throws {
            let seat = try context.insertObject(entityName: "Seat")
            try seat.setValue(.string(row), forKey: "row")
            try seat.setValue(.integer(number), forKey: "number")
            try seat.setValue(.string(holder), forKey: "holder")
        }
        let first = try context()
        try seat("A", 1, "Ann", in: first)
        try first.save()

        let merging = try context()
        merging.mergePolicy = .mergeByPropertyObjectTrump
        for number in 0..<Int64(count) { try seat("B", number, "filler", in: merging) }
        try seat("a", 1, "Bob", in: merging)  // the saved A1
        try seat("A", 2, "Cy", in: merging)  // new: differs in the number
        try seat("b", 0, "Dee", in: merging)  // the first B0 of this save
        try merging.save()
        let reader = try context()
        let holders = try reader.fetch(FetchRequest(entityName: "Seat", predicate: try ObjectPredicate("holder != 'filler'")))
            .map { "\($0["row"].stringValue ?? "")\($0["number"].integerValue ?? -1) \($0["holder"].stringValue ?? "")" }.sorted()
        #expect(holders == ["A2 Cy", "a1 Bob", "b0 Dee"], "merged into the saved A1 and the first B0, the later values winning")
        #expect(try context().count(for: FetchRequest(entityName: "Seat")) == count + 2)

        let twice = try context()
        try seat("C", 1, "Eve", in: twice)
        try seat("c", 1, "Fay", in: twice)
        let inContext = try #require(throws: ValidationError.self) { try twice.save() }
        #expect(inContext.failures.contains { $0.rule == .unique && $0.key == "row,number" })

        let again = try context()
        try seat("A", 2, "Gus", in: again)
        let inStore = try #require(throws: ValidationError.self) { try again.save() }
        #expect(inStore.failures.map(\.rule) == [.unique], "\(inStore)")
        #expect(try context().count(for: FetchRequest(entityName: "Seat")) == count + 2)
    }
}

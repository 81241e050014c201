import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

/// A schema index on a to-one relationship (format 4): compaction files every row under a
/// hash of the object it refers to, and `place == object`, `object == place` and
/// `place IN {objects}` (objects as their URIs) list only the rows filed under those
/// objects, which are then tested. The reference is the in-memory store evaluating the same
/// comparison through the general closures (an OR with a key path keeps it off the slot
/// path), so the index, the slot test and the closures are held to one answer.
@Suite struct ReferenceIndexTests {
    static let model: ManagedObjectModel = {
        do {
            return try ManagedObjectModel(schema: #"""
            { "entities": [
                { "name": "Item", "indexes": [{ "name": "byPlace", "properties": ["place"] }],
                  "attributes": [{ "name": "n", "type": "int64" }],
                  "relationships": [{ "name": "place", "destination": "Place", "inverse": "items" }] },
                { "name": "Place", "attributes": [{ "name": "name", "type": "string" }],
                  "relationships": [{ "name": "items", "destination": "Item", "inverse": "place", "toMany": true }],
                  "fetchedProperties": [
                    { "name": "early", "destination": "Item", "predicate": "place == $FETCH_SOURCE AND n < 300" },
                    { "name": "earlyOrFirst", "destination": "Item", "predicate": "n == 1 OR ($FETCH_SOURCE == place AND n < 300)" },
                    { "name": "namesake", "destination": "Item", "predicate": "place.name == $FETCH_SOURCE.name AND n < 300" }
                  ] },
                { "name": "Hall", "parent": "Place", "attributes": [{ "name": "seats", "type": "int64" }] }
            ] }
            """#, file: "places")
        } catch {
            preconditionFailure("the test model does not load: \(error)")
        }
    }()

    /// A fetched property whose predicate compares with `$FETCH_SOURCE` itself runs as a
    /// fetch with the source's URI (through the slot test and the index); one that reads
    /// through it (`$FETCH_SOURCE.name`) is evaluated against the object. Both give the
    /// items a walk of every item finds, with saved and unsaved moves and an unsaved place.
    @Test func fetchedPropertiesOfTheSourceFindWhatAWalkFinds() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("places.store")
        let coordinator = try PersistentStoreCoordinator(model: Self.model, storeURL: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        var places: [ManagedObject] = []
        for p in 0..<12 {
            let place = try context.insertObject(entityName: p % 4 == 0 ? "Hall" : "Place")
            try place.setValue(.string("place \(p % 10)"), forKey: "name")  // two pairs share a name
            places.append(place)
        }
        var items: [ManagedObject] = []
        for n in 0..<600 {
            let item = try context.insertObject(entityName: "Item")
            try item.setValue(.integer(Int64(n)), forKey: "n")
            if n % 13 != 0 { try item.setObject(places[(n * 7) % places.count], forKey: "place") }
            items.append(item)
        }
        try context.save()
        try coordinator.compactStore()
        for n in stride(from: 0, to: 600, by: 17) { try items[n].setObject(places[(n + 5) % places.count], forKey: "place") }
        try context.save()
        let fresh = try context.insertObject(entityName: "Place")
        try fresh.setValue(.string("place 3"), forKey: "name")
        places.append(fresh)
        for n in stride(from: 2, to: 600, by: 23) { try items[n].setObject(places[n % places.count], forKey: "place") }
        for n in [4, 40, 140] { try items[n].setObject(fresh, forKey: "place") }
        func number(_ item: ManagedObject) -> Int64 { if case .integer(let n) = item["n"] { return n } else { return -1 } }
        var found = 0
        for place in places {
            func walk(_ keep: (ManagedObject) -> Bool) -> [Int64] { items.filter(keep).map(number).sorted() }
            let here = { (item: ManagedObject) in (try? item.object(forKey: "place")) === place }
            let expected = [
                "early": walk { here($0) && number($0) < 300 },
                "earlyOrFirst": walk { number($0) == 1 || (here($0) && number($0) < 300) },
                "namesake": walk { item in
                    guard let other = try? item.object(forKey: "place") else { return false }
                    return other["name"] == place["name"] && number(item) < 300
                },
            ]
            for (name, numbers) in expected {
                let property = try #require(place.entity.fetchedProperty(named: name))
                context.refresh(place, mergeChanges: true)
                #expect(try context.fetchedPropertyObjects(property, of: place).map(number).sorted() == numbers, "\(name) of \(place.objectID)")
                found += numbers.isEmpty ? 0 : 1
            }
        }
        #expect(found > 30)
        #expect(ManagedObjectContext.bindingSource(try ObjectPredicate("place == $FETCH_SOURCE AND n < 300"), to: fresh.objectID.uriRepresentation) != nil)
        #expect(ManagedObjectContext.bindingSource(try ObjectPredicate("place.name == $FETCH_SOURCE.name"), to: fresh.objectID.uriRepresentation) == nil)
    }

    @Test func referenceIndexFindsExactlyTheRowsTheClosuresFind() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("places.store")
        let binary = try PersistentStoreCoordinator(model: Self.model, storeURL: url)
        let memory = PersistentStoreCoordinator(inMemoryWith: Self.model)
        let contexts = [ManagedObjectContext(coordinator: binary), ManagedObjectContext(coordinator: memory)]
        for context in contexts { context.undoManager = nil }  // the undo stack would keep every object
        var generator = SeededRandom(seed: 0x91ACE5)
        let assigned = (0..<900).map { n in n % 29 == 0 ? nil : Int(generator.next() % 60) }
        // Moves to any place but place 7, which is deleted after the first twenty.
        let moves = (0..<40).map { _ in (Int(generator.next() % 900), Int(generator.next() % 59)) }.map { ($0.0, $0.1 >= 7 ? $0.1 + 1 : $0.1) }
        // Places by name, per context (the two stores' objects have different IDs).
        var places: [[String: ManagedObject]] = [[:], [:]]
        for (c, context) in contexts.enumerated() {
            for p in 0..<60 {
                let place = try context.insertObject(entityName: p % 5 == 0 ? "Hall" : "Place")
                try place.setValue(.string("place \(p)"), forKey: "name")
                places[c]["place \(p)"] = place
            }
            for (n, p) in assigned.enumerated() {
                let item = try context.insertObject(entityName: "Item")
                try item.setValue(.integer(Int64(n)), forKey: "n")
                if let p { try item.setObject(places[c]["place \(p)"], forKey: "place") }
            }
            try context.save()
        }
        try binary.compactStore()
        for (c, context) in contexts.enumerated() {
            do {
            let items = try context.fetch(FetchRequest(entityName: "Item", sortDescriptors: [SortKey("n")]))
            // Saved moves and a deleted place (its items' references nullified), in the log.
            for (n, p) in moves.prefix(20) { try items[n].setObject(places[c]["place \(p)"], forKey: "place") }
            if let gone = places[c]["place 7"] { context.delete(gone) }
            try context.save()
            // Unsaved moves, and items moved to a new place that has no row yet.
            for (n, p) in moves.dropFirst(20) { try items[n].setObject(places[c]["place \(p)"], forKey: "place") }
            let fresh = try context.insertObject(entityName: "Place")
            try fresh.setValue(.string("place new"), forKey: "name")
            places[c]["place new"] = fresh
            for n in [3, 300, 600] { try items[n].setObject(fresh, forKey: "place") }
            }
            // Hold only the moved items (below a quarter of the rows: the index still pays).
            context.releaseCleanObjects()
            #expect(context.registeredObjects.count < 225)
        }
        func uri(_ c: Int, _ name: String) -> Value {
            .uri(places[c][name]?.objectID.uriRepresentation ?? URL(string: "x-objectstore://nowhere/Place/p1")!)
        }
        let names = (0..<60).map { "place \($0)" } + ["place new"]
        var checked = 0
        for round in 0..<40 {
            let a = generator.pick(names), b = generator.pick(names)
            let cases: [(String, (Int) -> [Value])] = [
                ("place == %@", { [uri($0, a)] }), ("%@ == place", { [uri($0, a)] }),
                ("place IN {%@, %@}", { [uri($0, a), uri($0, b)] }), ("place == %@ AND n < 450", { [uri($0, a)] }),
                ("place == %@ OR n == 5", { [uri($0, a)] }),
            ] + (round == 0 ? [("place == %@", { _ in [.uri(URL(string: "x-objectstore://nowhere/Place/p1")!)] }),
                               ("place == %@", { [uri($0, "place 7")] })] : [])
            for (format, arguments) in cases {
                let request = FetchRequest(entityName: "Item", predicate: try ObjectPredicate(format: format, arguments: arguments(0)), sortDescriptors: [SortKey("n")])
                let reference = FetchRequest(entityName: "Item", predicate: try ObjectPredicate(format: "(\(format)) OR place.name == '~none~'", arguments: arguments(1)),
                                             sortDescriptors: [SortKey("n")])
                let expected = try contexts[1].fetch(reference).map { $0["n"] }
                #expect(try contexts[0].fetch(request).map { $0["n"] } == expected, "\(format) \(a) \(b)")
                #expect(try contexts[0].count(for: request) == expected.count, "count \(format) \(a) \(b)")
                checked += expected.isEmpty ? 0 : 1
                // As saved, from contexts that hold none of the items (the index alone lists rows).
                let savedBinary = ManagedObjectContext(coordinator: binary), savedMemory = ManagedObjectContext(coordinator: memory)
                let saved = try savedMemory.fetch(reference).map { $0["n"] }
                #expect(try savedBinary.fetch(request).map { $0["n"] } == saved, "saved \(format) \(a) \(b)")
                #expect(try ManagedObjectContext(coordinator: binary).count(for: request) == saved.count, "saved count \(format) \(a) \(b)")
            }
        }
        #expect(checked > 100)
        // As saved, from a store opened anew, against the in-memory store as saved.
        for name in names.prefix(12) {
            let request = FetchRequest(entityName: "Item", predicate: try ObjectPredicate(format: "place == %@", uri(0, name)), sortDescriptors: [SortKey("n")])
            let reference = FetchRequest(entityName: "Item", predicate: try ObjectPredicate(format: "place == %@ OR place.name == '~none~'", uri(1, name)),
                                         sortDescriptors: [SortKey("n")])
            let reopened = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: Self.model, storeURL: url))
            let saved = ManagedObjectContext(coordinator: memory)
            #expect(try reopened.fetch(request).map { $0["n"] } == saved.fetch(reference).map { $0["n"] }, "saved \(name)")
        }
        #expect(try binary.checkIntegrity().problems.isEmpty)
    }
}

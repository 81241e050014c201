import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

/// The registry's table of objects by ID (open addressing, entries shifted back on
/// removal): after any sequence of insertions, replacements, removals and sweeps it must
/// find exactly what a dictionary of the same operations finds, and stay well formed (an
/// empty slot marked by a zero hash, no entry cut off from its home).
@Suite struct ObjectTableTests {
    @Test func theTableAgreesWithADictionaryThroughInsertsRemovalsAndSweeps() throws {
        let entity = try #require(TestModel.model.entity(named: "Tag"))
        let scopes = ["Tag", "Task"].map { ObjectID.Scope.of(entityName: $0, storeIdentifier: "table-test") }
        var state: UInt64 = 7
        func random(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        // Keys from a small range, so the same IDs come and go and probe runs collide and
        // wrap around the table's end.
        func id() -> ObjectID {
            random(10) == 0 ? ObjectID(scopes[random(2)], key: .temporary(UInt64(random(3_000))))
                : ObjectID(scopes[random(2)], key: .permanent(Int64(random(3_000))))
        }
        var table = ObjectTable()
        // The dictionary holds identities only: the table must be the objects' one holder
        // besides `held`, or a sweep could drop nothing.
        var reference: [ObjectID: ObjectIdentifier] = [:]
        var held: [ManagedObject] = []  // referenced outside the table: a sweep keeps them
        var inserted: [ObjectID] = []  // every ID put in, for removals of IDs that were there
        for step in 0..<60_000 {
            switch random(100) {
            case 0..<55:
                let object = ManagedObject(entity: entity, objectID: id())
                table[object.objectID] = object
                reference[object.objectID] = ObjectIdentifier(object)
                inserted.append(object.objectID)
                if random(3) == 0 { held.append(object) }
            case 55..<85:
                // An ID put in before (perhaps removed or swept since), or any ID: the same
                // choices every run (picking among the dictionary's keys followed its
                // per-process order).
                let gone = random(2) == 0 && !inserted.isEmpty ? inserted[random(inserted.count)] : id()
                table[gone] = nil
                reference[gone] = nil
            case 85..<99:
                let probe = id()
                #expect(table[probe].map(ObjectIdentifier.init) == reference[probe], "step \(step)")
            default:
                if random(4) == 0 { held.removeFirst(held.count / 2) }
                table.removeUniquelyReferenced()
                let kept = Set(held.map(ObjectIdentifier.init))
                reference = reference.filter { kept.contains($0.value) }
            }
            #expect(table.count == reference.count, "step \(step)")
            if step % 97 == 0 {
                let wellFormed = table.isWellFormed  // bound first: a failure then names the step, not the whole table
                #expect(wellFormed, "step \(step)")
            }
        }
        let wellFormed = table.isWellFormed
        #expect(wellFormed)
        for (id, object) in reference { #expect(table[id].map(ObjectIdentifier.init) == object) }
        #expect(Set(table.map(ObjectIdentifier.init)) == Set(reference.values))
        for scope in scopes {
            let keys = Set(reference.keys.filter { $0.scope === scope }.compactMap(\.primaryKey))
            #expect(table.permanentKeys(in: scope) == keys)
            #expect(table.permanentCount(in: scope) == keys.count)
        }
        #expect(reference.count > 100)
    }
}

import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage

/// Object IDs key every table of a context (the registry, change sets, mappings): equal IDs
/// must find each other, different ones must stay apart, in sets and dictionaries alike.
@Suite struct ObjectIDTests {
    @Test func idsAreEqualAndHashedByKeyAndScope() {
        let scopes = [("Task", "store-a"), ("Task", "store-b"), ("Location", "store-a")]
        var ids: [ObjectID] = []
        for (entity, store) in scopes {
            for key in [Int64.min, -1, 0, 1, 2, 1 << 32, Int64.max] + (3..<3_000).map(Int64.init) {
                ids.append(ObjectID(entityName: entity, storeIdentifier: store, key: .permanent(key)))
            }
            for _ in 0..<500 { ids.append(ObjectID(entityName: entity, storeIdentifier: store, key: .temporary(TemporaryID.next()))) }
        }
        let set = Set(ids)
        #expect(set.count == ids.count, "every ID distinct")
        var byID: [ObjectID: Int] = [:]
        for (n, id) in ids.enumerated() { byID[id] = n }
        #expect(byID.count == ids.count)
        for (n, id) in ids.enumerated() {
            // An equal ID made anew (its scope found again) finds the same entry.
            let again = ObjectID(entityName: id.entityName, storeIdentifier: id.storeIdentifier, key: id.key)
            #expect(again == id && again.hashValue == id.hashValue)
            #expect(byID[again] == n && set.contains(again))
        }
        // The same key in another scope is another ID.
        let a = ObjectID(entityName: "Task", storeIdentifier: "store-a", key: .permanent(7))
        let b = ObjectID(entityName: "Task", storeIdentifier: "store-b", key: .permanent(7))
        #expect(a != b && !Set([a]).contains(b))
    }
}

import Foundation
import ObjectStoreModel

/// A uniqueness constraint's values (as the constraint compares them) as a dictionary key:
/// a constraint of one attribute keys by the value alone, without an array. One key type for
/// every table of such values (each other type a process hashes first costs the Swift
/// runtime a scan of the binary's conformance records).
package enum UniqueKey: Hashable {
    case one(SlotValue)
    case many([SlotValue])

    package init(_ values: [SlotValue]) {
        self = values.count == 1 ? .one(values[0]) : .many(values)
    }

    package var values: [SlotValue] {
        switch self {
        case .one(let value): return [value]
        case .many(let values): return values
        }
    }
}

/// Uniqueness constraints checked by a store while it holds its lock, so two writers can
/// never both add the same value: the changed rows against the saved ones.
package struct UniquenessCheck {
    let model: ManagedObjectModel

    package init(model: ManagedObjectModel) { self.model = model }

    /// The saved objects (of the owner entity or its sub-entities) whose values of the
    /// owner's `constraint`-th uniqueness constraint, as the constraint compares them, are
    /// `key`. They may include objects the save changes or deletes; the check skips those.
    typealias Holders = (_ owner: EntityDescription, _ constraint: Int, _ key: [SlotValue]) throws -> [ObjectID]

    /// - Parameters:
    ///   - saved: the saved values of some slots of one object, to skip updates that leave
    ///     constrained values as they were (so an edit costs the size of the edit).
    ///   - holders: who holds a value already; a store with an index looks it up, others
    ///     use ``scanning(_:)``.
    func failures(_ changes: StoreChanges, saved: (ObjectID, [Int]) throws -> [SlotValue]?, holders: Holders) throws -> [ValidationFailure] {
        // A migration step's batch, checked by the step over its whole new file.
        guard !changes.uniquenessChecked else { return [] }
        var rows = changes.inserted
        // Per entity, its constrained slots (its description looked up by name once).
        var constrainedSlots: [ObjectIdentifier: [Int]] = [:]
        for (row, _) in changes.updated where !changes.constrainedValuesKept.contains(row.objectID) {
            let scope = ObjectIdentifier(row.objectID.scope)
            let slots: [Int]
            if let known = constrainedSlots[scope] {
                slots = known
            } else {
                guard let entity = model.entity(named: row.objectID.entityName) else { continue }
                slots = entity.constrainedSlots
                constrainedSlots[scope] = slots
            }
            guard !slots.isEmpty else { continue }
            if let before = try saved(row.objectID, slots), before == row.values(at: slots) { continue }
            rows.append(row)
        }
        guard !rows.isEmpty else { return [] }
        return try failures(of: rows, changing: { Set(rows.map(\.objectID)).union(changes.deleted.map(\.id)) }, holders: holders)
    }

    /// The uniqueness failures of `rows` (each with at least its constrained slots), against each other and against the holders of their values.
    /// `changing` gives every row the commit writes or deletes (a holder among them does not
    /// count); it is asked only when some holder is found (an import into a store that does
    /// not yet hold its values never needs it).
    func failures(of rows: some Sequence<StoredRow>, changing: () throws -> Set<ObjectID>, holders: Holders) throws -> [ValidationFailure] {
        var changedIDs: Set<ObjectID>?
        func isChanged(_ id: ObjectID) throws -> Bool {
            if changedIDs == nil { changedIDs = try changing() }
            return changedIDs?.contains(id) ?? false
        }
        var failures: [ValidationFailure] = []
        // Values the changed rows take, per owner and constraint (a bucket each, shared by
        // the owner's sub-entities): two of them may clash too. A constraint of one
        // attribute (a UUID, a name) keys its bucket by the value itself, so a row costs no
        // array of its values.
        var taken: [[UniqueKey: ObjectID]] = []
        var buckets: [String: Int] = [:]
        // What to check for rows of each entity, worked out once per entity, not per row.
        var plans: [ObjectIdentifier: [Constrained]] = [:]
        func fail(_ row: StoredRow, _ item: Constrained, _ key: [SlotValue], _ other: ObjectID) {
            failures.append(ValidationFailure(
                objectID: row.objectID, entityName: row.objectID.entityName, key: item.constraint.joined(separator: ","),
                value: key.count == 1 ? key[0].value : nil, rule: .unique, message: item.clash(key, with: other)))
        }
        for row in rows {
            let scope = ObjectIdentifier(row.objectID.scope)
            let plan: [Constrained]
            if let known = plans[scope] {
                plan = known
            } else {
                plan = constrained(row.objectID.entityName, buckets: &buckets)
                while taken.count < buckets.count { taken.append([:]) }
                plans[scope] = plan
            }
            for item in plan {
                if item.slots.count == 1 {
                    let slot = item.slots[0]
                    guard slot < row.slots.count else { continue }
                    let value = row.slots[slot]
                    guard value != .value(.null) else { continue }
                    var comparable = value
                    if let fold = item.folding[0], case .value(let plain) = value { comparable = .value(fold.uniquenessValue(plain)) }
                    if let other = try taken[item.bucket][.one(comparable)] ?? holders(item.owner, item.number, [comparable]).first(where: { try !isChanged($0) }) {
                        fail(row, item, [value], other)
                    }
                    taken[item.bucket][.one(comparable)] = row.objectID
                    continue
                }
                guard let key = item.key(of: row.slots) else { continue }
                let comparable = item.comparable(key)
                if let other = try taken[item.bucket][.many(comparable)] ?? holders(item.owner, item.number, comparable).first(where: { try !isChanged($0) }) {
                    fail(row, item, key, other)
                }
                taken[item.bucket][.many(comparable)] = row.objectID
            }
        }
        return failures
    }

    /// One uniqueness constraint a row of some entity must keep: the owner (the entity or
    /// an ancestor), the constraint's number and names, its slots (the owner's slots are the
    /// row's: a sub-entity's layout extends its parent's) and which of them fold case.
    package struct Constrained {
        let owner: EntityDescription
        let number: Int
        package let constraint: [String]
        let slots: [Int]
        /// Per slot, the attribute whose comparison folds its values, if it does.
        let folding: [AttributeDescription?]
        /// Where the values changed rows take for it are collected.
        package let bucket: Int

        /// The values as the constraint compares them.
        package func comparable(_ key: [SlotValue]) -> [SlotValue] { UniquenessCheck.comparable(key, folding: folding) }

        /// The constrained values of a row, nil when one is nil (the constraint does not
        /// apply) or the row is too short.
        package func key(of slots: [SlotValue]) -> [SlotValue]? {
            guard self.slots.allSatisfy({ $0 < slots.count }) else { return nil }
            let key = self.slots.map { slots[$0] }
            return key.contains(.value(.null)) ? nil : key
        }

        /// What a failure says when `other` holds these values already.
        package func clash(_ key: [SlotValue], with other: ObjectID) -> String {
            let description = zip(constraint, key).map { "\($0.0) = \($0.1.value)" }.joined(separator: ", ")
            return "another \(owner.name) already has \(description) (\(other))"
        }
    }

    /// The constraints rows of an entity keep, each with its owner's bucket (numbered in
    /// `buckets`, by owner and constraint, as they are first met).
    package func constrained(_ entityName: String, buckets: inout [String: Int]) -> [Constrained] {
        guard let entity = model.entity(named: entityName) else { return [] }
        var result: [Constrained] = []
        for ownerName in [entity.name] + entity.ancestorNames {
            guard let owner = model.entity(named: ownerName) else { continue }
            for (number, constraint) in owner.uniquenessConstraints.enumerated() {
                let slots = constraint.compactMap { owner.slot(of: $0) }
                guard slots.count == constraint.count else { continue }
                let folding = Self.folding(constraint, in: owner)
                let name = "\(ownerName)#\(number)"
                let bucket = buckets[name] ?? buckets.count
                buckets[name] = bucket
                result.append(Constrained(owner: owner, number: number, constraint: constraint, slots: slots, folding: folding, bucket: bucket))
            }
        }
        return result
    }

    /// Holders found by reading the constrained slots of every saved object, once per
    /// constraint and check. `existing` gives those slots for every saved object of exactly
    /// one entity.
    func scanning(_ existing: @escaping (String, [Int]) throws -> [(ObjectID, [SlotValue])]) -> Holders {
        final class Cache { var values: [String: [UniqueKey: [ObjectID]]] = [:] }
        let cache = Cache()
        let model = self.model
        return { owner, number, key in
            let bucket = "\(owner.name)#\(number)"
            if let table = cache.values[bucket] { return table[UniqueKey(key)] ?? [] }
            let constraint = owner.uniquenessConstraints[number]
            let slots = constraint.compactMap { owner.slot(of: $0) }
            let folding = Self.folding(constraint, in: owner)
            var table: [UniqueKey: [ObjectID]] = [:]
            for kind in model.entityAndDescendants(of: owner.name) {
                for (id, values) in try existing(kind.name, slots) where values.count == constraint.count && !values.contains(.value(.null)) {
                    table[UniqueKey(Self.comparable(values, folding: folding)), default: []].append(id)
                }
            }
            cache.values[bucket] = table
            return table[UniqueKey(key)] ?? []
        }
    }

    /// The values of a constraint as it compares them: case-insensitive attributes folded.
    package static func comparable(_ key: [SlotValue], constraint: [String], in entity: EntityDescription) -> [SlotValue] {
        comparable(key, folding: folding(constraint, in: entity))
    }

    /// Per attribute of a constraint, the attribute when its comparison folds case, else nil.
    package static func folding(_ constraint: [String], in entity: EntityDescription) -> [AttributeDescription?] {
        constraint.map { name in entity.attribute(named: name).flatMap { $0.isCaseInsensitive ? $0 : nil } }
    }

    /// The values as a constraint with this `folding` compares them.
    package static func comparable(_ key: [SlotValue], folding: [AttributeDescription?]) -> [SlotValue] {
        guard folding.contains(where: { $0 != nil }) else { return key }
        return zip(key, folding).map { slot, attribute in
            guard let attribute, case .value(let value) = slot else { return slot }
            return .value(attribute.uniquenessValue(value))
        }
    }

    /// The check for a store that keeps its rows in a dictionary.
    func failures(_ changes: StoreChanges, rows: [ObjectID: StoredRow]) throws -> [ValidationFailure] {
        try failures(changes, saved: { id, slots in rows[id]?.values(at: slots) }, holders: scanning { entity, slots in
            rows.values.filter { $0.objectID.entityName == entity }.map { ($0.objectID, $0.values(at: slots)) }
        })
    }
}

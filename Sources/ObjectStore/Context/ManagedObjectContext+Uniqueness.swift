import Foundation
import ObjectStoreModel
import ObjectStoreStorage

extension ManagedObjectContext {
    /// Under every merge policy but ``MergePolicy/error``, an inserted object whose
    /// uniqueness-constrained values another object of the same entity already has (saved,
    /// or inserted earlier in this context) is merged into that object instead of failing
    /// the save, as Core Data resolves constraint conflicts: an import can insert what it
    /// reads and save, and existing objects are updated ("upsert").
    ///
    /// The surviving object is the existing one, with its ID. Relationships are merged: the
    /// inserted object's to-many edges move to it, and its to-one targets fill the
    /// survivor's (replace them, when memory wins). Attributes follow the policy: with
    /// ``MergePolicy/memoryWins`` the inserted object's values replace the survivor's; with
    /// ``MergePolicy/mergeByPropertyMemoryWins`` only its values that differ from the model
    /// default do (a default is taken as "not set"); the store-wins policies keep the
    /// survivor's. The inserted object is then discarded. Objects of different entities that
    /// share a value (a sub-entity's) are not merged: the save fails as under `error`.
    func resolveUniquenessConflicts() throws {
        guard mergePolicy != .error else { return }
        let inserted = insertedObjects(ofEntities: constrainedEntityNames)
        guard !inserted.isEmpty else { return }
        var merged = Set<ObjectIdentifier>()
        for owner in Set(inserted.flatMap { [$0.entity.name] + $0.entity.ancestorNames }).sorted() {
            guard let ownerEntity = model.entity(named: owner), !ownerEntity.uniquenessConstraints.isEmpty else { continue }
            let members = inserted.filter { $0.entity.isKind(of: owner) && !merged.contains(ObjectIdentifier($0)) }
            guard !members.isEmpty else { continue }
            for constraint in ownerEntity.uniquenessConstraints {
                let slots = constraint.compactMap { ownerEntity.slot(of: $0) }
                guard slots.count == constraint.count else { continue }
                // The values as the constraint compares them, keyed without an array per
                // object for a constraint of one attribute (an import's UUIDs).
                let folding = UniquenessCheck.folding(constraint, in: ownerEntity)
                func key(_ value: (Int) -> SlotValue) -> UniqueKey? {
                    if slots.count == 1 {
                        let single = value(slots[0])
                        guard single != .value(.null) else { return nil }
                        guard let fold = folding[0], case .value(let plain) = single else { return .one(single) }
                        return .one(.value(fold.uniquenessValue(plain)))
                    }
                    let values = slots.map(value)
                    return values.contains(.value(.null)) ? nil : .many(UniquenessCheck.comparable(values, folding: folding))
                }
                // Who holds each value now: this context's saved objects as it has edited
                // them, then inserted objects in the order they were inserted. Saved rows
                // are read whole for a large save (an import); a small one asks the store
                // for each value (an index lookup in a binary store).
                var holders: [UniqueKey: ObjectID] = [:]
                let bulk = members.count > 1_000 || parent != nil
                if bulk {
                    holders.reserveCapacity(members.count)
                    for kind in model.entityAndDescendants(of: owner) {
                        for (id, values) in try savedConstrainedValues(ofEntity: kind.name, slots: slots) where !deletedSet.contains(id) {
                            if let key = key({ slot in values[slots.firstIndex(of: slot) ?? 0] }) { holders[key] = id }
                        }
                    }
                } else {
                    for object in registered.values where object.entity.isKind(of: owner) && !object.faultState && !object.insertedState && !object.deletedState {
                        if let key = key({ object.slots[$0] }) { holders[key] = object.objectID }
                    }
                }
                for object in members where !merged.contains(ObjectIdentifier(object)) {
                    guard let key = key({ object.slots[$0] }) else { continue }
                    var holder = holders[key]
                    if holder == nil && !bulk {
                        // A saved holder, unless this context deleted it or edited the value away.
                        holder = try coordinator.store.objectIDs(matching: key.values, uniquenessConstraint: ownerEntity.uniquenessConstraints.firstIndex(of: constraint) ?? 0, of: owner)
                            .first { id in
                                guard !deletedSet.contains(id) else { return false }
                                guard let known = registered[id], !known.faultState else { return true }
                                return self.key(slots.map { known.slots[$0] }, constraint: constraint, in: ownerEntity) == key.values
                            }
                    }
                    guard let holderID = holder, holderID != object.objectID else {
                        holders[key] = object.objectID
                        continue
                    }
                    let survivor = try self.object(with: holderID)
                    guard survivor.entity.name == object.entity.name, survivor !== object else { continue }
                    try survivor.fireFault()
                    try merge(object, into: survivor)
                    delete(object)
                    merged.insert(ObjectIdentifier(object))
                }
            }
        }
        if !merged.isEmpty { processPendingChanges() }
    }

    private func key(_ values: [SlotValue], constraint: [String], in entity: EntityDescription) -> [SlotValue]? {
        values.contains(.value(.null)) ? nil : UniquenessCheck.comparable(values, constraint: constraint, in: entity)
    }

    /// The entities with a uniqueness constraint of their own or of an ancestor: only their
    /// objects are checked (an import's tasks are not, its projects are).
    static func constrainedEntityNames(in model: ManagedObjectModel) -> Set<String> {
        Set(model.entities.filter { entity in
            ([entity.name] + entity.ancestorNames).contains { !(model.entity(named: $0)?.uniquenessConstraints.isEmpty ?? true) }
        }.map(\.name))
    }

    /// The constrained slots of every saved object of exactly one entity, with this
    /// context's unsaved edits of them.
    private func savedConstrainedValues(ofEntity name: String, slots: [Int]) throws -> [(ObjectID, [SlotValue])] {
        var result: [(ObjectID, [SlotValue])] = []
        if parent == nil {
            let ascending = Array(Set(slots)).sorted()
            for (id, values) in try coordinator.store.slotValues(ofEntity: name, slots: ascending) {
                if let object = registered[id], !object.faultState {
                    result.append((id, slots.map { object.slots[$0] }))
                } else {
                    result.append((id, slots.map { slot in ascending.firstIndex(of: slot).map { values[$0] } ?? .value(.null) }))
                }
            }
        } else {
            for id in try savedObjectIDs(ofEntity: name) {
                if let object = registered[id], !object.faultState {
                    result.append((id, slots.map { object.slots[$0] }))
                } else if let snapshot = try savedSnapshot(for: id) {
                    result.append((id, slots.map { $0 < snapshot.slots.count ? snapshot.slots[$0] : .value(.null) }))
                }
            }
        }
        return result
    }

    /// Moves what `inserted` holds into `survivor` (see ``resolveUniquenessConflicts()``).
    private func merge(_ inserted: ManagedObject, into survivor: ManagedObject) throws {
        let memoryWins = mergePolicy == .memoryWins || mergePolicy == .mergeByPropertyMemoryWins
        for (index, property) in inserted.entity.properties.enumerated() {
            if let attribute = property.attribute {
                guard attribute.isStored, memoryWins, case .value(let value) = inserted.slots[index] else { continue }
                if mergePolicy == .mergeByPropertyMemoryWins && value == attribute.defaultValue { continue }
                try survivor.setValue(value, forKey: attribute.name)
            } else if let relationship = property.relationship, !relationship.isTransient {
                if relationship.isToMany {
                    for related in try inserted.objects(forKey: relationship.name) {
                        try survivor.addObject(related, toKey: relationship.name)
                    }
                } else if let target = try inserted.object(forKey: relationship.name) {
                    let current = try survivor.object(forKey: relationship.name)
                    if memoryWins || current == nil {
                        try survivor.setObject(target, forKey: relationship.name)
                    }
                }
            }
        }
    }
}

import ObjectStoreModel
import ObjectStoreStorage

/// Inverse maintenance: every relationship change is applied to both sides at once, and an
/// object displaced from a to-one side is removed from its old partner.
extension ManagedObjectContext {
    func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        guard let name = relationship.inverseName else { return nil }
        return model.entity(named: relationship.destinationEntityName)?.relationship(named: name)
    }

    /// The relationship in a slot of `entity` when it is a to-many derived from its inverse
    /// (``RelationshipDescription/isDerivedFromInverse``): nothing is kept in the slot, its
    /// objects are looked up when read.
    func derivedRelationship(_ entity: EntityDescription, _ index: Int) -> RelationshipDescription? {
        guard entity.isDerivedToMany(slot: index) else { return nil }
        return entity.properties[index].relationship
    }

    /// The objects of a to-many relationship derived from its inverse, for each of `owners`:
    /// the destination's objects whose inverse refers to the owner, as this context sees
    /// them: this context's inserted, edited and deleted objects over its parent's state (or
    /// the store's rows, in key order), each owner's list without repeats.
    func derivedMembers(of owners: Set<ObjectID>, _ relationship: RelationshipDescription) throws -> [ObjectID: [ObjectID]] {
        guard !owners.isEmpty, let inverse = inverse(of: relationship) else { return [:] }
        let kinds = model.entityAndDescendants(of: relationship.destinationEntityName)
        guard let slot = kinds.first?.slot(of: inverse.name) else { return [:] }
        var members: [ObjectID: [ObjectID]]
        if let parent {
            members = try parent.derivedMembers(of: owners, relationship)
        } else {
            members = try savedReferrers(to: owners, kinds: kinds, slot: slot, inverse: inverse)
        }
        // This context's changes: objects inserted, edited or deleted here.
        let names = Set(kinds.map(\.name))
        var changed: [ObjectID] = []
        for name in names { changed += insertedByEntity[name] ?? [] }
        changed += touched.filter { names.contains($0.entityName) }
        changed += deletedSet.filter { names.contains($0.entityName) }
        guard !changed.isEmpty else { return members }
        let changedSet = Set(changed)
        for owner in Array(members.keys) {
            members[owner]?.removeAll(where: changedSet.contains)
        }
        var seen = Set<ObjectID>()
        for id in changed where seen.insert(id).inserted && !deletedSet.contains(id) {
            guard let object = registered[id], !object.faultState, slot < object.slots.count else { continue }
            for target in object.slots[slot].referencedIDs where owners.contains(target) {
                members[target, default: []].append(id)
            }
        }
        return members
    }

    /// The saved objects of `kinds` whose `slot` (the `inverse` relationship) refers to one of
    /// `owners`, in key order per entity. From a store with encoded rows, in one read of the
    /// file, as a fetch reads them (``ScanPlanner``: a to-one inverse is looked up in a schema
    /// index on it when that finds few rows, else by its column verdicts, else every row), and
    /// of each row listed only that slot is decoded.
    private func savedReferrers(to owners: Set<ObjectID>, kinds: [EntityDescription], slot: Int, inverse: RelationshipDescription) throws -> [ObjectID: [ObjectID]] {
        var members: [ObjectID: [ObjectID]] = [:]
        let store = coordinator.store
        guard store.hasEncodedRows else {
            for kind in kinds {
                for (id, values) in try store.slotValues(ofEntity: kind.name, slots: [slot]) {
                    for target in values[0].referencedIDs where owners.contains(target) {
                        members[target, default: []].append(id)
                    }
                }
            }
            return members
        }
        for kind in kinds {
            let predicate: SlotPredicate? = inverse.isToMany ? nil : .reference(slot: slot, targets: owners)
            let listed = try store.readRows { reader in
                try ScanPlanner.scan(reader, entity: kind.name, predicate: predicate, alsoListing: { [] }, holdsAtMost: { _ in true }, leavingUnread: false)
            }
            guard let scan = listed, !scan.rows.isEmpty else { continue }
            let scope = ObjectID.Scope.of(entityName: kind.name, storeIdentifier: storeIdentifier)
            let blank = SlotValue.initial(for: kind.properties[slot])
            var values = kind.properties.map(SlotValue.initial(for:))
            var wanted = [Bool](repeating: false, count: kind.properties.count)
            wanted[slot] = true
            var cursor = RowScan.Cursor()
            for index in scan.rows.indices {
                if !scan.verdicts.isEmpty && scan.verdicts[index] == 2 { continue }
                values[slot] = blank
                try scan.decode(index, into: &values, wanted: wanted, cursor: &cursor)
                for target in values[slot].referencedIDs where owners.contains(target) {
                    members[target, default: []].append(ObjectID(scope, key: .permanent(scan.rows[index].key)))
                }
            }
        }
        return members
    }

    /// The IDs a relationship's slot refers to, looked up for a to-many derived from its
    /// inverse. The object's values are loaded.
    func referencedIDs(of object: ManagedObject, at index: Int) throws -> [ObjectID] {
        if let relationship = derivedRelationship(object.entity, index) {
            return try derivedMembers(of: [object.objectID], relationship)[object.objectID] ?? []
        }
        return object.slots[index].referencedIDs
    }

    /// Makes `target` a destination of `source.relationship` and `source` a destination of
    /// the inverse.
    func relate(_ source: ManagedObject, _ relationship: RelationshipDescription, _ target: ManagedObject) throws {
        let changed = try addOneSide(source, relationship, target)
        if let inverse = inverse(of: relationship) {
            // When this side changed, the other side cannot already hold it (inverses agree),
            // so a to-many inverse appends without searching: a bulk insert into one location,
            // or of many tasks with one tag, stays linear.
            try addOneSide(target, inverse, source, knownAbsent: changed)
        }
    }

    /// Makes `source` a destination of `inverse` on `target`, when the caller knows it is
    /// not one yet (`setObjects` sets its own side once, in one slot write).
    func addInverse(_ target: ManagedObject, _ inverse: RelationshipDescription, _ source: ManagedObject) throws {
        try addOneSide(target, inverse, source, knownAbsent: true)
    }

    /// Removes `target` from `source.relationship`, and `source` from the inverse.
    func unrelate(_ source: ManagedObject, _ relationship: RelationshipDescription, _ target: ManagedObject) throws {
        try removeOneSide(source, relationship, target)
        if let inverse = inverse(of: relationship), target.entity.isKind(of: relationship.destinationEntityName) {
            try removeOneSide(target, inverse, source)
        }
    }

    /// Returns whether the slot changed.
    @discardableResult
    private func addOneSide(_ object: ManagedObject, _ relationship: RelationshipDescription, _ target: ManagedObject, knownAbsent: Bool = false) throws -> Bool {
        // A side derived from its inverse changes with the inverse alone.
        if relationship.isDerivedFromInverse && relationship.isToMany { return false }
        try object.fireFault()
        guard let index = object.entity.slot(of: relationship.name) else { return false }
        if relationship.isToMany {
            // The list is looked at in its own scope: a binding of it alive across the
            // append would make the append copy it (every append, in a debug build).
            do {
                guard case .toMany(let ids) = object.slots[index] else { return false }
                if !knownAbsent && ids.contains(target.objectID) { return false }
            }
            try appendReference(object, index, target.objectID)
            return true
        } else {
            let old: ObjectID?
            if case .toOne(let id) = object.slots[index] { old = id } else { old = nil }
            guard old != target.objectID else { return false }
            // The displaced partner no longer points back at this object. A partner of another
            // entity (a damaged store's) has no such inverse: a slot of the same name there
            // is another relationship, left alone, so that the repair damages nothing.
            if let old, let inverse = inverse(of: relationship), let oldObject = try? self.object(with: old),
                oldObject.entity.isKind(of: relationship.destinationEntityName)
            {
                try removeOneSide(oldObject, inverse, object)
            }
            try setSlot(object, index, .toOne(target.objectID))
            return true
        }
    }

    /// Appends to a to-many slot in place (amortised O(1)), with change tracking and undo.
    private func appendReference(_ object: ManagedObject, _ index: Int, _ id: ObjectID) throws {
        guard case .toMany(var ids) = object.slots[index] else { return }
        if undoManager != nil {
            try setSlot(object, index, .toMany(ids + [id]))
            return
        }
        object.slots[index] = .toOne(nil)  // let go of the slot's reference so the append is in place
        ids.append(id)
        object.slots[index] = .toMany(ids)
        if !object.insertedState {
            touched.insert(object.objectID)
            registered.pin(object)
        }
        noteUpdate(of: object)
    }

    func removeOneSide(_ object: ManagedObject, _ relationship: RelationshipDescription, _ target: ManagedObject) throws {
        if relationship.isDerivedFromInverse && relationship.isToMany { return }
        do {
            try object.fireFault()
        } catch {
            return  // the other side no longer exists: nothing to remove
        }
        guard let index = object.entity.slot(of: relationship.name) else { return }
        switch object.slots[index] {
        case .toMany(let ids) where ids.contains(target.objectID):
            try setSlot(object, index, .toMany(ids.filter { $0 != target.objectID }))
        case .toOne(let id) where id == target.objectID:
            try setSlot(object, index, .toOne(nil))
        default:
            break
        }
    }
}

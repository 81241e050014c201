import ObjectStoreModel
import ObjectStoreStorage

extension ManagedObjectContext {
    /// Marks an object for deletion. Delete rules (nullify, cascade, deny, noAction) run when
    /// pending changes are processed (at the latest, at save). Deleting an object that was
    /// inserted and never saved leaves no trace.
    public func delete(_ object: ManagedObject) {
        guard object.managedObjectContext === self, !object.deletedState else { return }
        object.deletedState = true
        deletedSet.insert(object.objectID)
        registered.pin(object)
        pendingDeletes.append(object)
        pendingChanges.deleted.insert(object.objectID)
        undoManager?.record(.delete(object))
    }

    /// Runs delete rules for objects deleted since the last call, posts objects-did-change and
    /// closes the current undo group. Called by save, fetch and undo; call it yourself to see
    /// the effects of deletes at once.
    public func processPendingChanges() {
        while !pendingDeletes.isEmpty {
            let batch = pendingDeletes
            pendingDeletes.removeAll()
            var removals = InverseRemovals()
            var plans = DeletePlans()
            let derived = derivedDestinations(of: batch)
            announceRowReads(of: batch)
            for object in batch { applyDeleteRules(object, derived, &removals, &plans) }
            removals.apply(in: self)
        }
        undoManager?.closeGroup()
        if !pendingChanges.isEmpty {
            let changes = pendingChanges
            pendingChanges = ObjectChanges()
            post(.objectsDidChange(changes))
        }
    }

    /// Nullifies or cascades the deleted object's relationships. The object lets go of all
    /// its destinations at once; a destination's to-many inverse lets go of it in
    /// `removals`, which the caller applies once per destination for the whole batch (a
    /// location losing 1,000 of its 20,000 tasks filters its list once, not 1,000 times).
    private func applyDeleteRules(_ object: ManagedObject, _ derived: [RelationshipDescription: [ObjectID: [ObjectID]]], _ removals: inout InverseRemovals,
                                  _ plans: inout DeletePlans) {
        object.prepareForDeletion()
        guard (try? object.fireFault()) != nil else { return }
        for step in plans.steps(for: object.entity, in: self) {
            var targets: [ManagedObject] = []
            if step.needsTargets {
                let relationship = step.relationship
                // Targets of another entity (a damaged store's) have no such inverse.
                let ids = step.isDerived ? derived[relationship]?[object.objectID] ?? [] : object.slots[step.slot].referencedIDs
                targets = ids.compactMap { try? self.object(with: $0) }
                    .filter { $0.entity.isKind(of: relationship.destinationEntityName) }
            }
            if step.cascades { for target in targets { delete(target) } }
            if !step.isDerived { try? setSlot(object, step.slot, step.isToMany ? .toMany([]) : .toOne(nil)) }
            guard !targets.isEmpty, let inverse = step.inverse else { continue }
            for target in targets {
                if inverse.isToMany {
                    // A side derived from this one has nothing stored to remove.
                    if !inverse.isDerivedFromInverse { removals.remove(object.objectID, from: target, inverse) }
                } else {
                    try? removeOneSide(target, inverse, object)
                }
            }
        }
    }
}

/// What a deletion does to each cascading or nullifying relationship of an entity, worked out
/// once per entity and batch of deletions: looking up each relationship's slot and inverse
/// by name for every deleted object was a tenth of a bulk delete.
fileprivate struct DeletePlans {
    /// A class, so walking an entity's steps for each deleted object retains one
    /// reference per step instead of copying its relationships' descriptions.
    final class Step {
        let relationship: RelationshipDescription
        let slot: Int
        let isToMany: Bool
        let cascades: Bool
        /// A to-many derived from its inverse: its destinations are looked up for the batch.
        let isDerived: Bool
        let inverse: RelationshipDescription?
        /// Whether the destinations matter: to cascade to them, or for them to let go of
        /// the deleted object. A nullified relationship whose inverse is missing or derived
        /// (a location's tasks) leaves them as they are, so none is looked up or made.
        let needsTargets: Bool

        init(relationship: RelationshipDescription, slot: Int, isDerived: Bool, inverse: RelationshipDescription?, needsTargets: Bool) {
            self.relationship = relationship
            self.slot = slot
            self.isToMany = relationship.isToMany
            self.cascades = relationship.deleteRule == .cascade
            self.isDerived = isDerived
            self.inverse = inverse
            self.needsTargets = needsTargets
        }
    }
    private var plans: [ObjectIdentifier: [Step]] = [:]

    mutating func steps(for entity: EntityDescription, in context: ManagedObjectContext) -> [Step] {
        if let known = plans[entity.identity] { return known }
        var steps: [Step] = []
        for relationship in entity.relationships {
            let rule = relationship.deleteRule
            // deny is checked at save; noAction leaves both sides as they are
            guard rule == .cascade || rule == .nullify, let slot = entity.slot(of: relationship.name) else { continue }
            let inverse = context.inverse(of: relationship)
            let inverseKeepsNothing = inverse.map { $0.isToMany && $0.isDerivedFromInverse } ?? true
            steps.append(Step(relationship: relationship, slot: slot, isDerived: relationship.isDerivedFromInverse && relationship.isToMany,
                              inverse: inverse, needsTargets: rule == .cascade || !inverseKeepsNothing))
        }
        plans[entity.identity] = steps
        return steps
    }
}

extension ManagedObjectContext {
    /// Tells the store how many rows of each entity firing these objects' faults will read
    /// (delete rules read every deleted object), so it can read them in one go.
    func announceRowReads(of objects: some Sequence<ManagedObject>) {
        guard parent == nil, readsEncodedRows else { return }
        var counts: [ObjectIdentifier: (name: String, count: Int)] = [:]
        for object in objects where object.faultState && object.committedSlots == nil && !object.objectID.isTemporary {
            counts[object.entity.identity, default: (object.entity.name, 0)].count += 1
        }
        for (name, count) in counts.values where count > 1 { coordinator.store.willReadRows(count, ofEntity: name) }
    }

    /// The objects of the cascading or nullifying relationships derived from their inverse,
    /// of each deleted object of a batch: looked up once per relationship for the batch.
    fileprivate func derivedDestinations(of batch: [ManagedObject]) -> [RelationshipDescription: [ObjectID: [ObjectID]]] {
        var owners: [RelationshipDescription: Set<ObjectID>] = [:]
        for object in batch {
            for relationship in object.entity.relationships where relationship.isDerivedFromInverse && relationship.isToMany
                && (relationship.deleteRule == .cascade || relationship.deleteRule == .nullify) {
                owners[relationship, default: []].insert(object.objectID)
            }
        }
        var result: [RelationshipDescription: [ObjectID: [ObjectID]]] = [:]
        for (relationship, ids) in owners {
            result[relationship] = (try? derivedMembers(of: ids, relationship)) ?? [:]
        }
        return result
    }
}

/// References to remove from to-many relationships, gathered over a batch of deletions
/// and applied once per object and relationship.
struct InverseRemovals {
    private var objects: [ManagedObject] = []
    private var places: [ObjectIdentifier: Int] = [:]
    private var removed: [[String: Set<ObjectID>]] = []

    mutating func remove(_ id: ObjectID, from object: ManagedObject, _ relationship: RelationshipDescription) {
        let place: Int
        if let known = places[ObjectIdentifier(object)] {
            place = known
        } else {
            place = objects.count
            places[ObjectIdentifier(object)] = place
            objects.append(object)
            removed.append([:])
        }
        removed[place][relationship.name, default: []].insert(id)
    }

    /// Each object's lists without the removed references (one change, one undo step each),
    /// in the order the objects first came up.
    func apply(in context: ManagedObjectContext) {
        for (object, byName) in zip(objects, removed) {
            guard (try? object.fireFault()) != nil else { continue }  // gone: nothing to remove
            for (name, ids) in byName.sorted(by: { $0.key < $1.key }) {
                guard let index = object.entity.slot(of: name), case .toMany(let current) = object.slots[index] else { continue }
                let kept = current.filter { !ids.contains($0) }
                if kept.count != current.count { try? context.setSlot(object, index, .toMany(kept)) }
            }
        }
    }
}

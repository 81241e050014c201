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
            let derived = derivedDestinations(of: batch)
            for object in batch { applyDeleteRules(object, derived, &removals) }
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
    private func applyDeleteRules(_ object: ManagedObject, _ derived: [RelationshipDescription: [ObjectID: [ObjectID]]], _ removals: inout InverseRemovals) {
        object.prepareForDeletion()
        guard (try? object.fireFault()) != nil else { return }
        for relationship in object.entity.relationships {
            guard let index = object.entity.slot(of: relationship.name) else { continue }
            let rule = relationship.deleteRule
            guard rule == .cascade || rule == .nullify else { continue }  // deny is checked at save; noAction leaves both sides as they are
            // Targets of another entity (a damaged store's) have no such inverse.
            let isDerived = relationship.isDerivedFromInverse && relationship.isToMany
            let ids = isDerived ? derived[relationship]?[object.objectID] ?? [] : object.slots[index].referencedIDs
            let targets = ids.compactMap { try? self.object(with: $0) }
                .filter { $0.entity.isKind(of: relationship.destinationEntityName) }
            if rule == .cascade { for target in targets { delete(target) } }
            if !isDerived { try? setSlot(object, index, relationship.isToMany ? .toMany([]) : .toOne(nil)) }
            guard let inverse = inverse(of: relationship) else { continue }
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

extension ManagedObjectContext {
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

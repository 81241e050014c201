import ObjectStoreModel

/// Inverse maintenance: every relationship change is applied to both sides at once, and an
/// object displaced from a to-one side is removed from its old partner.
extension ManagedObjectContext {
    func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        guard let name = relationship.inverseName else { return nil }
        return model.entity(named: relationship.destinationEntityName)?.relationship(named: name)
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

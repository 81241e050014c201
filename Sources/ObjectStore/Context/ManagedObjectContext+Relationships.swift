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
        try addOneSide(source, relationship, target)
        if let inverse = inverse(of: relationship) {
            try addOneSide(target, inverse, source)
        }
    }

    /// Removes `target` from `source.relationship`, and `source` from the inverse.
    func unrelate(_ source: ManagedObject, _ relationship: RelationshipDescription, _ target: ManagedObject) throws {
        try removeOneSide(source, relationship, target)
        if let inverse = inverse(of: relationship) {
            try removeOneSide(target, inverse, source)
        }
    }

    private func addOneSide(_ object: ManagedObject, _ relationship: RelationshipDescription, _ target: ManagedObject) throws {
        try object.fireFault()
        guard let index = object.entity.slot(of: relationship.name) else { return }
        if relationship.isToMany {
            guard case .toMany(let ids) = object.slots[index], !ids.contains(target.objectID) else { return }
            try setSlot(object, index, .toMany(ids + [target.objectID]))
        } else {
            let old: ObjectID?
            if case .toOne(let id) = object.slots[index] { old = id } else { old = nil }
            guard old != target.objectID else { return }
            // The displaced partner no longer points back at this object.
            if let old, let inverse = inverse(of: relationship), let oldObject = try? self.object(with: old) {
                try removeOneSide(oldObject, inverse, object)
            }
            try setSlot(object, index, .toOne(target.objectID))
        }
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

import ObjectStoreModel

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
            for object in batch { applyDeleteRules(object) }
        }
        undoManager?.closeGroup()
        if !pendingChanges.isEmpty {
            let changes = pendingChanges
            pendingChanges = ObjectChanges()
            post(.objectsDidChange(changes))
        }
    }

    private func applyDeleteRules(_ object: ManagedObject) {
        object.prepareForDeletion()
        guard (try? object.fireFault()) != nil else { return }
        for relationship in object.entity.relationships {
            guard let index = object.entity.slot(of: relationship.name) else { continue }
            let targets = object.slots[index].referencedIDs.compactMap { try? self.object(with: $0) }
            switch relationship.deleteRule {
            case .cascade:
                for target in targets {
                    delete(target)
                    try? unrelate(object, relationship, target)
                }
            case .nullify:
                for target in targets { try? unrelate(object, relationship, target) }
            case .deny, .noAction:
                break  // deny is checked at save; noAction leaves both sides as they are
            }
        }
    }
}

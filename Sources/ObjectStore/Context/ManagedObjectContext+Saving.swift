import Foundation
import ObjectStoreModel
import ObjectStoreStorage

extension ManagedObjectContext {
    /// Saves the pending changes: processes pending changes (delete rules), calls
    /// ``ManagedObject/willSave()``, validates every changed object, then writes to the store
    /// (or, for a child context, into the parent).
    ///
    /// - Throws: `ValidationError` with every failure (nothing is written and the changes
    ///   stay in the context, ready to fix and retry); `StoreConflictError` when the merge
    ///   policy is ``MergePolicy/error`` and someone else saved the same objects; store errors.
    public func save() throws {
        processPendingChanges()
        guard hasChanges || !deletedSet.isEmpty else { return }
        post(.willSave)
        for object in insertedObjects + updatedObjects + deletedObjects { object.willSave() }
        processPendingChanges()
        var attempt = 0
        while true {
            attempt += 1
            try resolveUniquenessConflicts()
            // The changed objects, listed once for validation and the write (each list asks
            // every touched object whether it changed).
            let inserted = insertedObjects
            let updated = updatedObjects
            let failures = try validationFailures(inserted: inserted, updated: updated)
            guard failures.isEmpty else { throw ValidationError(failures: failures) }
            do {
                if let parent {
                    try push(into: parent)
                } else {
                    try writeToStore(inserted: inserted, updated: updated)
                }
                return
            } catch let error as ValidationError where mergePolicy != .error && attempt < 5 && error.failures.allSatisfy({ $0.rule == .unique }) {
                // Another process saved one of these values since they were resolved: the
                // store refused under its lock; resolve against what it has now.
                continue
            }
        }
    }

    // MARK: Root contexts

    private func writeToStore(inserted: [ManagedObject], updated: [ManagedObject]) throws {
        var updated = updated
        let deleted = deletedObjects
        let store = coordinator.store

        let mapping: [ObjectID: ObjectID] = try coordinator.withSaveLock {
            var attempt = 0
            while true {
                attempt += 1
                do {
                    let mapping = try store.save(storeChanges(inserted: inserted, updated: updated, deleted: deleted))
                    coordinator.noteOwnTransaction()
                    return mapping
                } catch let conflict as StoreConflictError {
                    // Busy stores can conflict again between resolving and retrying.
                    guard attempt < 20 else { throw conflict }
                    updated = try resolve(conflict, updated: updated)
                }
            }
        }

        remapIDs(mapping)
        var notification = SaveNotification(inserted: [], updated: [], deleted: [], contextIdentifier: identifier)
        for object in inserted {
            object.insertedState = false
            object.committedSlots = object.slots
            object.committedVersion = 1
            notification.inserted.insert(object.objectID)
        }
        for object in updated {
            object.committedSlots = object.slots
            object.committedVersion += 1
            notification.updated.insert(object.objectID)
        }
        for object in deleted {
            notification.deleted.insert(object.objectID)
        }
        finishSave(removing: deletedSet.compactMap { registered[$0] })
        for object in inserted + updated + deleted { object.didSave() }
        // didSave could still ask isDeleted; after it, a saved deletion is no longer pending.
        for object in deleted { object.deletedState = false }
        post(.didSave(notification))
        coordinator.post(notification)
    }

    /// Rows for a save: stored slots only, references to deleted objects dropped. The store
    /// replaces temporary IDs.
    private func storeChanges(inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject]) -> StoreChanges {
        // Per entity, its unstored slots with their initial values, worked out once.
        var unstored: [ObjectIdentifier: [(index: Int, initial: SlotValue)]] = [:]
        func row(_ object: ManagedObject, version: Int64) -> StoredRow {
            var slots = object.slots.values
            let entity = object.entity
            if !deletedSet.isEmpty {
                for index in slots.indices {
                    switch slots[index] {
                    case .value: break
                    case .toOne(let id):
                        if let id, deletedSet.contains(id) { slots[index] = .toOne(nil) }
                    case .toMany(let ids):
                        if ids.contains(where: deletedSet.contains) { slots[index] = .toMany(ids.filter { !deletedSet.contains($0) }) }
                    }
                }
            }
            let initials: [(index: Int, initial: SlotValue)]
            if let known = unstored[entity.identity] {
                initials = known
            } else {
                initials = entity.unstoredSlots.map { ($0, SlotValue.initial(for: entity.properties[$0])) }
                unstored[entity.identity] = initials
            }
            for (index, initial) in initials where index < slots.count {
                // Written only when it differs: a write copies the array the object shares.
                if slots[index] != initial { slots[index] = initial }
            }
            return StoredRow(objectID: object.objectID, version: version, slots: slots)
        }
        var changes = StoreChanges()
        changes.inserted = inserted.map { row($0, version: 1) }
        changes.updated = updated.map { (row($0, version: $0.committedVersion + 1), $0.committedVersion) }
        changes.deleted = deleted.map { ($0.objectID, $0.committedVersion) }
        if coordinator.store.keepsHistory {
            changes.transaction = transactionDraft(updated: updated, deleted: deleted)
        }
        // Edits that leave every constrained value as loaded (a value slot not changed);
        // the store checks the others.
        for (object, (row, _)) in zip(updated, changes.updated) {
            let slots = object.entity.constrainedSlots
            guard !slots.isEmpty else { continue }
            let kept = slots.allSatisfy { slot in
                guard slot < row.slots.count, case .value = row.slots[slot] else { return false }
                return !object.slotChanged(slot)
            }
            if kept { changes.constrainedValuesKept.insert(object.objectID) }
        }
        return changes
    }

    /// Who saves and the values as loaded of what the save changes, for the store's history
    /// (in the order of the save's updated and deleted objects).
    private func transactionDraft(updated: [ManagedObject], deleted: [ManagedObject]) -> TransactionDraft {
        var draft = TransactionDraft(author: transactionAuthor, contextName: name, timestamp: coordinator.clock())
        draft.oldRanges.reserveCapacity(updated.count)
        draft.oldSlots.reserveCapacity(updated.count)
        for object in updated {
            // Without the values as loaded, the store reads them from its row.
            guard let committed = object.committedSlots else {
                draft.oldRanges.append(nil)
                continue
            }
            let start = draft.oldSlots.count
            object.forEachChangedSlot { index, value in
                if let value { draft.oldSlots.append((index, value)) }
                return true
            }
            let entity = object.entity
            if !deletedSet.isEmpty {
                // References to deleted objects are dropped from the row the store writes.
                for (index, property) in entity.properties.enumerated() where property.relationship != nil && index < committed.count
                    && !draft.oldSlots[start...].contains(where: { $0.slot == index }) {
                    draft.oldSlots.append((index, committed[index]))
                }
            }
            // Transient and derived slots are not stored: the store compares only the others.
            let unstored = entity.unstoredSlots
            if !unstored.isEmpty {
                var kept = start
                for position in start..<draft.oldSlots.count where !unstored.contains(draft.oldSlots[position].slot) {
                    draft.oldSlots.swapAt(kept, position)
                    kept += 1
                }
                draft.oldSlots.removeSubrange(kept...)
            }
            draft.oldRanges.append(start..<draft.oldSlots.count)
        }
        for object in deleted {
            let properties = object.entity.properties
            guard let committed = object.committedSlots else {
                draft.tombstones.append(nil)
                continue
            }
            draft.tombstones.append(properties.indices.filter { $0 < committed.count && properties[$0].attribute?.preservesValueOnDeletion == true }.map { ($0, committed[$0]) })
        }
        return draft
    }

    /// Applies the merge policy to a conflict; returns the updated objects to write.
    private func resolve(_ conflict: StoreConflictError, updated: [ManagedObject]) throws -> [ManagedObject] {
        var result = updated
        var detailed: [StoreConflictError.Conflict] = []
        var deletedElsewhere = Set<ObjectID>()
        for item in conflict.conflicts {
            guard let object = registered[item.objectID] else { continue }
            let row = try coordinator.store.row(for: item.objectID)
            var conflictKeys: [String] = []
            if let row, let committed = object.committedSlots {
                conflictKeys = object.entity.properties.indices.filter { $0 < row.slots.count && $0 < committed.count && row.slots[$0] != committed[$0] }
                    .map { object.entity.properties[$0].name }
            }
            detailed.append(.init(objectID: item.objectID, expectedVersion: item.expectedVersion, storedVersion: item.storedVersion, keys: conflictKeys))
            guard mergePolicy != .error else { continue }
            guard let row else {
                // Deleted by someone else: there is nothing left to update, nor to point at.
                result.removeAll { $0 === object }
                deletedElsewhere.insert(object.objectID)
                continue
            }
            let mine = object.changedSlotIndices
            let theirs = Set(conflictKeys.compactMap { object.entity.slot(of: $0) })
            let base = object.committedSlots ?? Slots(row.slots)
            switch mergePolicy {
            case .error:
                break
            case .storeWins:
                object.slots = Slots(row.slots)
                result.removeAll { $0 === object }
            case .memoryWins:
                // To-many lists merge edge by edge even here: each edge is the other half of
                // a to-one that some save set, so a whole list would break inverses.
                for index in mine where theirs.contains(index) && row.slots.indices.contains(index) {
                    if let edges = Self.mergeEdges(base: base[index], mine: object.slots[index], theirs: row.slots[index]) { object.slots[index] = edges }
                }
            case .mergeByPropertyMemoryWins:
                var merged = row.slots
                for index in mine { merged[index] = Self.mergeEdges(base: base[index], mine: object.slots[index], theirs: row.slots[index]) ?? object.slots[index] }
                object.slots = Slots(merged)
            case .mergeByPropertyStoreWins:
                var merged = object.slots
                for index in theirs { merged[index] = Self.mergeEdges(base: base[index], mine: object.slots[index], theirs: row.slots[index]) ?? row.slots[index] }
                object.slots = merged
            }
            object.committedSlots = Slots(row.slots)
            object.committedVersion = row.version
        }
        if mergePolicy == .error { throw StoreConflictError(conflicts: detailed) }
        if !deletedElsewhere.isEmpty {
            // This save's other objects may have gained edges to them (a task moved to a
            // location while another process deleted the task): those edges go too.
            for object in result + insertedObjects {
                for (index, slot) in object.slots.enumerated() {
                    switch slot {
                    case .toOne(let id?) where deletedElsewhere.contains(id): object.slots[index] = .toOne(nil)
                    case .toMany(let ids) where ids.contains(where: deletedElsewhere.contains): object.slots[index] = .toMany(ids.filter { !deletedElsewhere.contains($0) })
                    default: break
                    }
                }
            }
        }
        return result
    }

    /// A to-many list changed on both sides, merged per edge: the other save's list, less
    /// the objects this context removed, plus the ones it added (in its order). Two
    /// processes adding tasks to one location both keep theirs. `nil` for other slots.
    static func mergeEdges(base: SlotValue, mine: SlotValue, theirs: SlotValue) -> SlotValue? {
        guard case .toMany(let mineIDs) = mine, case .toMany(let theirIDs) = theirs else { return nil }
        let baseIDs: [ObjectID]
        if case .toMany(let ids) = base { baseIDs = ids } else { baseIDs = [] }
        let before = Set(baseIDs), after = Set(mineIDs)
        let removed = before.subtracting(after)
        var merged = theirIDs.filter { !removed.contains($0) }
        var present = Set(merged)
        for id in mineIDs where !before.contains(id) && present.insert(id).inserted { merged.append(id) }
        return .toMany(merged)
    }

    /// Clears the change state after a save.
    private func finishSave(removing deleted: [ManagedObject]) {
        for object in deleted {
            registered[object.objectID] = nil
            object.managedObjectContext = nil
        }
        insertedOrder.removeAll()
        deletedSet.removeAll()
        touched.removeAll()
        pendingChanges = ObjectChanges()
        registered.unpinClean()
    }

    // MARK: Child contexts

    /// Pushes this child's changes into its parent as the parent's own unsaved changes.
    private func push(into parent: ManagedObjectContext) throws {
        let inserted = insertedObjects
        let updated = updatedObjects
        let deleted = deletedObjects
        var notification = SaveNotification(inserted: [], updated: [], deleted: [], contextIdentifier: identifier)
        parent.undoManager?.beginGrouping()
        defer { parent.undoManager?.endGrouping() }
        for object in inserted {
            let copy = coordinator.objectClass(for: object.entity).init(entity: object.entity, objectID: object.objectID)
            copy.managedObjectContext = parent
            copy.slots = Slots(object.entity.properties.map(SlotValue.initial(for:)))
            copy.insertedState = true
            parent.registerInsert(copy)
            notification.inserted.insert(object.objectID)
        }
        for object in inserted + updated {
            let target = try parent.object(with: object.objectID)
            for index in object.entity.properties.indices where target.slots.isEmpty || target.slots[index] != object.slots[index] {
                try parent.setSlot(target, index, object.slots[index])
            }
            if !object.insertedState { notification.updated.insert(object.objectID) }
        }
        for object in deleted {
            if let target = parent.registered[object.objectID] ?? (try? parent.existingObject(with: object.objectID)) {
                // Delete rules already ran here; their effects arrive as slot changes above.
                target.deletedState = true
                parent.deletedSet.insert(target.objectID)
                parent.pendingChanges.deleted.insert(target.objectID)
                parent.undoManager?.record(.delete(target))
            }
            notification.deleted.insert(object.objectID)
        }
        for object in inserted + updated {
            object.insertedState = false
            object.committedSlots = object.slots
        }
        let pushedDeletions = deletedSet.compactMap { registered[$0] }
        finishSave(removing: pushedDeletions)
        for object in pushedDeletions { object.deletedState = false }
        parent.processPendingChanges()
        post(.didSave(notification))
    }

    // MARK: Discarding and reloading

    /// Discards every unsaved change: inserted objects leave the context, deleted ones come
    /// back, updated ones return to their saved values.
    public func rollback() {
        pendingDeletes.removeAll()
        var changes = ObjectChanges()
        for object in registered.values {
            if object.insertedState {
                registered[object.objectID] = nil
                object.managedObjectContext = nil
                continue
            }
            if object.deletedState || object.hasChangedSlots {
                object.deletedState = false
                if let committed = object.committedSlots { object.slots = committed }
                object.fetchedPropertyCache.removeAll()
                changes.refreshed.insert(object.objectID)
            }
        }
        insertedOrder.removeAll()
        deletedSet.removeAll()
        touched.removeAll()
        pendingChanges = ObjectChanges()
        undoManager?.removeAll()
        registered.unpinClean()
        if !changes.isEmpty { post(.objectsDidChange(changes)) }
    }

    /// Lets go of every clean object nobody else references, including the up to 1,024
    /// recently loaded ones the context keeps so that objects read over and over (a location
    /// of many tasks) load once. Objects with unsaved changes stay.
    public func releaseCleanObjects() {
        registered.forgetRecent()
        registered.unpinClean()
    }

    /// Forgets every object: the context is as new. Objects obtained before must not be used.
    public func reset() {
        faultBatches.removeAll()
        for object in registered.values { object.managedObjectContext = nil }
        registered.removeAll()
        insertedOrder.removeAll()
        deletedSet.removeAll()
        touched.removeAll()
        pendingDeletes.removeAll()
        pendingChanges = ObjectChanges()
        undoManager?.removeAll()
    }

    /// Reloads an object's saved values. With `mergeChanges: false` unsaved changes are
    /// dropped and the object becomes a fault again (its memory is freed until next access);
    /// with `true` its unsaved changes are re-applied on top of the latest saved values.
    /// Saves of other openings of the store file (other processes) are read first.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        guard object.managedObjectContext === self, !object.insertedState else { return }
        // A file that cannot be read now leaves the object's next load to report it.
        if parent == nil { try? coordinator.store.catchUp() }
        refreshCaughtUp(object, mergeChanges: mergeChanges)
    }

    /// ``refresh(_:mergeChanges:)`` of many objects, the store caught up once (per object it
    /// was most of the time of a streamed export that turned each batch back into faults).
    package func refresh(_ objects: some Sequence<ManagedObject>, mergeChanges: Bool) {
        if parent == nil { try? coordinator.store.catchUp() }
        for object in objects where object.managedObjectContext === self && !object.insertedState {
            refreshCaughtUp(object, mergeChanges: mergeChanges)
        }
    }

    /// Refreshes every registered object (Core Data's `refreshAllObjects()`): one with unsaved
    /// changes reloads its saved values and keeps its changes on top; one without becomes a
    /// fault again, its memory freed until next access, so it reads the latest saved values
    /// then. Inserted objects stay as they are.
    ///
    /// ```swift
    /// try context.execute(BatchUpdateRequest(entityName: "Task", propertiesToUpdate: ["priority": .integer(0)]))
    /// context.refreshAllObjects()   // not needed after a batch request of this context; after another process's save, it is
    /// ```
    public func refreshAllObjects() {
        let objects = registered.values.filter { !$0.insertedState }
        if parent == nil { try? coordinator.store.catchUp() }
        for object in objects where object.managedObjectContext === self {
            refreshCaughtUp(object, mergeChanges: object.hasChangedSlots || object.deletedState)
        }
        processPendingChanges()
    }

    private func refreshCaughtUp(_ object: ManagedObject, mergeChanges: Bool) {
        object.fetchedPropertyCache.removeAll()
        object.prefetched.removeAll()
        if mergeChanges && !object.faultState {
            let mine = object.changedSlotIndices
            let local = object.slots
            guard let snapshot = try? savedSnapshot(for: object.objectID) else { return }
            object.slots = snapshot.slots
            for index in mine { object.slots[index] = local[index] }
            object.committedSlots = snapshot.slots
            object.committedVersion = snapshot.version
        } else {
            object.slots = []
            object.committedSlots = nil
            object.faultState = true
            touched.remove(object.objectID)
        }
        pendingChanges.refreshed.insert(object.objectID)
    }

    /// Whether the saves of the coordinator's other contexts are merged into this one on their
    /// own (Core Data's switch of the same name): each on the main queue, after the save,
    /// for a context used on the main thread or the main actor (a view context). Another
    /// thread's context names its queue with ``automaticallyMergeChanges(on:)``.
    ///
    /// ```swift
    /// container.viewContext.automaticallyMergesChangesFromParent = true
    /// try await container.performBackgroundTask { context in ...; try context.save() }
    /// // the view context's objects now show what the background context saved
    /// ```
    public var automaticallyMergesChangesFromParent: Bool {
        get { automaticMerge != nil }
        set {
            if newValue {
                if automaticMerge == nil { automaticallyMergeChanges(on: .main) }
            } else {
                automaticMerge?.cancel()
                automaticMerge = nil
                remoteMerge?.cancel()
                remoteMerge = nil
            }
        }
    }

    /// Merges every save of the coordinator's other contexts into this one
    /// (``mergeChanges(from:)``), each run on `queue`, which must be the queue this context
    /// is used on (the main queue for the main thread and the main actor). A save is merged
    /// after it has committed, in the order of the saves; this context's own saves are not
    /// merged. Saves of other processes are not seen (read them with `refresh`).
    public func automaticallyMergeChanges(on queue: DispatchQueue) {
        automaticMerge?.cancel()
        remoteMerge?.cancel()
        let target = MergeTarget(self)
        automaticMerge = coordinator.addSaveObserver { notification in
            queue.async { target.context?.mergeChanges(from: notification) }
        }
        // Other processes' saves, when the store's history records them.
        if coordinator.keepsHistory {
            remoteMerge = try? coordinator.addRemoteChangeObserver { change in
                queue.async { target.context?.mergeChanges(fromHistory: change.transactions) }
            }
        }
    }

    /// Brings transactions of the store's history into this one (other processes' saves,
    /// from `fetchHistory(after:authors:entities:)` or a
    /// ``RemoteChange``), as ``mergeChanges(from:)`` brings a save: deleted objects leave,
    /// updated ones are refreshed (keeping this context's unsaved changes on top), inserted
    /// ones become visible to fetches.
    public func mergeChanges(fromHistory transactions: [HistoryTransaction]) {
        guard !transactions.isEmpty else { return }
        try? coordinator.store.catchUp()
        var merged = SaveNotification(inserted: [], updated: [], deleted: [], contextIdentifier: UUID())
        for transaction in transactions {
            let notification = transaction.saveNotification
            merged.inserted.formUnion(notification.inserted)
            merged.updated.formUnion(notification.updated)
            merged.deleted.formUnion(notification.deleted)
        }
        // An object inserted then deleted is gone; one updated then deleted too.
        merged.inserted.subtract(merged.deleted)
        merged.updated.subtract(merged.deleted)
        mergeChanges(from: merged)
    }

    /// Brings another context's save into this one: deleted objects leave, updated ones are
    /// refreshed (keeping this context's own unsaved changes on top), inserted ones become
    /// visible to fetches.
    public func mergeChanges(from notification: SaveNotification) {
        guard notification.contextIdentifier != identifier else { return }
        var changes = ObjectChanges()
        for id in notification.deleted {
            guard let object = registered[id] else { continue }
            registered[id] = nil
            object.managedObjectContext = nil
            touched.remove(id)
            deletedSet.remove(id)
            changes.deleted.insert(id)
        }
        for id in notification.updated {
            guard let object = registered[id] else { continue }
            refresh(object, mergeChanges: true)
            changes.refreshed.insert(id)
        }
        changes.inserted = notification.inserted
        pendingChanges.refreshed.subtract(changes.refreshed)
        post(.objectsDidChange(changes))
    }
}

/// The context an automatic merge goes to, handed to the coordinator's save observer (which
/// runs on the saving thread). It is only dereferenced on the queue the context's owner
/// named, the queue the context is used on: the one promise made by hand here.
private final class MergeTarget: @unchecked Sendable {
    weak var context: ManagedObjectContext?

    init(_ context: ManagedObjectContext) {
        self.context = context
    }
}

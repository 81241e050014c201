import Foundation
import ObjectStoreModel

/// The saved state of one object: its permanent ID, a version that grows with every saved
/// change, and its slots in the entity's layout.
package struct StoredRow: Sendable, Hashable {
    /// The object's permanent ID.
    package var objectID: ObjectID
    /// Incremented by each save that changes the row; used for optimistic locking.
    package var version: Int64
    /// One entry per property of the entity, in slot order. Transient and derived slots hold
    /// their initial values; stores do not write them.
    package var slots: [SlotValue]

    /// A row of an object at a version.
    package init(objectID: ObjectID, version: Int64, slots: [SlotValue]) {
        self.objectID = objectID
        self.version = version
        self.slots = slots
    }

    /// The values of some slots (nil for a slot the row does not have).
    func values(at indices: [Int]) -> [SlotValue] {
        indices.map { $0 < slots.count ? slots[$0] : .value(.null) }
    }
}

/// What one save writes: whole rows for inserted and updated objects, IDs for deleted ones.
package struct StoreChanges: Sendable {
    /// New rows (version 1).
    package var inserted: [StoredRow] = []
    /// Changed rows with their new version; `expectedVersion` is the version the context
    /// loaded, so a store can detect that someone else saved the row since.
    package var updated: [(row: StoredRow, expectedVersion: Int64)] = []
    /// Deleted objects with the version the context loaded.
    package var deleted: [(id: ObjectID, expectedVersion: Int64)] = []
    /// Set only by a migration step writing a new file that no one else opens before it is
    /// complete: the step has checked uniqueness over every row of the file itself, so
    /// the store does not read them all again for each batch.
    package var uniquenessChecked = false
    /// Updated rows whose values under uniqueness constraints are the ones their writer
    /// loaded at `expectedVersion` (an edit of other attributes). Once the store has found
    /// that version current, those values are the stored ones and cannot clash anew, so its
    /// uniqueness check skips the rows without reading them.
    package var constrainedValuesKept: Set<ObjectID> = []
    /// What a store that keeps history records beside the rows (who, when, the values
    /// before); nil from a writer that is not a context (a migration step), whose
    /// transaction the store records from the rows it has.
    package var transaction: TransactionDraft?

    /// No changes yet.
    package init() {}

    /// Whether the save writes nothing.
    package var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}

/// Checks the expected versions of a save against a store's current ones.
package func checkVersions(_ changes: StoreChanges, current: (ObjectID) throws -> Int64?) throws {
    var conflicts: [StoreConflictError.Conflict] = []
    for (row, expected) in changes.updated {
        let stored = try current(row.objectID)
        if stored != expected {
            conflicts.append(.init(objectID: row.objectID, expectedVersion: expected, storedVersion: stored, keys: []))
        }
    }
    for (id, expected) in changes.deleted {
        let stored = try current(id)
        if stored != nil && stored != expected {
            conflicts.append(.init(objectID: id, expectedVersion: expected, storedVersion: stored, keys: []))
        }
    }
    if !conflicts.isEmpty { throw StoreConflictError(conflicts: conflicts) }
}

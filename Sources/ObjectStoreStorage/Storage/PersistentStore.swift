import Foundation
import ObjectStoreModel

/// A place objects are saved: in memory, a JSON file or a binary file. Every store keeps its
/// rows behind this one protocol, so they share one conformance test suite.
///
/// Stores are called by a ``PersistentStoreCoordinator``, which serialises saves.
package protocol PersistentStore: AnyObject, Sendable {
    /// The store's UUID, part of every object ID it hands out.
    var identifier: String { get }
    /// The model the store holds objects of.
    var model: ManagedObjectModel { get }
    /// The saved row of an object, or `nil` when the store has none.
    func row(for id: ObjectID) throws -> StoredRow?
    /// IDs of the saved objects of exactly this entity (not its sub-entities), in key order.
    func objectIDs(ofEntity entityName: String) throws -> [ObjectID]
    /// How many saved objects exactly this entity has (not its sub-entities), without
    /// listing them.
    func objectCount(ofEntity entityName: String) throws -> Int
    /// Reserves `count` new primary keys of an entity.
    func allocateKeys(count: Int, entityName: String) throws -> [Int64]
    /// Writes one save atomically: all of it or none. Inserted rows may carry temporary IDs:
    /// the store gives them permanent keys (unique across processes) and returns the
    /// mapping. Throws ``StoreConflictError`` when a row's version is not the expected one.
    func save(_ changes: StoreChanges) throws -> [ObjectID: ObjectID]
    /// The store's identity and the model it was written with.
    var metadata: StoreMetadata? { get }
    /// The values of some slots of every saved object of exactly this entity, without
    /// making rows or objects (uniqueness checks read only the constrained slots).
    func slotValues(ofEntity entityName: String, slots: [Int]) throws -> [(ObjectID, [SlotValue])]
    /// Runs `body` while no other process (and no other thread of this one) can save to the
    /// store, after reading what others saved before. Saves of this thread inside `body` go
    /// through. Use it for a read-check-write that must not interleave with other writers,
    /// such as a save together with a journal kept beside the store.
    func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T
    /// Reclaims the space of superseded and deleted rows, if the store keeps any (the
    /// binary store does; the others do nothing).
    func compact() throws
    /// A problem with housekeeping after the last save (an automatic compaction that
    /// failed), or `nil`. The save itself had committed.
    var housekeepingWarning: String? { get }
    /// The saved objects of `owner` or its sub-entities whose values of the owner's
    /// `constraint`-th uniqueness constraint, compared as the constraint compares them
    /// (case folded for case-insensitive attributes), are `values`. The binary store looks
    /// them up in its index; the default reads every object's constrained values.
    func objectIDs(matching values: [SlotValue], uniquenessConstraint constraint: Int, of owner: String) throws -> [ObjectID]
    /// Checks what the store keeps besides rows (the binary store's snapshot indexes)
    /// against the rows, one line per problem. Part of
    /// ``PersistentStoreCoordinator/checkIntegrity()``.
    func storageProblems() throws -> [String]
    /// Reads what other openings of the file saved since this one last looked (a store
    /// reads them at each listing of objects; an object refreshed alone must see them too).
    func catchUp() throws
    /// Whether the store's rows are encoded and may be read in place (the binary store): a
    /// root context's fetch then takes an entity's rows through ``readRows(_:)`` and objects
    /// read their values from the rows (``encodedRow(for:of:layouts:)``). The other stores hand
    /// their rows over decoded, and a fetch tests the objects of their IDs in memory.
    var hasEncodedRows: Bool { get }
    /// Runs `body` with the store's access methods, under one read of the file after taking
    /// up what others saved; nil (and `body` not run) for a store without encoded rows.
    func readRows<T>(_ body: (any RowReader) throws -> T) throws -> T?
    /// The saved state of an object of `entity` (its ID's entity) read in place, with its
    /// row's layout from `layouts`; nil when the store has no such object (or no encoded
    /// rows). Throws when the row does not decode.
    func encodedRow(for id: ObjectID, of entity: EntityDescription, layouts: RowLayouts) throws -> (slots: Slots, version: Int64)?
    /// A hint: about `count` rows of the entity are about to be read one at a time through
    /// ``encodedRow(for:of:layouts:)`` (a batch of faults fired together, a bulk delete). A
    /// store that reads rows singly may read the entity's rows in one go now rather than
    /// after many single reads. Errors are left to the reads themselves.
    func willReadRows(_ count: Int, ofEntity name: String)
    /// Leaves the log alone until the store is compacted explicitly (a migration's
    /// destination, written in batches and compacted once at the end).
    func suspendAutomaticCompaction()
    /// Holds back (or, with false, lets go of one hold of) the housekeeping a save does
    /// after committing: while held, saves do not compact (``housekeep()`` does it later).
    func deferHousekeeping(_ deferred: Bool)
    /// Runs `body`, in which saves are committed together when it returns (one commit, one
    /// transaction); nothing of them is kept when it throws. Only the binary store does;
    /// the others refuse.
    func committingTogether<T>(_ body: () throws -> T) throws -> T
    /// The housekeeping a save would have done now, if the store needs any (the binary
    /// store's compaction or log cut); nothing for the other stores. A failure is left as
    /// ``housekeepingWarning``: what was saved is saved.
    func housekeep()

    // History (ObjectStore's History guide)

    /// Whether each save records a transaction: history was turned on for this opening, or
    /// the file keeps history already.
    var keepsHistory: Bool { get }
    /// Records a transaction in every save from now on, and keeps the transactions
    /// `retention` covers. Throws for a store that cannot (a read-only one stays as it is).
    func trackHistory(_ retention: HistoryRetention) throws
    /// The number of the first transaction kept (one past the last when none is) and of the
    /// last one (0: none yet), after reading what others saved.
    func historyBounds() throws -> (first: Int64, last: Int64)
    /// The transactions numbered after `number` (nil: every one kept) and stamped after
    /// `date` (nil: any), oldest first. Throws ``HistoryError/expiredToken(_:firstAvailable:last:)``
    /// when `number` is given and transactions after it were deleted, or it is past the last.
    func history(after number: Int64?, since date: Date?) throws -> [HistoryTransaction]
    /// Deletes the transactions numbered up to `number`, for every opening of the store.
    func deleteHistory(through number: Int64) throws
    /// The number of the transaction this opening's last save recorded (nil: none).
    var lastSavedTransaction: Int64? { get }
    /// Keeps history from now on with no transaction kept, numbering the next one after
    /// `number` (a migration's new store, whose source kept history).
    func continueHistory(after number: Int64) throws
    /// The number of the last transaction kept that does not decode (damage a checksum
    /// does not catch: a forged record), nil when every one does.
    func lastUndecodableTransaction() throws -> Int64?
}

extension PersistentStore {
    package func objectCount(ofEntity entityName: String) throws -> Int { try objectIDs(ofEntity: entityName).count }
    package func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T { try body() }
    package var housekeepingWarning: String? { nil }
    package func compact() throws {}
    package func storageProblems() throws -> [String] { [] }
    package func lastUndecodableTransaction() throws -> Int64? { nil }
    package func catchUp() throws {}
    package var hasEncodedRows: Bool { false }
    package func readRows<T>(_ body: (any RowReader) throws -> T) throws -> T? { nil }
    package func encodedRow(for id: ObjectID, of entity: EntityDescription, layouts: RowLayouts) throws -> (slots: Slots, version: Int64)? { nil }
    package func willReadRows(_ count: Int, ofEntity name: String) {}
    package func suspendAutomaticCompaction() {}
    package func deferHousekeeping(_ deferred: Bool) {}
    package func housekeep() {}
    package func committingTogether<T>(_ body: () throws -> T) throws -> T {
        throw StoreError.invalidRequest(path: String(describing: type(of: self)), reason: "only a binary store commits several saves together")
    }
    package var keepsHistory: Bool { false }
    package func trackHistory(_ retention: HistoryRetention) throws { throw HistoryError.notTracked }
    package func historyBounds() throws -> (first: Int64, last: Int64) { throw HistoryError.notTracked }
    package func history(after number: Int64?, since date: Date?) throws -> [HistoryTransaction] { throw HistoryError.notTracked }
    package func deleteHistory(through number: Int64) throws { throw HistoryError.notTracked }
    package var lastSavedTransaction: Int64? { nil }
    package func continueHistory(after number: Int64) throws { throw HistoryError.notTracked }

    package func objectIDs(matching values: [SlotValue], uniquenessConstraint constraint: Int, of owner: String) throws -> [ObjectID] {
        guard let ownerEntity = model.entity(named: owner), ownerEntity.uniquenessConstraints.indices.contains(constraint) else { return [] }
        let check = UniquenessCheck(model: model)
        return try check.scanning { try self.slotValues(ofEntity: $0, slots: $1) }(ownerEntity, constraint, values)
    }

    package func slotValues(ofEntity entityName: String, slots: [Int]) throws -> [(ObjectID, [SlotValue])] {
        try objectIDs(ofEntity: entityName).compactMap { id in
            guard let row = try row(for: id) else { return nil }
            return (id, row.values(at: slots))
        }
    }
}

import Foundation
import ObjectStoreModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a saving context tells a store that keeps history, beside the rows: who saves,
/// when, and the values its updated and deleted objects had (the store has the new ones).
package struct TransactionDraft: Sendable {
    /// The saving context's transaction author.
    package var author: String?
    /// The saving context's name.
    package var contextName: String?
    /// When the save happens, by the coordinator's clock.
    package var timestamp: Date
    /// Per updated object (in the order of the changes' `updated`), its changed stored
    /// slots with their values as loaded; nil: the store reads them from its row.
    package var oldValues: [[(slot: Int, value: SlotValue)]?] = []
    /// Per deleted object (in the order of `deleted`), its tombstone: the values as loaded
    /// of the attributes that preserve their value on deletion; nil: read from the row.
    package var tombstones: [[(slot: Int, value: SlotValue)]?] = []

    /// A draft of a save by a context.
    package init(author: String?, contextName: String?, timestamp: Date) {
        self.author = author
        self.contextName = contextName
        self.timestamp = timestamp
    }
}

/// One changed object of a save, as its transaction records it: the changed stored slots
/// with their values before and after (a to-many relationship: the objects removed and
/// added; a deletion: its tombstone as old values, nil as new; an insertion: none). Valid only during the call
/// it is passed to (its values are the walk's scratch buffer).
struct RecordedChange {
    var kind: HistoryChange.Kind
    var objectID: ObjectID
    var entity: EntityDescription
    var values: UnsafeBufferPointer<(slot: Int, old: SlotValue, new: SlotValue)>
}

/// Walks a save as its transaction records it, object by object. `changes` has its keys
/// assigned (permanent IDs throughout); `stored` reads an object's saved row, for an
/// update or deletion whose old values the draft does not carry.
func forEachRecordedChange(_ changes: StoreChanges, draft: TransactionDraft?, model: ManagedObjectModel,
                           stored: (ObjectID) throws -> StoredRow?, _ body: (RecordedChange) throws -> Void) throws {
    // Per entity, its stored slots with their blanks, worked out once.
    var plans: [ObjectIdentifier: (entity: EntityDescription, slots: [(Int, SlotValue)], preserved: [Int])] = [:]
    func plan(_ id: ObjectID) -> (entity: EntityDescription, slots: [(Int, SlotValue)], preserved: [Int])? {
        let scope = ObjectIdentifier(id.scope)
        if let known = plans[scope] { return known }
        guard let entity = model.entity(named: id.entityName) else { return nil }
        let unstored = Set(entity.unstoredSlots)
        let slots = entity.properties.indices.filter { !unstored.contains($0) }.map { ($0, SlotValue.initial(for: entity.properties[$0])) }
        let preserved = entity.properties.indices.filter { entity.properties[$0].attribute?.preservesValueOnDeletion == true }
        plans[scope] = (entity, slots, preserved)
        return (entity, slots, preserved)
    }
    var values: [(slot: Int, old: SlotValue, new: SlotValue)] = []
    func add(_ slot: Int, old: SlotValue, new: SlotValue) {
        guard old != new else { return }
        if case .toMany(let before) = old, case .toMany(let after) = new {
            // A to-many relationship records the objects removed and added.
            let kept = Set(before).intersection(after)
            let removed = before.filter { !kept.contains($0) }, added = after.filter { !kept.contains($0) }
            guard !removed.isEmpty || !added.isEmpty else { return }
            values.append((slot, .toMany(removed), .toMany(added)))
        } else {
            values.append((slot, old, new))
        }
    }
    // An insert lists no values (as Core Data's): the object has them, and the rows of an
    // import of 10,000 tasks are not written twice.
    values.removeAll()
    for row in changes.inserted {
        guard let (entity, _, _) = plan(row.objectID) else { continue }
        try values.withUnsafeBufferPointer { try body(RecordedChange(kind: .insert, objectID: row.objectID, entity: entity, values: $0)) }
    }
    for (index, (row, _)) in changes.updated.enumerated() {
        guard let (entity, slots, _) = plan(row.objectID) else { continue }
        values.removeAll(keepingCapacity: true)
        if let draft, index < draft.oldValues.count, let old = draft.oldValues[index] {
            for (slot, value) in old where slot < row.slots.count { add(slot, old: value, new: row.slots[slot]) }
            if values.count > 1 { values.sort { $0.slot < $1.slot } }
        } else if let before = try stored(row.objectID) {
            for (slot, _) in slots where slot < row.slots.count && slot < before.slots.count { add(slot, old: before.slots[slot], new: row.slots[slot]) }
        }
        try values.withUnsafeBufferPointer { try body(RecordedChange(kind: .update, objectID: row.objectID, entity: entity, values: $0)) }
    }
    for (index, (id, _)) in changes.deleted.enumerated() {
        guard let (entity, _, preserved) = plan(id) else { continue }
        values.removeAll(keepingCapacity: true)
        var tombstone: [(slot: Int, value: SlotValue)]?
        if let draft, index < draft.tombstones.count { tombstone = draft.tombstones[index] }
        if tombstone == nil, !preserved.isEmpty, let before = try stored(id) {
            tombstone = preserved.filter { $0 < before.slots.count }.map { ($0, before.slots[$0]) }
        }
        for (slot, value) in (tombstone ?? []).sorted(by: { $0.slot < $1.slot }) { values.append((slot, value, .value(.null))) }
        try values.withUnsafeBufferPointer { try body(RecordedChange(kind: .delete, objectID: id, entity: entity, values: $0)) }
    }
}

/// A save's changes as its transaction records them (the in-memory and JSON stores keep
/// these; the binary store writes them as it walks).
func historyChanges(_ changes: StoreChanges, draft: TransactionDraft?, model: ManagedObjectModel,
                    stored: (ObjectID) throws -> StoredRow?) throws -> [HistoryChange] {
    var result: [HistoryChange] = []
    result.reserveCapacity(changes.inserted.count + changes.updated.count + changes.deleted.count)
    try forEachRecordedChange(changes, draft: draft, model: model, stored: stored) { change in
        let properties = change.entity.properties
        result.append(HistoryChange(kind: change.kind, objectID: change.objectID, values: change.values.map {
            PropertyChange(name: properties[$0.slot].name, slot: $0.slot, oldValue: $0.old, newValue: $0.new)
        }))
    }
    return result
}

/// The calling process's ID, recorded in each transaction.
let currentProcessID: Int32 = Int32(getpid())

/// History kept in memory: by the in-memory store, and by the JSON store as read from and
/// written to its file.
struct HistoryList: Sendable {
    /// The transactions kept, oldest first.
    var transactions: [HistoryTransaction] = []
    /// The number of the first transaction that may still be kept: those below were
    /// deleted (never more than one past the last transaction's number).
    var start: Int64 = 1

    /// The number of the last transaction (0: none yet).
    var last: Int64 { max(transactions.last?.number ?? 0, start - 1) }

    /// Drops the transactions the retention bound no longer covers.
    mutating func apply(_ retention: HistoryRetention, now: Date) {
        let last = self.last
        let firstKept = transactions.firstIndex { retention.keeps(number: $0.number, timestamp: $0.timestamp, last: last, now: now) } ?? transactions.count
        guard firstKept > 0 else { return }
        delete(through: transactions[firstKept - 1].number)
    }

    /// Deletes the transactions numbered up to `number`.
    mutating func delete(through number: Int64) {
        let clamped = min(number, last)
        guard clamped >= start else { return }
        transactions.removeAll { $0.number <= clamped }
        start = clamped + 1
    }

    /// The transactions after `number`; throws when some of them were deleted.
    func after(_ number: Int64, storeIdentifier: String) throws -> [HistoryTransaction] {
        try checkAvailable(after: number, first: start, last: last, storeIdentifier: storeIdentifier)
        return transactions.filter { $0.number > number }
    }
}

/// Throws ``HistoryError/expiredToken(_:firstAvailable:last:)`` unless every transaction
/// after `number` is still kept.
func checkAvailable(after number: Int64, first: Int64, last: Int64, storeIdentifier: String) throws {
    guard number + 1 >= first, number <= last else {
        throw HistoryError.expiredToken(HistoryToken(storeIdentifier: storeIdentifier, transactionNumber: number), firstAvailable: first, last: last)
    }
}

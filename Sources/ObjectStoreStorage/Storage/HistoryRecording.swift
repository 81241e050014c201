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
    /// Per updated object (in the order of the changes' `updated`), where its changed
    /// stored slots with their values as loaded are in ``oldSlots``; nil: the store reads
    /// them from its row. (One array for the save, not one per object.)
    package var oldRanges: [Range<Int>?] = []
    package var oldSlots: [(slot: Int, value: SlotValue)] = []
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

/// What a save's recorded changes are handed to, one by one: the binary store's
/// transaction writer, or the list the in-memory and JSON stores keep. (A protocol and not
/// a closure: the walk is specialized for each, and the writer's state is no closure's
/// captured variables, whose every access was checked at run time.)
protocol RecordedChangeVisitor {
    mutating func visit(_ change: RecordedChange) throws
}

/// Walks a save as its transaction records it, object by object. `changes` has its keys
/// assigned (permanent IDs throughout); `stored` reads an object's saved row, for an
/// update or deletion whose old values the draft does not carry.
func forEachRecordedChange<Visitor: RecordedChangeVisitor>(_ changes: StoreChanges, draft: TransactionDraft?, model: ManagedObjectModel,
                                                           stored: (ObjectID) throws -> StoredRow?, into visitor: inout Visitor) throws {
    var entities = EntityLookup(model: model)
    var values: [(slot: Int, old: SlotValue, new: SlotValue)] = []
    // An insert lists no values (as Core Data's): the object has them, and the rows of an
    // import of 10,000 tasks are not written twice.
    for row in changes.inserted {
        guard let entity = entities.entity(of: row.objectID) else { continue }
        try values.withUnsafeBufferPointer { try visitor.visit(RecordedChange(kind: .insert, objectID: row.objectID, entity: entity, values: $0)) }
    }
    let oldRanges = draft?.oldRanges ?? [], oldSlots = draft?.oldSlots ?? []
    for index in changes.updated.indices {
        let row = changes.updated[index].row
        guard let entity = entities.entity(of: row.objectID) else { continue }
        values.removeAll(keepingCapacity: true)
        if index < oldRanges.count, let range = oldRanges[index] {
            for position in range where oldSlots[position].slot < row.slots.count {
                let slot = oldSlots[position].slot
                recordChange(slot, old: oldSlots[position].value, new: row.slots[slot], in: &values)
            }
            if values.count > 1 { values.sort { $0.slot < $1.slot } }
        } else if let before = try stored(row.objectID) {
            for slot in entity.storedSlots where slot < row.slots.count && slot < before.slots.count {
                recordChange(slot, old: before.slots[slot], new: row.slots[slot], in: &values)
            }
        }
        try values.withUnsafeBufferPointer { try visitor.visit(RecordedChange(kind: .update, objectID: row.objectID, entity: entity, values: $0)) }
    }
    for (index, (id, _)) in changes.deleted.enumerated() {
        guard let entity = entities.entity(of: id) else { continue }
        values.removeAll(keepingCapacity: true)
        var tombstone: [(slot: Int, value: SlotValue)]?
        if let draft, index < draft.tombstones.count { tombstone = draft.tombstones[index] }
        let preserved = entity.preservedSlots
        if tombstone == nil, !preserved.isEmpty, let before = try stored(id) {
            tombstone = preserved.filter { $0 < before.slots.count }.map { ($0, before.slots[$0]) }
        }
        for (slot, value) in (tombstone ?? []).sorted(by: { $0.slot < $1.slot }) { values.append((slot, value, .value(.null))) }
        try values.withUnsafeBufferPointer { try visitor.visit(RecordedChange(kind: .delete, objectID: id, entity: entity, values: $0)) }
    }
}

/// A changed slot's values, when they differ (a to-many relationship: the objects removed
/// and added).
private func recordChange(_ slot: Int, old: SlotValue, new: SlotValue, in values: inout [(slot: Int, old: SlotValue, new: SlotValue)]) {
    guard old != new else { return }
    if case .toMany(let before) = old, case .toMany(let after) = new {
        let kept = Set(before).intersection(after)
        let removed = before.filter { !kept.contains($0) }, added = after.filter { !kept.contains($0) }
        guard !removed.isEmpty || !added.isEmpty else { return }
        values.append((slot, .toMany(removed), .toMany(added)))
    } else {
        values.append((slot, old, new))
    }
}

/// An object's entity, looked up once per entity of a save (a save's objects come entity
/// by entity).
private struct EntityLookup {
    let model: ManagedObjectModel
    var last: (scope: ObjectIdentifier, entity: EntityDescription)?
    var known: [ObjectIdentifier: EntityDescription] = [:]

    init(model: ManagedObjectModel) {
        self.model = model
    }

    mutating func entity(of id: ObjectID) -> EntityDescription? {
        let scope = ObjectIdentifier(id.scope)
        if let last, last.scope == scope { return last.entity }
        let entity = known[scope] ?? model.entity(named: id.entityName)
        if let entity {
            known[scope] = entity
            last = (scope, entity)
        }
        return entity
    }
}

/// A save's changes as its transaction records them (the in-memory and JSON stores keep
/// these; the binary store writes them as it walks).
func historyChanges(_ changes: StoreChanges, draft: TransactionDraft?, model: ManagedObjectModel,
                    stored: (ObjectID) throws -> StoredRow?) throws -> [HistoryChange] {
    struct Collector: RecordedChangeVisitor {
        var result: [HistoryChange] = []
        mutating func visit(_ change: RecordedChange) throws {
            let properties = change.entity.properties
            result.append(HistoryChange(kind: change.kind, objectID: change.objectID, values: change.values.map {
                PropertyChange(name: properties[$0.slot].name, slot: $0.slot, oldValue: $0.old, newValue: $0.new)
            }))
        }
    }
    var collector = Collector()
    collector.result.reserveCapacity(changes.inserted.count + changes.updated.count + changes.deleted.count)
    try forEachRecordedChange(changes, draft: draft, model: model, stored: stored, into: &collector)
    return collector.result
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

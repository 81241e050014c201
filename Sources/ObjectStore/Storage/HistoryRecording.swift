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
    /// Per updated object, its changed stored slots with their values as loaded.
    package var oldValues: [ObjectID: [(slot: Int, value: SlotValue)]] = [:]
    /// Per deleted object, its tombstone: the values as loaded of the attributes that
    /// preserve their value on deletion.
    package var tombstones: [ObjectID: [(slot: Int, value: SlotValue)]] = [:]

    /// A draft of a save by a context.
    package init(author: String?, contextName: String?, timestamp: Date) {
        self.author = author
        self.contextName = contextName
        self.timestamp = timestamp
    }
}

/// Turns a save into the changes its transaction records. `changes` has its keys
/// assigned (permanent IDs throughout); `stored` reads an object's saved row, for an
/// update whose old values the draft does not carry.
func historyChanges(_ changes: StoreChanges, draft: TransactionDraft?, model: ManagedObjectModel,
                    stored: (ObjectID) throws -> StoredRow?) throws -> [HistoryChange] {
    var result: [HistoryChange] = []
    result.reserveCapacity(changes.inserted.count + changes.updated.count + changes.deleted.count)
    // Per entity, its stored slots with their blanks, worked out once.
    var plans: [ObjectIdentifier: (entity: EntityDescription, slots: [(Int, SlotValue)])] = [:]
    func plan(_ id: ObjectID) -> (entity: EntityDescription, slots: [(Int, SlotValue)])? {
        let scope = ObjectIdentifier(id.scope)
        if let known = plans[scope] { return known }
        guard let entity = model.entity(named: id.entityName) else { return nil }
        let unstored = Set(entity.unstoredSlots)
        let slots = entity.properties.indices.filter { !unstored.contains($0) }.map { ($0, SlotValue.initial(for: entity.properties[$0])) }
        plans[scope] = (entity, slots)
        return (entity, slots)
    }
    func change(_ entity: EntityDescription, _ slot: Int, old: SlotValue, new: SlotValue) -> PropertyChange? {
        guard old != new else { return nil }
        if case .toMany(let before) = old, case .toMany(let after) = new {
            // A to-many relationship records the objects removed and added.
            let kept = Set(before).intersection(after)
            let removed = before.filter { !kept.contains($0) }, added = after.filter { !kept.contains($0) }
            guard !removed.isEmpty || !added.isEmpty else { return nil }
            return PropertyChange(name: entity.properties[slot].name, slot: slot, oldValue: .toMany(removed), newValue: .toMany(added))
        }
        return PropertyChange(name: entity.properties[slot].name, slot: slot, oldValue: old, newValue: new)
    }
    for row in changes.inserted {
        guard let (entity, slots) = plan(row.objectID) else { continue }
        let values = slots.compactMap { slot, blank in
            slot < row.slots.count ? change(entity, slot, old: blank, new: row.slots[slot]) : nil
        }
        result.append(HistoryChange(kind: .insert, objectID: row.objectID, values: values))
    }
    for (row, _) in changes.updated {
        guard let (entity, slots) = plan(row.objectID) else { continue }
        var values: [PropertyChange] = []
        if let old = draft?.oldValues[row.objectID] {
            for (slot, value) in old.sorted(by: { $0.slot < $1.slot }) where slot < row.slots.count {
                if let item = change(entity, slot, old: value, new: row.slots[slot]) { values.append(item) }
            }
        } else if let before = try stored(row.objectID) {
            for (slot, _) in slots where slot < row.slots.count && slot < before.slots.count {
                if let item = change(entity, slot, old: before.slots[slot], new: row.slots[slot]) { values.append(item) }
            }
        }
        result.append(HistoryChange(kind: .update, objectID: row.objectID, values: values))
    }
    for (id, _) in changes.deleted {
        guard let (entity, _) = plan(id) else { continue }
        var tombstone = draft?.tombstones[id]
        if tombstone == nil {
            let preserved = entity.properties.indices.filter { entity.properties[$0].attribute?.preservesValueOnDeletion == true }
            if !preserved.isEmpty, let before = try stored(id) {
                tombstone = preserved.filter { $0 < before.slots.count }.map { ($0, before.slots[$0]) }
            }
        }
        let values = (tombstone ?? []).sorted { $0.slot < $1.slot }.map { slot, value in
            PropertyChange(name: entity.properties[slot].name, slot: slot, oldValue: value, newValue: .value(.null))
        }
        result.append(HistoryChange(kind: .delete, objectID: id, values: values))
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

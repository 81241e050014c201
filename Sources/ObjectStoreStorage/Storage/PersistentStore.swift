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

    // History (docs/history.md)

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

/// A save that found rows changed or deleted by someone else since they were loaded.
public struct StoreConflictError: Error, Sendable, CustomStringConvertible {
    /// One conflicting object.
    public struct Conflict: Sendable {
        /// The object saved by someone else.
        public var objectID: ObjectID
        /// The version the context loaded.
        public var expectedVersion: Int64
        /// The version in the store, `nil` when the row was deleted.
        public var storedVersion: Int64?
        /// The keys whose stored value differs from what the context had loaded (empty when unknown).
        public var keys: [String]

        package init(objectID: ObjectID, expectedVersion: Int64, storedVersion: Int64?, keys: [String]) {
            self.objectID = objectID
            self.expectedVersion = expectedVersion
            self.storedVersion = storedVersion
            self.keys = keys
        }
    }

    /// Every conflicting object.
    public var conflicts: [Conflict]

    package init(conflicts: [Conflict]) { self.conflicts = conflicts }

    public var description: String {
        let lines = conflicts.map { c in
            c.storedVersion == nil
                ? "\(c.objectID) was deleted by another save"
                : "\(c.objectID) was changed by another save (version \(c.expectedVersion) -> \(c.storedVersion ?? 0))\(c.keys.isEmpty ? "" : ": " + c.keys.joined(separator: ", "))"
        }
        return "save conflict: " + lines.joined(separator: "; ")
    }
}

/// A uniqueness constraint's values (as the constraint compares them) as a dictionary key:
/// a constraint of one attribute keys by the value alone, without an array. One key type for
/// every table of such values (each other type a process hashes first costs the Swift
/// runtime a scan of the binary's conformance records).
package enum UniqueKey: Hashable {
    case one(SlotValue)
    case many([SlotValue])

    package init(_ values: [SlotValue]) {
        self = values.count == 1 ? .one(values[0]) : .many(values)
    }

    package var values: [SlotValue] {
        switch self {
        case .one(let value): return [value]
        case .many(let values): return values
        }
    }
}

/// Uniqueness constraints checked by a store while it holds its lock, so two writers can
/// never both add the same value: the changed rows against the saved ones.
package struct UniquenessCheck {
    let model: ManagedObjectModel

    package init(model: ManagedObjectModel) { self.model = model }

    /// The saved objects (of the owner entity or its sub-entities) whose values of the
    /// owner's `constraint`-th uniqueness constraint, as the constraint compares them, are
    /// `key`. They may include objects the save changes or deletes; the check skips those.
    typealias Holders = (_ owner: EntityDescription, _ constraint: Int, _ key: [SlotValue]) throws -> [ObjectID]

    /// - Parameters:
    ///   - saved: the saved values of some slots of one object, to skip updates that leave
    ///     constrained values as they were (so an edit costs the size of the edit).
    ///   - holders: who holds a value already; a store with an index looks it up, others
    ///     use ``scanning(_:)``.
    func failures(_ changes: StoreChanges, saved: (ObjectID, [Int]) throws -> [SlotValue]?, holders: Holders) throws -> [ValidationFailure] {
        // A migration step's batch, checked by the step over its whole new file.
        guard !changes.uniquenessChecked else { return [] }
        var rows = changes.inserted
        // Per entity, its constrained slots (its description looked up by name once).
        var constrainedSlots: [ObjectIdentifier: [Int]] = [:]
        for (row, _) in changes.updated where !changes.constrainedValuesKept.contains(row.objectID) {
            let scope = ObjectIdentifier(row.objectID.scope)
            let slots: [Int]
            if let known = constrainedSlots[scope] {
                slots = known
            } else {
                guard let entity = model.entity(named: row.objectID.entityName) else { continue }
                slots = entity.constrainedSlots
                constrainedSlots[scope] = slots
            }
            guard !slots.isEmpty else { continue }
            if let before = try saved(row.objectID, slots), before == row.values(at: slots) { continue }
            rows.append(row)
        }
        guard !rows.isEmpty else { return [] }
        return try failures(of: rows, changing: { Set(rows.map(\.objectID)).union(changes.deleted.map(\.id)) }, holders: holders)
    }

    /// The uniqueness failures of `rows` (each with at least its constrained slots), against each other and against the holders of their values.
    /// `changing` gives every row the commit writes or deletes (a holder among them does not
    /// count); it is asked only when some holder is found (an import into a store that does
    /// not yet hold its values never needs it).
    func failures(of rows: some Sequence<StoredRow>, changing: () throws -> Set<ObjectID>, holders: Holders) throws -> [ValidationFailure] {
        var changedIDs: Set<ObjectID>?
        func isChanged(_ id: ObjectID) throws -> Bool {
            if changedIDs == nil { changedIDs = try changing() }
            return changedIDs?.contains(id) ?? false
        }
        var failures: [ValidationFailure] = []
        // Values the changed rows take, per owner and constraint (a bucket each, shared by
        // the owner's sub-entities): two of them may clash too. A constraint of one
        // attribute (a UUID, a name) keys its bucket by the value itself, so a row costs no
        // array of its values.
        var taken: [[UniqueKey: ObjectID]] = []
        var buckets: [String: Int] = [:]
        // What to check for rows of each entity, worked out once per entity, not per row.
        var plans: [ObjectIdentifier: [Constrained]] = [:]
        func fail(_ row: StoredRow, _ item: Constrained, _ key: [SlotValue], _ other: ObjectID) {
            failures.append(ValidationFailure(
                objectID: row.objectID, entityName: row.objectID.entityName, key: item.constraint.joined(separator: ","),
                value: key.count == 1 ? key[0].value : nil, rule: .unique, message: item.clash(key, with: other)))
        }
        for row in rows {
            let scope = ObjectIdentifier(row.objectID.scope)
            let plan: [Constrained]
            if let known = plans[scope] {
                plan = known
            } else {
                plan = constrained(row.objectID.entityName, buckets: &buckets)
                while taken.count < buckets.count { taken.append([:]) }
                plans[scope] = plan
            }
            for item in plan {
                if item.slots.count == 1 {
                    let slot = item.slots[0]
                    guard slot < row.slots.count else { continue }
                    let value = row.slots[slot]
                    guard value != .value(.null) else { continue }
                    var comparable = value
                    if let fold = item.folding[0], case .value(let plain) = value { comparable = .value(fold.uniquenessValue(plain)) }
                    if let other = try taken[item.bucket][.one(comparable)] ?? holders(item.owner, item.number, [comparable]).first(where: { try !isChanged($0) }) {
                        fail(row, item, [value], other)
                    }
                    taken[item.bucket][.one(comparable)] = row.objectID
                    continue
                }
                guard let key = item.key(of: row.slots) else { continue }
                let comparable = item.comparable(key)
                if let other = try taken[item.bucket][.many(comparable)] ?? holders(item.owner, item.number, comparable).first(where: { try !isChanged($0) }) {
                    fail(row, item, key, other)
                }
                taken[item.bucket][.many(comparable)] = row.objectID
            }
        }
        return failures
    }

    /// One uniqueness constraint a row of some entity must keep: the owner (the entity or
    /// an ancestor), the constraint's number and names, its slots (the owner's slots are the
    /// row's: a sub-entity's layout extends its parent's) and which of them fold case.
    package struct Constrained {
        let owner: EntityDescription
        let number: Int
        package let constraint: [String]
        let slots: [Int]
        /// Per slot, the attribute whose comparison folds its values, if it does.
        let folding: [AttributeDescription?]
        /// Where the values changed rows take for it are collected.
        package let bucket: Int

        /// The values as the constraint compares them.
        package func comparable(_ key: [SlotValue]) -> [SlotValue] { UniquenessCheck.comparable(key, folding: folding) }

        /// The constrained values of a row, nil when one is nil (the constraint does not
        /// apply) or the row is too short.
        package func key(of slots: [SlotValue]) -> [SlotValue]? {
            guard self.slots.allSatisfy({ $0 < slots.count }) else { return nil }
            let key = self.slots.map { slots[$0] }
            return key.contains(.value(.null)) ? nil : key
        }

        /// What a failure says when `other` holds these values already.
        package func clash(_ key: [SlotValue], with other: ObjectID) -> String {
            let description = zip(constraint, key).map { "\($0.0) = \($0.1.value)" }.joined(separator: ", ")
            return "another \(owner.name) already has \(description) (\(other))"
        }
    }

    /// The constraints rows of an entity keep, each with its owner's bucket (numbered in
    /// `buckets`, by owner and constraint, as they are first met).
    package func constrained(_ entityName: String, buckets: inout [String: Int]) -> [Constrained] {
        guard let entity = model.entity(named: entityName) else { return [] }
        var result: [Constrained] = []
        for ownerName in [entity.name] + entity.ancestorNames {
            guard let owner = model.entity(named: ownerName) else { continue }
            for (number, constraint) in owner.uniquenessConstraints.enumerated() {
                let slots = constraint.compactMap { owner.slot(of: $0) }
                guard slots.count == constraint.count else { continue }
                let folding = Self.folding(constraint, in: owner)
                let name = "\(ownerName)#\(number)"
                let bucket = buckets[name] ?? buckets.count
                buckets[name] = bucket
                result.append(Constrained(owner: owner, number: number, constraint: constraint, slots: slots, folding: folding, bucket: bucket))
            }
        }
        return result
    }

    /// Holders found by reading the constrained slots of every saved object, once per
    /// constraint and check. `existing` gives those slots for every saved object of exactly
    /// one entity.
    func scanning(_ existing: @escaping (String, [Int]) throws -> [(ObjectID, [SlotValue])]) -> Holders {
        final class Cache { var values: [String: [UniqueKey: [ObjectID]]] = [:] }
        let cache = Cache()
        let model = self.model
        return { owner, number, key in
            let bucket = "\(owner.name)#\(number)"
            if let table = cache.values[bucket] { return table[UniqueKey(key)] ?? [] }
            let constraint = owner.uniquenessConstraints[number]
            let slots = constraint.compactMap { owner.slot(of: $0) }
            let folding = Self.folding(constraint, in: owner)
            var table: [UniqueKey: [ObjectID]] = [:]
            for kind in model.entityAndDescendants(of: owner.name) {
                for (id, values) in try existing(kind.name, slots) where values.count == constraint.count && !values.contains(.value(.null)) {
                    table[UniqueKey(Self.comparable(values, folding: folding)), default: []].append(id)
                }
            }
            cache.values[bucket] = table
            return table[UniqueKey(key)] ?? []
        }
    }

    /// The values of a constraint as it compares them: case-insensitive attributes folded.
    package static func comparable(_ key: [SlotValue], constraint: [String], in entity: EntityDescription) -> [SlotValue] {
        comparable(key, folding: folding(constraint, in: entity))
    }

    /// Per attribute of a constraint, the attribute when its comparison folds case, else nil.
    package static func folding(_ constraint: [String], in entity: EntityDescription) -> [AttributeDescription?] {
        constraint.map { name in entity.attribute(named: name).flatMap { $0.isCaseInsensitive ? $0 : nil } }
    }

    /// The values as a constraint with this `folding` compares them.
    package static func comparable(_ key: [SlotValue], folding: [AttributeDescription?]) -> [SlotValue] {
        guard folding.contains(where: { $0 != nil }) else { return key }
        return zip(key, folding).map { slot, attribute in
            guard let attribute, case .value(let value) = slot else { return slot }
            return .value(attribute.uniquenessValue(value))
        }
    }

    /// The check for a store that keeps its rows in a dictionary.
    func failures(_ changes: StoreChanges, rows: [ObjectID: StoredRow]) throws -> [ValidationFailure] {
        try failures(changes, saved: { id, slots in rows[id]?.values(at: slots) }, holders: scanning { entity, slots in
            rows.values.filter { $0.objectID.entityName == entity }.map { ($0.objectID, $0.values(at: slots)) }
        })
    }
}

/// The access methods of a store whose rows are encoded (the binary store), read under one
/// shared lock of its file (``PersistentStore/readRows(_:)``): what a planner above the store
/// asks before it chooses how to read an entity's rows (``ScanPlanner``), and the reads it
/// chooses. A reader is valid only inside the call that handed it over.
package protocol RowReader {
    /// The entity's rows in the snapshot: what its indexes and columns cover (0 without a
    /// snapshot, or when the entity has no rows there).
    func snapshotRowCount(ofEntity entityName: String) -> Int
    /// The snapshot rows a schema index finds for the predicate's ANDed comparisons of one
    /// indexed attribute (a range) or equalities of a hashed one (the index that finds
    /// fewest), in key order; nil when no index serves the predicate or the best finds more
    /// than `limit` rows.
    func indexCandidates(ofEntity entityName: String, predicate: SlotPredicate, limit: Int) throws -> IndexCandidates?
    /// The rows of an index's candidates, the log's rows and the rows of `alsoListing` (keys
    /// of objects the caller holds and tests as they are), in key order; the candidates
    /// decided (verdict 1) when their range is the whole predicate. `leavingUnread`: those
    /// come without their bytes (a count). Nil when the candidates no longer apply.
    func indexedScan(_ candidates: IndexCandidates, alsoListing: Set<Int64>, leavingUnread: Bool) throws -> RowScan?
    /// What the snapshot's columns decide of each of its rows (1 match, 2 no match, 0 test
    /// it); nil when they decide nothing (no columns for its comparisons, no snapshot).
    func columnDecisions(ofEntity entityName: String, predicate: SlotPredicate) throws -> [UInt8]?
    /// Every row of the entity (the snapshot's merged with the log's, in key order), with
    /// `decisions` as verdicts (rows they reject left out). `counting`: the rows they accept
    /// are counted (``RowScan/counted``), not listed.
    func scan(ofEntity entityName: String, decisions: [UInt8]?, counting: Bool) throws -> RowScan
    /// The value of an entity's attribute that `rank` rows precede in the order of a schema
    /// index on it (from the greatest when `descending`): rows with no value are not in
    /// that order. Nil when no index serves the attribute or it holds no more than `rank`
    /// rows. Rows saved since the index was written are not counted: the value is only a
    /// place to cut the order at, not an answer. With it, how many rows the index holds.
    func orderCutoff(ofEntity entityName: String, attribute: String, descending: Bool, rank: Int) throws -> (value: Value, indexed: Int)?
}

/// The snapshot rows a schema index found for a predicate (``RowReader/indexCandidates(ofEntity:predicate:limit:)``).
package struct IndexCandidates {
    let entityName: String
    /// The entity's place in the store's entity table.
    let table: Int
    /// Directory position and key of each row found, in key order.
    let rows: [(position: Int, key: Int64)]
    /// Whether every row found matches the whole predicate (a range that is all of it).
    let wholePredicate: Bool
}

/// The encoded rows of one entity, in key order.
package struct RowScan {
    package let codec: RowCodec
    /// The layout of `entity`'s rows in this scan, from `layouts`.
    package func layout(of entity: EntityDescription, in layouts: RowLayouts) -> RowLayout {
        layouts.layout(entity, codec: codec)
    }
    package let path: String
    package let rows: [(key: Int64, version: Int64, bytes: [UInt8], start: Int)]
    /// Empty, or per row what the predicate given to the scan says of it: 1 match, 2 no
    /// match, 0 undecided (a row of the log, or no columns): test it.
    package var verdicts: [UInt8] = []
    /// Matches the store counted and did not list (a scan `leavingUnread` when the caller
    /// holds no object of the entity): rows the columns accept for the whole predicate.
    package var counted = 0
    /// The entity's row shape (the slot blanks sparse rows leave out, the kinds typed rows
    /// write).
    var shape = RowCodec.Shape()

    /// Every slot of a row.
    package func slots(at index: Int) throws -> [SlotValue] {
        let row = rows[index]
        var reader = ByteReader(row.bytes, from: row.start)
        do {
            return try codec.decode(from: &reader, shape: shape)
        } catch {
            throw StoreError.corrupt(path: path, reason: "unreadable row of key \(row.key)")
        }
    }

    /// The slots `wanted` marks, decoded into `slots`; returns the row's number of slots.
    @discardableResult
    package func decode(_ index: Int, into slots: inout [SlotValue], wanted: [Bool]) throws -> Int {
        let row = rows[index]
        var reader = ByteReader(row.bytes, from: row.start)
        do {
            return try codec.decode(into: &slots, wanted: wanted, from: &reader, shape: shape)
        } catch {
            throw StoreError.corrupt(path: path, reason: "unreadable row of key \(row.key)")
        }
    }
}

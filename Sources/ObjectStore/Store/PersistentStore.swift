import Foundation
import ObjectStoreModel

/// The saved state of one object: its permanent ID, a version that grows with every saved
/// change, and its slots in the entity's layout.
public struct StoredRow: Sendable, Hashable {
    /// The object's permanent ID.
    public var objectID: ObjectID
    /// Incremented by each save that changes the row; used for optimistic locking.
    public var version: Int64
    /// One entry per property of the entity, in slot order. Transient and derived slots hold
    /// their initial values; stores do not write them.
    public var slots: [SlotValue]

    /// A row of an object at a version.
    public init(objectID: ObjectID, version: Int64, slots: [SlotValue]) {
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
public struct StoreChanges: Sendable {
    /// New rows (version 1).
    public var inserted: [StoredRow] = []
    /// Changed rows with their new version; `expectedVersion` is the version the context
    /// loaded, so a store can detect that someone else saved the row since.
    public var updated: [(row: StoredRow, expectedVersion: Int64)] = []
    /// Deleted objects with the version the context loaded.
    public var deleted: [(id: ObjectID, expectedVersion: Int64)] = []

    /// No changes yet.
    public init() {}

    /// Whether the save writes nothing.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}

/// A place objects are saved: in memory, a JSON file or a binary file. Every store keeps its
/// rows behind this one protocol, so they share one conformance test suite.
///
/// Stores are called by a ``PersistentStoreCoordinator``, which serialises saves.
public protocol PersistentStore: AnyObject, Sendable {
    /// The store's UUID, part of every object ID it hands out.
    var identifier: String { get }
    /// The model the store holds objects of.
    var model: ManagedObjectModel { get }
    /// The saved row of an object, or `nil` when the store has none.
    func row(for id: ObjectID) throws -> StoredRow?
    /// IDs of the saved objects of exactly this entity (not its sub-entities), in key order.
    func objectIDs(ofEntity entityName: String) throws -> [ObjectID]
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
}

extension PersistentStore {
    public func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T { try body() }
    public var housekeepingWarning: String? { nil }
    public func compact() throws {}

    public func slotValues(ofEntity entityName: String, slots: [Int]) throws -> [(ObjectID, [SlotValue])] {
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
        public var objectID: ObjectID
        /// The version the context loaded.
        public var expectedVersion: Int64
        /// The version in the store, `nil` when the row was deleted.
        public var storedVersion: Int64?
        /// The keys whose stored value differs from what the context had loaded (empty when unknown).
        public var keys: [String]
    }

    /// Every conflicting object.
    public var conflicts: [Conflict]

    public var description: String {
        let lines = conflicts.map { c in
            c.storedVersion == nil
                ? "\(c.objectID) was deleted by another save"
                : "\(c.objectID) was changed by another save (version \(c.expectedVersion) -> \(c.storedVersion ?? 0))\(c.keys.isEmpty ? "" : ": " + c.keys.joined(separator: ", "))"
        }
        return "save conflict: " + lines.joined(separator: "; ")
    }
}

/// Uniqueness constraints checked by a store while it holds its lock, so two writers can
/// never both add the same value: the changed rows against the saved ones.
struct UniquenessCheck {
    let model: ManagedObjectModel

    /// - Parameters:
    ///   - existing: the constrained slots of every saved object of an entity.
    ///   - saved: the saved values of some slots of one object, to skip updates that leave
    ///     constrained values as they were (so an edit costs the size of the edit).
    func failures(_ changes: StoreChanges, existing: (String, [Int]) throws -> [(ObjectID, [SlotValue])],
                  saved: (ObjectID, [Int]) throws -> [SlotValue]?) throws -> [ValidationFailure] {
        var rows = changes.inserted
        for (row, _) in changes.updated {
            guard let entity = model.entity(named: row.objectID.entityName) else { continue }
            let constrained = ([entity.name] + entity.ancestorNames).flatMap { owner in
                (model.entity(named: owner)?.uniquenessConstraints ?? []).flatMap { $0.compactMap { entity.slot(of: $0) } }
            }
            guard !constrained.isEmpty else { continue }
            let slots = Array(Set(constrained)).sorted()
            if let before = try saved(row.objectID, slots), before == row.values(at: slots) { continue }
            rows.append(row)
        }
        guard !rows.isEmpty else { return [] }
        let changedIDs = Set(rows.map(\.objectID)).union(changes.deleted.map(\.id))
        var failures: [ValidationFailure] = []
        var checked: Set<String> = []
        for row in rows {
            guard let entity = model.entity(named: row.objectID.entityName) else { continue }
            for owner in [entity.name] + entity.ancestorNames {
                guard let ownerEntity = model.entity(named: owner), !ownerEntity.uniquenessConstraints.isEmpty, checked.insert(owner).inserted else { continue }
                let slots = Array(Set(ownerEntity.uniquenessConstraints.flatMap { $0.compactMap { ownerEntity.slot(of: $0) } })).sorted()
                let position = Dictionary(uniqueKeysWithValues: slots.enumerated().map { ($0.element, $0.offset) })
                let members = rows.filter { model.entity(named: $0.objectID.entityName)?.isKind(of: owner) == true }
                var saved: [(ObjectID, [SlotValue])] = []
                for kind in model.entityAndDescendants(of: owner) {
                    saved += try existing(kind.name, slots).filter { !changedIDs.contains($0.0) }
                }
                for constraint in ownerEntity.uniquenessConstraints {
                    let indices = constraint.compactMap { ownerEntity.slot(of: $0).flatMap { position[$0] } }
                    var taken: [[SlotValue]: ObjectID] = [:]
                    for (id, values) in saved {
                        let key = indices.map { values[$0] }
                        if !key.contains(.value(.null)) { taken[Self.comparable(key, constraint: constraint, in: ownerEntity)] = id }
                    }
                    for row in members {
                        let key = indices.compactMap { index -> SlotValue? in
                            let slot = slots[index]
                            return slot < row.slots.count ? row.slots[slot] : nil
                        }
                        guard key.count == indices.count, !key.contains(.value(.null)) else { continue }
                        let comparable = Self.comparable(key, constraint: constraint, in: ownerEntity)
                        if let other = taken[comparable] {
                            let description = zip(constraint, key).map { "\($0.0) = \($0.1.value)" }.joined(separator: ", ")
                            failures.append(ValidationFailure(
                                objectID: row.objectID, entityName: row.objectID.entityName, key: constraint.joined(separator: ","),
                                value: key.count == 1 ? key[0].value : nil, rule: .unique, message: "another \(owner) already has \(description) (\(other))"))
                        }
                        taken[comparable] = row.objectID
                    }
                }
            }
        }
        return failures
    }

    /// The values of a constraint as it compares them: case-insensitive attributes folded.
    static func comparable(_ key: [SlotValue], constraint: [String], in entity: EntityDescription) -> [SlotValue] {
        zip(constraint, key).map { name, slot in
            guard case .value(let value) = slot, let attribute = entity.attribute(named: name) else { return slot }
            return .value(attribute.uniquenessValue(value))
        }
    }

    /// The check for a store that keeps its rows in a dictionary.
    func failures(_ changes: StoreChanges, rows: [ObjectID: StoredRow]) throws -> [ValidationFailure] {
        try failures(changes, existing: { entity, slots in
            rows.values.filter { $0.objectID.entityName == entity }.map { ($0.objectID, $0.values(at: slots)) }
        }, saved: { id, slots in
            rows[id]?.values(at: slots)
        })
    }
}

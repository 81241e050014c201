import Foundation
import ObjectStoreModel

/// The objects a save's relationships point at, checked by a store while it holds its lock:
/// each must still be in the store, or be inserted by the same save; and an object the save
/// deletes must not be pointed at by a row the save does not change. Without it, a task
/// added to location Home while another process deleted Home was written pointing at a row
/// that no longer exists (or Home was deleted without seeing the new task, whose link the
/// delete rule would have cleared), and every later read of the whole store failed.
///
/// Where the other side of a relationship is stored, versions already catch such races (the
/// deleted object's row changed too); this covers the sides derived from their inverse.
package struct DestinationCheck {
    let model: ManagedObjectModel

    package init(model: ManagedObjectModel) {
        self.model = model
    }

    /// The failures of `changes`: one per row and relationship that points at an object the
    /// store does not have (`exists` says whether it has one).
    package func failures(_ changes: StoreChanges, exists: (ObjectID) throws -> Bool) throws -> [ValidationFailure] {
        // A migration step writes a new file in batches that point at later ones; it checks
        // its references itself.
        guard !changes.uniquenessChecked else { return [] }
        var deleted = Set<ObjectID>()
        for (id, _) in changes.deleted { deleted.insert(id) }
        // Rows this save inserts, under permanent IDs too (obtained before the save, or an
        // undo restoring an object under its old ID).
        var inserted = Set<ObjectID>()
        for row in changes.inserted where !row.objectID.isTemporary { inserted.insert(row.objectID) }
        var slotsByEntity: [String: [(index: Int, name: String)]] = [:]
        var failures: [ValidationFailure] = []
        var known: [ObjectID: Bool] = [:]
        func check(_ row: StoredRow) throws {
            let entityName = row.objectID.entityName
            let slots: [(index: Int, name: String)]
            if let cached = slotsByEntity[entityName] {
                slots = cached
            } else {
                let entity = model.entity(named: entityName)
                let unstored = Set(entity?.unstoredSlots ?? [])
                slots = (entity?.properties ?? []).enumerated().compactMap { index, property in
                    guard let relationship = property.relationship, !unstored.contains(index) else { return nil }
                    return (index, relationship.name)
                }
                slotsByEntity[entityName] = slots
            }
            for (index, name) in slots where index < row.slots.count {
                let targets: [ObjectID]
                switch row.slots[index] {
                case .toOne(let id?): targets = [id]
                case .toMany(let ids): targets = ids
                default: continue
                }
                for target in targets where !target.isTemporary && !inserted.contains(target) {
                    let present: Bool
                    if let answer = known[target] {
                        present = answer
                    } else {
                        present = try !deleted.contains(target) && exists(target)
                        known[target] = present
                    }
                    guard !present else { continue }
                    failures.append(ValidationFailure(objectID: row.objectID, entityName: entityName, key: name, value: nil, rule: .danglingReference,
                                                      message: "refers to \(target), which another save deleted since this one read it"))
                }
            }
        }
        for row in changes.inserted { try check(row) }
        for (row, _) in changes.updated { try check(row) }
        return failures
    }

    /// The failures of the objects `changes` deletes: a row the save does not change (so
    /// one this save's delete rules did not see: saved since by another writer) that points
    /// at one of them through a relationship whose other side is derived from it, with a
    /// delete rule that would have reached that row. `rows(entity, slot)` lists an entity's
    /// rows with one slot. Relationships with a stored other side, no inverse, or the
    /// `noAction` rule are left alone (versions, or the model's own choice, cover those).
    package func deletionFailures(_ changes: StoreChanges, rows: (_ entityName: String, _ slot: Int) throws -> [(ObjectID, SlotValue)]) throws -> [ValidationFailure] {
        guard !changes.deleted.isEmpty, !changes.uniquenessChecked else { return [] }
        // (source entity, slot) -> the deleted objects it may point at.
        var watched: [String: [Int: (name: String, targets: Set<ObjectID>)]] = [:]
        for (id, _) in changes.deleted {
            guard let entity = model.entity(named: id.entityName) else { continue }
            for relationship in entity.relationships where relationship.isDerivedFromInverse && relationship.isToMany && relationship.deleteRule != .noAction {
                guard let inverseName = relationship.inverseName else { continue }
                for source in model.entities where source.isKind(of: relationship.destinationEntityName) {
                    guard let slot = source.slot(of: inverseName) else { continue }
                    watched[source.name, default: [:]][slot, default: (inverseName, [])].targets.insert(id)
                }
            }
        }
        guard !watched.isEmpty else { return [] }
        var changed = Set<ObjectID>()
        for (id, _) in changes.deleted { changed.insert(id) }
        for (row, _) in changes.updated { changed.insert(row.objectID) }
        var failures: [ValidationFailure] = []
        for (entityName, slots) in watched.sorted(by: { $0.key < $1.key }) {
            for (slot, watch) in slots.sorted(by: { $0.key < $1.key }) {
                for (id, value) in try rows(entityName, slot) where !changed.contains(id) {
                    guard let target = value.referencedIDs.first(where: watch.targets.contains) else { continue }
                    failures.append(ValidationFailure(objectID: target, entityName: target.entityName, key: nil, value: nil, rule: .danglingReference,
                                                      message: "cannot be deleted by this save: \(id).\(watch.name), saved by another save since this one read it, refers to it"))
                }
            }
        }
        return failures
    }
}

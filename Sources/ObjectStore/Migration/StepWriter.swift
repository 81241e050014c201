import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// Writes the objects of one migration step to the destination store in batches, resolving
/// relationships to migrated objects and checking every object against the new model.
struct StepWriter {
    let mapping: MappingModel
    let store: any PersistentStore
    let batchSize: Int
    private(set) var failures: [String] = []
    private var pending = StoreChanges()
    /// Objects made from distinct values, held until the end so lookups can add their
    /// inverse references.
    private var held: [ObjectID: (EntityDescription, [SlotValue])] = [:]
    private var heldOrder: [ObjectID] = []
    private var lookupIndex: [String: [String: [Value: ObjectID]]] = [:]
    /// Objects made one per source object (no distinctBy) that a lookup found before they
    /// were written: the inverse references they take when they are (entity's slot, object).
    private var pendingInverse: [ObjectID: [(slot: Int, id: ObjectID)]] = [:]
    /// The objects written so far, of entities a lookup finds one per source object: a
    /// lookup that finds one of them too late for its inverse is a failure, never a silent gap.
    private var writtenTargets = Set<ObjectID>()
    /// Destination entities a lookup finds among objects made one per source object.
    private var indexedTargets = Set<String>()
    private var nextDistinctKey: [String: Int64] = [:]
    /// Source entity name to every destination entity made one per its objects (same keys;
    /// two or more when a mapping splits an entity).
    private let destinationsOf: [String: [String]]
    /// The values the step's objects took, per owner entity and uniqueness constraint (as
    /// the constraint compares them): the step checks uniqueness itself, across batches,
    /// as it writes a file no one else sees yet (the store, asked per batch, read every row
    /// written so far each time: a step of n objects cost n^2 / batch size).
    private var taken: [[[SlotValue]: ObjectID]] = []
    /// Per destination entity, the constraints its objects keep (its own and its
    /// ancestors'), each with its bucket in `taken`: as the stores' check plans them.
    private var plans: [ObjectIdentifier: [UniquenessCheck.Constrained]] = [:]
    private var buckets: [String: Int] = [:]

    init(mapping: MappingModel, store: any PersistentStore, batchSize: Int) {
        self.mapping = mapping
        self.store = store
        self.batchSize = batchSize
        var all: [String: [String]] = [:]
        for entityMapping in mapping.entityMappings where entityMapping.distinctBy == nil {
            all[entityMapping.sourceEntity, default: []].append(entityMapping.destinationEntity)
        }
        destinationsOf = all
    }

    private func destinationID(_ entity: String, _ key: Int64) -> ObjectID {
        ObjectID(entityName: entity, storeIdentifier: store.identifier, key: .permanent(key))
    }

    /// Indexes an object that will be made one per source object (no distinctBy), with the
    /// value its `key` attribute will take, so a lookup finds it before it is written (the
    /// first object of a value wins, as for distinct objects).
    mutating func indexLookupTarget(entity: String, key: String, value: Value, sourceKey: Int64) {
        indexedTargets.insert(entity)
        guard !value.isNull, lookupIndex[entity]?[key]?[value] == nil else { return }
        lookupIndex[entity, default: [:]][key, default: [:]][value] = destinationID(entity, sourceKey)
    }

    /// The slot of a relationship of the object being migrated. `lookupValue` is the
    /// compiled value expression of a `.lookup` mapping (compiled once per step, not per
    /// object); `ownEntity` is the destination entity of the object being made.
    mutating func relationshipSlot(_ relationship: RelationshipDescription, _ relationshipMapping: RelationshipMapping, lookupValue: ExpressionClosure?,
                                   source: ManagedObject, ownEntity: String, scope: EvaluationScope) throws -> SlotValue {
        var targets: [ObjectID] = []
        switch relationshipMapping {
        case .copy(let name):
            for id in try source.objectIDs(forRelationship: name) {
                // Of the entities the source object's entity becomes (two when a mapping splits
                // it), the one this relationship points at.
                let made = destinationsOf[id.entityName] ?? []
                guard let entity = made.first(where: { mapping.destination.entity(named: $0)?.isKind(of: relationship.destinationEntityName) == true }) ?? made.first,
                      let key = id.primaryKey else { continue }
                targets.append(destinationID(entity, key))
            }
        case .lookup(let entity, let key, _):
            guard let lookupValue else { break }
            let value = try lookupValue(source, scope).sortValue
            if let target = lookupIndex[entity]?[key]?[value] {
                targets.append(target)
                if held[target] == nil, let sourceKey = source.objectID.primaryKey, let inverseName = relationship.inverseName,
                   let targetEntity = mapping.destination.entity(named: entity), let inverseSlot = targetEntity.slot(of: inverseName),
                   let inverse = targetEntity.properties[inverseSlot].relationship, !(inverse.isDerivedFromInverse && inverse.isToMany) {
                    // An object made one per source object, not written yet: it takes its
                    // inverse reference when it is.
                    let me = destinationID(ownEntity, sourceKey)
                    if writtenTargets.contains(target) {
                        failures.append("\(ownEntity) \(sourceKey).\(relationship.name): its lookup found \(entity) \(target.primaryKey ?? 0), already written without the inverse \(inverseName); map \(entity) after \(ownEntity) (lookups between entities made one per source object must not go both ways)")
                    } else {
                        pendingInverse[target, default: []].append((inverseSlot, me))
                    }
                }
                if let sourceKey = source.objectID.primaryKey,
                    let inverseName = relationship.inverseName, case (let targetEntity, var slots)? = held.removeValue(forKey: target)
                {
                    if let inverseSlot = targetEntity.slot(of: inverseName) {
                        let me = destinationID(ownEntity, sourceKey)
                        // Appended in place: the list is taken out of the held object first
                        // (a copy per migrated object made a location of n tasks cost n^2).
                        if case .toMany(var ids) = slots[inverseSlot] {
                            slots[inverseSlot] = .toOne(nil)
                            ids.append(me)
                            slots[inverseSlot] = .toMany(ids)
                        } else {
                            slots[inverseSlot] = .toOne(me)
                        }
                    }
                    held[target] = (targetEntity, slots)
                }
            }
        }
        if relationship.isToMany { return .toMany(targets) }
        return .toOne(targets.first)
    }

    /// Adds one migrated object: with its source key, or a new key for a distinct object.
    mutating func add(entity: EntityDescription, key: Int64?, slots: [SlotValue]) throws {
        if let key {
            let id = destinationID(entity.name, key)
            var slots = slots
            if indexedTargets.contains(entity.name) {
                writtenTargets.insert(id)
                for (slot, other) in pendingInverse.removeValue(forKey: id) ?? [] {
                    switch slots[slot] {
                    case .toMany(var ids):
                        if !ids.contains(other) { ids.append(other) }
                        slots[slot] = .toMany(ids)
                    case .toOne(nil): slots[slot] = .toOne(other)
                    default: break
                    }
                }
            }
            validate(entity: entity, id: id, slots: slots)
            checkUniqueness(entity: entity, id: id, slots: slots)
            pending.inserted.append(StoredRow(objectID: id, version: 1, slots: Self.storable(entity, slots)))
            if pending.inserted.count >= batchSize { try flush() }
            return
        }
        let next = nextDistinctKey[entity.name, default: 1]
        nextDistinctKey[entity.name] = next + 1
        let id = destinationID(entity.name, next)
        held[id] = (entity, slots)
        heldOrder.append(id)
        for (index, property) in entity.properties.enumerated() {
            if let attribute = property.attribute, case .value(let value) = slots[index], !value.isNull {
                lookupIndex[entity.name, default: [:]][attribute.name, default: [:]][value] = id
            }
        }
    }

    /// The slots as a row holds them: a to-many derived from its inverse (which a lookup
    /// mapping may have filled on a held object) is empty.
    private static func storable(_ entity: EntityDescription, _ slots: [SlotValue]) -> [SlotValue] {
        var slots = slots
        for index in entity.unstoredSlots where index < slots.count {
            if let relationship = entity.properties[index].relationship, relationship.isDerivedFromInverse, relationship.isToMany {
                slots[index] = .toMany([])
            }
        }
        return slots
    }

    mutating func flush() throws {
        guard !pending.inserted.isEmpty else { return }
        pending.uniquenessChecked = true
        _ = try store.save(pending)
        pending = StoreChanges()
    }

    /// Writes the held objects and keeps every entity's key sequence ahead of the source's,
    /// so no key is ever reused.
    mutating func finish(sourceMetadata: StoreMetadata?) throws {
        for id in heldOrder {
            guard let (entity, slots) = held[id] else { continue }
            validate(entity: entity, id: id, slots: slots)
            checkUniqueness(entity: entity, id: id, slots: slots)
            pending.inserted.append(StoredRow(objectID: id, version: 1, slots: Self.storable(entity, slots)))
        }
        try flush()
        guard let sourceMetadata, let metadata = store.metadata else { return }
        for (source, destinations) in destinationsOf {
            for destination in destinations {
                let wanted = sourceMetadata.nextKey(for: source)
                let have = store.metadata?.nextKey(for: destination) ?? metadata.nextKey(for: destination)
                if wanted > have { _ = try store.allocateKeys(count: Int(wanted - have), entityName: destination) }
            }
        }
    }

    /// Records the object's constrained values, and a failure when an object of this step
    /// took them first.
    private mutating func checkUniqueness(entity: EntityDescription, id: ObjectID, slots: [SlotValue]) {
        let plan: [UniquenessCheck.Constrained]
        if let known = plans[entity.identity] {
            plan = known
        } else {
            plan = UniquenessCheck(model: mapping.destination).constrained(entity.name, buckets: &buckets)
            while taken.count < buckets.count { taken.append([:]) }
            plans[entity.identity] = plan
        }
        for item in plan {
            guard let key = item.key(of: slots) else { continue }
            let comparable = item.comparable(key)
            if let other = taken[item.bucket][comparable] {
                failures.append("\(entity.name) \(id.primaryKey ?? 0).\(item.constraint.joined(separator: ",")): \(item.clash(key, with: other))")
            } else {
                taken[item.bucket][comparable] = id
            }
        }
    }

    /// Checks an object against the new model with the entity's save checks (read where they
    /// are kept: copying each property's description per object was a tenth of a step).
    /// The step's time for schema patterns, as a save's (``MatchClock``).
    private let matchClock = MatchClock()

    private mutating func validate(entity: EntityDescription, id: ObjectID, slots: [SlotValue]) {
        var name: String { "\(entity.name) \(id.primaryKey ?? 0)" }
        let unstored = entity.unstoredSlots
        for check in entity.saveChecks {
            if check.relationship != nil {
                if !check.isOptional && slots[check.slot].referencedIDs.isEmpty {
                    failures.append("\(name): \(check.name) is required")
                }
                continue
            }
            guard !unstored.contains(check.slot), case .value(let value) = slots[check.slot],
                  let type = entity.attributeType(ofSlot: check.slot) else { continue }
            if value.isNull && !check.isOptional {
                failures.append("\(name): \(check.name) is required")
            }
            if !value.fits(type) {
                failures.append("\(name): \(check.name) holds \(value), not a \(type.rawValue)")
            }
            for failure in check.ruleFailures(for: value, clock: matchClock) {
                failures.append("\(name): \(check.name) \(failure.message)")
            }
        }
    }
}

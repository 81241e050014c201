import Foundation
import ObjectStoreModel

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
    private var nextDistinctKey: [String: Int64] = [:]
    /// Source entity name to the destination entity its objects become (same keys).
    private let destinationOf: [String: String]

    init(mapping: MappingModel, store: any PersistentStore, batchSize: Int) {
        self.mapping = mapping
        self.store = store
        self.batchSize = batchSize
        var map: [String: String] = [:]
        for entityMapping in mapping.entityMappings where entityMapping.distinctBy == nil {
            map[entityMapping.sourceEntity] = entityMapping.destinationEntity
        }
        destinationOf = map
    }

    private func destinationID(_ entity: String, _ key: Int64) -> ObjectID {
        ObjectID(entityName: entity, storeIdentifier: store.identifier, key: .permanent(key))
    }

    /// The slot of a relationship of the object being migrated.
    mutating func relationshipSlot(_ relationship: RelationshipDescription, _ relationshipMapping: RelationshipMapping, source: ManagedObject, scope: EvaluationScope, compiler: PredicateCompiler, sourceEntity: EntityDescription) throws -> SlotValue {
        var targets: [ObjectID] = []
        switch relationshipMapping {
        case .copy(let name):
            for id in try source.objectIDs(forRelationship: name) {
                guard let entity = destinationOf[id.entityName], let key = id.primaryKey else { continue }
                targets.append(destinationID(entity, key))
            }
        case .lookup(let entity, let key, let valueExpression):
            let value = try StoreMigrator.compileWithSource(valueExpression, compiler: compiler, entity: sourceEntity)(source, scope).sortValue
            if let target = lookupIndex[entity]?[key]?[value] {
                targets.append(target)
                if let sourceKey = source.objectID.primaryKey, let ownEntity = destinationOf[source.objectID.entityName],
                    let inverseName = relationship.inverseName, let (targetEntity, _) = held[target],
                    let inverseSlot = targetEntity.slot(of: inverseName)
                {
                    let me = destinationID(ownEntity, sourceKey)
                    switch held[target]?.1[inverseSlot] {
                    case .toMany(let ids)?: held[target]?.1[inverseSlot] = .toMany(ids + [me])
                    default: held[target]?.1[inverseSlot] = .toOne(me)
                    }
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
            validate(entity: entity, id: id, slots: slots)
            pending.inserted.append(StoredRow(objectID: id, version: 1, slots: slots))
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

    mutating func flush() throws {
        guard !pending.inserted.isEmpty else { return }
        _ = try store.save(pending)
        pending = StoreChanges()
    }

    /// Writes the held objects and keeps every entity's key sequence ahead of the source's,
    /// so no key is ever reused.
    mutating func finish(sourceMetadata: StoreMetadata?) throws {
        for id in heldOrder {
            guard let (entity, slots) = held[id] else { continue }
            validate(entity: entity, id: id, slots: slots)
            pending.inserted.append(StoredRow(objectID: id, version: 1, slots: slots))
        }
        try flush()
        guard let sourceMetadata, let metadata = store.metadata else { return }
        for (source, destination) in destinationOf {
            let wanted = sourceMetadata.nextKey(for: source)
            let have = metadata.nextKey(for: destination)
            if wanted > have { _ = try store.allocateKeys(count: Int(wanted - have), entityName: destination) }
        }
    }

    private mutating func validate(entity: EntityDescription, id: ObjectID, slots: [SlotValue]) {
        let name = "\(entity.name) \(id.primaryKey ?? 0)"
        for (index, property) in entity.properties.enumerated() {
            switch (property, slots[index]) {
            case (.attribute(let attribute), .value(let value)) where attribute.isStored:
                if value.isNull && !attribute.isOptional {
                    failures.append("\(name): \(attribute.name) is required")
                }
                if !value.fits(attribute.type) {
                    failures.append("\(name): \(attribute.name) holds \(value), not a \(attribute.type.rawValue)")
                }
                for failure in attribute.validation.failures(for: value) {
                    failures.append("\(name): \(attribute.name) \(failure.message)")
                }
            case (.relationship(let relationship), let slot):
                if !relationship.isOptional && slot.referencedIDs.isEmpty {
                    failures.append("\(name): \(relationship.name) is required")
                }
            default:
                break
            }
        }
    }
}

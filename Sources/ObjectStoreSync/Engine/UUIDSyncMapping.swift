import Foundation
import ObjectStore
import ObjectStoreModel

/// A mapping for any model: every object of an entity with a UUID attribute (by default
/// `uuid`, marked `"preserveValueOnDeletion": true` so a deletion can name it) travels as
/// one TaskChampion "task", keyed by that UUID:
///
/// | key | value |
/// | --- | --- |
/// | `_entity` | the object's entity |
/// | an attribute's name | its value as text (numbers and dates in decimal, dates as seconds since 1970, binary in base64); no key: nil |
/// | a to-one relationship's name | the related object's UUID; no key: none |
/// | `NAME_UUID` per object of a to-many relationship | empty |
///
/// A to-many relationship whose inverse is to-one travels on the to-one side only (it follows
/// from it); of a many-to-many pair, the side that is stored (not `derivedFromInverse`), or when
/// both are, the side of the entity whose name sorts first (or the relationship whose name does)
/// travels. Objects of entities without the UUID attribute,
/// and the sync state's entity, do not travel. A key of a property this model does not have
/// (a replica with a newer model) is skipped with a warning; so is a value that does not read
/// as its attribute's type.
public final class UUIDSyncMapping: SyncMapping {
    public let stateEntity: SyncStateEntity
    public let modifiedKey: String? = nil
    /// The attribute that names an object (a task's UUID).
    public let uuidAttribute: String
    static let entityKey = "_entity"

    /// What travels of an entity: its attributes and the relationships that travel.
    struct Plan {
        var attributes: [AttributeDescription] = []
        var toOne: [RelationshipDescription] = []
        var toMany: [RelationshipDescription] = []
    }

    let model: ManagedObjectModel
    let plans: [String: Plan]
    /// Entities without the UUID attribute (but the state's): their objects stay local.
    public let entitiesNotSynced: [String]
    /// The entities whose fetches (with their subentities) reach every object that travels.
    let roots: [String]

    /// A mapping for `model`, whose entity `stateEntity` holds the sync state. Throws when no
    /// entity has the UUID attribute, or one has it without `preserveValueOnDeletion`.
    public init(model: ManagedObjectModel, stateEntity: SyncStateEntity = SyncStateEntity(), uuidAttribute: String = "uuid") throws {
        self.model = model
        self.stateEntity = stateEntity
        self.uuidAttribute = uuidAttribute
        func travels(_ entity: EntityDescription) -> Bool {
            entity.name != stateEntity.name && entity.properties.contains { $0.attribute?.name == uuidAttribute && $0.attribute?.type == .uuid }
        }
        var plans: [String: Plan] = [:]
        for entity in model.entities where travels(entity) {
            guard entity.properties.first(where: { $0.name == uuidAttribute })?.attribute?.preservesValueOnDeletion == true else {
                throw SyncMappingError(reason: "\(entity.name).\(uuidAttribute) must be marked \"preserveValueOnDeletion\": true, so a deletion can name the object it deleted")
            }
            var plan = Plan()
            for property in entity.properties {
                if let attribute = property.attribute, attribute.isStored, attribute.name != uuidAttribute {
                    plan.attributes.append(attribute)
                } else if let relationship = property.relationship, !relationship.isTransient,
                          let destination = model.entity(named: relationship.destinationEntityName), travels(destination) {
                    if !relationship.isToMany {
                        plan.toOne.append(relationship)
                        continue
                    }
                    // A side derived from its inverse is what the inverse says.
                    if relationship.isDerivedFromInverse { continue }
                    let inverse = relationship.inverseName.flatMap { name in destination.properties.first { $0.name == name }?.relationship }
                    if let inverse, !inverse.isToMany { continue }
                    if let inverse, !inverse.isDerivedFromInverse, (destination.name, inverse.name) < (entity.name, relationship.name) { continue }
                    plan.toMany.append(relationship)
                }
            }
            plans[entity.name] = plan
        }
        guard !plans.isEmpty else { throw SyncMappingError(reason: "no entity has a UUID attribute named \(uuidAttribute)") }
        self.plans = plans
        entitiesNotSynced = model.entities.filter { !$0.isAbstract && $0.name != stateEntity.name && plans[$0.name] == nil }.map(\.name).sorted()
        roots = plans.keys.filter { name in model.entity(named: name)?.parentName.map { plans[$0] == nil } ?? true }.sorted()
    }

    // MARK: Objects by UUID, read once per context

    private weak var cachedContext: ManagedObjectContext?
    private var byUUID: [UUID: ManagedObject] = [:]
    /// UUIDs of objects made on two replicas with the same unique values, to the UUID every
    /// replica keeps for them (the smaller): a reference to either reaches the one object.
    /// Kept in the sync state's `aliases` attribute when the model has it (one "LOSER WINNER"
    /// pair a line), so references that arrive in later syncs resolve too.
    private var aliases: [UUID: UUID] = [:]
    /// Per entity and uniqueness constraint of attributes that travel: the object holding
    /// each tuple of values, to find the local twin of an object received.
    private var uniqueIndex: [String: [[String]: [[Value]: ManagedObject]]] = [:]
    /// To-many keys received for objects not there yet, set once every object of the batch is.
    private var pendingLinks: [(object: ManagedObject, relationship: String, targets: [UUID])] = []
    private var pendingToOne: [(object: ManagedObject, relationship: String, target: UUID)] = []

    private func load(_ context: ManagedObjectContext) throws {
        guard cachedContext !== context else { return }
        byUUID = [:]
        uniqueIndex = [:]
        for root in roots {
            for object in try context.fetch(FetchRequest(entityName: root)) where plans[object.entity.name] != nil {
                if case .uuid(let uuid) = object[uuidAttribute] { byUUID[uuid] = object }
                index(object)
            }
        }
        if let state = try stateObject(in: context), case .string(let text) = state["aliases"] {
            for line in text.split(separator: "\n") {
                let pair = line.split(separator: " ")
                if pair.count == 2, let loser = UUID(uuidString: String(pair[0])), let winner = UUID(uuidString: String(pair[1])) { aliases[loser] = winner }
            }
        }
        pendingLinks = []
        pendingToOne = []
        cachedContext = context
    }

    private func uuid(of object: ManagedObject) -> UUID? {
        if case .uuid(let uuid) = object[uuidAttribute] { return uuid }
        return nil
    }

    /// The object a received UUID names: its own, or the one it was merged into.
    private func resolved(_ uuid: UUID) -> ManagedObject? {
        var current = uuid
        for _ in 0..<8 {
            if let object = byUUID[current] { return object }
            guard let next = aliases[current] else { return nil }
            current = next
        }
        return nil
    }

    /// The uniqueness constraints of an entity made of attributes that travel.
    private func travellingConstraints(of entity: EntityDescription) -> [[String]] {
        guard let plan = plans[entity.name] else { return [] }
        let names = Set(plan.attributes.map(\.name))
        return entity.uniquenessConstraints.filter { !$0.isEmpty && $0.allSatisfy(names.contains) }
    }

    private func index(_ object: ManagedObject) {
        for constraint in travellingConstraints(of: object.entity) {
            let values = constraint.map { object[$0] }
            guard !values.contains(where: \.isNull) else { continue }
            uniqueIndex[object.entity.name, default: [:]][constraint, default: [:]][values] = object
        }
    }

    private func stateObject(in context: ManagedObjectContext) throws -> ManagedObject? {
        guard model.entity(named: stateEntity.name)?.attribute(named: "aliases")?.type == .string else { return nil }
        return try context.fetch(FetchRequest(entityName: stateEntity.name)).first
    }

    /// Records that `loser` is now `winner`, in the sync state when the model keeps it.
    private func alias(_ loser: UUID, to winner: UUID, in context: ManagedObjectContext) throws {
        aliases[loser] = winner
        guard let state = try stateObject(in: context) else { return }
        let text = aliases.sorted { $0.key.uuidString < $1.key.uuidString }
            .map { "\($0.key.uuidString.lowercased()) \($0.value.uuidString.lowercased())" }.joined(separator: "\n")
        try state.setValue(.string(text), forKey: "aliases")
    }

    /// A local object with the unique values a received new object has: made on two replicas
    /// (a Department "Finance" on each). Every replica keeps the one of the smaller UUID, so
    /// they all end with one object under one UUID, whatever order they sync in.
    private func twin(of entityName: String, properties: [String: String]) -> ManagedObject? {
        guard let entity = model.entity(named: entityName) else { return nil }
        for constraint in travellingConstraints(of: entity) {
            var values: [Value] = []
            for name in constraint {
                guard let attribute = entity.attribute(named: name), let text = properties[name], let value = Self.value(text, as: attribute.type) else { break }
                values.append(value)
            }
            guard values.count == constraint.count else { continue }
            // The entity's own index, or an ancestor's whose constraint it inherits.
            for owner in [entity.name] + entity.ancestorNames {
                if let object = uniqueIndex[owner]?[constraint]?[values], !object.isDeleted { return object }
            }
        }
        return nil
    }

    // MARK: SyncMapping

    public func allTasks(in context: ManagedObjectContext) throws -> [(uuid: UUID, properties: [String: String])] {
        try load(context)
        return try byUUID.keys.sorted { $0.uuidString < $1.uuidString }.compactMap { uuid in
            try task(uuid, in: context).map { (uuid, $0) }
        }
    }

    public func task(_ uuid: UUID, in context: ManagedObjectContext) throws -> [String: String]? {
        try load(context)
        guard let object = byUUID[uuid], !object.isDeleted, let plan = plans[object.entity.name] else { return nil }
        var properties = [Self.entityKey: object.entity.name]
        for attribute in plan.attributes {
            if let text = Self.text(object[attribute.name]) { properties[attribute.name] = text }
        }
        for relationship in plan.toOne {
            if let target = try object.object(forKey: relationship.name), let id = self.uuid(of: target) {
                properties[relationship.name] = id.uuidString.lowercased()
            }
        }
        for relationship in plan.toMany {
            for target in try object.objects(forKey: relationship.name) {
                if let id = self.uuid(of: target) { properties[relationship.name + "_" + id.uuidString.lowercased()] = "" }
            }
        }
        return properties
    }

    public func touches(of change: HistoryChange, tombstones: SyncTombstones, in context: ManagedObjectContext) throws -> [SyncTouch] {
        try load(context)
        guard let plan = plans[change.entityName] else { return [] }
        func uuid(_ id: ObjectID) -> UUID? {
            if let object = try? context.existingObject(with: id), !object.isDeleted, let uuid = self.uuid(of: object) { return uuid }
            if case .uuid(let uuid)? = tombstones[id, uuidAttribute] { return uuid }
            return nil
        }
        guard let subject = uuid(change.objectID) else { return [] }
        switch change.kind {
        case .insert: return [SyncTouch(task: subject, kind: .created)]
        case .delete: return [SyncTouch(task: subject, kind: .deleted)]
        case .update:
            var keys: Set<String> = []
            for property in change.values {
                if property.name == uuidAttribute || plan.attributes.contains(where: { $0.name == property.name }) || plan.toOne.contains(where: { $0.name == property.name }) {
                    keys.insert(property.name)
                } else if plan.toMany.contains(where: { $0.name == property.name }) {
                    for id in property.oldValue.referencedIDs + property.newValue.referencedIDs {
                        if let target = uuid(id) { keys.insert(property.name + "_" + target.uuidString.lowercased()) }
                    }
                }
            }
            return keys.isEmpty ? [] : [SyncTouch(task: subject, kind: .keys(keys))]
        }
    }

    public func write(_ properties: [String: String]?, for uuid: UUID, in context: ManagedObjectContext) throws -> [String] {
        try load(context)
        let existing = resolved(uuid).flatMap { $0.isDeleted ? nil : $0 }
        guard let properties else {
            if let existing { context.delete(existing) }
            byUUID[uuid] = nil
            return []
        }
        var warnings: [String] = []
        let name = uuid.uuidString.lowercased()
        let object: ManagedObject
        if let existing {
            object = existing
        } else {
            guard let entityName = properties[Self.entityKey], plans[entityName] != nil, model.entity(named: entityName)?.isAbstract == false else {
                return ["\(name): no entity of this model to make it as (\(Self.entityKey) is '\(properties[Self.entityKey] ?? "")'); not kept"]
            }
            if let twin = twin(of: entityName, properties: properties), let local = self.uuid(of: twin), local != uuid {
                // The same unique values made on two replicas: one object, under the smaller UUID.
                let (winner, loser) = uuid.uuidString.lowercased() < local.uuidString.lowercased() ? (uuid, local) : (local, uuid)
                if winner == uuid {
                    try twin.setValue(.uuid(uuid), forKey: uuidAttribute)
                    byUUID[local] = nil
                }
                byUUID[winner] = twin
                try alias(loser, to: winner, in: context)
                warnings.append("\(name): a \(entityName) with the same unique values was made on another replica (\(local.uuidString.lowercased()) here); both are one object now, \(winner.uuidString.lowercased()), on every replica")
                object = twin
            } else {
                object = try context.insertObject(entityName: entityName)
                try object.setValue(.uuid(uuid), forKey: uuidAttribute)
                byUUID[uuid] = object
            }
        }
        guard let plan = plans[object.entity.name] else { return [] }
        var known: Set<String> = [Self.entityKey]
        for attribute in plan.attributes {
            known.insert(attribute.name)
            let value: Value
            if let text = properties[attribute.name] {
                guard let read = Self.value(text, as: attribute.type) else {
                    warnings.append("\(name): '\(text)' is not a \(attribute.type.rawValue) for \(object.entity.name).\(attribute.name); left as it was")
                    continue
                }
                value = read
            } else {
                value = attribute.isOptional ? .null : attribute.defaultValue
            }
            if object[attribute.name] != value { try object.setValue(value, forKey: attribute.name) }
        }
        index(object)
        for relationship in plan.toOne {
            known.insert(relationship.name)
            if let text = properties[relationship.name] {
                guard let target = UUID(uuidString: text) else {
                    warnings.append("\(name): '\(text)' is not a UUID for \(object.entity.name).\(relationship.name); left as it was")
                    continue
                }
                pendingToOne.append((object, relationship.name, target))
            } else if try object.object(forKey: relationship.name) != nil {
                try object.setObject(nil, forKey: relationship.name)
            }
        }
        for relationship in plan.toMany {
            let prefix = relationship.name + "_"
            var targets: [UUID] = []
            for (key, _) in properties where key.hasPrefix(prefix) {
                guard let target = UUID(uuidString: String(key.dropFirst(prefix.count))) else { continue }
                known.insert(key)
                targets.append(target)
            }
            pendingLinks.append((object, relationship.name, targets))
        }
        for key in properties.keys.sorted() where !known.contains(key) {
            warnings.append("\(name): \(object.entity.name) has no property for the key '\(key)' (a newer model's?); skipped")
        }
        return warnings
    }

    /// Sets the relationships received, now that every object of the batch is in the context.
    public func finishWrites(in context: ManagedObjectContext) throws -> [String] {
        var warnings: [String] = []
        for (object, relationship, target) in pendingToOne where !object.isDeleted {
            guard let destination = resolved(target), !destination.isDeleted else {
                warnings.append("\(uuid(of: object)?.uuidString.lowercased() ?? "?"): \(relationship) names \(target.uuidString.lowercased()), which this replica does not have; left empty")
                if try object.object(forKey: relationship) != nil { try object.setObject(nil, forKey: relationship) }
                continue
            }
            if try object.object(forKey: relationship) !== destination { try object.setObject(destination, forKey: relationship) }
        }
        for (object, relationship, targets) in pendingLinks where !object.isDeleted {
            let wanted = targets.compactMap { resolved($0) }.filter { !$0.isDeleted }
            let current = try object.objects(forKey: relationship)
            if Set(current.map(ObjectIdentifier.init)) != Set(wanted.map(ObjectIdentifier.init)) { try object.setObjects(wanted, forKey: relationship) }
        }
        pendingToOne = []
        pendingLinks = []
        return warnings
    }

    // MARK: Values as text

    /// An attribute's value as text; nil for none.
    static func text(_ value: Value) -> String? {
        switch value {
        case .null: return nil
        case .bool(let flag): return flag ? "true" : "false"
        case .integer(let number): return String(number)
        case .double(let number): return "\(number)"
        case .decimal(let number): return "\(number)"
        case .string(let text): return text
        case .date(let date): return "\(date.timeIntervalSince1970)"
        case .data(let data): return data.base64EncodedString()
        case .uuid(let uuid): return uuid.uuidString.lowercased()
        case .uri(let url): return url.absoluteString
        }
    }

    /// Text read as a value of `type`; nil when it is not one.
    static func value(_ text: String, as type: AttributeType) -> Value? {
        switch type {
        case .int16, .int32, .int64: return Int64(text).map(Value.integer)
        case .double, .float: return Double(text).map(Value.double)
        case .decimal: return Decimal(string: text).map(Value.decimal)
        case .string: return .string(text)
        case .boolean: return text == "true" ? .bool(true) : text == "false" ? .bool(false) : nil
        case .date: return Double(text).map { .date(Date(timeIntervalSince1970: $0)) }
        case .binary: return Data(base64Encoded: text).map(Value.data)
        case .uuid: return UUID(uuidString: text).map(Value.uuid)
        case .uri: return URL(string: text).map(Value.uri)
        }
    }
}

/// A model the sync cannot serve, and why (no entity with the UUID attribute, or one whose
/// UUID is not kept on deletion, or no sync state entity).
public struct SyncMappingError: Error, Sendable, CustomStringConvertible {
    /// Why.
    public var reason: String
    /// The reason.
    public var description: String { reason }
}

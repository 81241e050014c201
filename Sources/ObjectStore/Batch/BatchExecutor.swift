import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// Runs batch requests in a coordinator's store: the objects are found as a fetch finds them
/// (rows tested in place), their rows changed and saved in chunks that a binary store
/// commits together (one commit, one transaction of the store's history), under the
/// coordinator's save lock and the store's exclusive access. No managed object is made,
/// except where a predicate or expression reaches through a relationship.
struct BatchExecutor {
    let coordinator: PersistentStoreCoordinator
    let author: String?
    let contextName: String?
    /// Whether the caller has begun the commit (``ManagedObjectContext/executeInsideCommit(_:)``).
    var insideCommit = false

    /// Rows saved at a time (a binary store stages each chunk; the others save once).
    static let chunkSize = 16_384
    /// The most validation failures a refused request reports.
    static let failureLimit = 100

    private var store: any PersistentStore { coordinator.store }
    private var model: ManagedObjectModel { coordinator.model }

    /// Runs `body` as one write with a context that reads the store, and `save` writing a
    /// chunk of changes: staged for one commit in a binary store, gathered for one save in
    /// the others.
    private func writing<T>(_ body: (ManagedObjectContext, _ save: (StoreChanges) throws -> [ObjectID: ObjectID]) throws -> T) throws -> T {
        try coordinator.withSaveLock {
            let reader = ManagedObjectContext(coordinator: coordinator)
            reader.undoManager = nil
            let result: T
            if insideCommit {
                result = try body(reader) { changes in
                    var changes = changes
                    changes.transaction = draft(updated: changes.updated.count, deleted: changes.deleted.count)
                    return try store.save(changes)
                }
            } else if store.hasEncodedRows {
                result = try store.committingTogether {
                    try body(reader) { changes in
                        var changes = changes
                        changes.transaction = draft(updated: changes.updated.count, deleted: changes.deleted.count)
                        return try store.save(changes)
                    }
                }
            } else {
                result = try store.withExclusiveAccess {
                    var gathered = StoreChanges()
                    var mapping: [ObjectID: ObjectID] = [:]
                    let result = try body(reader) { changes in
                        gathered.inserted += changes.inserted
                        gathered.updated += changes.updated
                        gathered.deleted += changes.deleted
                        gathered.constrainedValuesKept.formUnion(changes.constrainedValuesKept)
                        // Temporary IDs become permanent at the one save; the keys are
                        // allocated now so the caller learns them chunk by chunk.
                        guard let first = changes.inserted.first else { return [:] }
                        let keys = try store.allocateKeys(count: changes.inserted.count, entityName: first.objectID.entityName)
                        var chunk: [ObjectID: ObjectID] = [:]
                        for (row, key) in zip(changes.inserted, keys) {
                            chunk[row.objectID] = ObjectID(row.objectID.scope, key: .permanent(key))
                        }
                        mapping.merge(chunk) { a, _ in a }
                        return chunk
                    }
                    guard !gathered.isEmpty else { return result }
                    gathered.inserted = gathered.inserted.map { StoredRow(objectID: mapping[$0.objectID] ?? $0.objectID, version: $0.version, slots: $0.slots) }
                    gathered.transaction = draft(updated: gathered.updated.count, deleted: gathered.deleted.count)
                    _ = try store.save(gathered)
                    return result
                }
            }
            coordinator.noteOwnTransaction()
            return result
        }
    }

    /// Who wrote the transaction, with the values before read by the store from its rows.
    private func draft(updated: Int, deleted: Int) -> TransactionDraft? {
        guard store.keepsHistory else { return nil }
        var draft = TransactionDraft(author: author, contextName: contextName, timestamp: coordinator.clock())
        draft.oldRanges = [Range<Int>?](repeating: nil, count: updated)
        draft.tombstones = [[(slot: Int, value: SlotValue)]?](repeating: nil, count: deleted)
        return draft
    }

    private func entity(_ name: String) throws -> EntityDescription {
        guard let entity = model.entity(named: name) else {
            throw ObjectStoreError.unknownEntity(name, suggestion: NameSuggestion.closest(to: name, in: model.entities.map(\.name)))
        }
        return entity
    }

    /// The attribute a batch request may write at `key` of `entity`, with its slot.
    private func writableAttribute(_ key: String, of entity: EntityDescription, request: String) throws -> (slot: Int, attribute: AttributeDescription) {
        guard let slot = entity.slot(of: key) else {
            throw ObjectStoreError.unknownKey(entity: entity.name, key: key, suggestion: NameSuggestion.closest(to: key, in: entity.properties.map(\.name)))
        }
        switch entity.kind(ofSlot: slot) {
        case .derivedAttribute: throw ObjectStoreError.readOnly(entity: entity.name, key: key)
        case .toOne, .toMany:
            throw ObjectStoreError.invalidBatchRequest("\(entity.name).\(key) is a relationship: a batch \(request) sets attributes only (relate objects in a context)")
        case .attribute: break
        }
        guard let attribute = entity.properties[slot].attribute, attribute.isStored else {
            throw ObjectStoreError.invalidBatchRequest("\(entity.name).\(key) is transient: it is never stored, so a batch \(request) has nothing to write")
        }
        return (slot, attribute)
    }

    /// The failures of one attribute value, as a save finds them (required, rules, the years
    /// stores keep).
    private static func failures(of value: Value, _ attribute: AttributeDescription, check: EntityDescription.SaveCheck?, clock: MatchClock) -> [(ValidationRules.Rule, String)] {
        if value.isNull { return attribute.isOptional ? [] : [(.required, "is required")] }
        var failures = (check?.ruleFailures(for: value, clock: clock) ?? []).map { ($0.rule, $0.message) }
        if case .date(let date) = value, !ISO8601.supportedDates.contains(date) {
            failures.append((date < ISO8601.supportedDates.lowerBound ? .minimum : .maximum, "is outside the years 0001 to 9999 that stores keep"))
        }
        return failures
    }

    // MARK: Update

    private enum NewValue {
        case constant(Value, failures: [(ValidationRules.Rule, String)])
        case expression(ExpressionClosure)
    }

    func update(_ request: BatchUpdateRequest) throws -> (BatchResult, SaveNotification) {
        let base = try entity(request.entityName)
        guard !request.propertiesToUpdate.isEmpty else {
            throw ObjectStoreError.invalidBatchRequest("the batch update of \(base.name) sets nothing: propertiesToUpdate is empty")
        }
        let compiler = PredicateCompiler(model: model)
        let clock = MatchClock()
        var setters: [(slot: Int, attribute: AttributeDescription, value: NewValue)] = []
        for (key, expression) in request.propertiesToUpdate.sorted(by: { $0.key < $1.key }) {
            let (slot, attribute) = try writableAttribute(key, of: base, request: "update")
            let check = base.saveChecks.first { $0.slot == slot }
            if case .constant(let given) = expression {
                let value = try ManagedObject.coerce(given, to: attribute, entity: base.name)
                setters.append((slot, attribute, .constant(value, failures: Self.failures(of: value, attribute, check: check, clock: clock))))
            } else {
                _ = try PredicateTypeChecker(model: model).type(of: expression, on: base.name)
                setters.append((slot, attribute, .expression(compiler.compile(expression, entity: base))))
            }
        }
        let checks = Dictionary(base.saveChecks.map { ($0.slot, $0) }, uniquingKeysWith: { a, _ in a })
        let constrained = Set(model.entityAndDescendants(of: base.name).flatMap(\.constrainedSlots))
        let changed: [ObjectID] = try writing { context, save in
            var fetch = FetchRequest(entityName: base.name, predicate: request.predicate)
            fetch.includesSubentities = request.includesSubentities
            // Each match with the row the scan read (looking every one up again was a fifth
            // of the update's writing); a match the context holds is read from the store.
            let matches = try context.fetchSavedMatches(fetch)
            var scratch = FetchExecutor.ScratchObjects(context: context)
            let scope = context.evaluationScope()
            var changed: [ObjectID] = []
            var failures: [ValidationFailure] = []
            var start = 0
            while start < matches.count {
                let chunk = matches[start..<min(matches.count, start + Self.chunkSize)]
                start += chunk.count
                var changes = StoreChanges()
                for (id, saved) in chunk {
                    let row: StoredRow
                    if let state = try saved?() {
                        row = StoredRow(objectID: id, version: state.version, slots: state.slots.values)
                    } else if let stored = try store.row(for: id) {
                        row = stored
                    } else {
                        continue
                    }
                    guard let entity = model.entity(named: id.entityName) else { continue }
                    var slots = row.slots
                    var constrainedChanged = false
                    for (slot, attribute, newValue) in setters where slot < slots.count {
                        let value: Value
                        switch newValue {
                        case .constant(let constant, let broken):
                            value = constant
                            for (rule, message) in broken where failures.count < Self.failureLimit {
                                failures.append(ValidationFailure(objectID: id, entityName: entity.name, key: attribute.name, value: value, rule: rule, message: message))
                            }
                        case .expression(let closure):
                            let object = scratch.holding(Slots(row.slots), of: id, entity: entity)
                            guard let computed = try closure(object, scope).scalar else {
                                throw ObjectStoreError.wrongType(entity: entity.name, key: attribute.name, expected: attribute.type.rawValue, given: "an object or a collection from \(request.propertiesToUpdate[attribute.name].map { "\($0)" } ?? "the expression")")
                            }
                            value = try ManagedObject.coerce(computed, to: attribute, entity: entity.name)
                            for (rule, message) in Self.failures(of: value, attribute, check: checks[slot], clock: clock) where failures.count < Self.failureLimit {
                                failures.append(ValidationFailure(objectID: id, entityName: entity.name, key: attribute.name, value: value, rule: rule, message: message))
                            }
                        }
                        guard slots[slot] != .value(value) else { continue }
                        slots[slot] = .value(value)
                        if constrained.contains(slot) { constrainedChanged = true }
                    }
                    guard slots != row.slots else { continue }
                    changes.updated.append((StoredRow(objectID: id, version: row.version + 1, slots: slots), row.version))
                    if !constrainedChanged { changes.constrainedValuesKept.insert(id) }
                    changed.append(id)
                }
                if !failures.isEmpty { throw ValidationError(failures: failures) }
                if !changes.isEmpty { _ = try save(changes) }
            }
            return changed
        }
        let notification = SaveNotification(inserted: [], updated: Set(changed), deleted: [], contextIdentifier: UUID())
        return (BatchResult.of(request.resultType, changed), notification)
    }

    // MARK: Delete

    func delete(_ request: BatchDeleteRequest) throws -> (BatchResult, SaveNotification) {
        if let given = request.objectIDs {
            for id in given where id.storeIdentifier != store.identifier || id.isTemporary {
                throw ObjectStoreError.invalidBatchRequest("\(id) is not a saved object of this store")
            }
        } else {
            _ = try entity(request.entityName)
        }
        let (deleted, nullified): ([ObjectID], [ObjectID]) = try writing { context, save in
            var ids: [ObjectID]
            // The matches' rows as the scan read them (read when a rule needs their
            // references; looking each one up again was a quarter of the delete).
            var scanned: [ObjectID: FetchExecutor.SavedState] = [:]
            if let given = request.objectIDs {
                var seen = Set<ObjectID>()
                ids = []
                for id in given where seen.insert(id).inserted {
                    if try store.row(for: id) != nil { ids.append(id) }
                }
            } else {
                var fetch = FetchRequest(entityName: request.entityName, predicate: request.predicate)
                fetch.includesSubentities = request.includesSubentities
                let matches = try context.fetchSavedMatches(fetch)
                ids = matches.map(\.id)
                scanned.reserveCapacity(matches.count)
                for (id, saved) in matches { scanned[id] = saved }
            }
            var rows: [ObjectID: StoredRow] = [:]
            func row(_ id: ObjectID) throws -> StoredRow? {
                if let known = rows[id] { return known }
                let read: StoredRow?
                if let state = try scanned[id]?() {
                    read = StoredRow(objectID: id, version: state.version, slots: state.slots.values)
                } else {
                    read = try store.row(for: id)
                }
                rows[id] = read
                return read
            }
            // The deleted objects (cascades followed to the end), and what the rules left
            // to check (deny) or to change (nullify).
            var deleting = Set(ids)
            var order = ids
            var frontier = ids
            var denied: [(source: ObjectID, relationship: RelationshipDescription, targets: [ObjectID])] = []
            var nullify: [(source: ObjectID, inverse: RelationshipDescription, targets: [ObjectID])] = []
            while !frontier.isEmpty {
                var next: [ObjectID] = []
                for (name, group) in Dictionary(grouping: frontier, by: \.entityName).sorted(by: { $0.key < $1.key }) {
                    guard let entity = model.entity(named: name) else { continue }
                    for relationship in entity.relationships where !relationship.isTransient {
                        let inverse = context.inverse(of: relationship)
                        switch relationship.deleteRule {
                        case .noAction: continue
                        case .nullify:
                            // Only a stored inverse holds the deleted object.
                            guard let inverse, !inverse.isTransient, !inverse.isDerivedFromInverse else { continue }
                        case .cascade, .deny: break
                        }
                        guard let slot = entity.slot(of: relationship.name) else { continue }
                        var targets: [ObjectID: [ObjectID]] = [:]
                        if relationship.isDerivedFromInverse {
                            targets = try context.derivedMembers(of: Set(group), relationship)
                        } else {
                            for id in group {
                                guard let saved = try row(id), slot < saved.slots.count else { continue }
                                let referenced = saved.slots[slot].referencedIDs
                                if !referenced.isEmpty { targets[id] = referenced }
                            }
                        }
                        for id in group {
                            guard let destinations = targets[id], !destinations.isEmpty else { continue }
                            switch relationship.deleteRule {
                            case .cascade:
                                for destination in destinations where deleting.insert(destination).inserted {
                                    next.append(destination)
                                    order.append(destination)
                                }
                            case .deny: denied.append((id, relationship, destinations))
                            case .nullify: if let inverse { nullify.append((id, inverse, destinations)) }
                            case .noAction: break
                            }
                        }
                    }
                }
                frontier = next
            }
            var failures: [ValidationFailure] = []
            for (source, relationship, targets) in denied {
                let remaining = targets.filter { !deleting.contains($0) }
                guard !remaining.isEmpty, failures.count < Self.failureLimit else { continue }
                failures.append(ValidationFailure(
                    objectID: source, entityName: source.entityName, key: relationship.name, value: nil, rule: .deny,
                    message: "cannot delete this \(source.entityName): its '\(relationship.name)' still has \(remaining.count) object(s) and its delete rule is deny"))
            }
            // The objects left behind lose the deleted ones from their inverse.
            var edited: [ObjectID: (row: StoredRow, version: Int64)] = [:]
            var editOrder: [ObjectID] = []
            for (source, inverse, targets) in nullify {
                for target in targets where !deleting.contains(target) {
                    guard let targetEntity = model.entity(named: target.entityName), let slot = targetEntity.slot(of: inverse.name) else { continue }
                    var current: StoredRow
                    if let known = edited[target]?.row {
                        current = known
                    } else {
                        guard let saved = try row(target) else { continue }
                        current = saved
                        editOrder.append(target)
                        edited[target] = (saved, saved.version)
                    }
                    guard slot < current.slots.count else { continue }
                    switch current.slots[slot] {
                    case .toOne(let id?) where id == source: current.slots[slot] = .toOne(nil)
                    case .toMany(let list) where list.contains(source): current.slots[slot] = .toMany(list.filter { $0 != source })
                    default: continue
                    }
                    edited[target]?.row = current
                }
            }
            // A nullified inverse must still satisfy its own rules (required, fewest objects).
            for id in editOrder {
                guard let (current, _) = edited[id], let entity = model.entity(named: id.entityName) else { continue }
                for check in entity.saveChecks where check.relationship != nil && check.slot < current.slots.count && failures.count < Self.failureLimit {
                    guard let cardinality = check.relationship, !entity.isDerivedToMany(slot: check.slot) else { continue }
                    let count = current.slots[check.slot].referencedIDs.count
                    if count == 0 && !check.isOptional {
                        failures.append(ValidationFailure(objectID: id, entityName: entity.name, key: check.name, value: nil, rule: .required,
                                                          message: "is required, and the batch delete would leave it empty"))
                    } else if cardinality.isToMany, count > 0 || !check.isOptional, let minCount = cardinality.minCount, count < minCount {
                        failures.append(ValidationFailure(objectID: id, entityName: entity.name, key: check.name, value: nil, rule: .minCount,
                                                          message: "has \(count) object(s) after the batch delete, at least \(minCount) required"))
                    }
                }
            }
            if !failures.isEmpty { throw ValidationError(failures: failures) }
            var changes = StoreChanges()
            for id in order {
                if rows[id] == nil, let state = scanned[id] {
                    changes.deleted.append((id, state.version))
                    continue
                }
                guard let saved = try row(id) else { continue }
                changes.deleted.append((id, saved.version))
                rows[id] = nil
            }
            for id in editOrder {
                guard let (current, version) = edited[id] else { continue }
                changes.updated.append((StoredRow(objectID: id, version: version + 1, slots: current.slots), version))
                changes.constrainedValuesKept.insert(id)
            }
            let deleted = changes.deleted.map(\.id)
            if !changes.isEmpty { _ = try save(changes) }
            return (deleted, editOrder)
        }
        let notification = SaveNotification(inserted: [], updated: Set(nullified), deleted: Set(deleted), contextIdentifier: UUID())
        return (BatchResult.of(request.resultType, deleted), notification)
    }

    // MARK: Insert

    func insert(_ request: BatchInsertRequest) throws -> (BatchResult, SaveNotification) {
        let entity = try entity(request.entityName)
        guard !entity.isAbstract else { throw ObjectStoreError.abstractEntity(entity.name) }
        let initial = entity.properties.map(SlotValue.initial(for:))
        let clock = MatchClock()
        var writable: [String: (slot: Int, attribute: AttributeDescription)] = [:]
        let scope = ObjectID.Scope.of(entityName: entity.name, storeIdentifier: store.identifier)
        // The checks of values no dictionary gives (defaults), made once.
        let checks = entity.saveChecks
        var defaultFailures: [Int: [(ValidationRules.Rule, String)]] = [:]
        for check in checks {
            if check.relationship != nil {
                if !check.isOptional { defaultFailures[check.slot] = [(.required, "is required, and a batch insert sets no relationships")] }
            } else if case .value(let value) = initial[check.slot], let attribute = entity.properties[check.slot].attribute, attribute.isStored {
                let broken = Self.failures(of: value, attribute, check: check, clock: clock)
                if !broken.isEmpty { defaultFailures[check.slot] = broken }
            }
        }
        let checksBySlot = Dictionary(checks.map { ($0.slot, $0) }, uniquingKeysWith: { a, _ in a })
        var next = 0
        func nextDictionary() throws -> [String: Value]? {
            if let handler = request.dictionaryHandler {
                var values: [String: Value] = [:]
                return try handler(&values) ? nil : values
            }
            guard next < request.objects.count else { return nil }
            defer { next += 1 }
            return request.objects[next]
        }
        let inserted: [ObjectID] = try writing { _, save in
            var inserted: [ObjectID] = []
            var failures: [ValidationFailure] = []
            var finished = false
            while !finished {
                var changes = StoreChanges()
                while changes.inserted.count < Self.chunkSize {
                    guard let values = try nextDictionary() else {
                        finished = true
                        break
                    }
                    let id = ObjectID(scope, key: .temporary(TemporaryID.next()))
                    var slots = initial
                    var given = Set<Int>()
                    for (key, value) in values {
                        let (slot, attribute): (Int, AttributeDescription)
                        if let known = writable[key] {
                            (slot, attribute) = known
                        } else {
                            (slot, attribute) = try writableAttribute(key, of: entity, request: "insert")
                            writable[key] = (slot, attribute)
                        }
                        let coerced = try ManagedObject.coerce(value, to: attribute, entity: entity.name)
                        slots[slot] = .value(coerced)
                        given.insert(slot)
                        for (rule, message) in Self.failures(of: coerced, attribute, check: checksBySlot[slot], clock: clock) where failures.count < Self.failureLimit {
                            failures.append(ValidationFailure(objectID: id, entityName: entity.name, key: key, value: coerced, rule: rule, message: message))
                        }
                    }
                    for (slot, broken) in defaultFailures where !given.contains(slot) {
                        for (rule, message) in broken where failures.count < Self.failureLimit {
                            failures.append(ValidationFailure(objectID: id, entityName: entity.name, key: entity.properties[slot].name, value: nil, rule: rule, message: message))
                        }
                    }
                    changes.inserted.append(StoredRow(objectID: id, version: 1, slots: slots))
                }
                if !failures.isEmpty { throw ValidationError(failures: failures) }
                guard !changes.isEmpty else { break }
                let mapping = try save(changes)
                inserted += changes.inserted.map { mapping[$0.objectID] ?? $0.objectID }
            }
            return inserted
        }
        let notification = SaveNotification(inserted: Set(inserted), updated: [], deleted: [], contextIdentifier: UUID())
        return (BatchResult.of(request.resultType, inserted), notification)
    }
}

import ObjectStoreModel
import ObjectStoreStorage

extension ManagedObjectContext {
    /// Every validation failure of the pending changes (the inserted and updated objects
    /// given, and the deleted ones): model rules (required, ranges,
    /// lengths, pattern, allowed values, relationship counts, uniqueness, deny delete rules)
    /// and the objects' custom hooks.
    func validationFailures(inserted: [ManagedObject], updated: [ManagedObject]) throws -> [ValidationFailure] {
        var failures: [ValidationFailure] = []
        let changed = inserted + updated
        // Schema patterns share one time bound per save, as MATCHES does per query.
        let clock = MatchClock()
        for object in changed {
            failures += propertyFailures(of: object, clock: clock)
            do {
                try object.validateForSave()
            } catch {
                failures.append(ValidationFailure(objectID: object.objectID, entityName: object.entity.name, key: nil, value: nil, rule: .custom, message: String(describing: error)))
            }
        }
        for object in deletedSet.compactMap({ registered[$0] }) {
            for relationship in object.entity.relationships where relationship.deleteRule == .deny {
                guard let index = object.entity.slot(of: relationship.name) else { continue }
                let remaining = try referencedIDs(of: object, at: index).filter { !deletedSet.contains($0) }
                if !remaining.isEmpty {
                    failures.append(ValidationFailure(
                        objectID: object.objectID, entityName: object.entity.name, key: relationship.name, value: nil, rule: .deny,
                        message: "cannot delete this \(object.entity.name): its '\(relationship.name)' still has \(remaining.count) object(s) and its delete rule is deny"))
                }
            }
        }
        let unique = try uniquenessFailures(among: changed, includingSaved: false)
        // When this context's own objects clash, report clashes with saved objects too, so
        // one failed save lists them all (the store checks those again under its lock).
        failures += unique.isEmpty ? [] : try uniquenessFailures(among: changed, includingSaved: true)
        return failures
    }

    private func propertyFailures(of object: ManagedObject, clock: MatchClock) -> [ValidationFailure] {
        var failures: [ValidationFailure] = []
        let entity = object.entity
        func fail(_ key: String, _ value: Value?, _ rule: ValidationRules.Rule, _ message: String) {
            failures.append(ValidationFailure(objectID: object.objectID, entityName: entity.name, key: key, value: value, rule: rule, message: message))
        }
        let supportedDates = ISO8601.supportedDates
        for check in entity.saveChecks {
            guard let relationship = check.relationship else {
                let value = object.slots[check.slot].value
                if value.isNull {
                    if !check.isOptional { fail(check.name, value, .required, "is required") }
                } else {
                    for failure in check.ruleFailures(for: value, clock: clock) { fail(check.name, value, failure.rule, failure.message) }
                    if case .date(let date) = value, !supportedDates.contains(date) {
                        let early = date < supportedDates.lowerBound
                        fail(check.name, value, early ? .minimum : .maximum, "is outside the years 0001 to 9999 that stores keep")
                    }
                }
                do {
                    try object.validate(value, forKey: check.name)
                } catch {
                    fail(check.name, value, .custom, String(describing: error))
                }
                continue
            }
            let count: Int
            if let derived = derivedRelationship(entity, check.slot) {
                // Looked up only when a rule needs the count.
                guard !check.isOptional || derived.minCount != nil || derived.maxCount != nil else { continue }
                count = ((try? referencedIDs(of: object, at: check.slot)) ?? []).filter { !deletedSet.contains($0) }.count
            } else {
                switch object.slots[check.slot] {
                case .toOne(let id?): count = deletedSet.contains(id) ? 0 : 1
                case .toMany(let ids): count = deletedSet.isEmpty ? ids.count : ids.filter { !deletedSet.contains($0) }.count
                default: count = 0
                }
            }
            if count == 0 && !check.isOptional {
                fail(check.name, nil, .required, "is required")
            }
            if relationship.isToMany && (count > 0 || !check.isOptional) {
                if let minCount = relationship.minCount, count < minCount {
                    fail(check.name, nil, .minCount, "has \(count) object(s), at least \(minCount) required")
                }
                if let maxCount = relationship.maxCount, count > maxCount {
                    fail(check.name, nil, .maxCount, "has \(count) object(s), at most \(maxCount) allowed")
                }
            }
        }
        return failures
    }

    /// Uniqueness constraints of the changed objects' entities (and their ancestors), checked
    /// against every other object of the constraint's entity tree, saved or not.
    private func uniquenessFailures(among changed: [ManagedObject], includingSaved: Bool) throws -> [ValidationFailure] {
        var failures: [ValidationFailure] = []
        var checkedScopes: Set<String> = []
        // Only objects whose constrained values are new can break a constraint; an edit of
        // other attributes costs nothing here.
        let constrained = constrainedEntityNames
        func isChanged(_ object: ManagedObject) -> Bool {
            guard constrained.contains(object.entity.name) else { return false }
            if object.isInserted { return true }
            return object.entity.constrainedSlots.contains { object.slotChanged($0) }
        }
        let changed = changed.filter(isChanged)
        for object in changed {
            for owner in [object.entity.name] + object.entity.ancestorNames {
                guard let ownerEntity = model.entity(named: owner), !ownerEntity.uniquenessConstraints.isEmpty,
                    checkedScopes.insert(owner).inserted
                else { continue }
                // Every object of the scope with its current slots (the owner's slots are
                // every descendant's), and whether this save changes its constrained values:
                // saved ones read straight from the store (no object made), overlaid with
                // this context's objects.
                let entities = model.entityAndDescendants(of: owner)
                var candidates: [(id: ObjectID, slots: Slots, changed: Bool)] = []
                if parent == nil && !includingSaved {
                    // Saved rows are checked by the store itself while it holds its lock
                    // (so two writers cannot both add a value); here, this context's own.
                    let names = Set(entities.map(\.name))
                    for (id, object) in registered where !object.faultState && !object.insertedState && names.contains(object.entity.name) && !deletedSet.contains(id) {
                        candidates.append((id, object.slots, isChanged(object)))
                    }
                } else {
                    for entity in entities {
                        for id in try savedObjectIDs(ofEntity: entity.name) where !deletedSet.contains(id) {
                            if let registeredObject = registered[id], !registeredObject.faultState {
                                candidates.append((id, registeredObject.slots, isChanged(registeredObject)))
                            } else if let snapshot = try savedSnapshot(for: id) {
                                candidates.append((id, snapshot.slots, false))
                            }
                        }
                    }
                }
                let inserted = insertedObjects(ofEntities: Set(entities.map(\.name)))
                candidates.reserveCapacity(candidates.count + inserted.count)
                for object in inserted {
                    candidates.append((object.objectID, object.slots, isChanged(object)))
                }
                // Unchanged objects first, so the changed one is the one blamed (two passes,
                // not a sorted or partitioned copy).
                let ordered = [false, true].lazy.flatMap { changed in candidates.lazy.filter { $0.changed == changed } }
                for constraint in ownerEntity.uniquenessConstraints {
                    let indices = constraint.compactMap { ownerEntity.slot(of: $0) }
                    guard indices.count == constraint.count else { continue }
                    let folding = UniquenessCheck.folding(constraint, in: ownerEntity)
                    func blame(_ id: ObjectID, _ changed: Bool, _ key: [SlotValue], _ other: ObjectID) {
                        guard changed else { return }
                        let description = zip(constraint, key).map { "\($0.0) = \($0.1.value)" }.joined(separator: ", ")
                        failures.append(ValidationFailure(
                            objectID: id, entityName: id.entityName, key: constraint.joined(separator: ","), value: key.count == 1 ? key[0].value : nil,
                            rule: .unique, message: "another \(owner) already has \(description) (\(other))"))
                    }
                    if indices.count == 1 {
                        // One attribute (a UUID, a name): its values, without an array per object.
                        let slot = indices[0], fold = folding[0]
                        var seen: [UniqueKey: ObjectID] = [:]
                        seen.reserveCapacity(ordered.count)
                        for (id, slots, changed) in ordered where slot < slots.count && slots[slot] != .value(.null) {
                            var comparable = slots[slot]
                            if let fold, case .value(let value) = comparable { comparable = .value(fold.uniquenessValue(value)) }
                            if let other = seen[.one(comparable)] { blame(id, changed, [slots[slot]], other) } else { seen[.one(comparable)] = id }
                        }
                        continue
                    }
                    var seen: [UniqueKey: ObjectID] = [:]
                    for (id, slots, changed) in ordered where indices.allSatisfy({ $0 < slots.count }) {
                        let key = indices.map { slots[$0] }
                        if key.contains(where: { $0 == .value(.null) }) { continue }
                        let comparable = UniquenessCheck.comparable(key, folding: folding)
                        if let other = seen[.many(comparable)] { blame(id, changed, key, other) } else { seen[.many(comparable)] = id }
                    }
                }
            }
        }
        return failures
    }
}

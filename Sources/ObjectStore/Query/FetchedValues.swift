import ObjectStoreModel

/// One matching object's values, as ``ManagedObjectContext/fetchValues(_:properties:)``
/// reads them.
public struct FetchedValues: Sendable {
    /// The object's ID.
    public let objectID: ObjectID
    /// The values of the properties asked for, in that order: ``SlotValue/value(_:)`` for
    /// attributes (derived ones computed), ``SlotValue/toOne(_:)`` and
    /// ``SlotValue/toMany(_:)`` for relationships.
    public let values: [SlotValue]
}

extension ManagedObjectContext {
    /// The values of some properties of every object a request matches, without making
    /// managed objects of the rows this context holds none for (as Core Data's dictionary
    /// results read rows, not objects): a listing of 100,000 objects neither registers nor
    /// keeps them. Objects the context has are read as they are, unsaved changes included,
    /// and inserted objects are included, as ``fetch(_:)`` includes them; the order, offset
    /// and limit are the request's. Derived values of the rows read are computed at one
    /// reading of the coordinator's clock.
    ///
    /// ```swift
    /// let rows = try context.fetchValues(FetchRequest(entityName: "Task"), properties: ["title", "priority", "location"])
    /// for row in rows {
    ///     print(row.values[0].value, row.values[1].value, row.values[2].referencedIDs)
    /// }
    /// ```
    ///
    /// Properties are the entity's own or inherited properties (not key paths). A request
    /// with sort descriptors is fetched as objects first, then read.
    ///
    /// - Throws: ``ObjectStoreError/unknownKey(entity:key:suggestion:)`` for a name the entity
    ///   does not have, and what ``fetch(_:)`` throws.
    public func fetchValues(_ request: FetchRequest, properties: [String]) throws -> [FetchedValues] {
        let executor = FetchExecutor(context: self, request: request)
        let entity = try executor.entity()
        let slots = try properties.map { name -> Int in
            guard let slot = entity.slot(of: name) else {
                throw ObjectStoreError.unknownKey(entity: entity.name, key: name, suggestion: NameSuggestion.closest(to: name, in: entity.properties.map(\.name)))
            }
            return slot
        }
        guard request.sortDescriptors.isEmpty else {
            return try fetch(request).map { object in FetchedValues(objectID: object.objectID, values: try slots.map { try object.slotValue(at: $0) }) }
        }
        var rows: [FetchedValues] = []
        // Derived values of a row are computed on a scratch object per entity holding it.
        var probes: [String: ManagedObject] = [:]
        let derivedSlots = slots.filter { entity.kind(ofSlot: $0) == .derivedAttribute }
        // Derivations that are slot tests are computed from the row directly, at one reading
        // of the clock for the whole fetch; the others on the scratch object.
        let now = evaluationScope().now
        let rowEvaluators = try derivedSlots.map { try DerivedAttributes.rowEvaluator(in: self, entity: entity, slot: $0, now: now) }
        let needsProbe = rowEvaluators.contains { $0 == nil }
        let derived = !derivedSlots.isEmpty
        // Every property in slot order: a row's decoded slots are the values as they are.
        let everySlot = slots == Array(0..<entity.slotCount)
        try executor.forEachMatch(of: request.predicate ?? .constant(true), entity: entity) { id, registered, snapshot in
            if let registered {
                rows.append(FetchedValues(objectID: id, values: try slots.map { try registered.slotValue(at: $0) }))
                return
            }
            guard var state = try snapshot?() else { return }
            if everySlot, !needsProbe, state.slots.count == slots.count, id.entityName == entity.name {
                let computed = try rowEvaluators.map { try $0?(state.slots) ?? .null }
                for (slot, value) in zip(derivedSlots, computed) { state.slots[slot] = .value(value) }
                rows.append(FetchedValues(objectID: id, values: state.slots))
                return
            }
            var probe: ManagedObject?
            if derived {
                if let made = probes[id.entityName] {
                    probe = made
                } else if let rowEntity = model.entity(named: id.entityName) {
                    let made = ManagedObject(entity: rowEntity, objectID: id)
                    made.managedObjectContext = self
                    probes[id.entityName] = made
                    probe = made
                }
                probe?.objectID = id
                probe?.slots = state.slots
            }
            if everySlot, let probe, probe.entity.identity == entity.identity {
                let computed = try derivedSlots.map { try probe.value(atSlot: $0) }
                probe.slots = []  // the row's array is the values' now, changed in place
                for (slot, value) in zip(derivedSlots, computed) where slot < state.slots.count { state.slots[slot] = .value(value) }
                rows.append(FetchedValues(objectID: id, values: state.slots))
                return
            } else if everySlot, !derived, state.slots.count == slots.count {
                rows.append(FetchedValues(objectID: id, values: state.slots))
                return
            }
            rows.append(FetchedValues(objectID: id, values: try slots.map { slot in
                if let probe, probe.entity.kind(ofSlot: slot) == .derivedAttribute {
                    return .value(try probe.value(atSlot: slot))
                }
                return slot < state.slots.count ? state.slots[slot] : .value(.null)
            }))
        }
        // In key order, as fetch(_:) gives unsorted results.
        if !zip(rows, rows.dropFirst()).allSatisfy({ !ObjectID.tieBreak($1.objectID, $0.objectID) }) {
            rows.sort { ObjectID.tieBreak($0.objectID, $1.objectID) }
        }
        let offset = rows.dropFirst(request.fetchOffset)
        return Array(request.fetchLimit > 0 ? offset.prefix(request.fetchLimit) : offset)
    }
}

extension ManagedObject {
    /// The value in a slot as stored: an attribute's value (a derived one computed) or a
    /// relationship's IDs.
    func slotValue(at index: Int) throws -> SlotValue {
        switch entity.kind(ofSlot: index) {
        case .attribute, .derivedAttribute: return .value(try value(atSlot: index))
        case .toOne, .toMany:
            try fireFault()
            return slots[index]
        }
    }
}

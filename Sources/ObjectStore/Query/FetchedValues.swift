import ObjectStoreModel
import ObjectStoreStorage

/// One matching object's values, as ``ManagedObjectContext/fetchValues(_:properties:)``
/// reads them.
public struct FetchedValues: Sendable {
    /// The object's ID.
    public let objectID: ObjectID
    /// The values of the properties asked for, in that order: `SlotValue.value(_:)` for
    /// attributes (derived ones computed), `SlotValue.toOne(_:)` and
    /// `SlotValue.toMany(_:)` for relationships.
    public let values: [SlotValue]
}

extension ManagedObjectContext {
    /// The values of some properties of every object a request matches, without making
    /// managed objects of the rows this context holds none for (as Core Data's dictionary
    /// results read rows, not objects): a listing of 100,000 objects neither registers nor
    /// keeps them. Objects the context has are read as they are, unsaved changes included,
    /// and inserted objects are included, as `fetch(_:)` includes them; the order, offset
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
    /// - Throws: `ObjectStoreError.unknownKey(entity:key:suggestion:)` for a name the entity
    ///   does not have, and what `fetch(_:)` throws.
    public func fetchValues(_ request: FetchRequest, properties: [String]) throws -> [FetchedValues] {
        var rows: [FetchedValues] = []
        let sorted = try forEachValues(request, properties: properties) { rows.append($0) }
        if sorted { return rows }
        // In key order, as fetch(_:) gives unsorted results.
        if !zip(rows, rows.dropFirst()).allSatisfy({ !ObjectID.tieBreak($1.objectID, $0.objectID) }) {
            rows.sort { ObjectID.tieBreak($0.objectID, $1.objectID) }
        }
        let offset = rows.dropFirst(request.fetchOffset)
        return Array(request.fetchLimit > 0 ? offset.prefix(request.fetchLimit) : offset)
    }

    /// The values ``fetchValues(_:properties:)`` reads, handed to `body` one row at a time and
    /// not kept: for a request without sort descriptors, in the store's order (not always the
    /// keys'), and without its offset and limit. Returns whether the rows came in the request's
    /// order, offset and limit applied (a request with sort descriptors, read from objects).
    /// `presentOnly`: properties whose values the caller only tests for null (a count); a
    /// store's row may give ``RowCodec/presentMarker`` for such a value instead of decoding it.
    @discardableResult
    package func forEachValues(_ request: FetchRequest, properties: [String], presentOnly: Set<String> = [],
                               _ body: (FetchedValues) throws -> Void) throws -> Bool {
        let executor = try FetchExecutor.planned(request, in: self)
        let entity = try executor.entity()
        let slots = try properties.map { name -> Int in
            guard let slot = entity.slot(of: name) else {
                throw ObjectStoreError.unknownKey(entity: entity.name, key: name, suggestion: NameSuggestion.closest(to: name, in: entity.properties.map(\.name)))
            }
            return slot
        }
        // Relationships derived from their inverse are looked up per object, not read from rows.
        guard request.sortDescriptors.isEmpty, !slots.contains(where: entity.isDerivedToMany(slot:)) else {
            for object in try fetch(executor.request) {
                try body(FetchedValues(objectID: object.objectID, values: try slots.map { try object.slotValue(at: $0) }))
            }
            return true
        }
        let derivedSlots = slots.filter { entity.kind(ofSlot: $0) == .derivedAttribute }
        // Derivations that are slot tests are computed from the row directly, at one reading
        // of the clock for the whole fetch; the others on a scratch object per entity
        // holding the row.
        let now = evaluationScope().now
        let rowEvaluators = try derivedSlots.map { try DerivedAttributes.rowEvaluator(in: self, entity: entity, slot: $0, now: now) }
        var probes: [String: ManagedObject] = [:]
        func probe(holding state: Slots, of id: ObjectID) -> ManagedObject? {
            let made: ManagedObject
            if let known = probes[id.entityName] {
                made = known
            } else {
                guard let rowEntity = model.entity(named: id.entityName) else { return nil }
                made = ManagedObject(entity: rowEntity, objectID: id)
                made.managedObjectContext = self
                probes[id.entityName] = made
            }
            made.objectID = id
            made.slots = state
            return made
        }
        // Every property in slot order: a row's decoded slots are the values, derived ones
        // filled in place.
        let everySlot = slots == Array(0..<entity.slotCount)
        // Some attributes and no derived ones: only theirs are decoded from a row. (A derived
        // value may read any other.)
        var wanted: [Bool]?
        if !everySlot && derivedSlots.isEmpty {
            var marks = [Bool](repeating: false, count: entity.slotCount)
            for slot in slots { marks[slot] = true }
            wanted = marks
        }
        var present: [Bool]?
        if wanted != nil, !presentOnly.isEmpty {
            var marks = [Bool](repeating: false, count: entity.slotCount)
            for name in presentOnly { if let slot = entity.slot(of: name) { marks[slot] = true } }
            present = marks
        }
        var values: [SlotValue] = []
        values.reserveCapacity(slots.count)
        try executor.forEachMatch(of: executor.request.predicate ?? .constant(true), entity: entity, decoding: wanted, presentOnly: present) { id, registered, snapshot in
            if let registered {
                try body(FetchedValues(objectID: id, values: try slots.map { try registered.slotValue(at: $0) }))
                return
            }
            guard var state = try snapshot?() else { return }
            state.slots.decode()  // a parent context's object may read its row in place
            var computed: [Value] = []
            var scratch: ManagedObject?
            for (index, slot) in derivedSlots.enumerated() {
                if let evaluate = rowEvaluators[index] {
                    computed.append(try evaluate(state.slots.values))
                    continue
                }
                if scratch == nil { scratch = probe(holding: state.slots, of: id) }
                computed.append(try scratch?.value(atSlot: slot) ?? .null)
            }
            scratch?.slots = []  // let go of the row's array before it is changed in place
            if everySlot, state.slots.count == slots.count {
                for (slot, value) in zip(derivedSlots, computed) { state.slots[slot] = .value(value) }
                try body(FetchedValues(objectID: id, values: state.slots.values))
            } else {
                // One array, its values replaced for each row: a body that lets the row go
                // (a grouping, a listing) leaves it to be written in place, not made anew
                // (emptied and appended to, it cost a tenth of a group by).
                if values.count != slots.count { values = [SlotValue](repeating: .value(.null), count: slots.count) }
                for (position, slot) in slots.enumerated() {
                    if !derivedSlots.isEmpty, let index = derivedSlots.firstIndex(of: slot) {
                        values[position] = .value(computed[index])
                    } else {
                        values[position] = slot < state.slots.count ? state.slots[slot] : .value(.null)
                    }
                }
                try body(FetchedValues(objectID: id, values: values))
            }
        }
        return false
    }
}

extension ManagedObject {
    /// The value in a slot as stored: an attribute's value (a derived one computed) or a
    /// relationship's IDs.
    func slotValue(at index: Int) throws -> SlotValue {
        switch entity.kind(ofSlot: index) {
        case .attribute, .derivedAttribute: return .value(try value(atSlot: index))
        case .toOne:
            try fireFault()
            return slots[index]
        case .toMany:
            try fireFault()
            return .toMany(try context().referencedIDs(of: self, at: index))
        }
    }
}

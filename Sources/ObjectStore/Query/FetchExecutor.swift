import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// Runs a fetch request in a context: the saved objects one level down (store or parent),
/// overlaid with the context's own inserts, updates and deletes; then filtered by the
/// compiled predicate, sorted, offset and limited.
struct FetchExecutor {
    let context: ManagedObjectContext
    let request: FetchRequest

    private var model: ManagedObjectModel { context.model }

    /// The request's entity, once the request is known to be valid (every fetch path starts here).
    func entity() throws -> EntityDescription {
        for (name, value) in [("fetchOffset", request.fetchOffset), ("fetchLimit", request.fetchLimit), ("fetchBatchSize", request.fetchBatchSize)] where value < 0 {
            throw ObjectStoreError.invalidFetchRequest("\(name) is \(value); it must be 0 or more")
        }
        guard let entity = model.entity(named: request.entityName) else {
            throw ObjectStoreError.unknownEntity(request.entityName, suggestion: NameSuggestion.closest(to: request.entityName, in: model.entities.map(\.name)))
        }
        return entity
    }

    /// IDs of every candidate object before filtering.
    func candidateIDs() throws -> [ObjectID] {
        let entity = try entity()
        context.processPendingChanges()
        let entities = request.includesSubentities ? model.entityAndDescendants(of: entity.name) : [entity]
        let names = Set(entities.map(\.name))
        var ids: [ObjectID] = []
        let skipsDeleted = request.includesPendingChanges && !context.deletedSet.isEmpty
        for entity in entities {
            let saved = try context.savedObjectIDs(ofEntity: entity.name)
            if ids.isEmpty && !skipsDeleted {
                // The store's array as it is (an in-memory store keeps it): appending it to
                // an empty array copied it, retaining and releasing every ID (a tenth of a
                // fetch over held objects).
                ids = saved
            } else if skipsDeleted {
                ids.append(contentsOf: saved.lazy.filter { !context.deletedSet.contains($0) })
            } else {
                ids.append(contentsOf: saved)
            }
        }
        if request.includesPendingChanges {
            // Appending nothing would still copy a shared array.
            let inserted = context.insertedObjects(ofEntities: names)
            if !inserted.isEmpty { ids.append(contentsOf: inserted.map(\.objectID)) }
        }
        return ids
    }

    /// How many candidates there are: ``candidateIDs()``'s count, without listing the saved
    /// ones when this context changes none of the entities (a root context asks the store).
    func candidateCount() throws -> Int {
        let entity = try entity()
        context.processPendingChanges()
        let entities = request.includesSubentities ? model.entityAndDescendants(of: entity.name) : [entity]
        let names = Set(entities.map(\.name))
        guard context.parent == nil, !context.deletedSet.contains(where: { names.contains($0.entityName) }) else { return try candidateIDs().count }
        var count = 0
        for entity in entities { count += try context.coordinator.store.objectCount(ofEntity: entity.name) }
        if request.includesPendingChanges { count += context.insertedObjects(ofEntities: names).count }
        return count
    }

    /// Scratch objects, one per entity, that hold a saved row's values so that compiled
    /// closures can test or read them (nothing is registered or made per row).
    struct ScratchObjects {
        let context: ManagedObjectContext
        private var made: [String: ManagedObject] = [:]

        init(context: ManagedObjectContext) {
            self.context = context
        }

        /// The entity's scratch object, holding `slots` as the saved values of `id`.
        mutating func holding(_ slots: Slots, of id: ObjectID, entity: EntityDescription) -> ManagedObject {
            let probe = made[id.entityName] ?? ManagedObject(entity: entity, objectID: id)
            if made[id.entityName] == nil {
                probe.managedObjectContext = context
                made[id.entityName] = probe
            }
            probe.objectID = id
            probe.slots = slots
            probe.committedSlots = slots
            return probe
        }
    }

    /// A match's saved state, read when called: a row of a scan, decoded
    /// then, or a snapshot already read. A value, so handing one to each match allocates
    /// nothing (a closure capturing the row did, per match).
    struct SavedState {
        fileprivate enum Source {
            case row(SavedRows, Int)
            case read(slots: Slots, version: Int64)
        }
        fileprivate let source: Source

        func callAsFunction() throws -> (slots: Slots, version: Int64) {
            switch source {
            case .row(let rows, let index): return try rows.state(at: index)
            case .read(let slots, let version): return (slots, version)
            }
        }

        /// The saved version, without decoding the row.
        var version: Int64 {
            switch source {
            case .row(let rows, let index): return rows.scan.rows[index].version
            case .read(_, let version): return version
            }
        }
    }

    /// Makes matches into objects: the registered one, or a fault (as Core Data fetches
    /// them) that keeps the row already read, so using it reads nothing again.
    private struct ObjectMaker {
        let context: ManagedObjectContext
        /// The entity and class of the last match's ID, looked up once per entity.
        var made: (name: String, entity: EntityDescription, objectClass: ManagedObject.Type)?

        mutating func object(_ id: ObjectID, _ snapshot: SavedState) throws -> ManagedObject {
            // Asked again: testing the predicate (or reading a sort key) through
            // relationships can register the row's own object after the scan found none.
            let object: ManagedObject
            if let known = context.registeredObject(for: id) {
                object = known
            } else {
                if made?.name != id.entityName, let rowEntity = context.model.entity(named: id.entityName) {
                    made = (id.entityName, rowEntity, context.coordinator.objectClass(for: rowEntity))
                }
                guard let made, made.name == id.entityName else { throw ObjectStoreError.unknownEntity(id.entityName, suggestion: nil) }
                object = context.makeFault(id, entity: made.entity, objectClass: made.objectClass)
            }
            if object.isFault {
                let saved = try snapshot()
                object.committedSlots = saved.slots
                object.committedVersion = saved.version
            }
            return object
        }
    }

    /// The matching objects, sorted and limited.
    func objects() throws -> [ManagedObject] {
        let entity = try entity()
        // A limited fetch from the store's rows orders the matches first: only those in
        // the window become objects (ten of 100,000, not 100,000).
        if request.fetchLimit > 0, context.parent == nil, context.readsEncodedRows {
            if let objects = try indexedWindow(entity: entity) { return try finished(objects) }
            return try finished(try window(of: request.predicate ?? .constant(true), entity: entity).objects)
        }
        var objects: [ManagedObject] = []
        var ids: [ObjectID] = []  // the objects' IDs, to see whether they are in order
        if let predicate = request.predicate {
            var maker = ObjectMaker(context: context)
            try forEachMatch(of: predicate, entity: entity, makingObjects: true, readingInPlace: true) { id, registered, snapshot in
                if let registered {
                    objects.append(registered)
                    ids.append(id)
                } else if let snapshot {
                    objects.append(try maker.object(id, snapshot))
                    ids.append(id)
                }
            }
        } else {
            ids = try candidateIDs()
            // Room for the objects not registered yet (at least those beyond the ones that
            // are), at once: grown by doubling, the registry kept up to twice the room.
            context.registered.reserveCapacity(forMore: ids.count - Swift.min(ids.count, context.registered.count))
            objects = try ids.map { try context.object(with: $0) }
        }
        objects = try sorted(objects, ids: ids, entity: entity)
        if request.fetchOffset > 0 { objects = Array(objects.dropFirst(request.fetchOffset)) }
        if request.fetchLimit > 0 { objects = Array(objects.prefix(request.fetchLimit)) }
        return try finished(objects)
    }

    /// A limited fetch sorted by one indexed attribute, from the start of the index's order:
    /// the matches up to a value of the attribute that `rank` indexed rows reach (`a <= v`,
    /// or `a >= v` descending, ANDed to the predicate, which the index narrows), ordered and
    /// cut; when they are fewer than the window needs, four times as far, and so on. Every
    /// match beyond the cut sorts after every match before it (ascending, the predicate must
    /// reject a nil value, which sorts first; descending, nil sorts last), and the cut takes
    /// every row of its value, so ties by ID come out as in a whole fetch. Nil when no index
    /// serves the request, or the cut would take over a quarter of the index (a predicate
    /// that few rows pass: one scan of every row costs less than widening again).
    private func indexedWindow(entity: EntityDescription) throws -> [ManagedObject]? {
        guard request.sortDescriptors.count == 1, let key = request.sortDescriptors.first,
              let attribute = entity.attribute(named: key.keyPath), attribute.isStored, let slot = entity.slot(of: key.keyPath),
              !request.includesSubentities || model.entityAndDescendants(of: entity.name).count == 1,
              context.readsEncodedRows
        else { return nil }
        let store = context.coordinator.store
        if key.ascending {
            guard let predicate = request.predicate, let tests = SlotPredicate.prefilter(predicate, entity: entity) ?? SlotPredicate(predicate, entity: entity),
                  try tests.rejectsNil(inSlot: slot) else { return nil }
        }
        let wanted = request.fetchOffset + request.fetchLimit
        var rank = Swift.max(64, wanted * 4)
        while rank < Int.max / 8 {
            guard let read = try store.readRows({ try $0.orderCutoff(ofEntity: entity.name, attribute: attribute.name, descending: !key.ascending, rank: rank - 1) }),
                  let cutoff = read,
                  rank <= Swift.max(64, cutoff.indexed / 4) else { return nil }
            let bound = try ObjectPredicate(format: key.ascending ? "%K <= %@" : "%K >= %@", .string(attribute.name), cutoff.value)
            let found = try window(of: request.predicate.map { .and($0, bound) } ?? bound, entity: entity)
            if found.matches >= wanted { return found.objects }
            rank *= 4
        }
        return nil
    }

    /// The matches of a limited fetch in order, offset and limited, made objects only then;
    /// and how many matched.
    private func window(of predicate: ObjectPredicate, entity: EntityDescription) throws -> (objects: [ManagedObject], matches: Int) {
        var ids: [ObjectID] = []
        var held: [ManagedObject?] = []
        var states: [SavedState?] = []
        try forEachMatch(of: predicate, entity: entity, readingInPlace: true) { id, registered, snapshot in
            ids.append(id)
            held.append(registered)
            states.append(registered == nil ? snapshot : nil)
        }
        var order = Array(ids.indices)
        let keys = request.sortDescriptors
        if keys.isEmpty {
            order = Self.idOrder(ids) ?? order
        } else {
            // Each match's keys read from its object, or from its row through one scratch
            // object per entity.
            let readers = try sortReaders(entity)
            let scope = context.evaluationScope()
            var probes = ScratchObjects(context: context)
            var values: [Value] = []
            values.reserveCapacity(ids.count * keys.count)
            for index in ids.indices {
                let id = ids[index]
                let subject: ManagedObject
                if let object = held[index] ?? context.registeredObject(for: id) {
                    subject = object
                } else if let state = try states[index]?() {
                    subject = probes.holding(state.slots, of: id, entity: model.entity(named: id.entityName) ?? entity)
                } else {
                    subject = try context.object(with: id)
                }
                for reader in readers { values.append(try reader(subject, scope).sortValue) }
            }
            order = Self.order(ids: ids, values: values, keys: keys)
        }
        var maker = ObjectMaker(context: context)
        var objects: [ManagedObject] = []
        for index in order.dropFirst(request.fetchOffset).prefix(request.fetchLimit) {
            if let object = held[index] {
                objects.append(object)
            } else if let state = states[index] {
                objects.append(try maker.object(ids[index], state))
            } else {
                objects.append(try context.object(with: ids[index]))
            }
        }
        return (objects, ids.count)
    }

    /// Batches and prefetching for the objects a fetch returns.
    private func finished(_ objects: [ManagedObject]) throws -> [ManagedObject] {
        if request.fetchBatchSize > 0 {
            context.planBatches(objects.filter(\.isFault).map(\.objectID), size: request.fetchBatchSize)
        }
        try prefetch(objects)
        return objects
    }

    /// Loads the destinations of the prefetched key paths, level by level, in batches.
    private func prefetch(_ objects: [ManagedObject]) throws {
        for keyPath in request.relationshipKeyPathsForPrefetching {
            var level = objects
            for key in keyPath.split(separator: ".").map(String.init) {
                var next: [ObjectID] = []
                var seen = Set<ObjectID>()
                var owners: [(ManagedObject, [ObjectID])] = []
                for object in level {
                    guard object.entity.relationship(named: key) != nil, try object.fireFaultUnlessDeleted() else { continue }
                    let ids = try object.objectIDs(forRelationship: key)
                    owners.append((object, ids))
                    for id in ids where seen.insert(id).inserted { next.append(id) }
                }
                context.planBatches(next, size: max(1, next.count))
                level = try next.map { try context.object(with: $0) }
                if let first = level.first { try? first.fireFault() }
                // Each object keeps what was prefetched for it alive while it lives.
                for (object, ids) in owners {
                    object.prefetched.append(contentsOf: ids.compactMap { context.registeredObject(for: $0) })
                }
            }
        }
    }

    /// Calls `match` for each candidate the predicate accepts: with its registered object, or
    /// with the saved row of an unregistered one, which is tested through one scratch object
    /// per entity (nothing is registered or made per row). `makesObjects`: the caller
    /// registers an object per match (the registry makes room for them at once).
    /// `counted`, when given, makes this a count: the caller never asks for a match's saved
    /// state, so rows a store decided need not be read, and matches a store counted without
    /// listing them (no object of the entity is registered) come to `counted` as a number
    /// instead of to `match` one by one. `readingInPlace`: a match's saved state may read
    /// its values from the store's encoded row (it becomes an object's values). `decoding`:
    /// a match's saved state read from a store's rows need hold only the slots it marks
    /// (the others may hold their initial values).
    func forEachMatch(of predicate: ObjectPredicate, entity: EntityDescription, makingObjects makesObjects: Bool = false,
                      counted: ((Int) -> Void)? = nil, readingInPlace: Bool = false, decoding wanted: [Bool]? = nil, presentOnly present: [Bool]? = nil,
                      _ match: (ObjectID, ManagedObject?, SavedState?) throws -> Void) throws {
        let test = try context.compiled(predicate, entity: entity)
        let scope = context.evaluationScope()
        if context.parent == nil, context.readsEncodedRows {
            return try forEachMatch(rowsOf: context.coordinator.store, test: test, scope: scope, predicate: predicate, entity: entity, makingObjects: makesObjects,
                                    counted: counted, readingInPlace: readingInPlace, decoding: wanted, presentOnly: present, match)
        }
        var probes = ScratchObjects(context: context)
        // Comparisons of attributes with constants, per entity: tested on the slots.
        var directs: [String: SlotPredicate?] = [:]
        // The last entity's, without hashing its name per object.
        var last: (identity: ObjectIdentifier, direct: SlotPredicate?)?
        func direct(_ entity: EntityDescription) -> SlotPredicate? {
            if let last, last.identity == entity.identity { return last.direct }
            let made: SlotPredicate?
            if let known = directs[entity.name] {
                made = known
            } else {
                made = SlotPredicate(predicate, entity: entity)
                directs[entity.name] = made
            }
            last = (entity.identity, made)
            return made
        }
        // An entity without sub-entities: every candidate is of it, so its slot predicate
        // is looked up once, not per object, and held as a plain value (unwrapping an
        // optional per object copied it).
        let uniform = model.entityAndDescendants(of: entity.name).count == 1
        let fixed = uniform ? direct(entity) : nil
        let hasFixed = fixed != nil
        let fixedTest = SlotTest(fixed ?? .constant(false))
        let testsSavedValues = !request.includesPendingChanges
        for id in try candidateIDs() {
            if let object = context.registeredObject(for: id) {
                // A row deleted elsewhere since it was listed simply does not match.
                if object.faultState { guard try object.fireFaultUnlessDeleted() else { continue } }
                // Comparisons with constants test the values where the object keeps them
                // (its saved ones when pending changes are left out): passed on through
                // `savedState(of:)`, the object and its values were copied, a quarter of
                // a fetch over 10,000 held objects.
                let passes: Bool
                let savedValues = testsSavedValues && object.isUpdated ? object.committedSlots : nil
                if hasFixed {
                    passes = try savedValues?.satisfy(fixedTest) ?? object.slots.satisfy(fixedTest)
                } else if !uniform, let direct = direct(object.entity) {
                    passes = try savedValues?.satisfy(direct) ?? object.slots.satisfy(direct)
                } else {
                    passes = try test(savedState(of: object), scope)
                }
                if passes { try match(id, object, nil) }
                continue
            }
            guard let snapshot = try context.savedSnapshot(for: id), let rowEntity = context.model.entity(named: id.entityName) else { continue }
            let probe = probes.holding(snapshot.slots, of: id, entity: rowEntity)
            if try test(probe, scope) { try match(id, nil, SavedState(source: .read(slots: snapshot.slots, version: snapshot.version))) }
        }
    }

    /// `forEachMatch` over a store's rows of each entity, taken in one go: a row is decoded
    /// only as far as the predicate reads it, into one scratch object per entity, and fully
    /// only when it matches.
    private func forEachMatch(rowsOf store: any PersistentStore, test: PredicateClosure, scope: EvaluationScope, predicate: ObjectPredicate,
                              entity: EntityDescription, makingObjects makesObjects: Bool, counted: ((Int) -> Void)?, readingInPlace: Bool, decoding decodedSlots: [Bool]?,
                              presentOnly present: [Bool]?, _ match: (ObjectID, ManagedObject?, SavedState?) throws -> Void) throws {
        let countsOnly = counted != nil
        _ = try self.entity()
        context.processPendingChanges()
        let entities = request.includesSubentities ? model.entityAndDescendants(of: entity.name) : [entity]
        let deleted = request.includesPendingChanges ? context.deletedSet : []
        let storeIdentifier = context.storeIdentifier
        let keys = predicate.keysReadFromObject
        for rowEntity in entities {
            // Comparisons of attributes with constants are tested on the slots directly: the
            // whole predicate when it is made of them, else those of its ANDed parts first;
            // the store decides them for its snapshot's rows from its columns when it can.
            let direct = SlotPredicate(predicate, entity: rowEntity)
            let prefilter = direct == nil ? SlotPredicate.prefilter(predicate, entity: rowEntity) : nil
            let idScope = ObjectID.Scope.of(entityName: rowEntity.name, storeIdentifier: storeIdentifier)
            // Registered objects are tested as they are (their changes, their deletion): the
            // store lists their rows even where an index leaves the others out. Their keys
            // are gathered (a walk of the registry) only when the store or the verdicts ask.
            var heldKeys: Set<Int64>?
            func keysHeld() -> Set<Int64> {
                if let heldKeys { return heldKeys }
                let keys = context.registered.permanentKeys(in: idScope)
                heldKeys = keys
                return keys
            }
            let listed = try store.readRows { reader in
                try ScanPlanner.scan(reader, entity: rowEntity.name, predicate: direct ?? prefilter, alsoListing: keysHeld,
                                     holdsAtMost: { limit in heldKeys.map { $0.count <= limit } ?? context.registered.holds(atMost: limit, in: idScope) },
                                     leavingUnread: countsOnly && direct != nil)
            }
            guard let scan = listed else { continue }
            if scan.counted > 0 { counted?(scan.counted) }
            guard !scan.rows.isEmpty else { continue }
            // At most the rows the columns did not reject become objects.
            if makesObjects {
                context.registered.reserveCapacity(forMore: scan.verdicts.isEmpty ? scan.rows.count : scan.verdicts.lazy.filter { $0 != 2 }.count)
            }
            // The entity's initial values and stored slots as the context's layout of its rows
            // keeps them (worked out from the properties' descriptions per fetch, they were
            // a tenth of an indexed lookup).
            let rowLayout = scan.layout(of: rowEntity, in: context.rowLayouts)
            let initial = rowLayout.initial
            // Stores do not write transient and derived values: they start from their
            // initial values. A derived attribute may read any value, so it needs them all.
            let stored = rowLayout.stored
            let readsDerived = keys?.contains { key in rowEntity.slot(of: key).map { rowEntity.kind(ofSlot: $0) == .derivedAttribute } ?? false } ?? true
            var wanted = stored
            if let keys, !readsDerived {
                wanted = [Bool](repeating: false, count: stored.count)
                for key in keys {
                    if let slot = rowEntity.slot(of: key), slot < stored.count { wanted[slot] = stored[slot] }
                }
            }
            let probe = ManagedObject(entity: rowEntity, objectID: ObjectID(idScope, key: .permanent(0)))
            probe.managedObjectContext = context
            probe.slots = Slots(initial)
            // A row whose object is registered is tested as the object is (its changes, its
            // deletion); the others may take the store's verdict.
            let decided = !scan.verdicts.isEmpty
            let registeredKeys = decided ? keysHeld() : []
            /// A matching row's saved state, decoded whole when asked for (the closures share
            /// one reference to the scan: capturing it, a struct of arrays, copied it per match).
            let rowsOfEntity = SavedRows(scan: scan, initial: initial, stored: stored,
                                         layout: readingInPlace ? rowLayout : nil,
                                         wanted: rowEntity.name == entity.name ? decodedSlots : nil,
                                         present: rowEntity.name == entity.name ? present : nil)
            func saved(_ index: Int) -> SavedState { SavedState(source: .row(rowsOfEntity, index)) }
            // Many rows to test: the slot predicate's verdicts are worked out on every core
            // first (``ParallelScan``), and each row below takes its own.
            let shared = (direct ?? prefilter).map {
                ParallelScan.verdicts(of: scan, predicate: $0, initial: initial, wanted: wanted, minimumRows: context.parallelScanMinimumRows)
            } ?? []
            if !shared.isEmpty { context.parallelScans += 1 }
            var cursor = RowScan.Cursor()
            for index in scan.rows.indices {
                if decided, registeredKeys.isEmpty || !registeredKeys.contains(scan.rows[index].key) {
                    let verdict = scan.verdicts[index]
                    if verdict == 2 { continue }
                    if verdict == 1, direct != nil {
                        try match(ObjectID(idScope, key: .permanent(scan.rows[index].key)), nil, countsOnly ? nil : saved(index))
                        continue
                    }
                }
                let row = scan.rows[index]
                let id = ObjectID(idScope, key: .permanent(row.key))
                if !deleted.isEmpty && deleted.contains(id) { continue }
                if let object = context.registeredObject(for: id) {
                    // A row deleted elsewhere since it was listed simply does not match.
                    guard try object.fireFaultUnlessDeleted() else { continue }
                    // Tested where it keeps its values, as in `forEachMatch(of:...)`.
                    if let direct, object.entity.name == rowEntity.name {
                        let savedValues = !request.includesPendingChanges && object.isUpdated ? object.committedSlots : nil
                        if try savedValues.map({ try direct.matches($0) }) ?? direct.matches(object.slots) { try match(id, object, nil) }
                    } else if try test(savedState(of: object), scope) {
                        try match(id, object, nil)
                    }
                    continue
                }
                if !shared.isEmpty {
                    let verdict = shared[index]
                    if verdict == ParallelScan.rejected { continue }
                    if verdict == ParallelScan.matched, direct != nil {
                        try match(id, nil, saved(index))
                        continue
                    }
                }
                probe.objectID = id
                // A row of another length reads as the initial values (as its saved state does).
                if try scan.decode(index, into: &probe.slots.values, wanted: wanted, cursor: &cursor) != initial.count { probe.slots.values = initial }
                let matched: Bool
                if let direct {
                    matched = try direct.matches(probe.slots)
                } else if let prefilter, try !prefilter.matches(probe.slots) {
                    matched = false
                } else {
                    matched = try test(probe, scope)
                }
                if matched { try match(id, nil, saved(index)) }
            }
        }
        if request.includesPendingChanges {
            for object in context.insertedObjects(ofEntities: Set(entities.map(\.name))) where try test(object, scope) {
                try match(object.objectID, object, nil)
            }
        }
    }

    /// The rows of one entity a scan listed, and how a matching one becomes saved state.
    fileprivate final class SavedRows {
        let scan: RowScan
        let initial: [SlotValue]
        /// Per slot, whether stores write it (transient and derived values start initial).
        let stored: [Bool]
        let allStored: Bool
        /// When set, saved states read their values from the encoded rows in place.
        let layout: RowLayout?
        /// When set, saved states decode only these slots (stored ones); the others hold
        /// their initial values.
        let wanted: [Bool]?
        /// When set, the wanted slots whose presence alone is asked for (``RowCodec``'s
        /// `present`).
        let present: [Bool]?
        /// The array the wanted slots are decoded into.
        private var scratch: [SlotValue]
        /// Where the wanted slots are read.
        private var cursor = RowScan.Cursor()

        init(scan: RowScan, initial: [SlotValue], stored: [Bool], layout: RowLayout?, wanted: [Bool]?, present: [Bool]? = nil) {
            self.present = wanted == nil ? nil : present
            self.scan = scan
            self.initial = initial
            self.stored = stored
            allStored = !stored.contains(false)
            self.layout = layout
            self.wanted = wanted.map { wanted in wanted.indices.map { wanted[$0] && $0 < stored.count && stored[$0] } }
            scratch = initial
        }

        func state(at index: Int) throws -> (slots: Slots, version: Int64) {
            if let layout {
                let row = scan.rows[index]
                do {
                    return (try Slots.inPlace(row.bytes, start: row.start, layout: layout), row.version)
                } catch {
                    throw StoreError.corrupt(path: scan.path, reason: "unreadable row of key \(row.key)")
                }
            }
            if let wanted {
                // Into one array reused row after row: a state let go before the next row is
                // asked for (a listing's) leaves it to be written in place, not copied.
                var slots = scratch
                scratch = []
                defer { scratch = slots }
                if try scan.decode(index, into: &slots, wanted: wanted, present: present, cursor: &cursor) != initial.count { slots = initial }
                return (Slots(slots), scan.rows[index].version)
            }
            var slots = try scan.slots(at: index)
            if slots.count != initial.count { slots = initial }
            if !allStored {
                for (slot, isStored) in stored.enumerated() where !isStored { slots[slot] = initial[slot] }
            }
            return (Slots(slots), scan.rows[index].version)
        }
    }

    /// The object to test: itself, or when pending changes are excluded, a detached copy
    /// holding its saved values.
    func savedState(of object: ManagedObject) -> ManagedObject {
        guard !request.includesPendingChanges, object.isUpdated, let committed = object.committedSlots else { return object }
        let copy = ManagedObject(entity: object.entity, objectID: object.objectID)
        copy.managedObjectContext = context
        copy.slots = committed
        copy.committedSlots = committed
        return copy
    }

    func sorted(_ objects: [ManagedObject], ids: [ObjectID], entity: EntityDescription) throws -> [ManagedObject] {
        let keys = request.sortDescriptors
        guard !keys.isEmpty else {
            return Self.idOrder(ids)?.map { objects[$0] } ?? objects
        }
        let scope = context.evaluationScope()
        let readers = try sortReaders(entity)
        // Read every key once per object, then sort the rows.
        var values: [Value] = []
        values.reserveCapacity(objects.count * keys.count)
        for object in objects {
            for reader in readers { values.append(try reader(object, scope).sortValue) }
        }
        return Self.order(ids: ids, values: values, keys: keys).map { objects[$0] }
    }

    /// The order of rows by their IDs alone (a fetch without sort descriptors); nil when
    /// they are in it already, as candidates usually are (checked before sorting).
    static func idOrder(_ ids: [ObjectID]) -> [Int]? {
        if inKeyOrder(ids) || zip(ids, ids.dropFirst()).allSatisfy({ !ObjectID.tieBreak($1, $0) }) { return nil }
        return ids.indices.sorted { ObjectID.tieBreak(ids[$0], ids[$1]) }
    }

    /// Whether the IDs share one scope and are permanent with keys that never fall (so in
    /// ``ObjectID/tieBreak(_:_:)``'s order), read in place: comparing copies of the IDs
    /// retained and released each one's scope, a tenth of a fetch over held objects.
    static func inKeyOrder(_ ids: [ObjectID]) -> Bool {
        ids.withUnsafeBufferPointer { buffer in
            guard let first = buffer.first else { return true }
            let scope = ObjectIdentifier(first.scope)
            var previous = Int64.min
            for index in buffer.indices {
                guard ObjectIdentifier(buffer[index].scope) == scope, case .permanent(let key) = buffer[index].key, key >= previous else { return false }
                previous = key
            }
            return true
        }
    }

    /// The request's sort keys compiled for the entity.
    private func sortReaders(_ entity: EntityDescription) throws -> [ExpressionClosure] {
        let checker = PredicateTypeChecker(model: model)
        return try request.sortDescriptors.map { key -> ExpressionClosure in
            let expression = try ObjectExpression(key.keyPath)
            // As in Core Data, a to-many key has no single value to sort by (it silently
            // sorted by the count); an aggregate such as tags.@count does.
            if try checker.type(of: expression, on: entity.name).isCollection {
                throw ObjectStoreError.invalidFetchRequest("cannot sort by '\(key.keyPath)': it has many values per object (a to-many relationship); sort by an aggregate such as '\(key.keyPath.split(separator: ".").first ?? "").@count'")
            }
            return context.compiler.compile(expression, entity: entity)
        }
    }

    /// The sorted order of rows (IDs, and per row its keys' values, row after row in
    /// `values`): by the keys, ties by ID.
    static func order(ids: [ObjectID], values: [Value], keys: [SortKey]) -> [Int] {
        if let order = typedOrder(ids: ids, values: values, keys: keys) { return order }
        let width = keys.count
        var order = Array(ids.indices)
        order.sort { a, b in
            for (index, key) in keys.enumerated() {
                let order = key.compare(values[a * width + index], values[b * width + index])
                if order == .orderedSame { continue }
                return key.ascending ? order == .orderedAscending : order == .orderedDescending
            }
            return ObjectID.tieBreak(ids[a], ids[b])
        }
        return order
    }

    /// The sorted order of rows by comparing plain numbers, when every key's values are
    /// nil or of one kind that orders as numbers (integers, non-NaN doubles, dates,
    /// booleans) and every object is saved: the order ``SortKey/compare(_:_:)`` and
    /// ``ObjectID/tieBreak(_:_:)`` give, without comparing `Value`s. Nil otherwise.
    static func typedOrder(ids: [ObjectID], values: [Value], keys: [SortKey]) -> [Int]? {
        let width = keys.count
        var tie: [Int64] = []
        tie.reserveCapacity(ids.count)
        let scope = ids.first?.scope
        for id in ids {
            guard case .permanent(let key) = id.key, id.scope === scope else { return nil }
            tie.append(key)
        }
        // Per key: nil flags and the values as numbers of one type.
        var nulls: [[Bool]] = []
        var integers: [[Int64]?] = []
        var doubles: [[Double]?] = []
        for k in keys.indices {
            var isNull = [Bool](repeating: false, count: ids.count)
            var ints: [Int64] = [], reals: [Double] = []
            var kind: Int?  // 0 integers, 1 doubles, 2 dates, 3 booleans
            for i in ids.indices {
                let value = values[i * width + k], found: Int
                switch value {
                case .null: isNull[i] = true; ints.append(0); reals.append(0); continue
                case .integer(let x): found = 0; ints.append(x); reals.append(0)
                case .double(let x) where !x.isNaN: found = 1; ints.append(0); reals.append(x)
                case .date(let d) where !d.timeIntervalSinceReferenceDate.isNaN: found = 2; ints.append(0); reals.append(d.timeIntervalSinceReferenceDate)
                case .bool(let b): found = 3; ints.append(b ? 1 : 0); reals.append(0)
                default: return nil
                }
                if kind == nil { kind = found } else if kind != found { return nil }
            }
            nulls.append(isNull)
            let integral = kind == 0 || kind == 3
            integers.append(integral ? ints : nil)
            doubles.append(integral ? nil : reals)
        }
        var order = Array(ids.indices)
        order.sort { a, b in
            for (k, key) in keys.enumerated() {
                let na = nulls[k][a], nb = nulls[k][b]
                if na != nb { return key.ascending ? na : nb }
                if na { continue }
                if let ints = integers[k] {
                    if ints[a] != ints[b] { return key.ascending ? ints[a] < ints[b] : ints[a] > ints[b] }
                } else if let reals = doubles[k], reals[a] != reals[b] {
                    return key.ascending ? reals[a] < reals[b] : reals[a] > reals[b]
                }
            }
            return tie[a] < tie[b]
        }
        return order
    }
}

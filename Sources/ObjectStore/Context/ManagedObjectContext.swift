import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// Tracks the objects of a model: inserts, edits, deletes, undo, validation at save,
/// inverse maintenance, delete rules, faulting and change notifications.
///
/// A context is not Sendable: use it on one thread (or actor). Work elsewhere happens in
/// another context of the same ``PersistentStoreCoordinator``; pass `ObjectID`s between
/// them. A context whose ``parent`` is another context saves into its parent instead of
/// the store (an editor's "cancel" is simply discarding the child).
///
/// ```swift
/// let context = ManagedObjectContext(coordinator: coordinator)
/// let task = try context.insertObject(entityName: "Task")
/// try task.setValue("Buy milk", forKey: "text")
/// try context.save()
/// context.undo()
/// ```
public final class ManagedObjectContext {
    /// The coordinator whose store this context (or its root ancestor) saves to.
    public let coordinator: PersistentStoreCoordinator
    /// The parent context, for a child context.
    public let parent: ManagedObjectContext?
    /// Identifies the context in save notifications.
    public let identifier = UUID()
    /// The model of the coordinator.
    public var model: ManagedObjectModel { coordinator.model }

    /// Objects registered in the context, by ID. Each ID has at most one object here.
    var registered = ObjectRegistry()
    /// Inserted objects in insertion order.
    var insertedOrder: [ObjectID] = [] {
        didSet { if insertedOrder.isEmpty { insertedByEntity.removeAll() } }
    }
    /// The same, per entity, so a fetch in the middle of a bulk insert does not walk every
    /// inserted object.
    var insertedByEntity: [String: [ObjectID]] = [:]
    var deletedSet: Set<ObjectID> = []
    /// Objects deleted whose delete rules have not run yet.
    var pendingDeletes: [ManagedObject] = []
    /// Objects whose slots were set since they were last saved or loaded.
    var touched: Set<ObjectID> = []

    /// Changes since the last objects-did-change notification.
    var pendingChanges = ObjectChanges()
    var observers: [UUID: (ContextEvent) -> Void] = [:]

    /// Compiled predicates and derivations, per (predicate, entity).
    var compiledPredicates: [CompiledKey: PredicateClosure] = [:]
    /// How many fetches, counts and ID fetches this context has run: work a test can count
    /// (a loop that fetches once per object it makes is quadratic), where a time limit would
    /// measure the machine.
    package private(set) var fetchesRun = 0
    package func noteFetch() { fetchesRun += 1 }
    var compiledDerivations: [DerivedAttributes.Key: DerivedAttributes.Compiled] = [:]
    /// What ``insertObject(entityName:)`` gives every new object of an entity.
    struct InsertTemplate {
        let scope: ObjectID.Scope
        let slots: [SlotValue]
    }
    var insertTemplates: [ObjectIdentifier: InsertTemplate] = [:]
    /// How the store's encoded rows of each entity read, while its entity table stays.
    let rowLayouts = RowLayouts()
    /// Whether the store's rows are encoded: objects read their values from them in place,
    /// and a root context's fetches take an entity's rows in bulk (``ScanPlanner``).
    lazy var readsEncodedRows = coordinator.store.hasEncodedRows
    /// How many rows a scan must have to test before it shares their tests among the cores
    /// (``ParallelScan``): below it, a fetch asks for no thread. Tests set it low to run
    /// small stores through the shared path.
    var parallelScanMinimumRows = 16_384
    /// How many scans have shared their tests among the cores (tests read it).
    var parallelScans = 0
    /// The entities whose objects uniqueness is checked for, found once (every save asks).
    lazy var constrainedEntityNames = Self.constrainedEntityNames(in: model)
    var compiledKeyPaths: [String: ExpressionClosure] = [:]
    /// Faults that load together, by the ID of each member.
    var faultBatches: [ObjectID: [ObjectID]] = [:]
    /// The coordinator's save observation that merges other contexts' saves into this one
    /// (``automaticallyMergeChanges(on:)``), while it lasts.
    var automaticMerge: ObservationToken?

    /// The undo stack; `nil` disables undo (for bulk imports).
    public var undoManager: UndoStack? = UndoStack()
    /// What a save does when the store changed since objects were loaded.
    public var mergePolicy: MergePolicy = .error
    /// The context's name, recorded in the history transaction of each of its saves (Core
    /// Data's `name`).
    public var name: String?
    /// Who saves, recorded in the history transaction of each save (Core Data's
    /// `transactionAuthor`): an app names its extension, its importer or its sync engine,
    /// and filters history by it (`fetchHistory(after:authors:entities:)`).
    public var transactionAuthor: String?
    /// The coordinator's observation of other processes' saves that merges them into this
    /// context, while it lasts.
    var remoteMerge: ObservationToken?

    /// A context that saves to the coordinator's store.
    public init(coordinator: PersistentStoreCoordinator) {
        self.coordinator = coordinator
        self.parent = nil
    }

    /// A child context: it reads its parent's current (unsaved) state and its save pushes
    /// its changes into the parent, not the store. Use it on the parent's thread.
    public init(parent: ManagedObjectContext) {
        self.coordinator = parent.coordinator
        self.parent = parent
    }

    var storeIdentifier: String { coordinator.store.identifier }

    // MARK: Object lookup

    /// The object for an ID, registering a fault when it is not registered yet. Its values
    /// load on first access, which throws when the object does not exist.
    public func object(with id: ObjectID) throws -> ManagedObject {
        if let object = registered[id] { return object }
        guard let entity = model.entity(named: id.entityName) else {
            throw ObjectStoreError.unknownEntity(id.entityName, suggestion: nil)
        }
        return makeFault(id, entity: entity, objectClass: coordinator.objectClass(for: entity))
    }

    /// Registers a fault for an ID that has no object yet, of an entity and class already
    /// looked up (a fetch makes thousands of one entity).
    func makeFault(_ id: ObjectID, entity: EntityDescription, objectClass: ManagedObject.Type) -> ManagedObject {
        let object = objectClass.init(entity: entity, objectID: id)
        object.managedObjectContext = self
        object.faultState = true
        registered[id] = object
        return object
    }

    /// The object for an ID, loaded now: throws `ObjectStoreError.objectNotFound(_:)` when
    /// it does not exist (or is deleted in this context).
    public func existingObject(with id: ObjectID) throws -> ManagedObject {
        if deletedSet.contains(id) { throw ObjectStoreError.objectNotFound(id) }
        let object = try object(with: id)
        do {
            try object.fireFault()
        } catch {
            if registered[id] === object && object.faultState { registered[id] = nil }
            throw error
        }
        return object
    }

    /// The registered object for an ID, if any, without creating a fault.
    public func registeredObject(for id: ObjectID) -> ManagedObject? {
        registered[id]
    }

    /// Every object registered in the context.
    public var registeredObjects: [ManagedObject] { Array(registered.values) }

    /// The objects for some IDs, as faults that load together when the first of them is
    /// used (one read of the store for the batch, as a fetch's `fetchBatchSize` does).
    package func faults(for ids: [ObjectID]) throws -> [ManagedObject] {
        let objects = try ids.map { try object(with: $0) }
        planBatches(objects.filter(\.faultState).map(\.objectID), size: max(1, ids.count))
        return objects
    }

    /// Groups faults into batches that load together (fetchBatchSize, prefetching).
    func planBatches(_ ids: [ObjectID], size: Int) {
        guard size > 1 else { return }
        if faultBatches.count > 200_000 { faultBatches.removeAll() }
        for start in stride(from: 0, to: ids.count, by: size) {
            let batch = Array(ids[start..<min(start + size, ids.count)])
            for id in batch { faultBatches[id] = batch }
        }
    }

    /// Loads a fault's values from the parent context or the store, with the rest of its
    /// batch when it has one.
    func fulfillFault(_ object: ManagedObject) throws {
        if !faultBatches.isEmpty, let batch = faultBatches.removeValue(forKey: object.objectID) {
            announceRowReads(of: batch.lazy.compactMap { self.registered[$0] })
            for id in batch where id != object.objectID {
                faultBatches[id] = nil
                if let other = registered[id], other.faultState, let snapshot = try? savedSnapshot(for: id) {
                    fill(other, with: snapshot)
                }
            }
        }
        if object.committedSlots != nil {
            // The row a fetch read for it.
            object.takeCommittedValues()
            object.faultState = false
            object.awakeFromFetch()
            return
        }
        guard let snapshot = try savedSnapshot(for: object.objectID, entity: object.entity) else {
            throw ObjectStoreError.objectNotFound(object.objectID)
        }
        fill(object, with: snapshot)
    }

    /// Gives a fault its saved values.
    func fill(_ object: ManagedObject, with snapshot: (slots: Slots, version: Int64)) {
        object.slots = snapshot.slots
        object.committedSlots = snapshot.slots
        object.committedVersion = snapshot.version
        object.faultState = false
        object.awakeFromFetch()
    }

    /// The state of an object one level down: the parent's current values for a child
    /// context, the store's row otherwise. `nil` when the object does not exist there.
    /// `entity`: the ID's entity when the caller holds it (a fault does), so it is not
    /// looked up by name (a bulk delete fires a thousand faults).
    func savedSnapshot(for id: ObjectID, entity known: EntityDescription? = nil) throws -> (slots: Slots, version: Int64)? {
        if let parent {
            if parent.deletedSet.contains(id) { return nil }
            guard let object = parent.registered[id] ?? (id.isTemporary ? nil : try? parent.object(with: id)) else { return nil }
            do { try object.fireFault() } catch { return nil }
            return (object.slots, object.committedVersion)
        }
        guard !id.isTemporary, id.storeIdentifier == storeIdentifier,
              let entity = known.flatMap({ $0.name == id.entityName ? $0 : nil }) ?? model.entity(named: id.entityName) else { return nil }
        if readsEncodedRows {
            return try coordinator.store.encodedRow(for: id, of: entity, layouts: rowLayouts)
        }
        guard let row = try coordinator.store.row(for: id) else { return nil }
        var slots = row.slots
        // Transient slots are not stored: they start from their defaults.
        if slots.count != entity.properties.count {
            slots = entity.properties.map(SlotValue.initial(for:))
        }
        for (index, property) in entity.properties.enumerated() {
            if let attribute = property.attribute, !attribute.isStored { slots[index] = .initial(for: property) }
        }
        return (Slots(slots), row.version)
    }

    // MARK: Inserting

    /// Inserts a new object of an entity: model defaults applied, then ``ManagedObject/awakeFromInsert()``.
    ///
    /// - Throws: `ObjectStoreError.unknownEntity(_:suggestion:)`, `ObjectStoreError.abstractEntity(_:)`.
    @discardableResult
    public func insertObject(entityName: String) throws -> ManagedObject {
        guard let entity = model.entity(named: entityName) else {
            throw ObjectStoreError.unknownEntity(entityName, suggestion: NameSuggestion.closest(to: entityName, in: model.entities.map(\.name)))
        }
        guard !entity.isAbstract else { throw ObjectStoreError.abstractEntity(entityName) }
        // The ID scope and initial values of an entity, made once (an import inserts
        // 100,000 tasks).
        let template: InsertTemplate
        let store = storeIdentifier
        if let made = insertTemplates[entity.identity], made.scope.storeIdentifier == store {
            template = made
        } else {
            template = InsertTemplate(scope: ObjectID.Scope.of(entityName: entity.name, storeIdentifier: store),
                                      slots: entity.properties.map(SlotValue.initial(for:)))
            insertTemplates[entity.identity] = template
        }
        let id = ObjectID(template.scope, key: .temporary(TemporaryID.next()))
        let object = coordinator.objectClass(for: entity).init(entity: entity, objectID: id)
        object.managedObjectContext = self
        object.slots = Slots(template.slots)
        object.insertedState = true
        registerInsert(object)
        object.awakeFromInsert()
        return object
    }

    /// Inserts an object again under the permanent ID it had before it was deleted (an undo
    /// bringing back a deletion from the store's history): relationships and history that
    /// name the ID name it again. The key is the store's and was never handed out to
    /// another object, since keys are not reused.
    ///
    /// - Throws: ``ObjectStoreError/objectNotFound(_:)`` is not thrown; a store error when
    ///   the ID is temporary, of another store, or names an object that exists.
    package func insertObject(restoring id: ObjectID) throws -> ManagedObject {
        guard !id.isTemporary, id.storeIdentifier == storeIdentifier, registered[id] == nil, try coordinator.store.row(for: id) == nil else {
            throw StoreError.invalidRequest(path: "", reason: "cannot restore \(id): it exists, or is not a deleted object of this store")
        }
        let object = try insertObject(entityName: id.entityName)
        remapIDs([object.objectID: id])
        return object
    }

    /// Inserts a new object of a registered subclass.
    ///
    /// ```swift
    /// try coordinator.register(Task.self, forEntityName: "Task")
    /// let task = try context.insert(Task.self)
    /// task.text = "Buy milk"
    /// ```
    public func insert<T: ManagedObject>(_ type: T.Type) throws -> T {
        guard let name = coordinator.entityName(for: type) else { throw ObjectStoreError.unregisteredClass(String(describing: type)) }
        guard let object = try insertObject(entityName: name) as? T else { throw ObjectStoreError.unregisteredClass(String(describing: type)) }
        return object
    }

    func registerInsert(_ object: ManagedObject) {
        registered[object.objectID] = object
        insertedOrder.append(object.objectID)
        insertedByEntity[object.entity.name, default: []].append(object.objectID)
        pendingChanges.inserted.insert(object.objectID)
        undoManager?.record(.insert(object))
    }

    // MARK: Changes

    /// Objects inserted since the last save, in insertion order.
    public var insertedObjects: [ManagedObject] {
        insertedOrder.compactMap { registered[$0] }.filter { !$0.deletedState }
    }

    /// Inserted objects of the given entities, in insertion order (only theirs are looked up
    /// in the registry: an import of 100,000 tasks and 20 projects checks 20 for uniqueness).
    func insertedObjects(ofEntities names: Set<String>) -> [ManagedObject] {
        let ids: [ObjectID]
        if names.count == 1, let name = names.first {
            ids = insertedByEntity[name] ?? []
        } else {
            let wanted = names.filter { !(insertedByEntity[$0]?.isEmpty ?? true) }
            if wanted.count <= 1 {
                ids = wanted.first.flatMap { insertedByEntity[$0] } ?? []
            } else {
                ids = insertedOrder.filter { wanted.contains($0.entityName) }
            }
        }
        return ids.compactMap { registered[$0] }.filter { !$0.deletedState }
    }

    /// Saved objects with unsaved changes.
    public var updatedObjects: [ManagedObject] {
        touched.compactMap { registered[$0] }.filter(\.isUpdated)
    }

    /// Saved objects marked for deletion.
    public var deletedObjects: [ManagedObject] {
        deletedSet.compactMap { registered[$0] }.filter { !$0.insertedState }
    }

    /// Whether anything would be written by ``save()``.
    public var hasChanges: Bool {
        // The three lists above, asked only whether they are empty: no list is built, and
        // the first change found answers (every save asks).
        insertedOrder.contains { registered[$0].map { !$0.deletedState } ?? false }
            || deletedSet.contains { registered[$0].map { !$0.insertedState } ?? false }
            || touched.contains { registered[$0]?.isUpdated ?? false }
    }

    /// Sets one slot, recording undo and change tracking. Relationship inverses are the
    /// caller's business (see ``relate(_:_:_:)``).
    func setSlot(_ object: ManagedObject, _ index: Int, _ value: SlotValue) throws {
        try object.fireFault()
        let old = object.slots[index]
        guard old != value else { return }
        object.slots[index] = value
        object.noteSlotWritten(index)
        // An inserted object is pinned since its insertion and is not "updated" until saved.
        if !object.insertedState {
            touched.insert(object.objectID)
            registered.pin(object)
        }
        noteUpdate(of: object)
        undoManager?.record(.slot(object, index, old: old, new: value))
    }

    /// Counts an object as updated in the pending changes, unless its insertion is still
    /// pending (then observers see it once, as inserted). An object inserted earlier and
    /// changed after its insertion was posted is reported as updated, as Core Data does.
    func noteUpdate(of object: ManagedObject) {
        if object.insertedState && pendingChanges.inserted.contains(object.objectID) { return }
        pendingChanges.updated.insert(object.objectID)
    }

    // MARK: Fetching

    /// IDs of the saved objects of exactly this entity, as the level below sees them.
    func savedObjectIDs(ofEntity name: String) throws -> [ObjectID] {
        if let parent {
            var ids = try parent.savedObjectIDs(ofEntity: name).filter { !parent.deletedSet.contains($0) }
            ids.append(contentsOf: parent.insertedObjects.filter { $0.entity.name == name }.map(\.objectID))
            return ids
        }
        return try coordinator.store.objectIDs(ofEntity: name)
    }

    // MARK: Permanent IDs

    /// Gives inserted objects their permanent IDs now rather than at save, so their IDs can
    /// be handed to other contexts (which see them once saved). Keys come from the store, also
    /// for a child context, so an ID never changes again.
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        let temporary = objects.filter { $0.objectID.isTemporary }
        guard !temporary.isEmpty else { return }
        var mapping: [ObjectID: ObjectID] = [:]
        for (entityName, objects) in Dictionary(grouping: temporary, by: { $0.entity.name }) {
            let keys = try coordinator.store.allocateKeys(count: objects.count, entityName: entityName)
            for (object, key) in zip(objects, keys) {
                mapping[object.objectID] = ObjectID(entityName: entityName, storeIdentifier: storeIdentifier, key: .permanent(key))
            }
        }
        remapIDs(mapping)
    }

    /// Replaces IDs everywhere in the context: registrations, slots, snapshots, change sets.
    func remapIDs(_ mapping: [ObjectID: ObjectID]) {
        guard !mapping.isEmpty else { return }
        func map(_ id: ObjectID) -> ObjectID { mapping[id] ?? id }
        func map(_ slot: SlotValue) -> SlotValue {
            switch slot {
            case .value: return slot
            case .toOne(let id): return .toOne(id.map(map))
            case .toMany(let ids): return .toMany(ids.map(map))
            }
        }
        func mentionsMapped(_ slot: SlotValue) -> Bool {
            switch slot {
            case .value: return false
            case .toOne(let id): return id.map { mapping[$0] != nil } ?? false
            case .toMany(let ids): return ids.contains { mapping[$0] != nil }
            }
        }
        // Only relationship slots hold IDs, and only objects whose ID changes move in the
        // registry: a save of 100,000 new tasks rebuilt every object's slots and the registry.
        var relationshipSlots: [String: [Int]] = [:]
        var moved: [(old: ObjectID, object: ManagedObject)] = []
        var all: [ManagedObject] = []
        for (id, object) in registered {
            all.append(object)
            if mapping[id] != nil { moved.append((id, object)) }
            let entity = object.entity
            let slots = relationshipSlots[entity.name] ?? {
                let found = entity.properties.indices.filter { entity.kind(ofSlot: $0) == .toOne || entity.kind(ofSlot: $0) == .toMany }
                relationshipSlots[entity.name] = found
                return found
            }()
            // A row of the store read in place mentions saved objects only.
            let slotsSaved = object.slots.isEncoded, committedSaved = object.committedSlots?.isEncoded ?? true
            if slotsSaved && committedSaved { continue }
            for index in slots {
                if !slotsSaved, index < object.slots.count, mentionsMapped(object.slots[index]) {
                    object.slots[index] = map(object.slots[index])
                }
                if !committedSaved, let committed = object.committedSlots, index < committed.count, mentionsMapped(committed[index]) {
                    object.committedSlots?[index] = map(committed[index])
                }
            }
        }
        if moved.count > all.count / 8 {
            // Many moves: a new registry (deleting most keys of a dictionary one by one
            // costs more than building it again).
            for (old, object) in moved { object.objectID = map(old) }
            var newRegistered = ObjectRegistry()
            newRegistered.reserveCapacity(forMore: all.count)
            for object in all { newRegistered[object.objectID] = object }
            registered = newRegistered
        } else {
            for (old, object) in moved {
                registered[old] = nil
                object.objectID = map(old)
                registered[object.objectID] = object
            }
        }
        insertedOrder = insertedOrder.map(map)
        insertedByEntity = insertedByEntity.mapValues { $0.map(map) }
        deletedSet = Set(deletedSet.map(map))
        touched = Set(touched.map(map))
        pendingChanges = pendingChanges.mapped(map)
        undoManager?.remap(map)
    }
}

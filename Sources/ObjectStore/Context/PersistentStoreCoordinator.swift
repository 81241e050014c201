import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// Owns the model and the store, serialises saves and tells observers about them. Sendable:
/// every context of one coordinator, on any thread, sees the same saved state.
///
/// ```swift
/// let coordinator = PersistentStoreCoordinator(inMemoryWith: model)
/// let context = ManagedObjectContext(coordinator: coordinator)
/// let ids = try await coordinator.performBackgroundTask { context in
///     let task = try context.insertObject(entityName: "Task")
///     try task.setValue("Imported", forKey: "text")
///     try context.save()
///     return task.objectID
/// }
/// ```
public final class PersistentStoreCoordinator: Sendable {
    /// The model of every object in the store.
    public let model: ManagedObjectModel
    /// The store objects are saved to. Stores are reached through the coordinator
    /// (``storeIdentifier``, ``compactStore()``, ``withExclusiveStoreAccess(_:)``...): the
    /// store protocol is not public until stores of other parties are a supported story.
    package let store: any PersistentStore
    /// Serialises the saves of this coordinator's contexts.
    private let saveLock = NSLock()
    private struct Registrations {
        var classes: [String: ManagedObject.Type] = [:]
        var saveObservers: [UUID: @Sendable (SaveNotification) -> Void] = [:]
    }
    private let registrations = Locked(Registrations())
    /// The watch for other processes' saves (``addRemoteChangeObserver(_:)``).
    let remoteWatch = Locked(RemoteWatch())

    /// The clock `now()` reads in predicates and derived attributes; a fixed one makes
    /// derived values such as `isOverdue` testable.
    public let clock: @Sendable () -> Date

    /// A coordinator over a store made inside the package, with the clock `now()` reads.
    package init(model: ManagedObjectModel, store: any PersistentStore, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.model = model
        self.store = store
        self.clock = clock
    }

    /// A coordinator over a new, empty in-memory store (for tests and scratch work: nothing
    /// reaches a disk, and the objects are gone with the coordinator).
    ///
    /// ```swift
    /// let scratch = PersistentStoreCoordinator(inMemoryWith: model)
    /// ```
    ///
    /// `history`: record every save's transaction and keep those it covers (ObjectStore's History guide).
    public convenience init(inMemoryWith model: ManagedObjectModel, clock: @escaping @Sendable () -> Date = { Date() }, history: HistoryRetention? = nil) {
        let store = StoreFactory.inMemory(model: model)
        if let history { try? store.trackHistory(history) }
        self.init(model: model, store: store, clock: clock)
    }

    /// Opens (or creates) the store file at `url` for `model`: a JSON store for a `.json`
    /// path, a binary store otherwise, unless `type` says.
    ///
    /// ```swift
    /// let coordinator = try PersistentStoreCoordinator(model: model, storeURL: URL(fileURLWithPath: "tasks.store"))
    /// ```
    ///
    /// `durability` is the binary store's (`StoreDurability`); a JSON store is
    /// always flushed, an in-memory one never. `history`: record every save's transaction
    /// and keep those it covers (ObjectStore's History guide); a store file that keeps history records
    /// them whatever this says.
    ///
    /// - Throws: `StoreError`: a foreign, corrupt or newer file, or one written with a model
    ///   whose entities differ (named in the error). The file is left untouched.
    public convenience init(model: ManagedObjectModel, storeURL: URL, type: StoreType? = nil, readOnly: Bool = false,
                            durability: StoreDurability = .full, clock: @escaping @Sendable () -> Date = { Date() }, history: HistoryRetention? = nil) throws {
        let store = try StoreFactory.open(storeURL, type: type, model: model, readOnly: readOnly, durability: durability)
        if let history { try store.trackHistory(history) }
        self.init(model: model, store: store, clock: clock)
    }

    // MARK: The store

    /// The store's UUID, part of every object ID it hands out (and of their URIs).
    public var storeIdentifier: String { store.identifier }

    /// The store's identity, the model it was written with and its next keys.
    public var storeMetadata: StoreMetadata? { store.metadata }

    /// The identity and model of the store file at `url` without opening it for use (as
    /// Core Data's `metadataForPersistentStore`): what a migration would start from.
    ///
    /// ```swift
    /// let stored = try PersistentStoreCoordinator.metadataForStore(at: URL(fileURLWithPath: "tasks.store"))
    /// print(stored.modelVersionName ?? "unnamed model")
    /// ```
    ///
    /// - Throws: `StoreError`: no such file, a foreign or corrupt one.
    public static func metadataForStore(at url: URL, type: StoreType? = nil) throws -> StoreMetadata {
        try StoreFactory.metadata(at: url, type: type)
    }

    /// Reclaims the space of superseded and deleted rows: the binary store writes a new
    /// snapshot of its live rows (it also does so by itself as its log grows); the JSON and
    /// in-memory stores keep nothing to reclaim.
    ///
    /// - Throws: `StoreError`: the file could not be written; it is left as it was.
    public func compactStore() throws {
        try store.compact()
    }

    /// Drops the history up to its last transaction that does not decode (damage that
    /// checksums cannot catch, such as a forged record, which makes `fetchHistory(after:authors:entities:)`
    /// fail and undo stop), then compacts: the objects stay exactly as they are, the history
    /// starts after the damage. ``checkIntegrity()`` reports such a transaction.
    ///
    /// ```swift
    /// if let dropped = try coordinator.dropHistoryThroughLastUndecodableTransaction() {
    ///     print("history kept from transaction \(dropped + 1) on")
    /// }
    /// ```
    ///
    /// - Returns: the number of the last transaction dropped, or nil when every one decodes
    ///   (nothing is changed then).
    @discardableResult
    public func dropHistoryThroughLastUndecodableTransaction() throws -> Int64? {
        guard let last = try store.lastUndecodableTransaction() else { return nil }
        try store.deleteHistory(through: last)
        try store.compact()
        return last
    }

    /// Runs `body`, and commits every save made inside it to the store at once when it
    /// returns: one commit of the file and one transaction of the store's history (one
    /// undo, one entry of a history listing). Until then no other process sees any of them,
    /// and a crash or an error leaves none: when `body` throws (or the commit fails), the
    /// store holds exactly what it held before, and the error comes out. The store's file
    /// is locked throughout, so the saves and reads of other processes and of this
    /// process's other threads wait for the body (which must not wait for them). Another
    /// opening of the same file on the body's own thread that saves or compacts inside it
    /// makes the batch fail (`StoreError.invalidRequest`), keeping that opening's change.
    ///
    /// For a bulk load that should not hold every object at once: save in batches and let
    /// each batch's objects go before the next.
    ///
    /// ```swift
    /// try coordinator.committingTogether {
    ///     for start in stride(from: 0, to: records.count, by: 50_000) {
    ///         for record in records[start..<min(start + 50_000, records.count)] {
    ///             try insert(record, into: context)
    ///         }
    ///         try context.save()
    ///         context.reset()
    ///     }
    /// }
    /// ```
    ///
    /// Inside `body`, this process's contexts read what the earlier saves saved. After an
    /// error, contexts that saved inside `body` hold objects the store no longer has:
    /// reset them. The transaction records the net change: an object inserted and deleted
    /// inside is not in it, one changed twice is recorded once against its values before.
    /// The housekeeping saves do (compaction) runs once, after the commit. Not nested.
    ///
    /// - Throws: what `body` throws; `StoreError.invalidRequest` for a store that is not a
    ///   binary store (a JSON store writes its whole file at every save), or a commit larger
    ///   than 4 GiB; `StoreError` when the file cannot be written (nothing is committed).
    public func committingTogether<T>(_ body: () throws -> T) throws -> T {
        let result = try store.committingTogether(body)
        noteOwnTransaction()
        return result
    }

    /// Runs `body` with the housekeeping that saves do after committing held back, then does
    /// it once, if the store needs it: the binary store compacts its file when its log has
    /// grown enough. For a bulk load, a large save followed by letting go of its objects
    /// (``ManagedObjectContext/reset()``) inside `body` has the compaction run without the
    /// objects in memory:
    ///
    /// ```swift
    /// try coordinator.deferringHousekeeping {
    ///     try context.save()
    ///     context.reset()
    /// }
    /// ```
    ///
    /// The saves inside are durable as they return, as always. The housekeeping runs after
    /// `body` also when it throws; one that fails leaves ``housekeepingWarning``.
    ///
    /// - Throws: what `body` throws.
    public func deferringHousekeeping<T>(_ body: () throws -> T) rethrows -> T {
        store.deferHousekeeping(true)
        defer {
            store.deferHousekeeping(false)
            store.housekeep()
        }
        return try body()
    }

    /// Why the last automatic compaction after a save failed, or `nil`. The save itself had
    /// committed: compaction is housekeeping, and the next save tries again.
    public var housekeepingWarning: String? { store.housekeepingWarning }

    /// Runs `body` while no other process (and no other thread of this one) can save to
    /// the store, after reading what others saved before. Saves made inside `body` on
    /// this thread go through. For a read-check-write that must not interleave with other
    /// writers, such as a save together with a journal kept beside the store.
    public func withExclusiveStoreAccess<T>(_ body: () throws -> T) throws -> T {
        try store.withExclusiveAccess(body)
    }

    // MARK: Classes

    /// Registers a Swift subclass for an entity: objects of the entity (and of sub-entities
    /// without a class of their own) are instances of it. The subclass's typed properties are
    /// checked against the entity. A class registered for the entity before that is a
    /// subclass of `type` stays (the generated classes' `register(in:)` after your own
    /// `MyNote: NotesModel.Note` keeps `MyNote`); any other is replaced.
    ///
    /// ```swift
    /// try coordinator.register(MyNote.self, forEntityName: "Note")
    /// try NotesModel.register(in: coordinator)   // Note objects are still MyNote
    /// ```
    ///
    /// - Throws: `ObjectStoreError.unknownEntity(_:suggestion:)` or
    ///   `ObjectStoreError.classMismatch(entity:problems:)`.
    public func register(_ type: ManagedObject.Type, forEntityName name: String) throws {
        guard let entity = model.entity(named: name) else {
            throw ObjectStoreError.unknownEntity(name, suggestion: NameSuggestion.closest(to: name, in: model.entities.map(\.name)))
        }
        let problems = TypedPropertyRegistry.check(type, against: entity)
        guard problems.isEmpty else { throw ObjectStoreError.classMismatch(entity: name, problems: problems) }
        registrations.withLock { registrations in
            if let existing = registrations.classes[name], Self.isSubclass(existing, of: type) { return }
            registrations.classes[name] = type
        }
    }

    /// Whether `type` is `base` or inherits from it.
    static func isSubclass(_ type: AnyClass, of base: AnyClass) -> Bool {
        var current: AnyClass? = type
        while let candidate = current {
            if ObjectIdentifier(candidate) == ObjectIdentifier(base) { return true }
            current = _getSuperclass(candidate)
        }
        return false
    }

    /// The class objects of an entity are made with.
    func objectClass(for entity: EntityDescription) -> ManagedObject.Type {
        registrations.withLock { registrations in
            let classes = registrations.classes
            if let type = classes[entity.name] { return type }
            for ancestor in entity.ancestorNames { if let type = classes[ancestor] { return type } }
            return ManagedObject.self
        }
    }

    /// The entity a class was registered for.
    func entityName(for type: ManagedObject.Type) -> String? {
        registrations.withLock { $0.classes.first { $0.value == type }?.key }
    }

    // MARK: Saving

    /// Saves that need the lock for longer (allocate keys, check, write) run here.
    func withSaveLock<T>(_ body: () throws -> T) rethrows -> T {
        try saveLock.withLock(body)
    }

    /// Tells every observer about a save. Observers run on the saving thread.
    func post(_ notification: SaveNotification) {
        let observers = registrations.withLock { Array($0.saveObservers.values) }
        for observer in observers { observer(notification) }
    }

    /// Calls `handler` after every save of any context of this coordinator, on the saving
    /// thread. Keep the token; the observation ends when it is cancelled or released.
    public func addSaveObserver(_ handler: @escaping @Sendable (SaveNotification) -> Void) -> ObservationToken {
        let id = UUID()
        registrations.withLock { $0.saveObservers[id] = handler }
        return ObservationToken { [weak self] in
            guard let self else { return }
            _ = self.registrations.withLock { $0.saveObservers.removeValue(forKey: id) }
        }
    }

    // MARK: Background work

    /// Runs `body` with a new context on a background thread and returns its result. Objects
    /// stay on that thread; return object IDs (Sendable) to use them elsewhere.
    public func performBackgroundTask<T: Sendable>(_ body: @escaping @Sendable (ManagedObjectContext) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                let context = ManagedObjectContext(coordinator: self)
                do {
                    continuation.resume(returning: try body(context))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}

/// What a save changed, by object ID: posted to the saving context's observers and to every
/// save observer of the coordinator; another context merges it with
/// ``ManagedObjectContext/mergeChanges(from:)``.
public struct SaveNotification: Sendable {
    /// Objects the save inserted (with their permanent IDs).
    public var inserted: Set<ObjectID>
    /// Objects the save changed.
    public var updated: Set<ObjectID>
    /// Objects the save deleted.
    public var deleted: Set<ObjectID>
    /// Identifies the context that saved.
    public var contextIdentifier: UUID
}

/// Keeps a coordinator's save observation alive; the observation ends when the token is
/// cancelled or released, on any thread.
public final class ObservationToken: Sendable {
    private let onCancel: Locked<(@Sendable () -> Void)?>

    init(_ onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Locked(onCancel)
    }

    /// Ends the observation.
    public func cancel() {
        let action = onCancel.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }

    deinit { cancel() }
}

/// Keeps an observation of a context alive; the observation ends when the token is
/// cancelled or released. Like its context it is not Sendable: it is cancelled on the
/// context's thread, so ending an observation never races with the context posting events.
public final class ContextObservationToken {
    private var onCancel: (() -> Void)?

    init(_ onCancel: @escaping () -> Void) {
        self.onCancel = onCancel
    }

    /// Ends the observation.
    public func cancel() {
        let action = onCancel
        onCancel = nil
        action?()
    }

    deinit { cancel() }
}

import Foundation
import ObjectStore
import ObjectStoreModel

/// What a change in the store's history did to the tasks the server knows: TaskChampion's
/// unit is a task, a map from string to string, while a model spreads a task over objects
/// (a tag's name lives in a Tag). A mapping says which task keys a change touched.
///
/// ```swift
/// SyncTouch(task: uuid, kind: .keys(["title"]))   // the task's title may have changed
/// ```
public struct SyncTouch: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// The task was created: every key it has.
        case created
        /// These keys may have changed (a key the task no longer has was removed).
        case keys(Set<String>)
        /// The task was deleted.
        case deleted
    }

    public let task: UUID
    public let kind: Kind

    public init(task: UUID, kind: Kind) {
        self.task = task
        self.kind = kind
    }
}

/// What one save of history knew of objects deleted in it or after it: the tombstones
/// (the attributes marked `"preserveValueOnDeletion"`) of every deletion the history holds,
/// for a mapping that must name what a deleted object was (a tag's name, a task's UUID).
public struct SyncTombstones {
    public var values: [ObjectID: [String: Value]] = [:]

    public init(_ transactions: [HistoryTransaction]) {
        for transaction in transactions {
            for change in transaction.changes where change.kind == .delete {
                var kept: [String: Value] = [:]
                for property in change.values { kept[property.name] = property.oldValue.value }
                values[change.objectID] = kept
            }
        }
    }

    public subscript(_ id: ObjectID, _ name: String) -> Value? { values[id]?[name] }
}

/// Where a replica keeps its place in the server's chain: an entity of the model with the
/// attributes `server` (string), `baseVersion` (uuid), `syncedTransaction` (int64) and
/// `lastSync` (date), holding at most one object. Saved in the same commit as the changes
/// a sync applies, so a crash keeps both or neither.
public struct SyncStateEntity: Sendable {
    public let name: String

    public init(name: String = "SyncState") {
        self.name = name
    }
}

/// How a model's objects become TaskChampion tasks and back: the sync engine asks a mapping
/// for the tasks of the store and the keys a local change touched, and hands it each task it
/// receives to write. ``UUIDSyncMapping`` is the mapping of any model (an object with a
/// `uuid` attribute is a task); taskctl's own turns its Task, Tag, Project, Location and
/// Annotation objects into Taskwarrior's keys. Write one to choose the keys yourself (to
/// share tasks with Taskwarrior, to keep some objects local), and give it to
/// ``SyncEngine/init(coordinator:remote:mapping:clock:)``.
///
/// The rules a mapping keeps, which the engine relies on:
/// - A task is a map from string keys to string values, named by a UUID that never changes;
///   ``task(_:in:)`` and ``allTasks(in:)`` give the same keys for a task, and give them the
///   same way on every replica (the values are compared as text).
/// - ``touches(of:tombstones:in:)`` names every task whose keys a change of history may have
///   changed (more is harmless, fewer loses the change); an object deleted in the change is
///   named through its tombstone (attributes marked `"preserveValueOnDeletion"`).
/// - ``write(_:for:in:)`` makes the store's objects say exactly what the keys say, without
///   saving (the engine saves, with its own author, so the writes are never sent back), and
///   never throws for a value it cannot keep: it keeps what it can and returns a warning.
///
/// ```swift
/// /// The generic mapping, with notes' `text` travelling as Taskwarrior's `description`.
/// struct DescriptionMapping: SyncMapping {
///     let generic: UUIDSyncMapping
///     var stateEntity: SyncStateEntity { generic.stateEntity }
///     var entitiesNotSynced: [String] { generic.entitiesNotSynced }
///     var modifiedKey: String? { nil }
///     func renamed(_ keys: [String: String]) -> [String: String] {
///         var keys = keys
///         keys["description"] = keys.removeValue(forKey: "text")
///         return keys
///     }
///     func allTasks(in context: ManagedObjectContext) throws -> [(uuid: UUID, properties: [String: String])] {
///         try generic.allTasks(in: context).map { ($0.uuid, renamed($0.properties)) }
///     }
///     func task(_ uuid: UUID, in context: ManagedObjectContext) throws -> [String: String]? {
///         try generic.task(uuid, in: context).map(renamed)
///     }
///     func touches(of change: HistoryChange, tombstones: SyncTombstones, in context: ManagedObjectContext) throws -> [SyncTouch] {
///         try generic.touches(of: change, tombstones: tombstones, in: context).map { touch in
///             guard case .keys(let keys) = touch.kind else { return touch }
///             return SyncTouch(task: touch.task, kind: .keys(Set(keys.map { $0 == "text" ? "description" : $0 })))
///         }
///     }
///     func write(_ properties: [String: String]?, for uuid: UUID, in context: ManagedObjectContext) throws -> [String] {
///         var keys = properties
///         if let text = keys?.removeValue(forKey: "description") { keys?["text"] = text }
///         return try generic.write(keys, for: uuid, in: context)
///     }
///     func finishWrites(in context: ManagedObjectContext) throws -> [String] { try generic.finishWrites(in: context) }
/// }
/// ```
public protocol SyncMapping {
    /// The entity that holds the sync state (``SyncStateEntity``).
    var stateEntity: SyncStateEntity { get }
    /// Entities of the model whose objects do not travel (no UUID attribute), named in
    /// every sync's warnings rather than left out without a word.
    var entitiesNotSynced: [String] { get }
    /// The key set to the time of a task's latest local change, as Taskwarrior's
    /// `modified` (nil: none).
    var modifiedKey: String? { get }
    /// Every task of the store, with its keys: what a first sync sends and a snapshot holds.
    func allTasks(in context: ManagedObjectContext) throws -> [(uuid: UUID, properties: [String: String])]
    /// One task's keys, nil when the store has no such task.
    func task(_ uuid: UUID, in context: ManagedObjectContext) throws -> [String: String]?
    /// The tasks and keys a change of history touched.
    func touches(of change: HistoryChange, tombstones: SyncTombstones, in context: ManagedObjectContext) throws -> [SyncTouch]
    /// Makes the store's task `uuid` what `properties` says (nil: the task is gone), in
    /// `context`, without saving. A value the model refuses is kept where the mapping can
    /// keep it and named in the warnings returned; it never stops a sync.
    func write(_ properties: [String: String]?, for uuid: UUID, in context: ManagedObjectContext) throws -> [String]
    /// Called after the writes of one save, before it: what needs every object of the batch
    /// (relationships to objects written after the one naming them). Returns warnings.
    func finishWrites(in context: ManagedObjectContext) throws -> [String]
}

extension SyncMapping {
    public func finishWrites(in context: ManagedObjectContext) throws -> [String] { [] }
}

extension SyncMapping {
    public var entitiesNotSynced: [String] { [] }
}

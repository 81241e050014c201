import Foundation
import ObjectStore
import ObjectStoreModel

/// What a change in the store's history did to the tasks the server knows: TaskChampion's
/// unit is a task, a map from string to string, while a model spreads a task over objects
/// (a tag's name lives in a Tag). A mapping says which task keys a change touched.
package struct SyncTouch: Sendable, Hashable {
    package enum Kind: Sendable, Hashable {
        /// The task was created: every key it has.
        case created
        /// These keys may have changed (a key the task no longer has was removed).
        case keys(Set<String>)
        /// The task was deleted.
        case deleted
    }

    package let task: UUID
    package let kind: Kind

    package init(task: UUID, kind: Kind) {
        self.task = task
        self.kind = kind
    }
}

/// What one save of history knew of objects deleted in it or after it: the tombstones
/// (the attributes marked `"preserveValueOnDeletion"`) of every deletion the history holds,
/// for a mapping that must name what a deleted object was (a tag's name, a task's UUID).
package struct SyncTombstones {
    package var values: [ObjectID: [String: Value]] = [:]

    package init(_ transactions: [HistoryTransaction]) {
        for transaction in transactions {
            for change in transaction.changes where change.kind == .delete {
                var kept: [String: Value] = [:]
                for property in change.values { kept[property.name] = property.oldValue.value }
                values[change.objectID] = kept
            }
        }
    }

    package subscript(_ id: ObjectID, _ name: String) -> Value? { values[id]?[name] }
}

/// Where a replica keeps its place in the server's chain: an entity of the model with the
/// attributes `server` (string), `baseVersion` (uuid), `syncedTransaction` (int64) and
/// `lastSync` (date), holding at most one object. Saved in the same commit as the changes
/// a sync applies, so a crash keeps both or neither.
package struct SyncStateEntity: Sendable {
    package let name: String

    package init(name: String = "SyncState") {
        self.name = name
    }
}

/// How a model's objects become TaskChampion tasks and back. taskctl's mapping turns its
/// Task, Tag, Project, Location and Annotation objects into Taskwarrior's keys.
package protocol SyncMapping {
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
    package func finishWrites(in context: ManagedObjectContext) throws -> [String] { [] }
}

extension SyncMapping {
    package var entitiesNotSynced: [String] { [] }
}

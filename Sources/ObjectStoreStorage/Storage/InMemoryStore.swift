import Foundation
import ObjectStoreModel

/// A store that keeps rows in memory only: for tests and scratch work.
///
/// ```swift
/// let coordinator = PersistentStoreCoordinator(inMemoryWith: model)
/// ```
package final class InMemoryStore: PersistentStore, Sendable {
    /// The store's UUID.
    package let identifier: String
    /// The model of the objects kept.
    package let model: ManagedObjectModel

    private struct State {
        var rows: [ObjectID: StoredRow] = [:]
        var idsByEntity: [String: [Int64: ObjectID]] = [:]
        /// An entity's IDs in key order, kept until a save adds or removes one of them.
        var sortedIDs: [String: [ObjectID]] = [:]
        var nextKeys: [String: Int64] = [:]
        /// The history, when kept, and its bound.
        var history: HistoryList?
        var retention = HistoryRetention.all
    }
    private let state = Locked(State())

    /// An empty store for a model.
    package init(model: ManagedObjectModel, identifier: String = UUID().uuidString) {
        self.model = model
        self.identifier = identifier
    }

    package func row(for id: ObjectID) throws -> StoredRow? {
        state.withLock { $0.rows[id] }
    }

    package func objectIDs(ofEntity entityName: String) throws -> [ObjectID] {
        state.withLock { state in
            if let sorted = state.sortedIDs[entityName] { return sorted }
            let sorted = (state.idsByEntity[entityName] ?? [:]).sorted { $0.key < $1.key }.map(\.value)
            state.sortedIDs[entityName] = sorted
            return sorted
        }
    }

    package func allocateKeys(count: Int, entityName: String) throws -> [Int64] {
        state.withLock { state in
            let first = max(1, state.nextKeys[entityName] ?? 1)
            state.nextKeys[entityName] = first + Int64(count)
            return (0..<Int64(count)).map { first + $0 }
        }
    }

    package var metadata: StoreMetadata? {
        state.withLock { StoreMetadata(storeIdentifier: identifier, model: model, nextKeys: $0.nextKeys) }
    }

    package func save(_ changes: StoreChanges) throws -> [ObjectID: ObjectID] {
        try state.withLock { state in
            try checkVersions(changes, current: { state.rows[$0]?.version })
            let violations = try UniquenessCheck(model: model).failures(changes, rows: state.rows)
            if !violations.isEmpty { throw ValidationError(failures: violations) }
            let destinations = DestinationCheck(model: model), rows = state.rows
                let dangling = try destinations.failures(changes, exists: { rows[$0] != nil })
                    + destinations.deletionFailures(changes, rows: { name, slot in
                        rows.values.filter { $0.objectID.entityName == name && slot < $0.slots.count }.map { ($0.objectID, $0.slots[slot]) }
                    })
            if !dangling.isEmpty { throw ValidationError(failures: dangling) }
            let (changes, mapping, next) = changes.assigningKeys(from: state.nextKeys)
            if var history = state.history {
                let rows = state.rows
                let values = try historyChanges(changes, draft: changes.transaction, model: model, stored: { rows[$0] })
                let now = changes.transaction?.timestamp ?? Date()
                history.transactions.append(HistoryTransaction(
                    number: history.last + 1, storeIdentifier: identifier, timestamp: now, author: changes.transaction?.author,
                    contextName: changes.transaction?.contextName, processID: currentProcessID, changes: values))
                history.apply(state.retention, now: now)
                state.history = history
            }
            state.nextKeys = next
            for row in changes.inserted + changes.updated.map(\.row) {
                state.rows[row.objectID] = row
                if let key = row.objectID.primaryKey { state.idsByEntity[row.objectID.entityName, default: [:]][key] = row.objectID }
            }
            for row in changes.inserted { state.sortedIDs[row.objectID.entityName] = nil }
            for (id, _) in changes.deleted {
                state.rows[id] = nil
                if let key = id.primaryKey { state.idsByEntity[id.entityName]?[key] = nil }
                state.sortedIDs[id.entityName] = nil
            }
            return mapping
        }
    }
}

extension InMemoryStore {
    package var keepsHistory: Bool { state.withLock { $0.history != nil } }
    package var lastSavedTransaction: Int64? { state.withLock { $0.history?.transactions.last?.number } }

    package func trackHistory(_ retention: HistoryRetention) throws {
        state.withLock { state in
            if state.history == nil { state.history = HistoryList() }
            state.retention = retention
        }
    }

    package func continueHistory(after number: Int64) throws {
        state.withLock { state in
            var history = HistoryList()
            history.start = max(1, number + 1)
            state.history = history
        }
    }

    package func historyBounds() throws -> (first: Int64, last: Int64) {
        try state.withLock { state in
            guard let history = state.history else { throw HistoryError.notTracked }
            return (history.start, history.last)
        }
    }

    package func history(after number: Int64?, since date: Date?) throws -> [HistoryTransaction] {
        try state.withLock { state in
            guard let history = state.history else { throw HistoryError.notTracked }
            let found = try history.after(number ?? history.start - 1, storeIdentifier: identifier)
            return date.map { date in found.filter { $0.timestamp > date } } ?? found
        }
    }

    package func deleteHistory(through number: Int64) throws {
        try state.withLock { state in
            guard state.history != nil else { throw HistoryError.notTracked }
            state.history?.delete(through: number)
        }
    }
}

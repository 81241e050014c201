import Foundation
import ObjectStoreModel

/// Saves of other processes (or other coordinators) to the store, as its history recorded
/// them: posted to ``PersistentStoreCoordinator/addRemoteChangeObserver(_:)`` and
/// ``PersistentStoreCoordinator/remoteChanges()`` (Core Data's remote change notification).
public struct RemoteChange: Sendable {
    /// The token of the store's last transaction when the change was seen.
    public let token: HistoryToken
    /// The transactions others committed since the last notification, oldest first.
    public let transactions: [HistoryTransaction]
}

/// What the coordinator's watch for other processes' saves keeps.
struct RemoteWatch: Sendable {
    var observers: [UUID: @Sendable (RemoteChange) -> Void] = [:]
    /// Whether a poll is scheduled (while there are observers).
    var polling = false
    /// The last transaction number observers were told about (or that was this
    /// coordinator's own).
    var seen: Int64 = 0
    /// Numbers of this coordinator's own transactions not yet passed by a poll.
    var own: Set<Int64> = []
    /// How often the store is looked at.
    var interval: TimeInterval = 0.2
}

extension PersistentStoreCoordinator {
    // MARK: History

    /// Whether the store keeps history: every save records a transaction. Turned on by
    /// opening the store with a `HistoryRetention` (and kept on by a file that has
    /// history: a binary store file is marked, so no program saves to it without
    /// recording its transaction).
    public var keepsHistory: Bool { store.keepsHistory }

    /// Records a transaction in every save from now on and keeps the ones `retention`
    /// covers (the coordinator's `history:` option does this at open). On by itself for a
    /// store whose file keeps history, with no bound until this is called.
    ///
    /// A read-only store reads the history its file has and records none.
    ///
    /// - Throws: `HistoryError.notTracked` for a store that cannot keep history.
    public func trackHistory(_ retention: HistoryRetention = .all) throws {
        try store.trackHistory(retention)
    }

    /// The token of the store's last transaction (transaction number 0 before the first),
    /// after reading what other processes saved. Keep it to fetch what is saved after it.
    ///
    /// - Throws: `HistoryError.notTracked` when the store keeps no history; store errors.
    public var currentHistoryToken: HistoryToken {
        get throws {
            HistoryToken(storeIdentifier: store.identifier, transactionNumber: try store.historyBounds().last)
        }
    }

    /// The transactions committed after `token` (nil: every one kept), oldest first, by any
    /// process, with only the changes of `entities` (and their sub-entities) when given and
    /// only the transactions of `authors` when given. Transactions left with no change
    /// after the entity filter are not listed.
    ///
    /// ```swift
    /// let transactions = try coordinator.fetchHistory(after: lastToken, authors: ["sync"])
    /// for transaction in transactions { ... }
    /// lastToken = transactions.last?.token ?? lastToken
    /// ```
    ///
    /// - Throws: `HistoryError.expiredToken(_:firstAvailable:last:)` when transactions
    ///   after the token were deleted (start again from the objects);
    ///   `HistoryError.foreignToken(_:storeIdentifier:)`; `HistoryError.notTracked`.
    public func fetchHistory(after token: HistoryToken?, authors: Set<String>? = nil, entities: Set<String>? = nil) throws -> [HistoryTransaction] {
        if let token, token.storeIdentifier != store.identifier {
            throw HistoryError.foreignToken(token, storeIdentifier: store.identifier)
        }
        return filter(try store.history(after: token?.transactionNumber, since: nil), authors: authors, entities: entities)
    }

    /// The transactions committed after `date` (by their timestamps), oldest first, filtered
    /// as `fetchHistory(after:authors:entities:)` filters. Transactions already deleted
    /// are not listed.
    public func fetchHistory(after date: Date, authors: Set<String>? = nil, entities: Set<String>? = nil) throws -> [HistoryTransaction] {
        filter(try store.history(after: nil, since: date), authors: authors, entities: entities)
    }

    /// Deletes the transactions up to and including the one `token` names, for every
    /// process (Core Data's `deleteHistory(before:)`): call it with the token of the last
    /// transaction every reader has processed.
    public func deleteHistory(before token: HistoryToken) throws {
        guard token.storeIdentifier == store.identifier else { throw HistoryError.foreignToken(token, storeIdentifier: store.identifier) }
        try store.deleteHistory(through: token.transactionNumber)
    }

    /// Deletes the transactions stamped before `date`.
    public func deleteHistory(before date: Date) throws {
        let bounds = try store.historyBounds()
        let older = try store.history(after: bounds.first - 1, since: nil).filter { $0.timestamp < date }
        guard let last = older.last else { return }
        try store.deleteHistory(through: last.number)
    }

    private func filter(_ transactions: [HistoryTransaction], authors: Set<String>?, entities: Set<String>?) -> [HistoryTransaction] {
        var result = transactions
        if let authors { result = result.filter { $0.author.map(authors.contains) ?? false } }
        if let entities {
            func wanted(_ name: String) -> Bool {
                entities.contains(name) || (model.entity(named: name)?.ancestorNames.contains(where: entities.contains) ?? false)
            }
            result = result.compactMap { transaction in
                let changes = transaction.changes.filter { wanted($0.entityName) }
                guard !changes.isEmpty else { return nil }
                return HistoryTransaction(number: transaction.number, storeIdentifier: transaction.token.storeIdentifier, timestamp: transaction.timestamp,
                                          author: transaction.author, contextName: transaction.contextName, processID: transaction.processID, changes: changes)
            }
        }
        return result
    }

    // MARK: Other processes' saves

    /// How often the store is looked at for other processes' saves while someone observes
    /// them (default 0.2 s).
    public var remoteChangeInterval: TimeInterval {
        get { remoteWatch.withLock { $0.interval } }
        set { remoteWatch.withLock { $0.interval = max(0.01, newValue) } }
    }

    /// Calls `handler`, on a background queue, with the transactions other processes (or
    /// other coordinators of the file) commit from now on, each time the store is seen to
    /// have them. Needs a store that keeps history. Keep the token; the observation ends
    /// when it is cancelled or released.
    ///
    /// - Throws: `HistoryError.notTracked`.
    public func addRemoteChangeObserver(_ handler: @escaping @Sendable (RemoteChange) -> Void) throws -> ObservationToken {
        let last = try store.historyBounds().last
        let id = UUID()
        let start: Bool = remoteWatch.withLock { watch in
            if watch.observers.isEmpty { watch.seen = last }
            watch.observers[id] = handler
            defer { watch.polling = true }
            return !watch.polling
        }
        if start { scheduleRemotePoll() }
        return ObservationToken { [weak self] in
            _ = self?.remoteWatch.withLock { $0.observers.removeValue(forKey: id) }
        }
    }

    /// Other processes' saves as an asynchronous sequence (see
    /// ``addRemoteChangeObserver(_:)``); the observation ends with the iteration.
    ///
    /// ```swift
    /// for await change in try coordinator.remoteChanges() {
    ///     viewContext.mergeChanges(fromHistory: change.transactions)
    /// }
    /// ```
    public func remoteChanges() throws -> AsyncStream<RemoteChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: RemoteChange.self, bufferingPolicy: .unbounded)
        let token = try addRemoteChangeObserver { continuation.yield($0) }
        continuation.onTermination = { _ in token.cancel() }
        return stream
    }

    /// Notes a transaction this coordinator saved, so the watch does not report it.
    func noteOwnTransaction() {
        guard let last = store.lastSavedTransaction else { return }
        remoteWatch.withLock { watch in
            guard !watch.observers.isEmpty, last > watch.seen else { return }
            watch.own.insert(last)
        }
    }

    /// Polls the store after the interval, and again after each poll while anyone observes
    /// (the schedule holds the coordinator weakly: a released coordinator stops it).
    private func scheduleRemotePoll() {
        let interval = remoteWatch.withLock { $0.interval }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + interval) { [weak self] in
            guard let self else { return }
            let observed = self.remoteWatch.withLock { watch in
                if watch.observers.isEmpty { watch.polling = false }
                return !watch.observers.isEmpty
            }
            guard observed else { return }
            self.pollRemoteChanges()
            self.scheduleRemotePoll()
        }
    }

    /// Looks at the store once and tells observers what others committed since. Under the
    /// save lock: between a save's commit and its noting as this coordinator's own, the poll
    /// took it for another process's (a merged save delivered twice).
    func pollRemoteChanges() {
        guard let change = withSaveLock({ remoteChangeSinceLastPoll() }) else { return }
        let observers = remoteWatch.withLock { Array($0.observers.values) }
        for observer in observers { observer(change) }
    }

    private func remoteChangeSinceLastPoll() -> RemoteChange? {
        guard let last = try? store.historyBounds().last else { return nil }
        let seen = remoteWatch.withLock { $0.seen }
        guard last > seen else { return nil }
        let found: [HistoryTransaction]
        do {
            found = try store.history(after: seen, since: nil)
        } catch {
            // Deleted before it was seen: what is left is reported.
            found = (try? store.history(after: nil, since: nil)) ?? []
        }
        let remote: [HistoryTransaction] = remoteWatch.withLock { watch in
            let remote = found.filter { $0.number > watch.seen && $0.number <= last && !watch.own.contains($0.number) }
            watch.own = watch.own.filter { $0 > last }
            watch.seen = max(watch.seen, last)
            return remote
        }
        guard !remote.isEmpty else { return nil }
        return RemoteChange(token: HistoryToken(storeIdentifier: store.identifier, transactionNumber: last), transactions: remote)
    }
}

extension HistoryTransaction {
    /// The transaction as a save notification, to merge it into a context with
    /// ``ManagedObjectContext/mergeChanges(from:)`` (or
    /// ``ManagedObjectContext/mergeChanges(fromHistory:)``).
    public var saveNotification: SaveNotification {
        var notification = SaveNotification(inserted: [], updated: [], deleted: [], contextIdentifier: UUID())
        for change in changes {
            switch change.kind {
            case .insert: notification.inserted.insert(change.objectID)
            case .update: notification.updated.insert(change.objectID)
            case .delete: notification.deleted.insert(change.objectID)
            }
        }
        return notification
    }
}

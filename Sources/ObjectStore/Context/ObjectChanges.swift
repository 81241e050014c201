/// The objects a batch of changes touched, by ID.
public struct ObjectChanges: Sendable, Hashable {
    /// Objects inserted.
    public var inserted: Set<ObjectID> = []
    /// Objects changed.
    public var updated: Set<ObjectID> = []
    /// Objects deleted.
    public var deleted: Set<ObjectID> = []
    /// Objects whose values were reloaded (by a refresh or a merge).
    public var refreshed: Set<ObjectID> = []

    /// No changes.
    public init() {}

    /// Whether nothing changed.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty && refreshed.isEmpty }

    func mapped(_ map: (ObjectID) -> ObjectID) -> ObjectChanges {
        var copy = ObjectChanges()
        copy.inserted = Set(inserted.map(map))
        copy.updated = Set(updated.map(map))
        copy.deleted = Set(deleted.map(map))
        copy.refreshed = Set(refreshed.map(map))
        return copy
    }
}

/// Something a context tells its observers.
public enum ContextEvent: Sendable {
    /// Objects were inserted, updated, deleted or refreshed (posted when pending changes are
    /// processed).
    case objectsDidChange(ObjectChanges)
    /// A save is about to start.
    case willSave
    /// A save finished; the notification can be merged into another context.
    case didSave(SaveNotification)
}

extension ManagedObjectContext {
    /// Calls `handler` for every event of this context, on the context's thread. Keep the
    /// token: the observation ends when it is cancelled or released.
    ///
    /// ```swift
    /// let token = context.observe { event in
    ///     if case .didSave(let saved) = event { print(saved.inserted.count, "inserted") }
    /// }
    /// ```
    public func observe(_ handler: @escaping (ContextEvent) -> Void) -> ContextObservationToken {
        let id = UUID()
        observers[id] = handler
        return ContextObservationToken { [weak self] in self?.observers[id] = nil }
    }

    func post(_ event: ContextEvent) {
        for handler in observers.values { handler(event) }
    }
}

import Foundation

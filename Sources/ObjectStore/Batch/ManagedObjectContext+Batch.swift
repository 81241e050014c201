import Foundation
import ObjectStoreModel
import ObjectStoreStorage

extension ManagedObjectContext {
    /// Runs a batch update in the store (``BatchUpdateRequest``) and merges what it changed
    /// into this context: its objects that changed are refreshed (keeping this context's
    /// unsaved changes on top). The coordinator's save observers are told, so contexts that
    /// merge automatically see it too; other processes read it from the store's history.
    ///
    /// - Throws: `ObjectStoreError` for an unknown entity or key, a relationship, a derived or
    ///   transient attribute, a value of the wrong type; `ValidationError` (the first 100
    ///   failures) when new values break the model's rules; store errors. Nothing is written
    ///   then.
    @discardableResult
    public func execute(_ request: BatchUpdateRequest) throws -> BatchResult {
        try executingBatch { try $0.update(request) }
    }

    /// Runs a batch delete in the store (``BatchDeleteRequest``), delete rules applied, and
    /// merges it into this context: deleted objects leave it, objects a `nullify` rule
    /// changed are refreshed.
    ///
    /// - Throws: `ValidationError` when a `deny` rule refuses (nothing is deleted); store
    ///   errors.
    @discardableResult
    public func execute(_ request: BatchDeleteRequest) throws -> BatchResult {
        try executingBatch { try $0.delete(request) }
    }

    /// Runs a batch insert in the store (``BatchInsertRequest``); the new objects are
    /// visible to this context's fetches.
    ///
    /// - Throws: `ObjectStoreError` for an unknown or abstract entity, an unknown key, a
    ///   relationship or a value of the wrong type; `ValidationError` (the first 100
    ///   failures), uniqueness included; store errors. Nothing is inserted then.
    @discardableResult
    public func execute(_ request: BatchInsertRequest) throws -> BatchResult {
        try executingBatch { try $0.insert(request) }
    }

    /// A batch update inside ``PersistentStoreCoordinator/committingTogether(_:)`` of a binary
    /// store: its rows are saved into the commit being made (with the saves around it, one
    /// transaction), not committed on their own.
    package func executeInsideCommit(_ request: BatchUpdateRequest) throws -> BatchResult {
        try executingBatch(insideCommit: true) { try $0.update(request) }
    }

    private func executingBatch(insideCommit: Bool = false, _ body: (BatchExecutor) throws -> (BatchResult, SaveNotification)) throws -> BatchResult {
        guard parent == nil else {
            throw ObjectStoreError.invalidBatchRequest("a batch request runs in the store: execute it in a context of the coordinator, not a child context")
        }
        let executor = BatchExecutor(coordinator: coordinator, author: transactionAuthor, contextName: name, insideCommit: insideCommit)
        var (result, notification) = try body(executor)
        mergeChanges(from: notification)
        // Told to the others as this context's save, so its own automatic merge skips it.
        notification.contextIdentifier = identifier
        coordinator.post(notification)
        return result
    }
}

import Foundation

extension ManagedObjectContext {
    /// The context's events as an async sequence: changes as they are processed, and saves.
    /// Iterate it on the context's thread (the context is not Sendable); the observation
    /// ends when the iteration stops.
    ///
    /// ```swift
    /// for await event in context.events() {
    ///     if case .didSave(let saved) = event { print(saved.inserted.count, "inserted") }
    /// }
    /// ```
    public func events() -> AsyncStream<ContextEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ContextEvent.self)
        // The observer ends itself, on the context's thread, once nobody iterates any more.
        let holder = ObservationHolder()
        holder.token = observe { event in
            if case .terminated = continuation.yield(event) {
                holder.token?.cancel()
                holder.token = nil
            }
        }
        return stream
    }
}

/// Keeps a context observation for the stream that ends it.
private final class ObservationHolder {
    var token: ContextObservationToken?
}

extension PersistentStoreCoordinator {
    /// Every save of any context of this coordinator, as an async sequence, from any thread.
    ///
    /// ```swift
    /// Task {
    ///     for await saved in coordinator.saves() { print(saved.updated.count, "updated") }
    /// }
    /// ```
    public func saves() -> AsyncStream<SaveNotification> {
        let (stream, continuation) = AsyncStream.makeStream(of: SaveNotification.self)
        let token = addSaveObserver { continuation.yield($0) }
        continuation.onTermination = { _ in token.cancel() }
        return stream
    }
}

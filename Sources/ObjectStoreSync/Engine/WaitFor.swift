import Foundation

/// Runs an asynchronous call to its end on the calling thread, which waits: the engine's
/// store work stays on one thread (a context is not Sendable), and no store lock is held
/// while it waits.
package func waitFor<T: Sendable>(_ call: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { box.set(.success(try await call())) } catch { box.set(.failure(error)) }
        done.signal()
    }
    done.wait()
    return try box.get()
}

private final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<T, any Error>?

    func set(_ value: Result<T, any Error>) { lock.withLock { result = value } }

    func get() throws -> T {
        guard let result = lock.withLock({ result }) else { throw SyncServerError.badResponse(url: "", reason: "no answer") }
        return try result.get()
    }
}

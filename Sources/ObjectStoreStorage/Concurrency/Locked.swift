import Foundation

/// A value reachable only while holding its lock. It is the library's one hand-made promise
/// of thread safety (`@unchecked Sendable`): types that keep their mutable state in a
/// `Locked` are Sendable without one of their own.
///
/// ```swift
/// let counter = Locked(0)
/// counter.withLock { $0 += 1 }
/// ```
@usableFromInline package final class Locked<Value> {
    @usableFromInline var value: Value
    @usableFromInline let lock = NSLock()

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, holding the lock; `body` must not call back into code
    /// that takes the same lock (it is not recursive).
    @inlinable package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// The lock makes a `Locked` safe to share exactly when its value may cross threads.
extension Locked: @unchecked Sendable where Value: Sendable {}

import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

@Suite struct FileLockTests {
    /// A write asked for inside a read on the same thread would run under the shared lock
    /// only (flock cannot be raised in place without a window), so it is refused; a read
    /// inside a write, and a write inside a write, nest.
    @Test func anExclusiveHoldInsideASharedOneIsRefused() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url))
        try context.task("one")
        try context.save()
        let lock = FileLock(storePath: url.path)
        #expect {
            try lock.withLock(exclusive: false) { _, _ in try lock.withLock(exclusive: true) { _, _ in } }
        } throws: { error in
            guard case .invalidRequest(_, let reason)? = error as? StoreError else { return false }
            return reason.contains("shared")
        }
        var nested = 0
        try lock.withLock(exclusive: true) { _, _ in
            try lock.withLock(exclusive: false) { _, _ in nested += 1 }
            try lock.withLock(exclusive: true) { _, _ in nested += 1 }
        }
        #expect(nested == 2)
    }

    /// The table of per-file locks gives an entry back once no thread uses it: a process
    /// that compacts (a new file each time) a hundred times does not keep a hundred.
    @Test func theLockTableShrinksBack() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let store = try BinaryStore(url: url, model: TestModel.model)
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(model: TestModel.model, store: store))
        let before = FileLock.holderCount
        for i in 0..<100 {
            try context.task("task \(i)")
            try context.save()
            try store.compact()
        }
        // Other tests lock their own files meanwhile; this one's hundred files are gone.
        #expect(FileLock.holderCount < before + 20, "\(FileLock.holderCount) holders after 100 compactions")
    }
}

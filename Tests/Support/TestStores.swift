import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

/// One temporary directory per test, removed afterwards.
final class TemporaryDirectory {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("objectstore-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func file(_ name: String) -> URL { url.appendingPathComponent(name) }
}

/// The kinds of store every conformance test runs against.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible {
    /// `snapshot` is the binary store compacting whenever its log outgrows an eighth of
    /// the snapshot, so reads go through a snapshot and a log over it.
    case inMemory, json, binary, snapshot
    var testDescription: String { rawValue }

    /// Opens a coordinator on this kind of store; file stores live in `directory`, and calling
    /// again opens the same file (a "reopen"); the in-memory store is shared through `memory`.
    func open(in directory: TemporaryDirectory, memory: inout InMemoryStore?, model: ManagedObjectModel = TestModel.model) throws -> PersistentStoreCoordinator {
        switch self {
        case .inMemory:
            let store = memory ?? InMemoryStore(model: model)
            memory = store
            return PersistentStoreCoordinator(model: model, store: store, clock: { TestModel.now })
        case .json:
            return try PersistentStoreCoordinator(model: model, storeURL: directory.file("tasks.json"), clock: { TestModel.now })
        case .binary:
            return try PersistentStoreCoordinator(model: model, storeURL: directory.file("tasks.store"), clock: { TestModel.now })
        case .snapshot:
            let store = try BinaryStore(url: directory.file("tasks.store"), model: model)
            store.compactionThreshold = 0
            return PersistentStoreCoordinator(model: model, store: store, clock: { TestModel.now })
        }
    }
}

import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

/// Mutated store files: every read gives data or a StoreError, never a trap; the file is
/// never changed by a failed open.
@Suite struct StoreFuzzTests {
    static let cases = ProcessInfo.processInfo.environment["OBJECTSTORE_FUZZ_CASES"].flatMap(Int.init).map { $0 / 5 } ?? 600

    /// `format`: the file's extension, and "+history" for a store that keeps history (its
    /// transactions in the log and, for the binary store, in a history region too).
    @Test(arguments: ["store", "json", "store+history", "json+history"])
    func mutatedStoresAreReadOrRefusedNeverTrapped(format: String) throws {
        let directory = try TemporaryDirectory()
        let keepsHistory = format.hasSuffix("+history")
        let url = directory.file("tasks.\(format.replacingOccurrences(of: "+history", with: ""))")
        let coordinator = try PersistentStoreCoordinator(model: TestModel.model, storeURL: url, history: keepsHistory ? .all : nil)
        let context = ManagedObjectContext(coordinator: coordinator)
        for i in 0..<5 {
            let task = try context.task("T\(i)", priority: Int64(i % 4))
            try task.setObject(try context.location("L\(i)"), forKey: "location")
            try context.save()
            if keepsHistory && i == 2 {
                context.delete(task)
                try context.save()
                try coordinator.compactStore()
            }
        }
        let original = Array(try Data(contentsOf: url))
        var rng = SeededRandom(seed: 42)
        var refused = 0
        for _ in 0..<Self.cases {
            var bytes = original
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let position = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: bytes[position] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...16, using: &rng)))
                default: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: position)
                }
                if bytes.isEmpty { bytes = [0] }
            }
            try Data(bytes).write(to: url)
            do {
                let reader = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url))
                for task in try reader.fetch(FetchRequest(entityName: "Task")) {
                    _ = try? task.value(forKeyPath: "location.name")
                }
                if keepsHistory {
                    _ = try? reader.coordinator.fetchHistory(after: nil)
                    _ = try? reader.coordinator.checkIntegrity()
                }
            } catch is StoreError {
                refused += 1
            } catch {
                // Model-level errors (a value the model refuses) are errors too, not traps.
                refused += 1
            }
            #expect(Array(try Data(contentsOf: url)) == bytes)
        }
        #expect(refused > 0)
    }
}

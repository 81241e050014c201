import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

/// A hand-edited JSON store that would lose data if read leniently is refused, with the
/// line, and left as it was.
@Suite struct JSONStoreStrictnessTests {
    /// A JSON store with two tasks; returns its URL and text.
    private func store(in directory: TemporaryDirectory) throws -> (URL, String) {
        let url = directory.file("tasks.json")
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url))
        try context.task("first")
        try context.task("second")
        try context.save()
        return (url, try String(contentsOf: url, encoding: .utf8))
    }

    private func expectRefused(_ edit: (String) -> String, saying message: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let directory = try TemporaryDirectory()
        let (url, text) = try store(in: directory)
        let edited = edit(text)
        #expect(edited != text, "the edit changed nothing", sourceLocation: sourceLocation)
        try edited.write(to: url, atomically: true, encoding: .utf8)
        #expect(sourceLocation: sourceLocation) {
            _ = try PersistentStoreCoordinator(model: TestModel.model, storeURL: url)
        } throws: { error in
            guard case .corrupt(_, let reason) = error as? StoreError else { return false }
            if !reason.contains(message) { Issue.record("\(reason)", sourceLocation: sourceLocation) }
            return reason.contains(message)
        }
        #expect(try String(contentsOf: url, encoding: .utf8) == edited, "the file is left as it was", sourceLocation: sourceLocation)
    }

    @Test func aMisspeltOrMissingTopLevelKeyIsRefused() throws {
        try expectRefused({ $0.replacingOccurrences(of: "\"objects\":", with: "\"objcets\":") }, saying: "unknown key \"objcets\" at the top (did you mean \"objects\"?) (line")
        try expectRefused({ $0.replacingOccurrences(of: "  \"nextKeys\": {\"Task\": 3},\n", with: "") }, saying: "the key \"nextKeys\" is missing")
    }

    @Test func aNextKeyAtOrBelowAnExistingKeyIsRefused() throws {
        try expectRefused({ $0.replacingOccurrences(of: "\"nextKeys\": {\"Task\": 3}", with: "\"nextKeys\": {\"Task\": 2}") }, saying: "Task 2 is not below the entity's next key 2")
        try expectRefused({ $0.replacingOccurrences(of: "\"nextKeys\": {\"Task\": 3}", with: "\"nextKeys\": {}") }, saying: "Task 1 is not below the entity's next key 1")
    }

    @Test func twoObjectsWithOneKeyAreRefused() throws {
        try expectRefused({ $0.replacingOccurrences(of: "{\"key\": 2,", with: "{\"key\": 1,") }, saying: "two objects of Task have the key 1 (line")
    }

    @Test func keysVersionsAndFormatVersionsOutOfRangeAreRefused() throws {
        try expectRefused({ $0.replacingOccurrences(of: "{\"key\": 2, \"version\": 1", with: "{\"key\": 2, \"version\": 9223372036854775807") }, saying: "needs a \"version\" from 1 to 9007199254740991")
        try expectRefused({ $0.replacingOccurrences(of: "\"nextKeys\": {\"Task\": 3}", with: "\"nextKeys\": {\"Task\": 9223372036854775807}") }, saying: "next key of Task must be an integer from 1 to")
        try expectRefused({ $0.replacingOccurrences(of: "\"formatVersion\": 1", with: "\"formatVersion\": 0") }, saying: "\"formatVersion\" 0 is not a valid format version")
        try expectRefused({ $0.replacingOccurrences(of: "\"formatVersion\": 1", with: "\"formatVersion\": -1") }, saying: "\"formatVersion\" -1 is not a valid format version")
    }

    @Test(arguments: [StoreKind.json, .binary])
    func aDateOutsideTheYearsAStoreReadsIsRefusedAtSave(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let context = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        let task = try context.task("far")
        try task.setValue(.date(Date(timeIntervalSince1970: 40_000 * 365.25 * 86_400)), forKey: "dueDate")
        #expect {
            try context.save()
        } throws: { error in
            (error as? ValidationError)?.failures.first?.message.contains("outside the years 0001 to 9999") == true
        }
        try task.setValue(.date(Date(timeIntervalSince1970: 253_402_300_799)), forKey: "dueDate")  // 9999-12-31T23:59:59Z
        try context.save()
        let reopened = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        #expect(try reopened.all("Task").first?["dueDate"] == .date(Date(timeIntervalSince1970: 253_402_300_799)))
    }

    @Test func negativeOffsetsLimitsAndBatchSizesAreRefused() throws {
        let context = TestModel.context()
        try context.task("one")
        for keyPath in [\FetchRequest.fetchOffset, \FetchRequest.fetchLimit, \FetchRequest.fetchBatchSize] {
            var request = FetchRequest(entityName: "Task")
            request[keyPath: keyPath] = -1
            #expect(throws: ObjectStoreError.self) { _ = try context.fetch(request) }
            #expect(throws: ObjectStoreError.self) { _ = try context.count(for: request) }
            #expect(throws: ObjectStoreError.self) { _ = try context.fetchObjectIDs(request) }
        }
    }

    @Test(arguments: [StoreKind.json, .binary])
    func datesRoundTripExactlyToTheLastBit(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        var memory: InMemoryStore?
        let context = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        // Dates as Date holds them (seconds since 2001 in a Double), none a whole millisecond.
        var dates: [Date] = [Date(timeIntervalSince1970: 123_456_789.1234567), Date(timeIntervalSinceReferenceDate: 0.1), Date(timeIntervalSinceReferenceDate: -1e-9)]
        var state: UInt64 = 42
        for _ in 0..<200 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            dates.append(Date(timeIntervalSinceReferenceDate: Double(Int64(bitPattern: state) % 4_000_000_000_000) / 1_000.0 + 0.000_123_4))
        }
        for (i, date) in dates.enumerated() {
            let task = try context.task("t\(i)")
            try task.setValue(.date(date), forKey: "dueDate")
        }
        try context.save()
        let reopened = ManagedObjectContext(coordinator: try kind.open(in: directory, memory: &memory))
        var request = FetchRequest(entityName: "Task")
        request.sortDescriptors = [SortKey("dueDate")]
        let read = try reopened.fetch(request).map { $0["dueDate"] }
        for (a, b) in zip(read, dates.sorted()) where a != .date(b) {
            Issue.record("\(b.timeIntervalSinceReferenceDate) (\(JSONText.encode(.date(b)))) read back as \(a)")
            break
        }
        #expect(read == dates.sorted().map { Value.date($0) })
    }
}

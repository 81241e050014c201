import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

@Suite struct ValidationTests {
    final class StrictTask: ManagedObject {
        override func validateForSave() throws {
            if self["priority"] == 3 && self["dueDate"].isNull {
                throw ValidationMessage("a high-priority task needs a due date")
            }
        }
        override func validate(_ value: Value, forKey key: String) throws {
            if key == "text", case .string(let s) = value, s.hasPrefix(" ") {
                throw ValidationMessage("must not start with a space")
            }
        }
    }

    /// A schema `pattern` is bounded as MATCHES is: one value that backtracks without end
    /// fails its check after 100 ms (it took seconds per value per save), and values that
    /// each take a few milliseconds stop the save once its patterns have spent 1 s and 1 ms
    /// a value. Ordinary values pass, many of them.
    @Test func aSchemaPatternIsBoundedPerValueAndPerSave() throws {
        let schema = #"{"entities": [{"name": "Item", "attributes": [{"name": "code", "type": "string", "pattern": "(a|a?)+b|ok[0-9]*"}]}]}"#
        let model = try ManagedObjectModel(schema: schema)
        func save(_ codes: [String]) throws -> [ValidationFailure] {
            let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(inMemoryWith: model))
            for code in codes { try context.insertObject(entityName: "Item").setValue(.string(code), forKey: "code") }
            do {
                try context.save()
                return []
            } catch let error as ValidationError {
                return error.failures
            }
        }
        let stuck = try save([String(repeating: "a", count: 40) + "!"])
        #expect(stuck.count == 1 && stuck[0].message.contains("took more than 100 ms"), "\(stuck)")

        let length = try PredicateEvaluationTests.slowLength(milliseconds: 8)
        let slow = try save(Array(repeating: String(repeating: "a", count: length), count: 300))
        #expect(slow.contains { $0.message.contains("more than 1 s and 1 ms a value") || $0.message.contains("took more than 100 ms") }, "\(slow.prefix(2))")
        #expect(try save((0..<20_000).map { "ok\($0)" }).isEmpty)
    }

    @Test func oneFailurePerBrokenRuleAllInOneError() throws {
        let context = TestModel.context()
        let task = try context.insertObject(entityName: "Task")  // no text: required
        try task.setValue(.string("ABCD"), forKey: "code")       // pattern
        try task.setValue(.string("later"), forKey: "status")    // allowed values
        let long = try context.task(String(repeating: "x", count: 21))  // maxLength
        try long.setValue(.integer(3), forKey: "priority")
        let parent = try context.task("parent")
        try parent.setObjects(try (0..<4).map { try context.task("s\($0)") }, forKey: "subtasks")  // maxCount
        do {
            try context.save()
            Issue.record("the save should fail")
        } catch let error as ValidationError {
            let found = Set(error.failures.map { "\($0.entityName).\($0.key ?? "-"):\($0.rule.rawValue)" })
            #expect(found == ["Task.text:required", "Task.code:pattern", "Task.status:allowedValues", "Task.text:maxLength", "Task.subtasks:maxCount"])
            #expect(error.failures.count == 5)
            let pattern = try #require(error.failures.first { $0.rule == .pattern })
            #expect(pattern.objectID == task.objectID && pattern.value == "ABCD")
            #expect(pattern.description == "Task.code: \"ABCD\" does not match the pattern [A-Z]{3}")
        }
        // Nothing was written and the changes are intact.
        #expect(context.insertedObjects.count == 7)
        #expect(try ManagedObjectContext(coordinator: context.coordinator).all("Task").isEmpty)
    }

    @Test func rangeRulesAndRetryAfterFixing() throws {
        let context = TestModel.context()
        let task = try context.task("Milk")
        // A value out of the model's range is accepted when set, refused at save.
        try task.setValue(.integer(7), forKey: "priority")
        #expect {
            try context.save()
        } throws: { error in
            (error as? ValidationError)?.failures.map(\.message) == ["7 is greater than the maximum 3"]
        }
        try task.setValue(.integer(2), forKey: "priority")
        try context.save()
        #expect(!context.hasChanges)
    }

    @Test func rollbackAfterAFailedSaveRestoresTheSavedState() throws {
        let context = TestModel.context()
        let task = try context.task("Milk", priority: 1)
        try context.save()
        try task.setValue(.string(""), forKey: "text")
        _ = try context.task("")
        #expect(throws: ValidationError.self) { try context.save() }
        context.rollback()
        #expect(task["text"] == "Milk")
        #expect(!context.hasChanges)
        #expect(try context.all("Task").count == 1)
    }

    @Test func customHooksRunAtSave() throws {
        let coordinator = TestModel.coordinator()
        try coordinator.register(StrictTask.self, forEntityName: "Task")
        let context = ManagedObjectContext(coordinator: coordinator)
        let task = try context.task(" Milk", priority: 3)
        do {
            try context.save()
            Issue.record("the save should fail")
        } catch let error as ValidationError {
            #expect(error.failures.map(\.description).sorted() == ["Task.text: must not start with a space", "Task: a high-priority task needs a due date"])
        }
        try task.setValue("Milk", forKey: "text")
        try task.setValue(.date(Date()), forKey: "dueDate")
        try context.save()
    }

    @Test func uniquenessConstraintsCoverSavedAndUnsavedObjects() throws {
        let context = TestModel.context()
        try context.location("Home")
        try context.save()
        let duplicate = try context.location("Home")
        let twinA = try context.location("Work")
        _ = twinA
        try context.location("Work")
        do {
            try context.save()
            Issue.record("the save should fail")
        } catch let error as ValidationError {
            #expect(error.failures.count == 2)
            #expect(error.failures.allSatisfy { $0.rule == .unique })
            #expect(error.failures.contains { $0.objectID == duplicate.objectID && $0.message.hasPrefix("another Location already has name = \"Home\"") })
        }
    }
}

import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

@Suite struct ManagedObjectTests {
    final class DueSoonTask: ManagedObject {
        override func awakeFromInsert() {
            try? setValue(.date(Date(timeIntervalSince1970: 3 * 86_400)), forKey: "dueDate")
        }
    }

    @Test func insertAppliesModelDefaultsThenAwakeFromInsert() throws {
        let coordinator = TestModel.coordinator()
        try coordinator.register(DueSoonTask.self, forEntityName: "Task")
        let context = ManagedObjectContext(coordinator: coordinator)
        let task = try context.insertObject(entityName: "Task")
        #expect(task is DueSoonTask)
        #expect(task["priority"] == 0)
        #expect(task["status"] == "open")
        #expect(task["dueDate"] == .date(Date(timeIntervalSince1970: 3 * 86_400)))
        #expect(task["text"] == .null)
        #expect(task.isInserted && !task.isUpdated && !task.isFault)
        #expect(context.insertedObjects.map(\.objectID) == [task.objectID])
    }

    @Test func insertingAnAbstractOrUnknownEntityIsAnError() throws {
        let context = TestModel.context()
        #expect(throws: ObjectStoreError.abstractEntity("Shape")) { try context.insertObject(entityName: "Shape") }
        #expect(throws: ObjectStoreError.unknownEntity("Tsak", suggestion: "Task")) { try context.insertObject(entityName: "Tsak") }
        let circle = try context.insertObject(entityName: "Circle")
        #expect(circle["radius"] == 1.0)
        #expect(circle.entity.isKind(of: "Shape"))
    }

    /// Reading by slot is reading by name: every attribute, derived ones and a parent's
    /// slot on a sub-entity's object included; a slot that is not an attribute's is an error.
    @Test func valuesBySlotAreValuesByName() throws {
        let context = TestModel.context()
        let task = try context.task("Milk", priority: 2)
        try task.setValue(.date(TestModel.now.addingTimeInterval(-60)), forKey: "dueDate")
        let circle = try context.insertObject(entityName: "Circle")
        for object in [task, circle] {
            for (index, property) in object.entity.properties.enumerated() {
                if property.attribute != nil {
                    #expect(try object.value(atSlot: index) == object.value(forKey: property.name), "\(property.name)")
                    #expect(throws: ObjectStoreError.self) { try object.objectIDs(atSlot: index) }
                } else {
                    #expect(throws: ObjectStoreError.self) { try object.value(atSlot: index) }
                    #expect(try object.objectIDs(atSlot: index) == object.objectIDs(forRelationship: property.name), "\(property.name)")
                }
            }
        }
        let shape = try #require(TestModel.model.entity(named: "Shape"))
        for attribute in shape.attributes {
            let slot = try #require(shape.slot(of: attribute.name))
            #expect(try circle.value(atSlot: slot) == circle.value(forKey: attribute.name))
        }
        try task.setObject(try context.location("Home"), forKey: "location")
        let location = try #require(task.entity.slot(of: "location"))
        #expect(try task.objectIDs(atSlot: location).count == 1)
        let count = task.entity.properties.count
        #expect(throws: ObjectStoreError.unknownKey(entity: "Task", key: "slot \(count)", suggestion: nil)) { try task.objectIDs(atSlot: count) }
        #expect(throws: ObjectStoreError.unknownKey(entity: "Task", key: "slot \(count)", suggestion: nil)) { try task.value(atSlot: count) }
        #expect(throws: ObjectStoreError.unknownKey(entity: "Task", key: "slot -1", suggestion: nil)) { try task.value(atSlot: -1) }
    }

    @Test func settingAValueOfTheWrongTypeNamesEntityKeyAndTypes() throws {
        let context = TestModel.context()
        let task = try context.task("Milk")
        #expect(throws: ObjectStoreError.wrongType(entity: "Task", key: "priority", expected: "int16", given: "a string (\"high\")")) {
            try task.setValue("high", forKey: "priority")
        }
        #expect(throws: ObjectStoreError.wrongType(entity: "Task", key: "priority", expected: "int16", given: "70000, out of range")) {
            try task.setValue(70_000, forKey: "priority")
        }
        #expect(throws: ObjectStoreError.unknownKey(entity: "Task", key: "priorty", suggestion: "priority")) {
            try task.setValue(1, forKey: "priorty")
        }
        // Integers widen into double and decimal attributes; decimals stay exact.
        try task.setValue(2, forKey: "ratio")
        #expect(task["ratio"] == .double(2))
        try task.setValue(.decimal(Decimal(string: "0.1")!), forKey: "estimate")
        #expect(task["estimate"] == .decimal(Decimal(string: "0.1")!))
    }

    @Test func keyPathsFollowRelationshipsAndApplyCollectionOperators() throws {
        let context = TestModel.context()
        let home = try context.location("Home")
        var tasks: [ManagedObject] = []
        for (text, priority) in [("a", 1), ("b", 3), ("c", 3)] {
            let task = try context.task(text, priority: Int64(priority))
            try task.setObject(home, forKey: "location")
            tasks.append(task)
        }
        let task = tasks[0]
        #expect(try task.value(forKeyPath: "location.name").value == "Home")
        #expect(try home.value(forKeyPath: "tasks.@count").value == 3)
        #expect(try home.value(forKeyPath: "tasks.@sum.priority").value == 7)
        #expect(try home.value(forKeyPath: "tasks.@avg.priority").value == .double(7.0 / 3.0))
        #expect(try home.value(forKeyPath: "tasks.@min.priority").value == 1)
        #expect(try home.value(forKeyPath: "tasks.@max.text").value == "c")
        guard case .values(let distinct) = try home.value(forKeyPath: "tasks.@distinctUnionOfObjects.priority") else {
            Issue.record("expected values")
            return
        }
        #expect(Set(distinct) == [1, 3])
        #expect(throws: KeyPathError.self) { try home.value(forKeyPath: "tasks.@median.priority") }
        #expect(throws: ObjectStoreError.self) { try task.value(forKeyPath: "location.nme") }
    }

    @Test func changedAndCommittedValuesTrackSaves() throws {
        let context = TestModel.context()
        let task = try context.task("Milk", priority: 1)
        try context.save()
        #expect(!task.hasChanges && task.changedValues().isEmpty)
        try task.setValue(2, forKey: "priority")
        #expect(task.isUpdated)
        #expect(task.changedValues() == ["priority": .value(2)])
        #expect(task.committedValues(forKeys: ["priority", "text"]) == ["priority": .value(1), "text": .value("Milk")])
        try task.setValue(1, forKey: "priority")
        #expect(!task.isUpdated, "setting the saved value back leaves nothing to save")
        #expect(!context.hasChanges)
        // A NaN set again equals the saved NaN; the last slot differing counts.
        try task.setValue(.double(.nan), forKey: "ratio")
        try context.save()
        try task.setValue(.double(.nan), forKey: "ratio")
        #expect(!task.isUpdated && !context.hasChanges)
        #expect(task.entity.properties.last?.name == "text", "the last slot")
        try task.setValue("x", forKey: "text")
        #expect(task.isUpdated && task.changedValues() == ["text": .value("x")])
    }

    @Test func transientValuesStayInMemory() throws {
        let coordinator = TestModel.coordinator()
        let context = ManagedObjectContext(coordinator: coordinator)
        let task = try context.task("Milk")
        try task.setValue("draft", forKey: "scratch")
        try context.save()
        #expect(task["scratch"] == "draft")
        let other = ManagedObjectContext(coordinator: coordinator)
        #expect(try other.existingObject(with: task.objectID)["scratch"] == .null)
    }
}

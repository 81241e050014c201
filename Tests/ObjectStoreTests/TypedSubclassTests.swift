import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

final class TypedTask: ManagedObject {
    @Attribute var text: String
    @Attribute var priority: Int16
    @Attribute var dueDate: Date?
    @Attribute var estimate: Decimal?
    @Attribute("status") var state: String?
    @Relationship var location: TypedLocation?
    @Relationship var tags: [ManagedObject]
}

final class TypedLocation: ManagedObject {
    @Attribute var name: String
    @Relationship var tasks: [TypedTask]
}

final class MistypedTask: ManagedObject {
    @Attribute var text: Int16
    @Attribute var dueDate: Date
    @Attribute var priorty: Int16
    @Relationship var tags: TypedLocation?
}

@Suite struct TypedSubclassTests {
    private func coordinator() throws -> PersistentStoreCoordinator {
        let coordinator = TestModel.coordinator()
        try coordinator.register(TypedTask.self, forEntityName: "Task")
        try coordinator.register(TypedLocation.self, forEntityName: "Location")
        return coordinator
    }

    @Test func typedPropertiesReadAndWriteTheModel() throws {
        let context = ManagedObjectContext(coordinator: try coordinator())
        let task = try context.insert(TypedTask.self)
        #expect(task.priority == 0 && task.state == "open" && task.dueDate == nil)
        task.text = "Buy milk"
        task.priority = 3
        task.estimate = Decimal(string: "1.25")
        task.state = "done"
        #expect(task["text"] == "Buy milk" && task["priority"] == 3 && task["status"] == "done")
        #expect(task.estimate == Decimal(string: "1.25"))

        let home = try context.insert(TypedLocation.self)
        home.name = "Home"
        task.location = home
        #expect(home.tasks.map(\.objectID) == [task.objectID])
        home.tasks = []
        #expect(task.location == nil)
        try context.save()
        #expect(task.lastAccessError == nil)
    }

    @Test func fetchedObjectsAreInstancesOfTheRegisteredClass() throws {
        let coordinator = try coordinator()
        let context = ManagedObjectContext(coordinator: coordinator)
        let task = try context.insert(TypedTask.self)
        task.text = "Milk"
        try context.save()
        let other = ManagedObjectContext(coordinator: coordinator)
        let fetched = try #require(other.all("Task").first as? TypedTask)
        #expect(fetched.text == "Milk")
    }

    @Test func registrationChecksTheClassAgainstTheEntity() throws {
        let coordinator = TestModel.coordinator()
        #expect {
            try coordinator.register(MistypedTask.self, forEntityName: "Task")
        } throws: { error in
            guard case .classMismatch(let entity, let problems) = error as? ObjectStoreError else { return false }
            return entity == "Task" && problems.sorted() == [
                "Task has no property 'priorty' (did you mean 'priority'?)",
                "dueDate is optional with no default: declare it as an optional Swift type",
                "tags is a to-many relationship: declare it as [Tag]",
                "text is a string attribute; the Swift type does not hold it",
            ]
        }
        #expect(throws: ObjectStoreError.unregisteredClass("MistypedTask")) {
            try ManagedObjectContext(coordinator: coordinator).insert(MistypedTask.self)
        }
    }
}

/// A class with behaviour over a base class, as the model plugin generates and the user
/// subclasses.
class BaseLocation: ManagedObject {
    @Attribute var name: String
}

final class BusyLocation: BaseLocation {
    override func awakeFromInsert() {
        super.awakeFromInsert()
        name = "busy"
    }
}

@Suite struct SubclassRegistrationTests {
    /// Registering the base classes (the generated `register(in:)`) after the user's subclass
    /// keeps the subclass: before, it was replaced without a word and its behaviour was lost.
    @Test func registeringTheBaseClassAfterTheSubclassKeepsTheSubclass() throws {
        let coordinator = TestModel.coordinator()
        try coordinator.register(BusyLocation.self, forEntityName: "Location")
        try coordinator.register(BaseLocation.self, forEntityName: "Location")
        let context = ManagedObjectContext(coordinator: coordinator)
        let location = try context.insertObject(entityName: "Location")
        #expect(location is BusyLocation && location["name"] == "busy")
        // Any other class registered later replaces it.
        try coordinator.register(TypedLocation.self, forEntityName: "Location")
        #expect(try context.insertObject(entityName: "Location") is TypedLocation)
    }
}

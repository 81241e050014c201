import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

final class Note: ManagedObject {
    @Attribute var text: String
    @Attribute var priority: Int16
    @Relationship var location: NoteLocation?
}

final class NoteLocation: ManagedObject {
    @Attribute var name: String
}

/// A class as the plugin writes one (not final; an attribute with a default is not
/// optional), and behaviour in a subclass of the user's.
class GeneratedCircle: ManagedObject {
    @Attribute var label: String?
    @Attribute var radius: Double
}

final class MyCircle: GeneratedCircle {
    override func awakeFromInsert() {
        super.awakeFromInsert()
        label = "new circle"
    }
}

/// The library as a Swift developer meets it: a container in one line, typed fetches,
/// Swift values in and out, objects as predicate arguments.
@Suite struct LibraryUseTests {
    /// A context of an in-memory store whose Task and Location entities are `Note` and
    /// `NoteLocation`.
    static func notesContext() throws -> ManagedObjectContext {
        let coordinator = TestModel.coordinator()
        try coordinator.register(Note.self, forEntityName: "Task")
        try coordinator.register(NoteLocation.self, forEntityName: "Location")
        return ManagedObjectContext(coordinator: coordinator)
    }

    static let models = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Models/Tasks")

    @Test func aContainerOpensCreatesAndReopensTheStore() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let container = try PersistentContainer(name: "Tasks", models: ModelDirectory(url: Self.models), storeURL: url)
        #expect(container.migration == nil)
        let task = try container.viewContext.insertObject(entityName: "Task")
        try task.setValue("Buy milk", forKey: "title")
        try task.setValue(UUID(), forKey: "uuid")
        try container.viewContext.save()
        let again = try PersistentContainer(name: "Tasks", models: ModelDirectory(url: Self.models), storeURL: url)
        #expect(try again.viewContext.fetch(FetchRequest(entityName: "Task")).map { $0["title"].stringValue } == ["Buy milk"])
        let count = try await again.performBackgroundTask { context in try context.count(for: FetchRequest(entityName: "Task")) }
        #expect(count == 1)
    }

    /// A store URL in a folder that does not exist yet: the folder is made, owner-only, as
    /// for the default place; a read-only open makes nothing and says there is no store.
    @Test func aContainerMakesTheFolderOfAGivenStoreURL() throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("data/notes/tasks.store")
        #expect(throws: StoreError.self) { try PersistentContainer(name: "Tasks", models: ModelDirectory(url: Self.models), storeURL: url, readOnly: true) }
        #expect(!FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path))
        let container = try PersistentContainer(name: "Tasks", models: ModelDirectory(url: Self.models), storeURL: url)
        try container.viewContext.save()
        #expect(FileManager.default.fileExists(atPath: url.path))
        let mode = try FileManager.default.attributesOfItem(atPath: url.deletingLastPathComponent().path)[.posixPermissions] as? Int
        #expect(mode == 0o700)
    }

    @Test func aContainerTakesTheStoresDurability() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let container = try PersistentContainer(name: "Tasks", models: ModelDirectory(url: Self.models), storeURL: url, durability: .normal)
        #expect((container.coordinator.store as? BinaryStore)?.durability == .normal)
        let before = try StoreHeader.claimedLength(url)
        let task = try container.viewContext.insertObject(entityName: "Task")
        try task.setValue("Buy milk", forKey: "title")
        try task.setValue(UUID(), forKey: "uuid")
        try container.viewContext.save()
        #expect(try StoreHeader.claimedLength(url) == before, "a .normal save leaves the header for a later flush")
        let again = try PersistentContainer(name: "Tasks", models: ModelDirectory(url: Self.models), storeURL: url)
        #expect((again.coordinator.store as? BinaryStore)?.durability == .full)
        #expect(try again.viewContext.fetch(FetchRequest(entityName: "Task")).map { $0["title"].stringValue } == ["Buy milk"])
    }

    @Test func theDefaultStoreFollowsThePlatformsDataDirectory() {
        let xdg = PersistentContainer.defaultStoreURL(name: "Notes", environment: ["HOME": "/home/ann", "XDG_DATA_HOME": "/data"])
        let home = PersistentContainer.defaultStoreURL(name: "Notes", environment: ["HOME": "/home/ann"])
        #if os(macOS)
        #expect(home.path == "/home/ann/Library/Application Support/Notes/Notes.store")
        #else
        #expect(xdg.path == "/data/Notes/Notes.store")
        #expect(home.path == "/home/ann/.local/share/Notes/Notes.store")
        #endif
    }

    @Test func typedFetchesTakeSwiftValuesAndObjectsAsArguments() throws {
        let context = try Self.notesContext()
        let home = try context.insert(NoteLocation.self)
        home.name = "Home"
        let minimum: Int16 = 2
        for (title, priority) in [("Milk", 3), ("Bread", 1), ("Tea", 2)] as [(String, Int16)] {
            let note = try context.insert(Note.self)
            try note.setValue(title, forKey: "text")   // a Swift String, no Value wrapping
            note.priority = priority
            if title != "Bread" { note.location = home }
        }
        try context.save()
        let urgent = try context.fetch(Note.self, where: "priority >= %d", minimum, sortedBy: [SortKey("priority", ascending: false)])
        #expect(urgent.map(\.priority) == [3, 2])
        let atHome = try context.fetch(Note.self, where: "location == %@", home, sortedBy: [SortKey("text")])
        #expect(atHome.map { $0["text"].stringValue } == ["Milk", "Tea"])
        #expect(try context.fetch(Note.self, where: "location == %@", home.objectID).count == 2)
        #expect(try context.fetch(Note.self, limit: 1).count == 1)
        #expect(throws: ObjectStoreError.self) { _ = try context.fetch(TypedTask.self) }
    }

    /// Arrays and sets of arguments stand for a predicate's constant list (`IN %@`): Swift
    /// values, objects and object IDs, an empty list matching nothing; a specifier that takes
    /// one value (`%K`, `%d`) refuses a list; a template's variable takes them too.
    @Test func arraysAndSetsOfArgumentsAreLists() throws {
        let context = try Self.notesContext()
        var places: [String: NoteLocation] = [:]
        for name in ["Home", "Office", "Park"] {
            let place = try context.insert(NoteLocation.self)
            place.name = name
            places[name] = place
        }
        for (title, priority, place) in [("Milk", 3, "Home"), ("Bread", 1, "Office"), ("Tea", 2, "Park"), ("Jam", 0, nil)] as [(String, Int16, String?)] {
            let note = try context.insert(Note.self)
            note.text = title
            note.priority = priority
            note.location = place.flatMap { places[$0] }
        }
        try context.save()
        let home = try #require(places["Home"]), office = try #require(places["Office"]), park = try #require(places["Park"])
        #expect(try context.fetch(Note.self, where: "text IN %@", ["Milk", "Tea", "Nope"]).map(\.text).sorted() == ["Milk", "Tea"])
        #expect(try context.fetch(Note.self, where: "priority IN %@", Set([Int16(1), 3])).map(\.text).sorted() == ["Bread", "Milk"])
        #expect(try context.fetch(Note.self, where: "location IN %@", [home, office]).map(\.text).sorted() == ["Bread", "Milk"])
        #expect(try context.fetch(Note.self, where: "location IN %@", [park.objectID]).map(\.text) == ["Tea"])
        #expect(try context.fetch(Note.self, where: "text IN %@", [String]()).isEmpty)
        #expect(try context.fetch(Note.self, where: "NOT (text IN %@) AND priority >= %d", ["Milk"], 1).map(\.text).sorted() == ["Bread", "Tea"])
        #expect(try context.count(for: FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "text IN %@", placeholders: [["Jam", "Tea"].placeholderValue]))) == 2)
        #expect(throws: PredicateSyntaxError.self) { try context.fetch(Note.self, where: "%K == 'Milk'", ["text"]) }
        #expect(throws: PredicateSyntaxError.self) { try context.fetch(Note.self, where: "priority > %d", [1]) }
        // A template's variable: one value, or a list.
        let due = try FetchRequest(template: "tasksDueSooner", in: TestModel.model, arguments: ["DUE_DATE": TestModel.now])
        #expect(due.predicate == (try ObjectPredicate(format: "dueDate < %@", .date(TestModel.now))))
        let listed = try ObjectPredicate("text IN $NAMES").substituting(placeholders: ["NAMES": ["Bread", "Jam"].placeholderValue])
        #expect(try context.fetch(FetchRequest(entityName: "Task", predicate: listed)).compactMap { $0["text"].stringValue }.sorted() == ["Bread", "Jam"])
    }

    /// A typed request is fetched and counted as its class; counts by class and template
    /// fetches are typed too; `ObjectPredicate(format:)` takes what `fetch(where:)` takes.
    @Test func typedRequestsCountsAndTemplates() throws {
        let context = try Self.notesContext()
        let home = try context.insert(NoteLocation.self)
        home.name = "Home"
        for (title, priority, days) in [("Milk", 3, -1), ("Bread", 1, 10), ("Tea", 2, nil)] as [(String, Int16, Double?)] {
            let note = try context.insert(Note.self)
            note.text = title
            note.priority = priority
            if title != "Bread" { note.location = home }
            if let days { try note.setValue(.date(TestModel.now.addingTimeInterval(days * 86_400)), forKey: "dueDate") }
        }
        try context.save()
        var request = try TypedFetchRequest(Note.self, where: "priority >= %d", 2, sortedBy: [SortKey("priority", ascending: false)])
        let urgent: [Note] = try context.fetch(request)
        #expect(urgent.map(\.priority) == [3, 2])
        #expect(try context.count(for: request) == 2)
        request.fetchLimit = 1
        #expect(try context.fetch(request).map(\.text) == ["Milk"])
        #expect(try context.count(Note.self, where: "location == %@", home) == 2)
        #expect(try context.count(Note.self) == 3)
        #expect(try context.fetch(Note.self, template: "tasksDueSooner", arguments: ["DUE_DATE": TestModel.now]).map(\.text) == ["Milk"])
        #expect(try ObjectPredicate(format: "location IN %@ AND priority >= %d", [home], 2)
                == ObjectPredicate(format: "location IN %@ AND priority >= %d", placeholders: [.list([.uri(home.objectID.uriRepresentation)]), .value(.integer(2))]))
        // A typed controller follows the context as the untyped one does.
        let controller = try TypedFetchedResultsController(TypedFetchRequest(Note.self, sortedBy: [SortKey("priority"), SortKey("text")]), context: context, sectionKeyPath: "priority")
        try controller.performFetch()
        #expect(controller.fetchedObjects.map(\.text) == ["Bread", "Tea", "Milk"])
        var changes = 0
        controller.onChange = { _ in changes += 1 }
        let jam = try context.insert(Note.self)
        jam.text = "Jam"
        jam.priority = 2
        context.processPendingChanges()
        #expect(changes == 1)
        #expect(controller.sections.map(\.name) == ["1", "2", "3"])
        #expect(controller.sections[1].objects.map(\.text) == ["Jam", "Tea"])
        #expect(controller.object(at: .init(section: 1, row: 0))?.text == "Jam")
        #expect(throws: ObjectStoreError.self) { _ = try context.count(TypedTask.self) }
        #expect(throws: ObjectStoreError.self) { _ = try context.fetch(TypedTask.self, template: "tasksDueSooner", arguments: ["DUE_DATE": TestModel.now]) }
    }

    /// A user's subclass of a generated class carries behaviour (an insert hook) and is
    /// registered for the entity in its place; a non-optional property of an optional
    /// attribute with a default reads a stored nil as the default.
    @Test func behaviourLivesInASubclassOfTheGeneratedClass() throws {
        let coordinator = TestModel.coordinator()
        try coordinator.register(GeneratedCircle.self, forEntityName: "Circle")
        try coordinator.register(MyCircle.self, forEntityName: "Circle")
        let context = ManagedObjectContext(coordinator: coordinator)
        let circle = try context.insert(MyCircle.self)
        #expect(circle.label == "new circle")
        #expect(circle.radius == 1.0)
        circle.radius = 2.5
        #expect(circle.radius == 2.5)
        try circle.setValue(.null, forKey: "radius")
        #expect(circle.radius == 1.0, "a stored nil reads as the default")
        #expect(circle.lastAccessError == nil)
        try context.save()
        #expect(try context.fetch(FetchRequest(entityName: "Circle")).first is MyCircle)
    }

    @Test func valuesReadAsSwiftValues() {
        let date = Date(timeIntervalSince1970: 1_000)
        let uuid = UUID()
        #expect(Value.string("a").stringValue == "a" && Value.integer(3).stringValue == nil)
        #expect(Value.integer(3).integerValue == 3 && Value.bool(true).boolValue == true)
        #expect(Value.date(date).dateValue == date && Value.uuid(uuid).uuidValue == uuid)
        #expect(Value.data(Data([1])).dataValue == Data([1]) && Value.null.uriValue == nil)
    }

    @Test func changesAndSavesArriveAsAsyncSequences() async throws {
        let coordinator = TestModel.coordinator()
        let saves = coordinator.saves()
        let context = ManagedObjectContext(coordinator: coordinator)
        let events = context.events()
        let task = try context.task("Milk")
        try context.save()
        var seen: [String] = []
        for await event in events {
            switch event {
            case .objectsDidChange(let changes): seen.append("change \(changes.inserted.count)")
            case .willSave: seen.append("willSave")
            case .didSave(let saved): seen.append("didSave \(saved.inserted.count)")
            }
            if seen.count == 3 { break }
        }
        #expect(seen == ["change 1", "willSave", "didSave 1"])
        for await saved in saves {
            #expect(saved.inserted == [task.objectID])
            break
        }
    }

    /// What a user reaches of the store without the (package-only) store protocol: its
    /// identity, its file's metadata before opening, compaction, exclusive access, and an
    /// in-memory coordinator.
    @Test func theCoordinatorAnswersForItsStore() throws {
        let directory = try TemporaryDirectory()
        let models = try ModelDirectory(url: Self.models)
        let model = try models.currentModel()
        for name in ["tasks.store", "tasks.json"] {
            let url = directory.file(name)
            #expect(throws: StoreError.self) { try PersistentStoreCoordinator.metadataForStore(at: url) }
            let coordinator = try PersistentStoreCoordinator(model: model, storeURL: url)
            let context = ManagedObjectContext(coordinator: coordinator)
            var tasks: [ManagedObject] = []
            for i in 0..<50 {
                let task = try context.insertObject(entityName: "Task")
                try task.setValue("task \(i)", forKey: "title")
                try task.setValue(UUID(), forKey: "uuid")
                tasks.append(task)
            }
            try coordinator.withExclusiveStoreAccess { try context.save() }
            for round in 0..<5 {
                for task in tasks { try task.setValue("task \(round)", forKey: "title") }
                try context.save()
            }
            let stored = try PersistentStoreCoordinator.metadataForStore(at: url)
            #expect(stored.storeIdentifier == coordinator.storeIdentifier)
            #expect(coordinator.storeMetadata?.storeIdentifier == coordinator.storeIdentifier)
            #expect(stored.modelVersionName == model.versionName)
            #expect(try context.fetch(FetchRequest(entityName: "Task")).first?.objectID.uriRepresentation.absoluteString.contains(coordinator.storeIdentifier) == true)
            let before = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0
            try coordinator.compactStore()
            let after = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0
            if name.hasSuffix(".store") { #expect(after < before, "five rewrites of every row are reclaimed") } else { #expect(after == before) }
            #expect(coordinator.housekeepingWarning == nil)
            let reopened = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
            #expect(Set(try reopened.fetch(FetchRequest(entityName: "Task")).map { $0["title"].stringValue }) == ["task 4"])
        }
        let scratch = PersistentStoreCoordinator(inMemoryWith: model)
        #expect(scratch.storeIdentifier != PersistentStoreCoordinator(inMemoryWith: model).storeIdentifier)
        #expect(throws: StoreError.self) { try PersistentStoreCoordinator.metadataForStore(at: directory.file("x"), type: .inMemory) }
    }
}

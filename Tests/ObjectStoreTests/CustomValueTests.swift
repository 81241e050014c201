import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

/// Values of the application's own types: a colour through a named transformer (the seed
/// recipe), Codable values stored as JSON, enums stored as their raw values; on every store
/// kind, with typed properties, predicates on the stored form, and errors that say why.
struct TestColor: Sendable, Equatable, TransformableAttributeValue {
    var red: UInt8, green: UInt8, blue: UInt8
    static let transformerName = "TestColorTransformer"
    static let placeholder = TestColor(red: 0, green: 0, blue: 0)
}

struct TestColorTransformer: AttributeTransformer {
    func data(from color: TestColor) -> Data { Data([color.red, color.green, color.blue]) }
    func value(from data: Data) throws -> TestColor {
        let bytes = [UInt8](data)
        guard bytes.count == 3 else { throw ValidationMessage("a colour is 3 bytes, not \(bytes.count)") }
        return TestColor(red: bytes[0], green: bytes[1], blue: bytes[2])
    }
}

struct TestSettings: CodableAttributeValue, Equatable {
    var theme = "light"
    var fontSize = 12
    var tags: [String] = []
    static let placeholder = TestSettings()
}

enum Mood: String, EnumAttributeValue {
    case calm, busy
    static let placeholder = Mood.calm
}
enum Level: Int16, EnumAttributeValue {
    case low = 1, high = 3
    static let placeholder = Level.low
}

final class StyledNote: ManagedObject {
    @Attribute var title: String?
    @Attribute var color: TestColor?
    @Attribute var settings: TestSettings?
    @Attribute var packed: TestSettings?
    @Attribute var mood: Mood
    @Attribute var level: Level?
}

@Suite struct CustomValueTests {
    static let schema = #"""
    { "entities": [{ "name": "Note", "attributes": [
        { "name": "title", "type": "string" },
        { "name": "color", "type": "transformable", "transformer": "TestColorTransformer", "swiftType": "TestColor" },
        { "name": "settings", "type": "string", "swiftType": "TestSettings" },
        { "name": "packed", "type": "binary", "swiftType": "TestSettings" },
        { "name": "mood", "type": "string", "allowedValues": ["calm", "busy"], "default": "calm", "optional": false, "enum": "Mood" },
        { "name": "level", "type": "int16", "enum": { "name": "Level", "cases": { "low": 1, "high": 3 } } }
    ] }] }
    """#

    enum Kind: String, CaseIterable { case inMemory, json, binary }

    static func coordinator(_ kind: Kind, in directory: TemporaryDirectory) throws -> PersistentStoreCoordinator {
        AttributeTransformers.register(TestColorTransformer(), forName: "TestColorTransformer")
        let model = try ManagedObjectModel(schema: schema, file: "notes.json")
        let coordinator: PersistentStoreCoordinator
        switch kind {
        case .inMemory: coordinator = PersistentStoreCoordinator(inMemoryWith: model)
        case .json: coordinator = try PersistentStoreCoordinator(model: model, storeURL: directory.file("notes.json"))
        case .binary: coordinator = try PersistentStoreCoordinator(model: model, storeURL: directory.file("notes.store"))
        }
        try coordinator.register(StyledNote.self, forEntityName: "Note")
        return coordinator
    }

    /// Typed properties write and read each kind; a second opening reads the same values;
    /// predicates compare the stored form.
    @Test(arguments: Kind.allCases) func customValuesRoundTripThroughTheStore(kind: Kind) throws {
        let directory = try TemporaryDirectory()
        let coordinator = try Self.coordinator(kind, in: directory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let note = try context.insert(StyledNote.self)
        note.title = "first"
        note.color = TestColor(red: 200, green: 30, blue: 60)
        note.settings = TestSettings(theme: "dark", fontSize: 14, tags: ["a/b"])
        note.packed = TestSettings(theme: "packed")
        note.mood = .busy
        note.level = .high
        #expect(note.lastAccessError == nil)
        let plain = try context.insert(StyledNote.self)
        plain.title = "plain"
        try context.save()

        let reopened = kind == .inMemory ? coordinator : try Self.coordinator(kind, in: directory)
        let reader = ManagedObjectContext(coordinator: reopened)
        let read = try #require(try reader.fetch(StyledNote.self, where: "title == %@", "first").first)
        #expect(read.color == TestColor(red: 200, green: 30, blue: 60))
        #expect(read.settings == TestSettings(theme: "dark", fontSize: 14, tags: ["a/b"]))
        #expect(read.packed?.theme == "packed")
        #expect(read.mood == .busy)
        #expect(read.level == .high)
        let other = try #require(try reader.fetch(StyledNote.self, where: "title == %@", "plain").first)
        #expect(other.color == nil && other.settings == nil && other.mood == .calm && other.level == nil)
        // Stored forms: a JSON text with sorted keys, the raw values, the transformer's bytes.
        #expect(read["settings"] == #"{"fontSize":14,"tags":["a/b"],"theme":"dark"}"#)
        #expect(try read.transformedValue(forKey: "color", as: TestColor.self) == TestColor(red: 200, green: 30, blue: 60))
        #expect(try reader.fetch(StyledNote.self, where: "mood == 'busy' AND level == 3").count == 1)
        #expect(try reader.fetch(StyledNote.self, where: "settings == %@", Value.string(#"{"fontSize":14,"tags":["a/b"],"theme":"dark"}"#)).count == 1)
        #expect(try reader.fetch(StyledNote.self, where: "color IN %@", [Value.data(Data([200, 30, 60])), Value.data(Data([1, 2, 3]))]).count == 1)
        #expect(try reader.fetch(StyledNote.self, where: "settings CONTAINS 'dark'").count == 1)
        if kind == .json {
            // The JSON store is readable: the Codable value is its JSON text.
            let text = try String(contentsOf: directory.file("notes.json"), encoding: .utf8)
            #expect(text.contains(#"fontSize"#) && text.contains("busy"))
        }
    }

    /// What cannot be converted is an error that says why, never a silent nil.
    @Test func unconvertibleValuesAreErrorsThatSayWhy() throws {
        let directory = try TemporaryDirectory()
        let context = ManagedObjectContext(coordinator: try Self.coordinator(.inMemory, in: directory))
        let note = try context.insert(StyledNote.self)
        // Bytes the transformer cannot read.
        try note.setValue(.data(Data([1, 2])), forKey: "color")
        #expect(note.color == nil)
        #expect("\(note.lastAccessError.map { "\($0)" } ?? "")".contains("cannot read the 2 bytes stored"))
        #expect(throws: ObjectStoreError.self) { try note.transformedValue(forKey: "color", as: TestColor.self) }
        // JSON that is not a TestSettings.
        try note.setValue(.string(#"{"theme": 3}"#), forKey: "settings")
        #expect(note.settings == nil)
        #expect("\(note.lastAccessError.map { "\($0)" } ?? "")".contains("is not a TestSettings"))
        // A raw value that is no case (written below the typed property).
        try note.setValue(.integer(2), forKey: "level")
        #expect(note.level == nil)
        #expect("\(note.lastAccessError.map { "\($0)" } ?? "")".contains("is not a case of Level"))
        // A transformer asked for another type, and one that is not registered.
        do {
            _ = try note.transformedValue(forKey: "color", as: String.self)
            Issue.record("read a colour as a String")
        } catch {
            #expect("\(error)".contains("transforms values of another type than String"))
        }
        let schema = #"{"entities": [{"name": "Tile", "attributes": [{"name": "shade", "type": "transformable", "transformer": "NoSuchTransformer"}]}]}"#
        let tiles = ManagedObjectContext(coordinator: PersistentStoreCoordinator(inMemoryWith: try ManagedObjectModel(schema: schema)))
        let tile = try tiles.insertObject(entityName: "Tile")
        do {
            try tile.setTransformedValue(TestColor.placeholder, forKey: "shade")
            Issue.record("set a value through a transformer no one registered")
        } catch {
            #expect("\(error)" == "Tile.shade is transformed by 'NoSuchTransformer', and no transformer has that name: register one with AttributeTransformers.register(_:forName:)")
        }
        #expect(tile["shade"] == .null)
    }

    /// The seed recipe as Core Data writes it: a colour through a named transformer, without a
    /// typed class.
    @Test func theColourRecipeWorksThroughKeys() throws {
        let directory = try TemporaryDirectory()
        let coordinator = try Self.coordinator(.binary, in: directory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let note = try context.insertObject(entityName: "Note")
        try note.setTransformedValue(TestColor(red: 1, green: 2, blue: 3), forKey: "color")
        try context.save()
        let reader = ManagedObjectContext(coordinator: try Self.coordinator(.binary, in: directory))
        let read = try reader.existingObject(with: note.objectID)
        #expect(try read.transformedValue(forKey: "color", as: TestColor.self) == TestColor(red: 1, green: 2, blue: 3))
        try read.setTransformedValue(TestColor?.none, forKey: "color")
        #expect(read["color"] == .null)
    }
}

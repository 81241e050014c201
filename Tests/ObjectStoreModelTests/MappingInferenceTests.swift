import Testing
@testable import ObjectStoreModel

@Suite struct MappingInferenceTests {
    private func model(_ entities: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(schema: #"{"entities": [\#(entities)]}"#)
    }

    private let base = #"""
        {"name": "Task", "attributes": [
            {"name": "text", "type": "string", "optional": false},
            {"name": "priority", "type": "int16"},
            {"name": "ratio", "type": "float"},
            {"name": "note", "type": "string"}],
         "relationships": [{"name": "location", "destination": "Location", "inverse": "tasks"}]},
        {"name": "Location", "attributes": [{"name": "name", "type": "string"}],
         "relationships": [{"name": "tasks", "destination": "Task", "inverse": "location", "toMany": true}]}
        """#

    private func infer(_ destination: String) throws -> MappingModel {
        try MappingModel.infer(from: try model(base), to: try model(destination))
    }

    private func edited(_ pairs: [(String, String)]) -> String {
        var text = base
        for (old, new) in pairs {
            #expect(text.contains(old), "test edit does not apply: \(old)")
            text = text.replacingOccurrences(of: old, with: new)
        }
        return text
    }

    @Test func identicalModelsCopyEverything() throws {
        let mapping = try infer(base)
        let task = try #require(mapping.mapping(forDestination: "Task"))
        #expect(task.sourceEntity == "Task")
        #expect(task.attributes == ["text": .copy("text"), "priority": .copy("priority"), "ratio": .copy("ratio"), "note": .copy("note")])
        #expect(task.relationships == ["location": .copy("location")])
    }

    @Test(arguments: [
        // added and removed attributes, relationships and entities
        [(#"{"name": "note", "type": "string"}"#, #"{"name": "note", "type": "string"}, {"name": "done", "type": "boolean", "optional": false, "default": false}"#)],
        [(#"{"name": "ratio", "type": "float"},"#, #"{"name": "ratio", "type": "float"}"#), (#"{"name": "note", "type": "string"}]"#, "]")],
        [(#"{"name": "Location", "attributes""#, #"{"name": "Tag", "attributes": [{"name": "name", "type": "string"}]}, {"name": "Location", "attributes""#)],
        // renames through renamingIdentifier, of attributes, relationships and entities
        [(#"{"name": "text", "type": "string", "optional": false}"#, #"{"name": "title", "type": "string", "optional": false, "renamingIdentifier": "text"}"#)],
        [(#""name": "location", "destination": "Location", "inverse": "tasks""#, #""name": "place", "renamingIdentifier": "location", "destination": "Place", "inverse": "tasks""#),
         (#"{"name": "Location", "attributes""#, #"{"name": "Place", "renamingIdentifier": "Location", "attributes""#),
         (#""inverse": "location", "toMany": true"#, #""inverse": "place", "toMany": true"#)],
        // optionality
        [(#"{"name": "priority", "type": "int16"}"#, #"{"name": "priority", "type": "int16", "optional": false, "default": 0}"#)],
        [(#"{"name": "text", "type": "string", "optional": false}"#, #"{"name": "text", "type": "string"}"#)],
        // cardinality and order
        [(#""inverse": "location", "toMany": true"#, #""inverse": "location", "toMany": true, "ordered": true"#)],
        [(#"{"name": "location", "destination": "Location", "inverse": "tasks"}"#, #"{"name": "location", "destination": "Location", "inverse": "tasks", "toMany": true}"#)],
        // widening
        [(#"{"name": "priority", "type": "int16"}"#, #"{"name": "priority", "type": "int64"}"#), (#"{"name": "ratio", "type": "float"}"#, #"{"name": "ratio", "type": "double"}"#)],
        [(#"{"name": "priority", "type": "int16"}"#, #"{"name": "priority", "type": "decimal"}"#)],
    ])
    func infersLightweightChanges(edits: [(String, String)]) throws {
        _ = try infer(edited(edits))
    }

    @Test func renamesAreFollowed() throws {
        let mapping = try infer(edited([(#"{"name": "text", "type": "string", "optional": false}"#, #"{"name": "title", "type": "string", "optional": false, "renamingIdentifier": "text"}"#)]))
        #expect(mapping.mapping(forDestination: "Task")?.attributes["title"] == .copy("text"))
    }

    @Test func propertiesMoveWithinAnInheritanceHierarchy() throws {
        let source = try model(#"{"name": "Item", "attributes": [{"name": "a", "type": "string"}]}, {"name": "Sub", "parent": "Item", "attributes": [{"name": "b", "type": "string"}]}"#)
        let destination = try model(#"{"name": "Item", "attributes": [{"name": "a", "type": "string"}, {"name": "b", "type": "string"}]}, {"name": "Sub", "parent": "Item"}"#)
        let mapping = try MappingModel.infer(from: source, to: destination)
        #expect(mapping.mapping(forDestination: "Sub")?.attributes == ["a": .copy("a"), "b": .copy("b")])
    }

    @Test(arguments: [
        ([(#"{"name": "note", "type": "string"}"#, #"{"name": "note", "type": "int32"}"#)], "Task.note: string -> int32 is not a widening conversion"),
        ([(#"{"name": "priority", "type": "int16"}"#, #"{"name": "priority", "type": "string"}"#)], "Task.priority: int16 -> string is not a widening conversion"),
        ([(#"{"name": "ratio", "type": "float"}"#, #"{"name": "ratio", "type": "int32"}"#)], "Task.ratio: float -> int32"),
        ([(#"{"name": "note", "type": "string"}"#, #"{"name": "note", "type": "string", "optional": false}"#)], "Task.note: optional -> required without a default value"),
        ([(#"{"name": "note", "type": "string"}"#, #"{"name": "note", "type": "string"}, {"name": "code", "type": "string", "optional": false}"#)], "Task.code: a new required attribute without a default value"),
        ([(#"{"name": "location", "destination": "Location", "inverse": "tasks"}"#, #"{"name": "location", "type": "string"}"#), (#", "inverse": "location", "toMany": true"#, #", "toMany": true"#)], "Task.location"),
        ([(#"{"name": "ratio", "type": "float"},"#, #"{"name": "ratio", "type": "float"}"#), (#"{"name": "note", "type": "string"}]"#, "]"), (#"[{"name": "location", "destination""#, #"[{"name": "note", "destination": "Location"}, {"name": "location", "destination""#)], "Task.note: was an attribute and is now a relationship"),
        ([(#"{"name": "Location", "attributes""#, #"{"name": "Place", "renamingIdentifier": "Task", "attributes""#), (#""destination": "Location""#, #""destination": "Place""#)], "Place: takes its objects from Task, which"),
    ])
    func refusesWhatNeedsACustomMapping(edits: [(String, String)], message: String) throws {
        let destination: ManagedObjectModel
        do {
            destination = try model(edited(edits))
        } catch {
            // Some edits (an attribute with relationship keys) are schema errors themselves.
            #expect(message == "Task.location")
            return
        }
        let source = try model(base)
        do {
            _ = try MappingModel.infer(from: source, to: destination)
            Issue.record("expected inference to be refused")
        } catch {
            #expect(error.problems.contains { $0.contains(message) }, "\(error)")
            #expect(error.description.contains("custom mapping"))
        }
    }

    @Test func theTasksModelVersionsMigrateStepByStep() throws {
        let directory = try ModelDirectory(url: SchemaFixtures.modelsDirectory.appendingPathComponent("Tasks"))
        let (v1, v2, v3) = (try directory.model(version: "v1"), try directory.model(version: "v2"), try directory.model(version: "v3"))
        let first = try MappingModel.infer(from: v1, to: v2)
        #expect(first.mapping(forDestination: "Task")?.attributes["title"] == .copy("text"))
        #expect(first.mapping(forDestination: "Tag") == nil, "a new entity starts empty")
        // v2 -> v3 turns a text field into an entity: inference refuses, the mapping file covers it.
        #expect(throws: MappingInferenceError.self) { try MappingModel.infer(from: v2, to: v3) }
        let text = try #require(directory.mappingText(from: "v2", to: "v3"))
        let second = try MappingModel.custom(text, file: "v2-to-v3.mapping.json", from: v2, to: v3)
        let project = try #require(second.mapping(forDestination: "Project"))
        #expect(project.distinctBy != nil)
        let task = try #require(second.mapping(forDestination: "Task"))
        #expect(task.attributes["title"] == .copy("title"), "what the file does not name is inferred")
        guard case .lookup(let entity, let key, _)? = task.relationships["project"] else {
            Issue.record("expected a lookup")
            return
        }
        #expect(entity == "Project" && key == "name")
    }

    @Test(arguments: [
        (#"{"entities": [{"destination": "Nope", "source": "Task"}]}"#, "unknown destination entity 'Nope'"),
        (#"{"entities": [{"destination": "Task", "source": "Tsk"}]}"#, "unknown source entity 'Tsk' (did you mean 'Task'?)"),
        (#"{"entities": [{"destination": "Task", "source": "Task", "attributes": {"titel": "$source.text"}}]}"#, "Task has no stored attribute 'titel'"),
        (#"{"entities": [{"destination": "Task", "source": "Task", "attributes": {"title": "$source.txt"}}]}"#, "Task has no property 'txt'"),
        (#"{"entities": [{"destination": "Task", "source": "Task", "attributes": {"title": "$source.text +"}}]}"#, "bad expression at column"),
        (#"{"entities": [{"destination": "Task", "source": "Task", "relationships": {"project": {"lookup": "Project", "key": "nam", "value": "$source.project"}}}]}"#, "lookup needs a destination entity"),
        (#"{"entities": [{"destination": "Task", "source": "Task", "extra": 1}]}"#, "unknown key 'extra'"),
    ])
    func mappingFilesAreChecked(text: String, message: String) throws {
        let directory = try ModelDirectory(url: SchemaFixtures.modelsDirectory.appendingPathComponent("Tasks"))
        do {
            _ = try MappingModel.custom(text, file: "m.json", from: try directory.model(version: "v2"), to: try directory.model(version: "v3"))
            Issue.record("expected the mapping file to be refused")
        } catch {
            #expect(error.diagnostics.contains { $0.message.contains(message) }, "\(error)")
        }
    }
}

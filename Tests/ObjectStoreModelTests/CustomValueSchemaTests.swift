import Foundation
import Testing
import ObjectStoreModel

/// Transformable attributes, Swift types and enums in schema files: read, checked with
/// located errors, and hashed only where the stored bytes change meaning.
@Suite struct CustomValueSchemaTests {
    func model(_ attributes: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(schema: #"{"entities": [{"name": "Note", "attributes": ["# + attributes + "]}]}", file: "notes.json")
    }

    func problems(_ attributes: String) -> [String] {
        do {
            _ = try model(attributes)
            return []
        } catch let error as SchemaError {
            return error.diagnostics.map(\.description)
        } catch {
            return ["\(error)"]
        }
    }

    @Test func aTransformableAttributeKeepsBytesAndNamesItsTransformer() throws {
        let loaded = try model(#"{"name": "color", "type": "transformable", "transformer": "ColorTransformer", "swiftType": "Color"}"#)
        let color = try #require(loaded.entity(named: "Note")?.attribute(named: "color"))
        #expect(color.type == .binary)
        #expect(color.valueTransformerName == "ColorTransformer")
        #expect(color.swiftTypeName == "Color")
        // The transformer is hashed (other bytes), the Swift type is not (same bytes).
        let plain = try model(#"{"name": "color", "type": "binary"}"#).entity(named: "Note")?.attribute(named: "color")
        let other = try model(#"{"name": "color", "type": "transformable", "transformer": "RGBTransformer"}"#).entity(named: "Note")?.attribute(named: "color")
        let untyped = try model(#"{"name": "color", "type": "transformable", "transformer": "ColorTransformer"}"#).entity(named: "Note")?.attribute(named: "color")
        #expect(color.versionHash != plain?.versionHash)
        #expect(color.versionHash != other?.versionHash)
        #expect(color.versionHash == untyped?.versionHash)
    }

    @Test func transformersAndSwiftTypesAreCheckedWithTheirPlace() {
        #expect(problems(#"{"name": "color", "type": "transformable"}"#).contains { $0.contains("$.entities[0].attributes[0].transformer") && $0.contains("missing required key 'transformer'") })
        #expect(problems(#"{"name": "color", "type": "binary", "transformer": "ColorTransformer"}"#).contains { $0.contains("'transformer' applies to a transformable attribute") })
        #expect(problems(#"{"name": "color", "type": "transformable", "transformer": "9lives"}"#).contains { $0.contains("is not a name") })
        #expect(problems(#"{"name": "settings", "type": "string", "swiftType": "My Settings"}"#).contains { $0.contains("is not a Swift type name") })
        #expect(problems(#"{"name": "color", "type": "transformabel"}"#).first?.contains("did you mean 'transformable'") == true)
    }

    @Test func anEnumTakesItsCasesFromAllowedValuesOrNamesThem() throws {
        let loaded = try model(#"""
            {"name": "status", "type": "string", "allowedValues": ["open", "done"], "default": "open", "enum": "Status"},
            {"name": "level", "type": "int16", "enum": {"name": "Level", "cases": {"low": 1, "high": 3}}}
            """#)
        let note = try #require(loaded.entity(named: "Note"))
        #expect(note.attribute(named: "status")?.enumeration?.cases.map(\.name) == ["open", "done"])
        let level = try #require(note.attribute(named: "level"))
        #expect(level.enumeration?.name == "Level")
        #expect(level.enumeration?.cases.map(\.value) == [.integer(1), .integer(3)])
        // The cases are the allowed values.
        #expect(level.validation.allowedValues == [.integer(1), .integer(3)])
        // An enum is Swift's business: the hash is the attribute's without it.
        let bare = try model(#"{"name": "level", "type": "int16", "allowedValues": [1, 3]}"#).entity(named: "Note")?.attribute(named: "level")
        #expect(level.versionHash == bare?.versionHash)
    }

    @Test func enumsAreCheckedWithTheirPlace() {
        #expect(problems(#"{"name": "status", "type": "string", "enum": "Status"}"#).contains { $0.contains("takes its cases from the string attribute's 'allowedValues'") })
        #expect(problems(#"{"name": "status", "type": "string", "allowedValues": ["in progress"], "enum": "Status"}"#).contains { $0.contains("cannot name an enum case") })
        #expect(problems(#"{"name": "when", "type": "date", "enum": "When"}"#).contains { $0.contains("applies to string and integer attributes") })
        #expect(problems(#"{"name": "level", "type": "int16", "enum": {"name": "Level", "cases": {"low": "one"}}}"#).contains { $0.contains("enum case 'low'") })
        #expect(problems(#"{"name": "level", "type": "int16", "enum": {"name": "Level", "cases": {"low": 1, "lower": 1}}}"#).contains { $0.contains("have one value") })
        #expect(problems(#"{"name": "level", "type": "int16", "enum": {"cases": {"low": 1}}}"#).contains { $0.contains("needs a 'name'") })
        #expect(problems(#"{"name": "level", "type": "int16", "allowedValues": [1, 2], "enum": {"name": "Level", "cases": {"low": 1}}}"#).contains { $0.contains("'allowedValues' and the enum's cases differ") })
        #expect(problems(#"{"name": "level", "type": "int16", "swiftType": "Level", "enum": {"name": "Level", "cases": {"low": 1}}}"#).contains { $0.contains("not both") })
        #expect(problems(#"{"name": "level", "type": "int16", "enum": {"name": "Level", "cases": {"low": 1}}, "default": 2}"#).contains { $0.contains("allowedValues") })
    }
}

@Suite struct CustomValueInferenceTests {
    func model(_ color: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(schema: #"{"entities": [{"name": "Note", "attributes": [{"name": "title", "type": "string"}, "# + color + "]}]}")
    }

    /// A transformer changed between versions is not inferred (its bytes would be copied to
    /// be read by another); an enum or a Swift type added is (the stored values stay).
    @Test func aChangedTransformerIsNotInferredButAnEnumIs() throws {
        let v1 = try model(#"{"name": "color", "type": "transformable", "transformer": "RGB"}"#)
        let v2 = try model(#"{"name": "color", "type": "transformable", "transformer": "HSV"}"#)
        #expect {
            try MappingModel.infer(from: v1, to: v2)
        } throws: { error in
            "\(error)".contains("Note.color: its bytes were written by the transformer 'RGB' and are read by the transformer 'HSV'")
        }
        let bytes = try model(#"{"name": "color", "type": "binary"}"#)
        #expect(throws: MappingInferenceError.self) { try MappingModel.infer(from: bytes, to: v1) }
        let plain = try model(#"{"name": "state", "type": "string", "allowedValues": ["a", "b"]}"#)
        let typed = try model(#"{"name": "state", "type": "string", "allowedValues": ["a", "b"], "enum": "State"}"#)
        #expect(plain.versionHash == typed.versionHash)
        _ = try MappingModel.infer(from: plain, to: typed)
    }
}

import Foundation
import Testing
@testable import ObjectStoreModel

@Suite struct VersionHashTests {
    private let base = #"""
        {"entities": [
          {"name": "Task",
           "attributes": [
             {"name": "text", "type": "string", "optional": false, "maxLength": 500},
             {"name": "priority", "type": "int16", "default": 0, "max": 3}
           ],
           "relationships": [{"name": "location", "destination": "Location", "inverse": "tasks"}]},
          {"name": "Location",
           "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "tasks", "destination": "Task", "inverse": "location", "toMany": true}]}
        ]}
        """#

    private func hashes(_ schema: String) throws -> (model: VersionHash, task: VersionHash?, location: VersionHash?) {
        let model = try ManagedObjectModel(schema: schema)
        return (model.versionHash, model.entity(named: "Task")?.versionHash, model.entity(named: "Location")?.versionHash)
    }

    private func edited(_ replacements: [(String, String)]) -> String {
        var text = base
        for (old, new) in replacements {
            precondition(text.contains(old), "test edit does not apply: \(old)")
            text = text.replacingOccurrences(of: old, with: new)
        }
        return text
    }

    @Test func isStableUnderReordering() throws {
        let reordered = #"""
            {"entities": [
              {"name": "Location",
               "relationships": [{"name": "tasks", "destination": "Task", "inverse": "location", "toMany": true}],
               "attributes": [{"name": "name", "type": "string"}]},
              {"name": "Task",
               "relationships": [{"name": "location", "destination": "Location", "inverse": "tasks"}],
               "attributes": [
                 {"name": "priority", "type": "int16", "default": 0, "max": 3},
                 {"name": "text", "type": "string", "optional": false, "maxLength": 500}
               ]}
            ]}
            """#
        #expect(try hashes(reordered) == hashes(base))
    }

    @Test(arguments: [
        [("\"default\": 0", "\"default\": 2")],
        [("\"maxLength\": 500", "\"maxLength\": 20, \"pattern\": \".+\"")],
        [("\"max\": 3", "\"max\": 3, \"userInfo\": {\"x\": \"y\"}, \"renamingIdentifier\": \"prio\"")],
    ])
    func ignoresWhatDoesNotChangeTheStoredShape(edits: [(String, String)]) throws {
        #expect(try hashes(edited(edits)) == hashes(base))
    }

    @Test(arguments: [
        ("\"type\": \"int16\"", "\"type\": \"int32\""),
        ("\"optional\": false, ", ""),
        ("\"name\": \"text\", \"type\": \"string\"", "\"name\": \"text\", \"transient\": true, \"type\": \"string\""),
        ("\"max\": 3", "\"max\": 3, \"versionHashModifier\": \"2\""),
        ("\"name\": \"priority\"", "\"name\": \"urgency\""),
    ])
    func changesWhenAnAttributeChangesShape(old: String, new: String) throws {
        let before = try hashes(base)
        let after = try hashes(edited([(old, new)]))
        #expect(after.task != before.task)
        #expect(after.location == before.location)
        #expect(after.model != before.model)
    }

    @Test func changesWhenARelationshipChangesShape() throws {
        let before = try hashes(base)
        let toMany = try hashes(edited([
            ("{\"name\": \"location\", \"destination\": \"Location\", \"inverse\": \"tasks\"}", "{\"name\": \"location\", \"destination\": \"Location\", \"inverse\": \"tasks\", \"toMany\": true}"),
            ("\"inverse\": \"location\", \"toMany\": true", "\"inverse\": \"location\", \"toMany\": true"),
        ]))
        #expect(toMany.task != before.task)
        let ordered = try hashes(edited([("\"inverse\": \"location\", \"toMany\": true", "\"inverse\": \"location\", \"toMany\": true, \"ordered\": true")]))
        #expect(ordered.location != before.location && ordered.task == before.task)
    }

    @Test func pinsTheRecipe() throws {
        // Stores compare these hashes across runs, machines and releases: the recipe in
        // Sources/ObjectStore/ObjectStore.docc/Schema.md must not drift. Recomputed here from the documented encoding.
        func field(_ bytes: [UInt8]) -> [UInt8] {
            let n = UInt32(bytes.count)
            return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + bytes
        }
        func text(_ s: String) -> [UInt8] { field(Array(s.utf8)) }
        let attribute = SHA256.hash(text("attribute") + text("name") + text("string") + text("1") + text("0") + text("0") + text(""))
        let entity = SHA256.hash(text("entity") + text("Person") + text("") + text("0") + text("") + field(attribute))
        let model = SHA256.hash(text("model") + text("Person") + field(entity))
        let loaded = try ManagedObjectModel(schema: #"{"entities": [{"name": "Person", "attributes": [{"name": "name", "type": "string"}]}]}"#)
        #expect(loaded.entity(named: "Person")?.versionHash.bytes == entity)
        #expect(loaded.versionHash.bytes == model)
        #expect(loaded.versionHash.hex == VersionHash(bytes: model).hex)
        #expect(VersionHash(hex: loaded.versionHash.hex) == loaded.versionHash)
    }
}

import Foundation
import Testing
@testable import ObjectStoreModel

@Suite struct ModelDirectoryTests {
    @Test func tasksModelLoads() throws {
        let directory = try ModelDirectory(url: SchemaFixtures.modelsDirectory.appendingPathComponent("Tasks"))
        #expect(directory.versionNames.first == "v1")
        let v1 = try directory.model(version: "v1")
        #expect(v1.versionName == "v1")

        let task = try #require(v1.entity(named: "Task"))
        #expect(task.properties.map(\.name) == ["dueDate", "isOverdue", "location", "priority", "text"])
        let text = try #require(task.attribute(named: "text"))
        #expect(text.type == .string && !text.isOptional && text.validation.minLength == 1 && text.validation.maxLength == 500)
        let priority = try #require(task.attribute(named: "priority"))
        #expect(priority.type == .int16 && priority.defaultValue == 0 && priority.validation.minimum == 0 && priority.validation.maximum == 3)
        #expect(task.attribute(named: "dueDate")?.isOptional == true)
        #expect(task.attribute(named: "isOverdue")?.derivation == "dueDate != nil AND dueDate < now()")
        let location = try #require(task.relationship(named: "location"))
        #expect(location.destinationEntityName == "Location" && location.inverseName == "tasks" && !location.isToMany && location.deleteRule == .nullify)

        let place = try #require(v1.entity(named: "Location"))
        #expect(place.uniquenessConstraints == [["name"]])
        #expect(place.relationship(named: "tasks")?.isToMany == true)
        #expect(place.fetchedProperty(named: "highPriTasks")?.predicate == "location == $FETCH_SOURCE AND priority == 3")
        let template = try #require(v1.fetchRequestTemplate(named: "tasksDueSooner"))
        #expect(template.entityName == "Task" && template.predicate == "dueDate < $DUE_DATE" && template.sortDescriptors == [.init(keyPath: "dueDate")])
    }

    /// The directory's files are found however its URL is written: with or without a
    /// trailing slash, relative or absolute, every version reads the same.
    @Test func theDirectoryReadsTheSameWhateverItsURLsForm() throws {
        let tasks = SchemaFixtures.modelsDirectory.appendingPathComponent("Tasks")
        let reference = try ModelDirectory(url: tasks)
        let forms = [URL(fileURLWithPath: tasks.path + "/"), URL(fileURLWithPath: tasks.path, isDirectory: true),
                     URL(fileURLWithPath: tasks.path + "/.")]
        for url in forms {
            let directory = try ModelDirectory(url: url)
            #expect(directory.versionNames == reference.versionNames, "\(url)")
            #expect(try directory.allModels() == reference.allModels(), "\(url)")
        }
    }

    @Test func shippedVersionOneNeverChanges() throws {
        // Stores written with v1 are recognised by this hash; v1.json must never be edited.
        let v1 = try ModelDirectory(url: SchemaFixtures.modelsDirectory.appendingPathComponent("Tasks")).model(version: "v1")
        #expect(v1.versionHash.hex == "916d590f8f2897fd2bf803301773cd71447eaea899af640b04c894abf733d6fb")
    }

    private func temporaryDirectory(manifest: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("osm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try manifest.write(to: url.appendingPathComponent("manifest.json"), atomically: true, encoding: .utf8)
        return url
    }

    @Test func rejectsABadManifest() throws {
        let url = try temporaryDirectory(manifest: #"{"versions": ["v1", "v2"], "current": "v3"}"#)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect {
            try ModelDirectory(url: url)
        } throws: { error in
            (error as? SchemaError)?.diagnostics.contains { $0.path == "$.current" && $0.message.contains("'v3' is not listed") } ?? false
        }
    }

    /// A version is parsed once per process and kept, but never served for other text: a
    /// schema file changed on disk (a model edited during development), read again, gives
    /// the new model; a broken one is reported every time it is loaded.
    @Test func aChangedSchemaFileIsReadAgainNotServedFromMemory() throws {
        let url = try temporaryDirectory(manifest: #"{"versions": ["v1"], "current": "v1"}"#)
        defer { try? FileManager.default.removeItem(at: url) }
        func write(_ attribute: String) throws {
            try #"{ "entities": [{ "name": "Note", "attributes": [{ "name": "\#(attribute)", "type": "string" }] }] }"#
                .write(to: url.appendingPathComponent("v1.json"), atomically: true, encoding: .utf8)
        }
        try write("title")
        let first = try ModelDirectory(url: url).currentModel()
        #expect(try ModelDirectory(url: url).currentModel() == first)
        #expect(first.entity(named: "Note")?.attribute(named: "title") != nil)
        try write("body")
        let changed = try ModelDirectory(url: url).currentModel()
        #expect(changed.entity(named: "Note")?.attribute(named: "body") != nil && changed.entity(named: "Note")?.attribute(named: "title") == nil)
        #expect(changed.versionHash != first.versionHash)
        try write("bad name")
        for _ in 0..<2 { #expect(throws: SchemaError.self) { try ModelDirectory(url: url).currentModel() } }
        // The same text under another version name is that version's model.
        try write("title")
        let renamed = try ModelDirectory(location: "memory", files: ["manifest.json": #"{"versions": ["v2"], "current": "v2"}"#,
                                                                     "v2.json": try String(contentsOf: url.appendingPathComponent("v1.json"), encoding: .utf8)]).currentModel()
        #expect(renamed.versionName == "v2" && first.versionName == "v1")
    }

    @Test func reportsAMissingVersionFile() throws {
        let url = try temporaryDirectory(manifest: #"{"versions": ["v1"], "current": "v1"}"#)
        defer { try? FileManager.default.removeItem(at: url) }
        let directory = try ModelDirectory(url: url)
        #expect(throws: SchemaError.self) { try directory.currentModel() }
    }
}

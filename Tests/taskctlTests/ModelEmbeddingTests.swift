import Foundation
import Testing
@testable import taskctl

@Suite struct ModelEmbeddingTests {
    @Test func theEmbeddedModelIsModelsTasks() throws {
        let directory = TaskctlRunner.repository.appendingPathComponent("Models/Tasks")
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".json") {
            files[name] = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        #expect(TasksModelFiles.files == files, "ObjectStoreModelPlugin embeds Models/Tasks as it is")
        #expect(try App.modelDirectory().currentModel().versionName == "v4")
    }

    /// The plugin's tool, which the build runs: a model problem fails the build with the
    /// file, line and column, as a compiler error.
    @Test(.enabled(if: TaskctlRunner.binary != nil, "needs the built tools (swift build)"))
    func theModelToolReportsAProblemWhereItIs() throws {
        let tool = try #require(TaskctlRunner.binary).deletingLastPathComponent().appendingPathComponent("objectstore-model")
        let t = try TaskctlRunner()
        let models = t.directory.appendingPathComponent("Notes")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try Data(#"{"versions": ["v1", "v2"], "current": "v2"}"#.utf8).write(to: models.appendingPathComponent("manifest.json"))
        try Data(#"{"entities": [{"name": "Note", "attributes": [{"name": "body", "type": "string"}]}]}"#.utf8).write(to: models.appendingPathComponent("v1.json"))
        // v2 turns body into a number: neither a schema error nor inferable.
        try Data("{\"entities\": [{\"name\": \"Note\",\n  \"attributes\": [{\"name\": \"body\", \"type\": \"int32\"}, {\"name\": \"x\", \"type\": \"strin\"}]}]}".utf8)
            .write(to: models.appendingPathComponent("v2.json"))
        let output = t.directory.appendingPathComponent("NotesModelFiles.swift")
        let broken = try t.run(program: tool.path, ["embed", models.path, output.path])
        #expect(broken.status == 1 && broken.err.contains("/Notes/v2.json:2:75: error: $.entities[0].attributes[1].type: Note.x: unknown type 'strin'"), "\(broken.err)")
        #expect(!FileManager.default.fileExists(atPath: output.path))

        try Data("{\"entities\": [{\"name\": \"Note\",\n  \"attributes\": [{\"name\": \"body\", \"type\": \"int32\"}]}]}".utf8).write(to: models.appendingPathComponent("v2.json"))
        let unmappable = try t.run(program: tool.path, ["embed", models.path, output.path])
        #expect(unmappable.status == 1 && unmappable.err.contains("/Notes/v2.json:1:1: error: no mapping from v1 to v2 can be inferred"), "\(unmappable.err)")

        try Data(#"{"entities": [{"name": "Note", "attributes": [{"name": "body", "type": "string"}, {"name": "tab", "type": "string", "default": "a\tb\u0001"}]}]}"#.utf8)
            .write(to: models.appendingPathComponent("v2.json"))
        let fine = try t.run(program: tool.path, ["embed", models.path, output.path])
        #expect(fine.status == 0, "\(fine.err)")
        let source = try String(contentsOf: output, encoding: .utf8)
        #expect(source.contains("enum NotesModelFiles {") && source.contains(#""v2.json": "#) && source.contains(#"a\\tb\\u0001"#))
    }
}

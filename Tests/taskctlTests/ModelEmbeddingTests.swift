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
        #expect(TasksModelFiles.files == files, "run python3 Models/embed.py after changing Models/Tasks")
        #expect(try App.modelDirectory().currentModel().versionName == "v4")
    }
}

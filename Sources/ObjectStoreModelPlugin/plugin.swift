import Foundation
import PackagePlugin

/// Checks the package's model directories when a target builds and embeds their files in
/// the target: for every `Models/NAME/` of the package (a directory with a manifest.json),
/// `NAMEModelFiles.files` (file name to contents) for `ModelDirectory(location:files:)`.
/// A schema or mapping problem fails the build, pointing at the file, line and column.
///
/// ```swift
/// .executableTarget(name: "app", dependencies: ["ObjectStore"], plugins: [.plugin(name: "ObjectStoreModelPlugin", package: "ObjectStore")])
/// ```
@main
struct ObjectStoreModelPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let models = context.package.directoryURL.appendingPathComponent("Models")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: models.path)) ?? []).sorted().filter { name in
            FileManager.default.fileExists(atPath: models.appendingPathComponent(name).appendingPathComponent("manifest.json").path)
        }
        let tool = try context.tool(named: "objectstore-model")
        return names.map { name in
            let directory = models.appendingPathComponent(name)
            let inputs = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
                .filter { $0.hasSuffix(".json") }.map { directory.appendingPathComponent($0) }
            let output = context.pluginWorkDirectoryURL.appendingPathComponent("\(name)ModelFiles.swift")
            return .buildCommand(
                displayName: "Checking and embedding the \(name) model",
                executable: tool.url,
                arguments: ["embed", directory.path, output.path, name],
                inputFiles: inputs,
                outputFiles: [output])
        }
    }
}

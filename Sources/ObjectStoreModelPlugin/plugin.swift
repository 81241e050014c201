import Foundation
import PackagePlugin

/// Checks the package's model directories when a target builds and embeds their files in
/// the target: for every `Models/NAME/` of the package (a directory with a manifest.json),
/// `NAMEModelFiles.files` (file name to contents) for `ModelDirectory(location:files:)`,
/// and, when the target can import ObjectStore, `NAMEModel` with a typed class per entity.
/// A schema or mapping problem fails the build, pointing at the file, line and column.
///
/// ```swift
/// .executableTarget(name: "app", dependencies: ["ObjectStore"], plugins: [.plugin(name: "ObjectStoreModelPlugin", package: "ObjectStore")])
/// ```
///
/// SwiftPM asks a plugin for its commands only when it plans the build (when Package.swift
/// or a target's list of files changes), so a list of the model files made here would go
/// stale: a file added later would never be checked again, a file removed would fail the
/// build for a missing input. Instead the command's one input is a stamp file that the tool
/// rewrites each time it runs, so it runs on every build (about 30 ms: it reads the
/// directory as it is then) and rewrites the Swift file only when that changed, so a build
/// that changed nothing recompiles nothing.
@main
struct ObjectStoreModelPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let models = context.package.directoryURL.appendingPathComponent("Models")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: models.path)) ?? []).sorted().filter { name in
            FileManager.default.fileExists(atPath: models.appendingPathComponent(name).appendingPathComponent("manifest.json").path)
        }
        let tool = try context.tool(named: "objectstore-model")
        // The typed classes need ObjectStore; a target without it gets the files only.
        let importsObjectStore = target.recursiveTargetDependencies.contains { $0.name == "ObjectStore" }
        return try names.map { name in
            let directory = models.appendingPathComponent(name)
            let output = context.pluginWorkDirectoryURL.appendingPathComponent("\(name)ModelFiles.swift")
            let stamp = context.pluginWorkDirectoryURL.appendingPathComponent("\(name).stamp")
            if !FileManager.default.fileExists(atPath: stamp.path) {
                try Data().write(to: stamp)
            }
            return .buildCommand(
                displayName: "Checking and embedding the \(name) model",
                executable: tool.url,
                arguments: ["embed", directory.path, output.path, name, "--stamp", stamp.path] + (importsObjectStore ? [] : ["--files-only"]),
                inputFiles: [stamp],
                outputFiles: [output])
        }
    }
}

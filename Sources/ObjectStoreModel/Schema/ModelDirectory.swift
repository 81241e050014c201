import Foundation

/// A versioned model: a directory such as `Models/Tasks/` holding one schema file per version
/// and a `manifest.json` naming the versions in order and the current one (the role of
/// `.xcdatamodeld` and `.xccurrentversion`).
///
/// ```json
/// { "versions": ["v1", "v2"], "current": "v2" }
/// ```
///
/// Version `v1` lives in `v1.json`. Shipped versions never change: stores written with them
/// are recognised by their version hashes.
///
/// ```swift
/// let tasks = try ModelDirectory(url: URL(fileURLWithPath: "Models/Tasks"))
/// let model = try tasks.currentModel()
/// ```
public struct ModelDirectory: Sendable {
    /// The directory.
    public let url: URL
    /// Version names, oldest first.
    public let versionNames: [String]
    /// The version new stores are written with.
    public let currentVersionName: String

    /// Reads `manifest.json` of a model directory.
    public init(url: URL) throws(SchemaError) {
        self.url = url
        let manifestURL = url.appendingPathComponent("manifest.json")
        let file = manifestURL.path
        let data: Data
        do {
            data = try Data(contentsOf: manifestURL)
        } catch {
            throw SchemaError(file: file, diagnostics: [SchemaDiagnostic(path: "$", message: "cannot read the model manifest: \(error.localizedDescription)")])
        }
        let root: JSONNode
        do {
            root = try JSONParser.parse(Array(data))
        } catch {
            throw SchemaError(file: file, diagnostics: [SchemaDiagnostic(path: "$", location: error.location, message: "malformed JSON: \(error.message)")])
        }
        var log = DiagnosticLog()
        var versions: [String] = []
        var current: String?
        if let reader = SchemaObjectReader(root, path: "$", what: "a model manifest", known: ["versions", "current"], log: &log) {
            versions = reader.stringArray("versions", log: &log) ?? []
            current = reader.string("current", required: true, log: &log)
            if versions.isEmpty {
                log.add("$.versions", root.location, "the manifest must list at least one version in 'versions'")
            }
            if Set(versions).count != versions.count {
                log.add("$.versions", reader.location("versions"), "a version is listed twice")
            }
            if let name = current, !versions.contains(name) {
                log.add("$.current", reader.location("current"), "current version '\(name)' is not listed in 'versions'\(NameSuggestion.hint(for: name, in: versions))")
            }
            for name in versions where name.isEmpty || name.contains("/") || name.hasPrefix(".") {
                log.add("$.versions", reader.location("versions"), "'\(name)' is not a usable version name (it names the file \(name).json)")
            }
        }
        guard log.items.isEmpty, let current else { throw SchemaError(file: file, diagnostics: log.items) }
        self.versionNames = versions
        self.currentVersionName = current
    }

    /// The schema file of a version.
    public func schemaURL(forVersion name: String) -> URL {
        url.appendingPathComponent(name + ".json")
    }

    /// Loads one version.
    public func model(version name: String) throws(SchemaError) -> ManagedObjectModel {
        guard versionNames.contains(name) else {
            throw SchemaError(file: url.appendingPathComponent("manifest.json").path, diagnostics: [SchemaDiagnostic(path: "$.versions", message: "no version named '\(name)'")])
        }
        return try ManagedObjectModel(contentsOf: schemaURL(forVersion: name), versionName: name)
    }

    /// Loads the current version.
    public func currentModel() throws(SchemaError) -> ManagedObjectModel {
        try model(version: currentVersionName)
    }

    /// Loads every version, oldest first.
    public func allModels() throws(SchemaError) -> [ManagedObjectModel] {
        var models: [ManagedObjectModel] = []
        for name in versionNames { models.append(try model(version: name)) }
        return models
    }
}

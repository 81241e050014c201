import Foundation

/// A versioned model: a directory such as `Models/Tasks/` holding one schema file per
/// version, a `manifest.json` naming the versions in order and the current one (the role of
/// `.xcdatamodeld` and `.xccurrentversion`), and custom mapping files between consecutive
/// versions where inference is not enough.
///
/// ```json
/// { "versions": ["v1", "v2"], "current": "v2" }
/// ```
///
/// Version `v1` lives in `v1.json`; a custom mapping from `v1` to `v2` in
/// `v1-to-v2.mapping.json` (ObjectStore's Migration guide). Shipped versions never change: stores
/// written with them are recognised by their version hashes.
///
/// ```swift
/// let tasks = try ModelDirectory(url: URL(fileURLWithPath: "Models/Tasks"))
/// let model = try tasks.currentModel()
/// ```
public struct ModelDirectory: Sendable {
    /// Where the files came from, for messages.
    public let location: String
    /// Version names, oldest first.
    public let versionNames: [String]
    /// The version new stores are written with.
    public let currentVersionName: String
    /// The access of the code ObjectStoreModelPlugin generates for the model: `"internal"`
    /// (the default) or `"public"` (the manifest's `"access"`, for a model in a library
    /// target that an app uses: public files and types, open classes).
    public let generatedAccess: String
    /// File contents by file name.
    private let files: [String: String]

    /// Reads a model directory from disk.
    public init(url: URL) throws(SchemaError) {
        var files: [String: String] = [:]
        let names: [String]
        // The files' paths joined as text: a URL's appending and path per file were a fifth
        // of opening a store with its model read from the directory.
        let directory = url.path
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw SchemaError(file: directory, diagnostics: [SchemaDiagnostic(path: "$", message: "cannot read the model directory: \(error.localizedDescription)")])
        }
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        for name in names where name.hasSuffix(".json") {
            guard let data = FileManager.default.contents(atPath: prefix + name) else { continue }
            files[name] = String(decoding: data, as: UTF8.self)
        }
        try self.init(location: directory, files: files)
    }

    /// A model directory held in memory (for a program that embeds its model files): file
    /// names (`manifest.json`, `v1.json`, `v1-to-v2.mapping.json`) to contents.
    public init(location: String, files: [String: String]) throws(SchemaError) {
        self.location = location
        self.files = files
        let file = location + "/manifest.json"
        guard let manifest = files["manifest.json"] else {
            throw SchemaError(file: file, diagnostics: [SchemaDiagnostic(path: "$", message: "the model directory has no manifest.json")])
        }
        let root: JSONNode
        do {
            root = try JSONParser.parse(manifest)
        } catch {
            throw SchemaError(file: file, diagnostics: [SchemaDiagnostic(path: "$", location: error.location, message: "malformed JSON: \(error.message)")])
        }
        var log = DiagnosticLog()
        var versions: [String] = []
        var current: String?
        var access = "internal"
        if let reader = SchemaObjectReader(root, path: "$", what: "a model manifest", known: ["versions", "current", "access"], log: &log) {
            versions = reader.stringArray("versions", log: &log) ?? []
            current = reader.string("current", required: true, log: &log)
            if let given = reader.string("access", log: &log) {
                if ["internal", "public"].contains(given) {
                    access = given
                } else {
                    log.add("$.access", reader.location("access"), "'access' must be \"internal\" or \"public\", found '\(given)'")
                }
            }
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
        self.generatedAccess = access
    }

    /// Loads one version.
    public func model(version name: String) throws(SchemaError) -> ManagedObjectModel {
        guard versionNames.contains(name) else {
            throw SchemaError(file: location + "/manifest.json", diagnostics: [SchemaDiagnostic(path: "$.versions", message: "no version named '\(name)'")])
        }
        guard let text = files[name + ".json"] else {
            throw SchemaError(file: location + "/\(name).json", diagnostics: [SchemaDiagnostic(path: "$", message: "the schema file of version '\(name)' is missing")])
        }
        if let known = LoadedModels.shared.model(versionName: name, text: text) { return known }
        let model = try ManagedObjectModel(schema: text, file: location + "/\(name).json", versionName: name)
        LoadedModels.shared.keep(model, versionName: name, text: text)
        return model
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

    /// The text of the custom mapping file from one version to the next, if there is one.
    public func mappingText(from source: String, to destination: String) -> String? {
        files["\(source)-to-\(destination).mapping.json"]
    }

    /// The file name of the custom mapping between two versions.
    public func mappingFileName(from source: String, to destination: String) -> String {
        "\(source)-to-\(destination).mapping.json"
    }
}

/// The models ``ModelDirectory/model(version:)`` made most recently, by version name and
/// schema text: a process that opens stores of one model again (a test suite, an app with a
/// store per document, a server) parses and checks its schema once, not at every open. A
/// model is made from its text and version name alone, so a kept one is the model parsing
/// the same text again would make; a file that changed is parsed anew.
private final class LoadedModels: @unchecked Sendable {
    static let shared = LoadedModels()
    /// At most this many models are kept (the oldest go first).
    private static let capacity = 16
    private let lock = NSLock()
    private var kept: [(versionName: String, text: String, model: ManagedObjectModel)] = []

    func model(versionName: String, text: String) -> ManagedObjectModel? {
        lock.lock()
        defer { lock.unlock() }
        return kept.last { $0.versionName == versionName && $0.text.utf8.count == text.utf8.count && $0.text == text }?.model
    }

    func keep(_ model: ManagedObjectModel, versionName: String, text: String) {
        lock.lock()
        defer { lock.unlock() }
        if kept.count >= Self.capacity { kept.removeFirst() }
        kept.append((versionName, text, model))
    }
}

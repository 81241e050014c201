import Foundation

extension ManagedObjectModel {
    /// Loads and checks a schema file.
    ///
    /// - Throws: ``SchemaError`` listing every problem found, each with its JSON path.
    public init(contentsOf url: URL, versionName: String? = nil) throws(SchemaError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw SchemaError(file: url.path, diagnostics: [SchemaDiagnostic(path: "$", message: "cannot read the file: \(error.localizedDescription)")])
        }
        self = try SchemaLoader.load(bytes: Array(data), file: url.path, versionName: versionName)
    }

    /// Loads and checks schema text.
    ///
    /// - Parameters:
    ///   - schema: the schema's JSON text (ObjectStore's Schema guide).
    ///   - file: the name used in error messages.
    ///   - versionName: the model version's name (`v3`), recorded in stores written with it.
    public init(schema: String, file: String = "<schema>", versionName: String? = nil) throws(SchemaError) {
        self = try SchemaLoader.load(bytes: Array(schema.utf8), file: file, versionName: versionName)
    }
}

/// One problem in a schema file: where it is and what was expected.
public struct SchemaDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// The JSON path of the offending value, such as `$.entities[0].attributes[2].type`.
    public var path: String
    /// Line and column in the file, when known.
    public var location: SourceLocation?
    /// What is wrong, naming the entity and property where there is one.
    public var message: String

    /// A diagnostic at a JSON path.
    public init(path: String, location: SourceLocation? = nil, message: String) {
        self.path = path
        self.location = location
        self.message = message
    }

    public var description: String {
        if let location { return "\(location): \(path): \(message)" }
        return "\(path): \(message)"
    }
}

/// A schema file that could not be loaded, with every problem found in it.
///
/// ```swift
/// do {
///     _ = try ManagedObjectModel(schema: text)
/// } catch {
///     for problem in error.diagnostics { print(problem) }
/// }
/// ```
public struct SchemaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file (or the name given for schema text).
    public var file: String
    /// Every problem, in file order.
    public var diagnostics: [SchemaDiagnostic]

    /// An error for a file with its diagnostics.
    public init(file: String, diagnostics: [SchemaDiagnostic]) {
        self.file = file
        self.diagnostics = diagnostics
    }

    /// One line per problem, each starting with `file:line:column:`.
    public var description: String {
        diagnostics.map { diagnostic in
            if let location = diagnostic.location {
                return "\(file):\(location.line):\(location.column): \(diagnostic.path): \(diagnostic.message)"
            }
            return "\(file): \(diagnostic.path): \(diagnostic.message)"
        }.joined(separator: "\n")
    }
}

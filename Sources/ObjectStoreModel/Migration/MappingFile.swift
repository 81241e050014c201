/// Reads a custom mapping file (ObjectStore's Migration guide) and merges it with the inferred mapping:
/// what the file names, it decides; everything else is inferred.
///
/// ```json
/// { "entities": [
///     { "destination": "Project", "source": "Task", "distinctBy": "$source.projectName",
///       "attributes": { "name": "$source.projectName" } },
///     { "destination": "Task", "source": "Task",
///       "attributes": { "uuid": "uuid()", "title": "$source.text" },
///       "relationships": { "project": { "lookup": "Project", "key": "name", "value": "$source.projectName" } } }
/// ] }
/// ```
extension MappingModel {
    /// A mapping from a custom mapping file's text, completed by inference.
    ///
    /// - Throws: ``SchemaError`` for a malformed file (with JSON paths) or for what neither the
    ///   file nor inference covers.
    public static func custom(_ text: String, file: String, from source: ManagedObjectModel, to destination: ManagedObjectModel) throws(SchemaError) -> MappingModel {
        let root: JSONNode
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw SchemaError(file: file, diagnostics: [SchemaDiagnostic(path: "$", location: error.location, message: "malformed JSON: \(error.message)")])
        }
        var log = DiagnosticLog()
        var custom: [EntityMapping] = []
        if let top = SchemaObjectReader(root, path: "$", what: "a mapping file", known: ["entities"], log: &log) {
            for (i, node) in (top.array("entities", log: &log) ?? []).enumerated() {
                if let mapping = readEntityMapping(node, path: "$.entities[\(i)]", source: source, destination: destination, log: &log) {
                    custom.append(mapping)
                }
            }
        }
        guard log.items.isEmpty else { throw SchemaError(file: file, diagnostics: log.items) }

        let (inferred, problems) = inferParts(from: source, to: destination)
        var merged: [EntityMapping] = []
        var covered: Set<String> = []
        for var mapping in custom {
            if let base = inferred.first(where: { $0.destinationEntity == mapping.destinationEntity && $0.sourceEntity == mapping.sourceEntity }), mapping.distinctBy == nil {
                mapping.attributes = base.attributes.merging(mapping.attributes) { $1 }
                mapping.relationships = base.relationships.merging(mapping.relationships) { $1 }
            }
            covered.insert(mapping.destinationEntity)
            merged.append(mapping)
        }
        for mapping in inferred where !covered.contains(mapping.destinationEntity) {
            merged.append(mapping)
        }
        let remaining = problems.filter { problem in
            guard let mapping = merged.first(where: { $0.destinationEntity == problem.entity }) else { return true }
            guard let property = problem.property else { return !custom.contains { $0.destinationEntity == problem.entity } }
            return mapping.attributes[property] == nil && mapping.relationships[property] == nil
        }
        if !remaining.isEmpty {
            throw SchemaError(file: file, diagnostics: remaining.map {
                SchemaDiagnostic(path: "$", message: "\($0.message); the mapping file does not say how to map it")
            })
        }
        return MappingModel(source: source, destination: destination, entityMappings: merged)
    }

    private static func readEntityMapping(_ node: JSONNode, path: String, source: ManagedObjectModel, destination: ManagedObjectModel, log: inout DiagnosticLog) -> EntityMapping? {
        guard let reader = SchemaObjectReader(node, path: path, what: "an entity mapping", known: ["destination", "source", "distinctBy", "attributes", "relationships"], log: &log),
            let destinationName = reader.string("destination", required: true, log: &log),
            let sourceName = reader.string("source", required: true, log: &log)
        else { return nil }
        guard let destinationEntity = destination.entity(named: destinationName) else {
            log.add(reader.path("destination"), reader.location("destination"), "unknown destination entity '\(destinationName)'\(NameSuggestion.hint(for: destinationName, in: destination.entities.map(\.name)))")
            return nil
        }
        guard let sourceEntity = source.entity(named: sourceName) else {
            log.add(reader.path("source"), reader.location("source"), "unknown source entity '\(sourceName)'\(NameSuggestion.hint(for: sourceName, in: source.entities.map(\.name)))")
            return nil
        }
        let checker = PredicateTypeChecker(model: source, variables: ["source": .object(sourceEntity.name)])
        func expression(_ text: String, at path: String, location: SourceLocation) -> ObjectExpression? {
            do {
                let expression = try ObjectExpression(text)
                _ = try checker.type(of: expression, on: sourceEntity.name)
                return expression
            } catch let error as PredicateSyntaxError {
                log.add(path, location, "bad expression at column \(error.column): \(error.message)")
            } catch {
                log.add(path, location, "\(error)")
            }
            return nil
        }
        var mapping = EntityMapping(destinationEntity: destinationEntity.name, sourceEntity: sourceEntity.name)
        if let text = reader.string("distinctBy", log: &log) {
            mapping.distinctBy = expression(text, at: reader.path("distinctBy"), location: reader.location("distinctBy") ?? node.location)
        }
        for member in reader.value("attributes")?.members ?? [] {
            let memberPath = SchemaObjectReader.join(reader.path("attributes"), member.key)
            guard let attribute = destinationEntity.attribute(named: member.key), attribute.isStored else {
                log.add(memberPath, member.keyLocation, "\(destinationEntity.name) has no stored attribute '\(member.key)'\(NameSuggestion.hint(for: member.key, in: destinationEntity.attributes.map(\.name)))")
                continue
            }
            guard let text = member.value.stringValue else {
                log.add(memberPath, member.value.location, "an attribute mapping is an expression string such as \"$source.text\"")
                continue
            }
            if let e = expression(text, at: memberPath, location: member.value.location) { mapping.attributes[member.key] = .expression(e) }
        }
        for member in reader.value("relationships")?.members ?? [] {
            let memberPath = SchemaObjectReader.join(reader.path("relationships"), member.key)
            guard destinationEntity.relationship(named: member.key) != nil else {
                log.add(memberPath, member.keyLocation, "\(destinationEntity.name) has no relationship '\(member.key)'\(NameSuggestion.hint(for: member.key, in: destinationEntity.relationships.map(\.name)))")
                continue
            }
            guard let spec = SchemaObjectReader(member.value, path: memberPath, what: "a relationship mapping", known: ["copy", "lookup", "key", "value"], log: &log) else { continue }
            if let copied = spec.string("copy", log: &log) {
                guard sourceEntity.relationship(named: copied) != nil else {
                    log.add(spec.path("copy"), spec.location("copy"), "\(sourceEntity.name) has no relationship '\(copied)'")
                    continue
                }
                mapping.relationships[member.key] = .copy(copied)
            } else if let lookup = spec.string("lookup", log: &log), let key = spec.string("key", required: true, log: &log),
                let valueText = spec.string("value", required: true, log: &log)
            {
                guard let target = destination.entity(named: lookup), target.attribute(named: key) != nil else {
                    log.add(spec.path("lookup"), spec.location("lookup"), "lookup needs a destination entity and one of its attributes; '\(lookup).\(key)' is neither")
                    continue
                }
                if let e = expression(valueText, at: spec.path("value"), location: spec.location("value") ?? member.value.location) {
                    mapping.relationships[member.key] = .lookup(entity: lookup, key: key, value: e)
                }
            } else {
                log.add(memberPath, member.value.location, "a relationship mapping needs \"copy\" or \"lookup\"/\"key\"/\"value\"")
            }
        }
        return mapping
    }
}

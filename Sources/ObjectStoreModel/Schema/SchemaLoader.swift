/// Reads a schema file into a ``ManagedObjectModel`` and checks it, the role Xcode's model
/// compiler plays for Core Data. Every problem is logged with its JSON path; the load fails
/// at the end with all of them.
enum SchemaLoader {
    static let topLevelKeys = ["entities", "fetchRequests"]
    static let entityKeys = [
        "name", "parent", "abstract", "userInfo", "renamingIdentifier", "versionHashModifier",
        "uniquenessConstraints", "indexes", "attributes", "relationships", "fetchedProperties",
    ]
    static let attributeKeys = [
        "name", "type", "optional", "transient", "default", "min", "max", "minLength", "maxLength", "pattern",
        "allowedValues", "derived", "renamingIdentifier", "versionHashModifier", "userInfo", "collation",
        "preserveValueOnDeletion", "transformer", "swiftType", "enum",
    ]
    static let relationshipKeys = [
        "name", "destination", "inverse", "toMany", "ordered", "optional", "minCount", "maxCount", "deleteRule",
        "transient", "derivedFromInverse", "renamingIdentifier", "versionHashModifier", "userInfo",
    ]
    static let fetchedPropertyKeys = ["name", "destination", "predicate", "userInfo"]
    static let fetchRequestKeys = ["name", "entity", "predicate", "sort"]
    static let sortKeys = ["key", "ascending"]
    static let indexKeys = ["name", "properties"]

    /// The most ancestors an entity may have. Core Data sets none; models use a handful, and
    /// a bound keeps a hostile schema (or a JSON store carrying one) from making every later
    /// step pay for thousands of levels.
    static let maxInheritanceDepth = 100

    /// An entity as read, before it is checked against the others.
    struct RawEntity {
        var name: String
        var path: String
        var location: SourceLocation
        var parent: (name: String, path: String, location: SourceLocation?)?
        var isAbstract = false
        var userInfo: [String: String] = [:]
        var renamingIdentifier: String?
        var versionHashModifier: String?
        var attributes: [(AttributeDescription, path: String, location: SourceLocation)] = []
        var relationships: [(RelationshipDescription, path: String, location: SourceLocation)] = []
        var fetchedProperties: [(FetchedPropertyDescription, path: String, location: SourceLocation)] = []
        var uniquenessConstraints: [(names: [String], path: String, location: SourceLocation)] = []
        var indexes: [(IndexDescription, path: String, location: SourceLocation)] = []
        /// Names of properties that did not read (a bad type, say), so a duplicate of one is
        /// still reported along with the property's own problem.
        var unreadProperties: [(name: String, path: String, location: SourceLocation)] = []
    }

    static func load(bytes: [UInt8], file: String, versionName: String?) throws(SchemaError) -> ManagedObjectModel {
        let root: JSONNode
        do {
            root = try JSONParser.parse(bytes)
        } catch {
            throw SchemaError(file: file, diagnostics: [SchemaDiagnostic(path: "$", location: error.location, message: "malformed JSON: \(error.message)")])
        }
        var log = DiagnosticLog()
        guard let top = SchemaObjectReader(root, path: "$", what: "a schema", known: topLevelKeys, log: &log) else {
            throw SchemaError(file: file, diagnostics: log.items)
        }
        var raws: [RawEntity] = []
        if let entityNodes = top.array("entities", log: &log) {
            for (i, node) in entityNodes.enumerated() {
                if let raw = readEntity(node, path: "$.entities[\(i)]", log: &log) { raws.append(raw) }
            }
        } else if !top.has("entities") {
            log.add("$.entities", root.location, "missing required key 'entities'")
        }
        var templates: [(FetchRequestTemplate, path: String, location: SourceLocation)] = []
        for (i, node) in (top.array("fetchRequests", log: &log) ?? []).enumerated() {
            if let template = readFetchRequest(node, path: "$.fetchRequests[\(i)]", log: &log) {
                templates.append((template, "$.fetchRequests[\(i)]", node.location))
            }
        }

        let entities = check(raws, log: &log)
        checkTemplates(templates, entities: entities, log: &log)
        // Each problem at the value it is about (a property's `inverse`, `name`, `predicate`),
        // not at the property's `{`.
        let places = ValuePlaces(root)
        for index in log.items.indices {
            if let place = places[log.items[index].path] { log.items[index].location = place }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let model = ManagedObjectModel(versionName: versionName, entities: Array(entities.values), fetchRequestTemplates: templates.map(\.0), schemaText: text)
        // Predicates and derivations are checked against the entities that were built, also
        // when others have problems (every problem at once); a problem that names something
        // which did not build is left out, as the missing thing is reported already.
        var expressions = DiagnosticLog()
        checkExpressions(raws, templates: templates, model: model, places: places, log: &expressions)
        if log.items.isEmpty {
            log.items = expressions.items
        } else {
            // An entity that did not build, or a property that did not read, is reported
            // already: what an expression says of it is left out.
            let unbuilt = Set(raws.map(\.name)).subtracting(entities.keys)
            let unread = raws.flatMap { raw in raw.unreadProperties.map { "\(raw.name) has no property '\($0.name)'" } }
            log.items += expressions.items.filter { item in
                !unbuilt.contains { item.message.contains("'\($0)'") || item.message.contains("\($0) has no property") } && !unread.contains { item.message.contains($0) }
            }
        }
        if !log.items.isEmpty {
            throw SchemaError(file: file, diagnostics: log.items)
        }
        return model
    }

    /// The location of every value of the schema by its JSON path, as the loader writes paths
    /// (`$.entities[0].relationships[1].inverse`); of a key given twice, the last (the one
    /// read). Found when a problem first asks: a schema without problems is not walked.
    final class ValuePlaces {
        private let root: JSONNode
        private lazy var places = SchemaLoader.valueLocations(root)

        init(_ root: JSONNode) {
            self.root = root
        }

        subscript(path: String) -> SourceLocation? { places[path] }
    }

    static func valueLocations(_ root: JSONNode) -> [String: SourceLocation] {
        var places: [String: SourceLocation] = [:]
        var stack: [(JSONNode, String)] = [(root, "$")]
        while let (node, path) = stack.popLast() {
            places[path] = node.location
            if let members = node.members {
                for member in members { stack.append((member.value, SchemaObjectReader.join(path, member.key))) }
            } else if let elements = node.elements {
                for (i, element) in elements.enumerated() { stack.append((element, "\(path)[\(i)]")) }
            }
        }
        return places
    }

    /// Where column `column` of a predicate's text is in the file: its string's place moved
    /// past the quote, when the text is written as is (ASCII, nothing escaped, one line);
    /// else the string's place.
    static func place(ofColumn column: Int, in text: String, at string: SourceLocation?) -> SourceLocation? {
        guard let string else { return nil }
        guard text.unicodeScalars.allSatisfy({ $0.isASCII && $0 != "\"" && $0 != "\\" && $0.value >= 0x20 }) else { return string }
        return SourceLocation(line: string.line, column: string.column + column)
    }

    /// Derived attributes that read each other in a cycle (`a` reads `b`, `b` reads `a`, also
    /// through relationships) would recurse forever when read: refused, naming the cycle.
    static func checkDerivationCycles(_ raws: [RawEntity], model: ManagedObjectModel, log: inout DiagnosticLog) {
        // A node is "Entity.attribute" (names are identifiers, so '.' sorts them as the pair
        // would); a struct key of its own cost a scan of the binary's conformances at start.
        typealias Node = String
        var edges: [Node: [Node]] = [:]
        var places: [Node: (path: String, location: SourceLocation)] = [:]
        for raw in raws {
            for (attribute, path, location) in raw.attributes {
                guard let text = attribute.derivation, let derivation = try? Derivation(text) else { continue }
                let node = raw.name + "." + attribute.name
                places[node] = (path + ".derived", location)
                for keyPath in derivation.keyPathsFromObject {
                    var entity = model.entity(named: raw.name)
                    for component in keyPath {
                        guard let current = entity else { break }
                        if let relationship = current.relationship(named: component) {
                            entity = model.entity(named: relationship.destinationEntityName)
                            continue
                        }
                        if let target = current.attribute(named: component), target.isDerived {
                            edges[node, default: []].append(current.name + "." + target.name)
                        }
                        break
                    }
                }
            }
        }
        // Depth-first search with an explicit stack; a node on the current path seen again is a cycle.
        var state: [Node: Int] = [:]  // 1: on the path, 2: done
        var reported: Set<Node> = []
        for start in edges.keys.sorted() where state[start] == nil {
            var stack: [(node: Node, next: Int)] = [(start, 0)]
            state[start] = 1
            while let (node, next) = stack.last {
                let targets = edges[node] ?? []
                guard next < targets.count else {
                    state[node] = 2
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].next += 1
                let target = targets[next]
                switch state[target] {
                case nil:
                    state[target] = 1
                    stack.append((target, 0))
                case 1:
                    let cycle = stack.map(\.node).drop { $0 != target } + [target]
                    if reported.insert(target).inserted, let place = places[target] {
                        let names = cycle.joined(separator: " -> ")
                        log.add(place.path, place.location, "derived attributes refer to each other in a cycle: \(names)")
                    }
                default:
                    break
                }
            }
        }
    }

    static func checkExpressions(_ raws: [RawEntity], templates: [(FetchRequestTemplate, path: String, location: SourceLocation)], model: ManagedObjectModel,
                                         places: ValuePlaces, log: inout DiagnosticLog) {
        let checker = PredicateTypeChecker(model: model)
        checkDerivationCycles(raws, model: model, log: &log)
        for raw in raws {
            for (attribute, path, location) in raw.attributes {
                guard let derivation = attribute.derivation else { continue }
                let where_ = "\(raw.name).\(attribute.name)"
                /// Where a problem of the derivation is: at its string.
                func at() -> SourceLocation { places[path + ".derived"] ?? location }
                do {
                    let type: PredicateType
                    switch try Derivation(derivation) {
                    case .predicate(let predicate):
                        try checker.check(predicate, on: raw.name)
                        type = .bool
                    case .expression(let expression):
                        type = try checker.type(of: expression, on: raw.name)
                    }
                    let expected = PredicateType(attribute.type)
                    if ![expected, .unknown, .null].contains(type) && !(expected == .number && type == .bool) {
                        log.add(path + ".derived", at(), "\(where_): the derivation gives \(type), but the attribute is \(attribute.type.rawValue)")
                    }
                } catch let error as PredicateSyntaxError {
                    log.add(path + ".derived", place(ofColumn: error.column, in: derivation, at: at()), "\(where_): bad derivation at column \(error.column): \(error.message)")
                } catch {
                    log.add(path + ".derived", at(), "\(where_): \(error)")
                }
            }
            for (fetched, path, location) in raw.fetchedProperties {
                var sourceChecker = checker
                sourceChecker.variables["FETCH_SOURCE"] = .object(raw.name)
                check(fetched.predicate, on: fetched.destinationEntityName, checker: sourceChecker, what: "\(raw.name).\(fetched.name)", path: path + ".predicate",
                      location: location, places: places, log: &log)
            }
        }
        for (template, path, location) in templates {
            check(template.predicate, on: template.entityName, checker: checker, what: "fetch request \(template.name)", path: path + ".predicate",
                  location: location, places: places, log: &log)
        }
    }

    /// Checks a predicate's text, a problem placed at its string (`places[path]`, else `location`).
    static func check(_ text: String, on entity: String, checker: PredicateTypeChecker, what: String, path: String, location: SourceLocation,
                              places: ValuePlaces, log: inout DiagnosticLog) {
        do {
            try checker.check(try ObjectPredicate(text), on: entity)
        } catch let error as PredicateSyntaxError {
            log.add(path, place(ofColumn: error.column, in: text, at: places[path] ?? location), "\(what): bad predicate at column \(error.column): \(error.message)")
        } catch {
            log.add(path, places[path] ?? location, "\(what): \(error)")
        }
    }

    // MARK: Reading

    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCIIWordCharacter, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCIIWordCharacter }
    }

    static func readName(_ reader: SchemaObjectReader, what: String, log: inout DiagnosticLog) -> String? {
        guard let name = reader.string("name", required: true, log: &log) else { return nil }
        guard isIdentifier(name) else {
            log.add(reader.path("name"), reader.location("name"), "\(what) name '\(name)' must start with a letter or '_' and contain only letters, digits and '_'")
            return nil
        }
        return name
    }

    static func readEntity(_ node: JSONNode, path: String, log: inout DiagnosticLog) -> RawEntity? {
        guard let reader = SchemaObjectReader(node, path: path, what: "an entity", known: entityKeys, log: &log) else { return nil }
        guard let name = readName(reader, what: "entity", log: &log) else { return nil }
        var raw = RawEntity(name: name, path: path, location: node.location)
        if let parent = reader.string("parent", log: &log) {
            raw.parent = (parent, reader.path("parent"), reader.location("parent"))
        }
        raw.isAbstract = reader.bool("abstract", log: &log) ?? false
        raw.userInfo = reader.stringMap("userInfo", log: &log)
        raw.renamingIdentifier = reader.string("renamingIdentifier", log: &log)
        raw.versionHashModifier = reader.string("versionHashModifier", log: &log)
        for (i, element) in (reader.array("attributes", log: &log) ?? []).enumerated() {
            let elementPath = "\(reader.path("attributes"))[\(i)]"
            if let attribute = readAttribute(element, path: elementPath, entity: name, log: &log) {
                raw.attributes.append((attribute, elementPath, element.location))
            } else if let propertyName = element["name"]?.stringValue {
                raw.unreadProperties.append((propertyName, elementPath, element.location))
            }
        }
        for (i, element) in (reader.array("relationships", log: &log) ?? []).enumerated() {
            let elementPath = "\(reader.path("relationships"))[\(i)]"
            if let relationship = readRelationship(element, path: elementPath, entity: name, log: &log) {
                raw.relationships.append((relationship, elementPath, element.location))
            } else if let propertyName = element["name"]?.stringValue {
                raw.unreadProperties.append((propertyName, elementPath, element.location))
            }
        }
        for (i, element) in (reader.array("fetchedProperties", log: &log) ?? []).enumerated() {
            let elementPath = "\(reader.path("fetchedProperties"))[\(i)]"
            guard let fp = SchemaObjectReader(element, path: elementPath, what: "a fetched property", known: fetchedPropertyKeys, log: &log),
                let fpName = readName(fp, what: "fetched property", log: &log)
            else { continue }
            let destination = fp.string("destination", required: true, log: &log)
            let predicate = fp.string("predicate", required: true, log: &log)
            if let predicate, predicate.allSatisfy(\.isWhitespace) {
                log.add(fp.path("predicate"), fp.location("predicate"), "\(name).\(fpName): the predicate is empty")
            }
            guard let destination, let predicate else { continue }
            var property = FetchedPropertyDescription(name: fpName, destination: destination, predicate: predicate)
            property.userInfo = fp.stringMap("userInfo", log: &log)
            raw.fetchedProperties.append((property, elementPath, element.location))
        }
        for (i, element) in (reader.array("uniquenessConstraints", log: &log) ?? []).enumerated() {
            let elementPath = "\(reader.path("uniquenessConstraints"))[\(i)]"
            guard let names = element.elements?.compactMap(\.stringValue), names.count == element.elements?.count, !names.isEmpty else {
                log.add(elementPath, element.location, "a uniqueness constraint must be a non-empty array of attribute names")
                continue
            }
            raw.uniquenessConstraints.append((names, elementPath, element.location))
        }
        for (i, element) in (reader.array("indexes", log: &log) ?? []).enumerated() {
            let elementPath = "\(reader.path("indexes"))[\(i)]"
            guard let index = SchemaObjectReader(element, path: elementPath, what: "an index", known: indexKeys, log: &log) else { continue }
            guard let properties = index.stringArray("properties", log: &log), !properties.isEmpty else {
                log.add(index.path("properties"), element.location, "an index needs a non-empty 'properties' array of property names")
                continue
            }
            let indexName = index.string("name", log: &log) ?? ([name] + properties).joined(separator: "_")
            raw.indexes.append((IndexDescription(name: indexName, propertyNames: properties), elementPath, element.location))
        }
        return raw
    }

    static func readAttribute(_ node: JSONNode, path: String, entity: String, log: inout DiagnosticLog) -> AttributeDescription? {
        guard let reader = SchemaObjectReader(node, path: path, what: "an attribute", known: attributeKeys, log: &log),
            let name = readName(reader, what: "attribute", log: &log)
        else { return nil }
        let qualified = "\(entity).\(name)"
        guard let typeName = reader.string("type", required: true, log: &log) else { return nil }
        // A transformable attribute keeps bytes: its values are the transformer's.
        guard let type = typeName == "transformable" ? .binary : AttributeType(rawValue: typeName) else {
            let names = AttributeType.allCases.map(\.rawValue) + ["transformable"]
            log.add(reader.path("type"), reader.location("type"), "\(qualified): unknown type '\(typeName)'\(NameSuggestion.hint(for: typeName, in: names)); expected one of \(names.joined(separator: ", "))")
            return nil
        }
        var attribute = AttributeDescription(name: name, type: type)
        readSwiftTypes(reader, typeName: typeName, qualified: qualified, into: &attribute, log: &log)
        attribute.isOptional = reader.bool("optional", log: &log) ?? true
        attribute.isTransient = reader.bool("transient", log: &log) ?? false
        attribute.preservesValueOnDeletion = reader.bool("preserveValueOnDeletion", log: &log) ?? false
        attribute.renamingIdentifier = reader.string("renamingIdentifier", log: &log)
        attribute.versionHashModifier = reader.string("versionHashModifier", log: &log)
        attribute.userInfo = reader.stringMap("userInfo", log: &log)
        if let derivation = reader.string("derived", log: &log) {
            if derivation.allSatisfy(\.isWhitespace) {
                log.add(reader.path("derived"), reader.location("derived"), "\(qualified): the derivation expression is empty")
            }
            if attribute.isTransient {
                log.add(reader.path("derived"), reader.location("derived"), "\(qualified): a derived attribute cannot also be transient")
            }
            if reader.has("default") {
                log.add(reader.path("default"), reader.location("default"), "\(qualified): a derived attribute cannot have a default value")
            }
            attribute.derivation = derivation
        }

        // Validation rules: each must suit the type.
        var rules = ValidationRules()
        func decode(_ key: String) -> Value? {
            guard let valueNode = reader.value(key) else { return nil }
            switch SchemaValueDecoder.decode(valueNode, as: type) {
            case .value(let value): return value
            case .problem(let message):
                log.add(reader.path(key), valueNode.location, "\(qualified): '\(key)': \(message)")
                return nil
            }
        }
        for key in ["min", "max"] where reader.has(key) && !type.isOrdered {
            log.add(reader.path(key), reader.location(key), "\(qualified): '\(key)' applies to numbers and dates, not to type \(type.rawValue)")
        }
        if type.isOrdered {
            rules.minimum = decode("min")
            rules.maximum = decode("max")
        }
        for key in ["minLength", "maxLength"] where reader.has(key) && !type.hasLength {
            log.add(reader.path(key), reader.location(key), "\(qualified): '\(key)' applies to strings and binary, not to type \(type.rawValue)")
        }
        if type.hasLength {
            rules.minLength = reader.count("minLength", log: &log)
            rules.maxLength = reader.count("maxLength", log: &log)
        }
        if let pattern = reader.string("pattern", log: &log) {
            if type != .string {
                log.add(reader.path("pattern"), reader.location("pattern"), "\(qualified): 'pattern' applies to strings, not to type \(type.rawValue)")
            } else if !RegularExpressionCheck.isValid(pattern) {
                log.add(reader.path("pattern"), reader.location("pattern"), "\(qualified): '\(pattern)' is not a valid regular expression")
            } else {
                rules.pattern = pattern
            }
        }
        if let allowed = reader.array("allowedValues", log: &log) {
            var values: [Value] = []
            for (i, element) in allowed.enumerated() {
                switch SchemaValueDecoder.decode(element, as: type) {
                case .value(let value): values.append(value)
                case .problem(let message): log.add("\(reader.path("allowedValues"))[\(i)]", element.location, "\(qualified): \(message)")
                }
            }
            if allowed.isEmpty {
                log.add(reader.path("allowedValues"), reader.location("allowedValues"), "\(qualified): 'allowedValues' is empty, so no value could ever be saved")
            }
            rules.allowedValues = values
        }
        if let minimum = rules.minimum, let maximum = rules.maximum, minimum.compare(to: maximum) == .orderedDescending {
            log.add(reader.path("min"), reader.location("min"), "\(qualified): min \(minimum) is greater than max \(maximum)")
        }
        if let minLength = rules.minLength, let maxLength = rules.maxLength, minLength > maxLength {
            log.add(reader.path("minLength"), reader.location("minLength"), "\(qualified): minLength \(minLength) is greater than maxLength \(maxLength)")
        }
        if let node = reader.value("enum") {
            attribute.enumeration = readEnumeration(node, reader: reader, type: type, qualified: qualified, rules: &rules, log: &log)
            if attribute.enumeration != nil, attribute.swiftTypeName != nil {
                log.add(reader.path("enum"), reader.location("enum"), "\(qualified): give 'enum' (an enum the plugin makes) or 'swiftType' (a type of yours), not both")
            }
        }
        attribute.validation = rules
        if let collation = reader.string("collation", log: &log) {
            if type != .string {
                log.add(reader.path("collation"), reader.location("collation"), "\(qualified): 'collation' applies to strings, not to type \(type.rawValue)")
            } else if collation == "caseInsensitive" {
                attribute.isCaseInsensitive = true
            } else if collation != "exact" {
                log.add(reader.path("collation"), reader.location("collation"), "\(qualified): collation '\(collation)' is not 'exact' or 'caseInsensitive'")
            }
        }

        if let defaultNode = reader.value("default"), attribute.derivation == nil {
            switch SchemaValueDecoder.decode(defaultNode, as: type) {
            case .value(let value):
                attribute.defaultValue = value
                for failure in rules.failures(for: value) {
                    log.add(reader.path("default"), defaultNode.location, "\(qualified): the default value breaks its own '\(failure.rule.rawValue)' rule: \(failure.message)")
                }
            case .problem(let message):
                log.add(reader.path("default"), defaultNode.location, "\(qualified): bad default value: \(message)")
            }
        }
        return attribute
    }

    static func readRelationship(_ node: JSONNode, path: String, entity: String, log: inout DiagnosticLog) -> RelationshipDescription? {
        guard let reader = SchemaObjectReader(node, path: path, what: "a relationship", known: relationshipKeys, log: &log),
            let name = readName(reader, what: "relationship", log: &log)
        else { return nil }
        let qualified = "\(entity).\(name)"
        guard let destination = reader.string("destination", required: true, log: &log) else { return nil }
        var relationship = RelationshipDescription(name: name, destination: destination)
        relationship.inverseName = reader.string("inverse", log: &log)
        relationship.isToMany = reader.bool("toMany", log: &log) ?? false
        relationship.isOrdered = reader.bool("ordered", log: &log) ?? false
        relationship.isOptional = reader.bool("optional", log: &log) ?? true
        relationship.isTransient = reader.bool("transient", log: &log) ?? false
        relationship.isDerivedFromInverse = reader.bool("derivedFromInverse", log: &log) ?? false
        relationship.minCount = reader.count("minCount", log: &log)
        relationship.maxCount = reader.count("maxCount", log: &log)
        relationship.renamingIdentifier = reader.string("renamingIdentifier", log: &log)
        relationship.versionHashModifier = reader.string("versionHashModifier", log: &log)
        relationship.userInfo = reader.stringMap("userInfo", log: &log)
        if let ruleName = reader.string("deleteRule", log: &log) {
            if let rule = RelationshipDescription.DeleteRule(rawValue: ruleName) {
                relationship.deleteRule = rule
            } else {
                let names = RelationshipDescription.DeleteRule.allCases.map(\.rawValue)
                log.add(reader.path("deleteRule"), reader.location("deleteRule"), "\(qualified): unknown delete rule '\(ruleName)'\(NameSuggestion.hint(for: ruleName, in: names)); expected one of \(names.joined(separator: ", "))")
            }
        }
        if !relationship.isToMany {
            for key in ["ordered", "minCount", "maxCount", "derivedFromInverse"] where reader.has(key) {
                log.add(reader.path(key), reader.location(key), "\(qualified): '\(key)' applies to to-many relationships only (set \"toMany\": true)")
            }
        }
        if let minCount = relationship.minCount, let maxCount = relationship.maxCount, minCount > maxCount {
            log.add(reader.path("minCount"), reader.location("minCount"), "\(qualified): minCount \(minCount) is greater than maxCount \(maxCount)")
        }
        if relationship.isDerivedFromInverse && relationship.isToMany {
            let key = "derivedFromInverse"
            if relationship.inverseName == nil {
                log.add(reader.path(key), reader.location(key), "\(qualified): 'derivedFromInverse' needs an inverse to read the objects from (set \"inverse\")")
            } else if relationship.isOrdered {
                log.add(reader.path(key), reader.location(key), "\(qualified): an ordered relationship cannot be derived from its inverse, which keeps no order")
            } else if relationship.isTransient {
                log.add(reader.path(key), reader.location(key), "\(qualified): a transient relationship is not stored at all; 'derivedFromInverse' applies to stored ones")
            }
        }
        return relationship
    }

    static func readFetchRequest(_ node: JSONNode, path: String, log: inout DiagnosticLog) -> FetchRequestTemplate? {
        guard let reader = SchemaObjectReader(node, path: path, what: "a fetch request", known: fetchRequestKeys, log: &log),
            let name = readName(reader, what: "fetch request", log: &log)
        else { return nil }
        let entity = reader.string("entity", required: true, log: &log)
        let predicate = reader.string("predicate", log: &log) ?? "TRUEPREDICATE"
        var sortDescriptors: [FetchRequestTemplate.SortKey] = []
        for (i, element) in (reader.array("sort", log: &log) ?? []).enumerated() {
            guard let sort = SchemaObjectReader(element, path: "\(reader.path("sort"))[\(i)]", what: "a sort key", known: Self.sortKeys, log: &log),
                let key = sort.string("key", required: true, log: &log)
            else { continue }
            sortDescriptors.append(FetchRequestTemplate.SortKey(keyPath: key, ascending: sort.bool("ascending", log: &log) ?? true))
        }
        guard let entity else { return nil }
        var template = FetchRequestTemplate(name: name, entityName: entity, predicate: predicate)
        template.sortDescriptors = sortDescriptors
        return template
    }
}

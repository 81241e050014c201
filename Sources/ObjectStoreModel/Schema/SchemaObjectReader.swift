/// Collects the diagnostics of one file while it is read.
struct DiagnosticLog {
    var items: [SchemaDiagnostic] = []

    mutating func add(_ path: String, _ location: SourceLocation?, _ message: String) {
        items.append(SchemaDiagnostic(path: path, location: location, message: message))
    }
}

/// Reads one JSON object of a schema-like file: checks its keys against the known ones and
/// the type of each value, logging a located diagnostic for each problem and carrying on, so
/// that one load reports every problem.
struct SchemaObjectReader {
    let node: JSONNode
    let path: String
    private var values = Members()

    /// The object's known keys and their values, in the file's order: a schema object has
    /// a few, found by comparing keys (a dictionary made and hashed per object was most of
    /// reading one, at every model load). At most one entry per known key.
    private struct Members {
        private var keys: [String] = []
        private var nodes: [JSONNode] = []

        subscript(key: String) -> JSONNode? { keys.firstIndex(of: key).map { nodes[$0] } }

        mutating func add(_ key: String, _ node: JSONNode) {
            keys.append(key)
            nodes.append(node)
        }
    }

    /// Returns `nil` (after logging) when `node` is not an object.
    init?(_ node: JSONNode, path: String, what: String, known: [String], log: inout DiagnosticLog) {
        guard let members = node.members else {
            log.add(path, node.location, "expected \(what) (a JSON object), found \(node.kindDescription)")
            return nil
        }
        self.node = node
        self.path = path
        for member in members {
            if values[member.key] != nil {
                log.add(Self.join(path, member.key), member.keyLocation, "duplicate key '\(member.key)'")
                continue
            }
            if !known.contains(member.key) && member.key != "comment" {
                log.add(
                    Self.join(path, member.key), member.keyLocation,
                    "unknown key '\(member.key)' in \(what)\(NameSuggestion.hint(for: member.key, in: known)); known keys: \(known.joined(separator: ", "))")
                continue
            }
            values.add(member.key, member.value)
        }
    }

    static func join(_ path: String, _ key: String) -> String {
        let isIdentifier = !key.isEmpty && key.unicodeScalars.allSatisfy { $0.isASCIIWordCharacter }
        return isIdentifier ? "\(path).\(key)" : "\(path)[\"\(key)\"]"
    }

    func path(_ key: String) -> String { Self.join(path, key) }

    func value(_ key: String) -> JSONNode? { values[key] }

    func has(_ key: String) -> Bool { values[key] != nil }

    func string(_ key: String, required: Bool = false, log: inout DiagnosticLog) -> String? {
        guard let node = values[key] else {
            if required { log.add(path(key), self.node.location, "missing required key '\(key)'") }
            return nil
        }
        guard let text = node.stringValue else {
            log.add(path(key), node.location, "'\(key)' must be a string, found \(node.kindDescription)")
            return nil
        }
        return text
    }

    func bool(_ key: String, log: inout DiagnosticLog) -> Bool? {
        guard let node = values[key] else { return nil }
        guard let flag = node.boolValue else {
            log.add(path(key), node.location, "'\(key)' must be true or false, found \(node.kindDescription)")
            return nil
        }
        return flag
    }

    /// A non-negative integer.
    func count(_ key: String, log: inout DiagnosticLog) -> Int? {
        guard let node = values[key] else { return nil }
        guard let text = node.numberText, let number = Int(text), number >= 0 else {
            log.add(path(key), node.location, "'\(key)' must be a non-negative integer")
            return nil
        }
        return number
    }

    func array(_ key: String, log: inout DiagnosticLog) -> [JSONNode]? {
        guard let node = values[key] else { return nil }
        guard let elements = node.elements else {
            log.add(path(key), node.location, "'\(key)' must be an array, found \(node.kindDescription)")
            return nil
        }
        return elements
    }

    func stringArray(_ key: String, log: inout DiagnosticLog) -> [String]? {
        guard let elements = array(key, log: &log) else { return nil }
        var result: [String] = []
        for (i, element) in elements.enumerated() {
            guard let text = element.stringValue else {
                log.add("\(path(key))[\(i)]", element.location, "expected a string, found \(element.kindDescription)")
                return nil
            }
            result.append(text)
        }
        return result
    }

    func stringMap(_ key: String, log: inout DiagnosticLog) -> [String: String] {
        guard let node = values[key] else { return [:] }
        guard let members = node.members else {
            log.add(path(key), node.location, "'\(key)' must be an object of strings, found \(node.kindDescription)")
            return [:]
        }
        var result: [String: String] = [:]
        for member in members {
            guard let text = member.value.stringValue else {
                log.add(Self.join(path(key), member.key), member.value.location, "userInfo values must be strings, found \(member.value.kindDescription)")
                continue
            }
            result[member.key] = text
        }
        return result
    }

    func location(_ key: String) -> SourceLocation? { values[key]?.location ?? node.location }
}

extension Unicode.Scalar {
    /// An ASCII letter, digit or `_`: what a model's names are made of (answered without
    /// Unicode's property tables, which every name's every character asked at each load).
    var isASCIIWordCharacter: Bool {
        let v = value
        return v == 0x5F || (v | 0x20) >= 0x61 && (v | 0x20) <= 0x7A || v >= 0x30 && v <= 0x39
    }
}

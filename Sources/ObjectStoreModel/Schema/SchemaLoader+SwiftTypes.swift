import Foundation

// The parts of an attribute that name Swift types for the model plugin: a transformer, a
// Swift type, an enum of the attribute's values.
extension SchemaLoader {
    /// An attribute's `transformer` (a transformable one's) and `swiftType`.
    static func readSwiftTypes(_ reader: SchemaObjectReader, typeName: String, qualified: String, into attribute: inout AttributeDescription, log: inout DiagnosticLog) {
        if let transformer = reader.string("transformer", required: typeName == "transformable", log: &log) {
            if typeName != "transformable" {
                log.add(reader.path("transformer"), reader.location("transformer"), "\(qualified): 'transformer' applies to a transformable attribute (\"type\": \"transformable\"), not to type \(typeName)")
            } else if !isSwiftName(transformer) {
                log.add(reader.path("transformer"), reader.location("transformer"), "\(qualified): transformer name '\(transformer)' is not a name (letters, digits and _, not starting with a digit)")
            } else {
                attribute.valueTransformerName = transformer
            }
        }
        if let swiftType = reader.string("swiftType", log: &log) {
            let parts = swiftType.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            if parts.allSatisfy(isSwiftName) { attribute.swiftTypeName = swiftType } else {
                log.add(reader.path("swiftType"), reader.location("swiftType"), "\(qualified): swiftType '\(swiftType)' is not a Swift type name (such as Settings or MyModule.Color)")
            }
        }
    }

    /// Whether `text` can name a Swift type or case: letters, digits and _, not starting with
    /// a digit.
    static func isSwiftName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return text.unicodeScalars.allSatisfy { $0.isASCIIWordCharacter }
    }

    /// An attribute's `enum`: a name, whose cases are a string attribute's allowed values, or
    /// `{"name": ..., "cases": {"caseName": value, ...}}`, whose values become the allowed
    /// values (a string or integer attribute).
    static func readEnumeration(_ node: JSONNode, reader: SchemaObjectReader, type: AttributeType, qualified: String,
                                        rules: inout ValidationRules, log: inout DiagnosticLog) -> AttributeDescription.Enumeration? {
        let path = reader.path("enum")
        guard type == .string || type.isInteger else {
            log.add(path, node.location, "\(qualified): 'enum' applies to string and integer attributes, not to type \(type.rawValue)")
            return nil
        }
        var name: String?
        var cases: [(name: String, value: Value)] = []
        if let text = node.stringValue {
            name = text
            guard type == .string, let allowed = rules.allowedValues else {
                log.add(path, node.location, "\(qualified): an enum named alone takes its cases from the string attribute's 'allowedValues'; give them, or \"enum\": {\"name\": \"\(text)\", \"cases\": {\"name\": value, ...}}")
                return nil
            }
            for value in allowed {
                guard case .string(let raw) = value else { continue }
                guard isSwiftName(raw) else {
                    log.add(path, node.location, "\(qualified): allowed value \"\(raw)\" cannot name an enum case; give the cases: \"enum\": {\"name\": \"\(text)\", \"cases\": {\"caseName\": \"\(raw)\", ...}}")
                    return nil
                }
                cases.append((raw, value))
            }
        } else if let members = node.members {
            for member in members {
                switch member.key {
                case "name":
                    guard let text = member.value.stringValue else {
                        log.add(path + ".name", member.value.location, "\(qualified): the enum's 'name' must be a string")
                        return nil
                    }
                    name = text
                case "cases":
                    guard let list = member.value.members, !list.isEmpty else {
                        log.add(path + ".cases", member.value.location, "\(qualified): the enum's 'cases' must be an object of case names and their values, with at least one")
                        return nil
                    }
                    for item in list {
                        guard isSwiftName(item.key) else {
                            log.add(path + ".cases", item.keyLocation, "\(qualified): '\(item.key)' cannot name an enum case (letters, digits and _, not starting with a digit)")
                            continue
                        }
                        switch SchemaValueDecoder.decode(item.value, as: type) {
                        case .value(let value) where !value.isNull:
                            if cases.contains(where: { $0.value == value }) {
                                log.add(path + ".cases", item.value.location, "\(qualified): the enum's cases '\(item.key)' and '\(cases.first { $0.value == value }?.name ?? "")' have one value, \(value)")
                            }
                            cases.append((item.key, value))
                        case .value:
                            log.add(path + ".cases", item.value.location, "\(qualified): enum case '\(item.key)' needs a value, not null")
                        case .problem(let message):
                            log.add(path + ".cases", item.value.location, "\(qualified): enum case '\(item.key)': \(message)")
                        }
                    }
                case "comment": break
                default:
                    log.add(path + "." + member.key, member.keyLocation, "\(qualified): unknown key '\(member.key)' in an enum; known keys: name, cases")
                }
            }
            if cases.isEmpty && !members.contains(where: { $0.key == "cases" }) {
                log.add(path, node.location, "\(qualified): the enum needs its 'cases'")
                return nil
            }
            if let allowed = rules.allowedValues, Set(allowed) != Set(cases.map(\.value)) {
                log.add(reader.path("allowedValues"), reader.location("allowedValues"), "\(qualified): 'allowedValues' and the enum's cases differ; give the cases alone (they are the allowed values)")
            }
            rules.allowedValues = cases.map(\.value)
        } else {
            log.add(path, node.location, "\(qualified): 'enum' must be a name or {\"name\": ..., \"cases\": {...}}, found \(node.kindDescription)")
            return nil
        }
        guard let name, isSwiftName(name) else {
            log.add(path, node.location, "\(qualified): the enum needs a 'name' that can name a Swift type")
            return nil
        }
        return AttributeDescription.Enumeration(name: name, cases: cases)
    }
}

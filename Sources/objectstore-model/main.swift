import Foundation
import ObjectStoreModel

// objectstore-model: checks a model directory and writes its files into Swift source.
//
//   objectstore-model embed DIRECTORY OUTPUT.swift [NAME] [--stamp FILE] [--files-only]
//
// Every version's schema is loaded with all its checks, and every step between consecutive
// versions is planned (a custom mapping file, or an inferred mapping); any problem is
// printed as `file:line:column: error: ...` (what compilers print, so SwiftPM and editors
// point at it) and the exit status is 1. Otherwise OUTPUT gets
// `enum NAMEModelFiles { static let files: [String: String] }` (NAME defaults to the
// directory's name), for `ModelDirectory(location:files:)`, and (unless --files-only)
// `enum NAMEModel` holding a typed ManagedObject subclass per entity of the current version
// (`NAMEModel.Task`, with `@Attribute`, `@Derived` and `@Relationship` properties) and
// `register(in:)`. --stamp FILE: rewrite FILE each run, whatever happens, so that a build
// system that takes FILE as the command's input runs it again on the next build. The
// ObjectStoreModelPlugin build-tool plugin runs it for every Models/NAME directory of a
// package.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

var positional: [String] = []
var stampPath: String?
var filesOnly = false
var rest = Array(CommandLine.arguments.dropFirst())[...]
while let word = rest.popFirst() {
    switch word {
    case "--stamp":
        guard let path = rest.popFirst() else { fail("objectstore-model: --stamp needs a file") }
        stampPath = path
    case "--files-only": filesOnly = true
    default: positional.append(word)
    }
}
guard (3...4).contains(positional.count), positional[0] == "embed" else {
    fail("usage: objectstore-model embed DIRECTORY OUTPUT.swift [NAME] [--stamp FILE] [--files-only]")
}
if let stampPath {
    // First, so that a failing run is run again too.
    _ = FileManager.default.createFile(atPath: stampPath, contents: Data(UUID().uuidString.utf8))
}
let directory = URL(fileURLWithPath: positional[1])
let output = URL(fileURLWithPath: positional[2])
let name = positional.count > 3 ? positional[3] : directory.lastPathComponent

func report(_ error: SchemaError) -> Never {
    let path = error.file.hasPrefix("/") ? error.file : directory.appendingPathComponent(error.file).path
    fail(error.diagnostics.map { diagnostic in
        let place = diagnostic.location.map { "\(path):\($0.line):\($0.column)" } ?? "\(path):1:1"
        return "\(place): error: \(diagnostic.path): \(diagnostic.message)"
    }.joined(separator: "\n"))
}

let models: ModelDirectory
do {
    models = try ModelDirectory(url: directory)
    var previous: (name: String, model: ManagedObjectModel)?
    for version in models.versionNames {
        let model = try models.model(version: version)
        if let previous {
            if let text = models.mappingText(from: previous.name, to: version) {
                _ = try MappingModel.custom(text, file: directory.appendingPathComponent("\(previous.name)-to-\(version).mapping.json").path, from: previous.model, to: model)
            } else {
                do {
                    _ = try MappingModel.infer(from: previous.model, to: model)
                } catch {
                    fail("\(directory.appendingPathComponent("\(version).json").path):1:1: error: no mapping from \(previous.name) to \(version) can be inferred and there is no \(previous.name)-to-\(version).mapping.json: \(error)")
                }
            }
        }
        previous = (version, model)
    }
} catch {
    report(error)
}

/// A Swift string literal: every control character as \u{X} (JSON's \b, \f, \uXXXX are not
/// Swift escapes).
func literal(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": result += "\\\\"
        case "\"": result += "\\\""
        case "\n": result += "\\n"
        case "\t": result += "\\t"
        case "\r": result += "\\r"
        default:
            if scalar.value < 0x20 || scalar.value == 0x7F {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
    }
    return result + "\""
}

var files: [(String, String)] = []
do {
    for file in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() where file.hasSuffix(".json") {
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(file).path) else { fail("\(directory.path)/\(file):1:1: error: cannot read") }
        files.append((file, String(decoding: data, as: UTF8.self)))
    }
} catch {
    fail("\(directory.path):1:1: error: cannot read the model directory: \(error)")
}
let identifier = name.filter { $0.isLetter || $0.isNumber || $0 == "_" }
// The manifest's "access": "public" makes the generated API public and the classes open
// (a model in a library target used by an app).
let isPublic = models.generatedAccess == "public"
let access = isPublic ? "public " : ""
let classAccess = isPublic ? "open " : ""
var source = "// Generated by objectstore-model from \(directory.lastPathComponent): do not edit.\n\n"
source += filesOnly ? "import Foundation\n\n" : "import Foundation\nimport ObjectStore\n\n"
source += "/// The \(name) model files, by file name (checked when built), for `ModelDirectory(location:files:)`.\n"
source += "\(access)enum \(identifier)ModelFiles {\n    \(access)static let files: [String: String] = [\n"
for (file, text) in files { source += "        \(literal(file)): \(literal(text)),\n" }
source += "    ]\n}\n"

// Typed classes for the current version, inside one namespace so entity names such as Task
// do not hide Swift's own types.
if !filesOnly { do {
    let model = try models.currentModel()
    // Every type the classes use is written with its module, so an entity named Date,
    // String, Attribute or ManagedObject (a class inside the namespace) hides nothing.
    let swiftTypes: [AttributeType: String] = [
        .int16: "Swift.Int16", .int32: "Swift.Int32", .int64: "Swift.Int64", .double: "Swift.Double", .float: "Swift.Float",
        .decimal: "Foundation.Decimal", .string: "Swift.String", .boolean: "Swift.Bool", .date: "Foundation.Date",
        .binary: "Foundation.Data", .uuid: "Foundation.UUID", .uri: "Foundation.URL",
    ]
    let keywords: Set<String> = ["class", "struct", "enum", "protocol", "func", "var", "let", "in", "is", "as", "if", "else", "for",
                                 "while", "repeat", "return", "default", "case", "switch", "import", "init", "self", "Self", "super",
                                 "true", "false", "nil", "where", "throw", "throws", "try", "catch", "do", "break", "continue",
                                 "operator", "extension", "static", "public", "private", "internal", "fileprivate", "open", "subscript",
                                 "typealias", "associatedtype", "defer", "guard", "inout", "any", "some", "Type", "Protocol", "Any",
                                 "deinit", "fallthrough", "rethrows", "_"]
    // Class names Swift takes for itself even in backquotes, and the modules the classes
    // name their types with: such an entity cannot be a class here.
    let unusableClassNames: Set<String> = ["Type", "Protocol", "Self", "Any", "_", "Swift", "Foundation", "ObjectStore", "ObjectStoreModel",
                                           identifier + "Model", identifier + "ModelFiles"]
    // Names ManagedObject already has, or a property cannot take even in backquotes: such a
    // property is declared under another name with its key given
    // (`@ObjectStore.Attribute("entity") var entity_`).
    let taken: Set<String> = ["entity", "entityName", "objectID", "managedObjectContext", "isFault", "isInserted", "isDeleted",
                              "isUpdated", "hasChanges", "lastAccessError", "changedValues", "committedValues", "description",
                              "self", "Self", "super", "init", "deinit", "Type", "Protocol", "_"]
    func escaped(_ name: String) -> String { keywords.contains(name) ? "`\(name)`" : name }
    /// Where the current version's file names an entity, for a diagnostic.
    func place(of entityName: String) -> String {
        let file = directory.appendingPathComponent(models.currentVersionName + ".json")
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        var line = 1, column = 1
        if let range = text.range(of: "\"\(entityName)\"") {
            for character in text[..<range.lowerBound] {
                if character == "\n" { line += 1; column = 1 } else { column += 1 }
            }
        }
        return "\(file.path):\(line):\(column)"
    }
    let unusable = model.entities.filter { unusableClassNames.contains($0.name) }
    if !unusable.isEmpty {
        fail(unusable.map { "\(place(of: $0.name)): error: entity \($0.name) cannot be a Swift class in \(identifier)Model (Swift reserves the name, or the generated code needs it); rename it, or use a target that does not depend on ObjectStore to embed the files only" }
            .joined(separator: "\n"))
    }
    source += "\n/// The \(name) model's entities (version \(models.currentVersionName)) as typed classes; `register(in:)` makes\n"
    source += "/// a coordinator hand them out for their entities.\n"
    source += "\(access)enum \(identifier)Model {\n"
    // The enums attributes name ("enum"), each once: one name with two sets of cases, or
    // the name of an entity, cannot be made.
    var enums: [String: AttributeDescription.Enumeration] = [:]
    var enumTypes: [String: AttributeType] = [:]
    var enumProblems: [String] = []
    for entity in model.entities {
        for attribute in entity.attributes {
            guard let enumeration = attribute.enumeration else { continue }
            if model.entity(named: enumeration.name) != nil || unusableClassNames.contains(enumeration.name) || keywords.contains(enumeration.name) {
                enumProblems.append("\(place(of: entity.name)): error: enum \(enumeration.name) of \(entity.name).\(attribute.name) cannot be a Swift type in \(identifier)Model (an entity or Swift has the name); rename it")
            } else if let known = enums[enumeration.name], known != enumeration || enumTypes[enumeration.name] != attribute.type {
                enumProblems.append("\(place(of: entity.name)): error: enum \(enumeration.name) of \(entity.name).\(attribute.name) has other cases or another type than an enum of that name before it; give it another name")
            } else {
                enums[enumeration.name] = enumeration
                enumTypes[enumeration.name] = attribute.type
            }
        }
    }
    if !enumProblems.isEmpty { fail(enumProblems.joined(separator: "\n")) }
    for (enumName, enumeration) in enums.sorted(by: { $0.key < $1.key }) {
        let raw = swiftTypes[enumTypes[enumName] ?? .string] ?? "Swift.String"
        source += "    \(access)enum \(enumName): \(raw), ObjectStore.EnumAttributeValue, Swift.Sendable {\n"
        for (caseName, value) in enumeration.cases {
            let rawValue: String
            switch value {
            case .string(let text): rawValue = literal(text)
            case .integer(let number): rawValue = String(number)
            default: rawValue = literal(value.description)
            }
            source += "        case \(escaped(caseName)) = \(rawValue)\n"
        }
        if let first = enumeration.cases.first {
            source += "        \(access)static var placeholder: Self { .\(escaped(first.name)) }\n"
        }
        source += "    }\n\n"
    }
    /// The Swift type of an attribute's typed property.
    func swiftType(_ attribute: AttributeDescription) -> String {
        if let enumeration = attribute.enumeration { return enumeration.name }
        if let custom = attribute.swiftTypeName { return custom }
        return swiftTypes[attribute.type] ?? "Swift.String"
    }
    // Swift names in use: every property name of the model, and each name a rename chose,
    // so a renamed property meets no other in its class, its ancestors or its descendants
    // (`entity` -> `entity__` when `entity_` exists too).
    var used = Set(model.entities.flatMap { $0.properties.map(\.name) })
    for entity in model.entities {
        // Not final: behaviour goes in a subclass of the user's, which regeneration never
        // touches (`final class MyNote: NotesModel.Note { override func awakeFromInsert() ... }`,
        // registered for the entity after `register(in:)`).
        let base = entity.parentName.map(escaped) ?? "ObjectStore.ManagedObject"
        source += "    \(classAccess)class \(escaped(entity.name)): \(base) {\n"
        for property in entity.ownProperties {
            var swift = property.name
            let explicit = taken.contains(property.name)
            if explicit {
                repeat { swift += "_" } while used.contains(swift) || taken.contains(swift)
                used.insert(swift)
            }
            swift = escaped(swift)
            let key = explicit ? "(\(literal(property.name)))" : ""
            switch property {
            case .attribute(let attribute):
                let type = swiftType(attribute)
                if attribute.isDerived {
                    source += "        @ObjectStore.Derived\(key) \(access)var \(swift): \(type)?\n"
                } else {
                    // An attribute with a default is never absent in Swift: a stored nil reads
                    // as the default.
                    let optional = (attribute.isOptional && attribute.defaultValue.isNull) || attribute.isTransient ? "?" : ""
                    source += "        @ObjectStore.Attribute\(key) \(access)var \(swift): \(type)\(optional)\n"
                }
            case .relationship(let relationship):
                let destination = escaped(relationship.destinationEntityName)
                source += "        @ObjectStore.Relationship\(key) \(access)var \(swift): \(relationship.isToMany ? "[\(destination)]" : "\(destination)?")\n"
            }
        }
        // Its own fetched properties (a parent's class has the inherited ones); one named like
        // a member of ManagedObject gets no method (read it with fetchedPropertyObjects).
        let inheritedFetched = Set(entity.parentName.flatMap { model.entity(named: $0) }?.fetchedProperties.map(\.name) ?? [])
        for fetched in entity.fetchedProperties where !inheritedFetched.contains(fetched.name) && !taken.contains(fetched.name) {
            // A fetched property: its objects, fetched when asked for (a method, so that its
            // errors are thrown, not swallowed).
            let destination = escaped(fetched.destinationEntityName)
            source += "        /// The objects of the fetched property `\(fetched.name)`.\n"
            source += "        \(access)func \(escaped(fetched.name))() throws -> [\(destination)] {\n"
            source += "            guard let context = managedObjectContext, let property = entity.fetchedProperty(named: \(literal(fetched.name))) else { return [] }\n"
            source += "            return try context.fetchedPropertyObjects(property, of: self).compactMap { $0 as? \(destination) }\n"
            source += "        }\n"
        }
        source += "    }\n\n"
    }
    source += "    /// Registers every class for its entity with a coordinator of this model.\n"
    source += "    \(access)static func register(in coordinator: ObjectStore.PersistentStoreCoordinator) throws {\n"
    for entity in model.entities {
        source += "        try coordinator.register(\(escaped(entity.name)).self, forEntityName: \(literal(entity.name)))\n"
    }
    source += "    }\n}\n"
} catch {
    report(error)
} }
do {
    // Written only when it changed, so a build that changed nothing recompiles nothing.
    if FileManager.default.contents(atPath: output.path) != Data(source.utf8) {
        try Data(source.utf8).write(to: output, options: .atomic)
    }
} catch {
    fail("\(output.path):1:1: error: cannot write: \(error)")
}

// Checks the layers of docs/ARCHITECTURE.md: lists the dependencies between the package's
// modules (their `import`s) and between the folders of every module, and fails when either
// graph has a cycle.
//
//     swift build && swift .ci/layers.swift [--quiet] [--verbose] [--package DIR]
//
// The folders' graph is the compiler's own: a debug build writes, for each source file, the
// names it declares (types, functions, and every member, those an extension adds included)
// and the names its lookups needed (a `.swiftdeps` file, read here through the toolchain's
// `swift-dependency-tool`). A file depends on the files that declare a name it looked up, so a
// member that an extension in another folder adds to a type is an edge to that folder. The
// compiler also records what it only considered (every overload of an operator, the members
// a conformance adds to `Array`), so a lookup counts only when the file's code, without its
// comments and strings, spells the name; an initializer (never spelled at a call) and a name
// the file's own folder also declares (its overload may be the one chosen; the compiler lists
// the members of a type's own declaration only with the type) count for nothing.
// So an edge may be missed, never invented. Files at a module's top form the folder "(top)".
import Foundation

let arguments = CommandLine.arguments
let quiet = arguments.contains("--quiet")
let verbose = arguments.contains("--verbose")
let fileManager = FileManager.default
let packageRoot: URL = {
    if let index = arguments.firstIndex(of: "--package"), index + 1 < arguments.count {
        return URL(fileURLWithPath: arguments[index + 1])
    }
    return URL(fileURLWithPath: fileManager.currentDirectoryPath)
}()
let root = packageRoot.appendingPathComponent("Sources")

func fail(_ message: String) -> Never {
    print("error: \(message)")
    exit(2)
}

/// The Swift files below `directory`, by path.
func swiftFiles(in directory: URL) -> [URL] {
    guard let walker = fileManager.enumerator(at: directory, includingPropertiesForKeys: nil) else { return [] }
    return walker.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }.sorted { $0.path < $1.path }
}

/// The strongly connected components of more than one node.
func cycles(_ graph: [String: Set<String>]) -> [[String]] {
    var index = 0, stack = [String](), onStack = Set<String>()
    var indices = [String: Int](), lowlinks = [String: Int](), found = [[String]]()
    func visit(_ node: String) {
        indices[node] = index; lowlinks[node] = index; index += 1
        stack.append(node); onStack.insert(node)
        for next in graph[node, default: []].sorted() {
            if indices[next] == nil { visit(next); lowlinks[node] = min(lowlinks[node] ?? 0, lowlinks[next] ?? 0) }
            else if onStack.contains(next) { lowlinks[node] = min(lowlinks[node] ?? 0, indices[next] ?? 0) }
        }
        if lowlinks[node] == indices[node] {
            var component = [String]()
            while let top = stack.popLast() { onStack.remove(top); component.append(top); if top == node { break } }
            if component.count > 1 { found.append(component.sorted()) }
        }
    }
    for node in graph.keys.sorted() where indices[node] == nil { visit(node) }
    return found
}

/// The source without comments and string literals (their characters become spaces).
func code(of text: String) -> String {
    var out = [Character]()
    let chars = Array(text)
    var index = 0
    var depth = 0  // block comment nesting
    var inString = false, multiline = false
    while index < chars.count {
        let c = chars[index]
        let next: Character? = index + 1 < chars.count ? chars[index + 1] : nil
        if depth > 0 {
            if c == "*" && next == "/" { depth -= 1; index += 2; out.append(contentsOf: "  "); continue }
            if c == "/" && next == "*" { depth += 1; index += 2; out.append(contentsOf: "  "); continue }
            out.append(c == "\n" ? "\n" : " "); index += 1; continue
        }
        if inString {
            if c == "\\" { out.append(contentsOf: "  "); index += 2; continue }
            if multiline, c == "\"", next == "\"", index + 2 < chars.count, chars[index + 2] == "\"" {
                inString = false; out.append(contentsOf: "   "); index += 3; continue
            }
            if !multiline, c == "\"" { inString = false; out.append(" "); index += 1; continue }
            out.append(c == "\n" ? "\n" : " "); index += 1; continue
        }
        if c == "/" && next == "/" {
            while index < chars.count && chars[index] != "\n" { index += 1 }
            continue
        }
        if c == "/" && next == "*" { depth = 1; index += 2; out.append(contentsOf: "  "); continue }
        if c == "\"" {
            if next == "\"", index + 2 < chars.count, chars[index + 2] == "\"" {
                inString = true; multiline = true; out.append(contentsOf: "   "); index += 3; continue
            }
            inString = true; multiline = false; out.append(" "); index += 1; continue
        }
        out.append(c); index += 1
    }
    return String(out)
}

let identifier = try NSRegularExpression(pattern: #"[A-Za-z_][A-Za-z0-9_]*"#)

/// The identifiers `text` names.
func identifiers(in text: String) -> Set<String> {
    let range = NSRange(text.startIndex..., in: text)
    return Set(identifier.matches(in: text, range: range).compactMap { Range($0.range, in: text).map { String(text[$0]) } })
}

let memberDeclaration = try NSRegularExpression(
    pattern: #"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|final|open|static|class|override|mutating|nonmutating|nonisolated|indirect|convenience|required|lazy|weak|unowned|dynamic)(?:\([a-z]+\))?\s+)*(?:func|var|let|case|subscript)\s+`?([A-Za-z_][A-Za-z0-9_]*)"#)

/// The names `code` declares as members: at the first level inside a type or an extension.
func memberNames(in code: String) -> Set<String> {
    var names = Set<String>(), depth = 0
    for line in code.split(separator: "\n", omittingEmptySubsequences: false) {
        if depth == 1 {
            let text = String(line)
            let range = NSRange(text.startIndex..., in: text)
            if let match = memberDeclaration.firstMatch(in: text, range: range), let name = Range(match.range(at: 1), in: text) {
                names.insert(String(text[name]))
            }
        }
        for character in line {
            if character == "{" { depth += 1 } else if character == "}" { depth = max(0, depth - 1) }
        }
    }
    return names
}

// MARK: The modules' imports

let importLine = try NSRegularExpression(
    pattern: #"^\s*(?:@\w+\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)"#,
    options: [.anchorsMatchLines])

func imports(in text: String) -> [String] {
    let range = NSRange(text.startIndex..., in: text)
    return importLine.matches(in: text, range: range).compactMap { match in
        Range(match.range(at: 1), in: text).map { String(text[$0]) }
    }
}

// MARK: The compiler's dependency records

/// The toolchain's `swift-dependency-tool`: `swift-frontend` run under that name.
let dependencyTool: URL = {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    let candidates = path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("swiftc") }
    guard let swiftc = candidates.first(where: { fileManager.isExecutableFile(atPath: $0.path) }) else {
        fail("swiftc is not on PATH")
    }
    let frontend = swiftc.resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("swift-frontend")
    let directory = fileManager.temporaryDirectory.appendingPathComponent("layers-tool-\(getpid())")
    try? fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
    let tool = directory.appendingPathComponent("swift-dependency-tool")
    try? fileManager.removeItem(at: tool)
    do { try fileManager.createSymbolicLink(at: tool, withDestinationURL: frontend) } catch {
        fail("cannot link \(frontend.path) as swift-dependency-tool: \(error)")
    }
    return tool
}()

/// A name as the compiler's dependency records key it: top-level names have no context; a
/// member's context is the mangled name of the type (or protocol) it belongs to.
struct Name: Hashable {
    var kind: String
    var context: String
    var name: String
    var readable: String { context.isEmpty ? name : "\(demangledContext).\(name)" }
    /// The innermost type name of a mangled context, enough for a person to find it.
    var demangledContext: String {
        var digits = "", names = [String](), characters = Array(context), index = 0
        while index < characters.count {
            let c = characters[index]
            if c.isNumber { digits.append(c); index += 1; continue }
            if let count = Int(digits), count > 0 {
                let end = min(index + count, characters.count)
                names.append(String(characters[index..<end])); index = end; digits = ""
                continue
            }
            digits = ""; index += 1
        }
        return names.last ?? context
    }
}

/// What one source file declares and what its lookups needed.
struct FileDependencies {
    var provides = Set<Name>()
    var uses = Set<Name>()
}

/// Reads one `.swiftdeps` file: the interface nodes of top-level names and members.
func read(swiftdeps: String) -> FileDependencies {
    let process = Process()
    process.executableURL = dependencyTool
    process.arguments = ["--to-yaml", "--input-filename=\(swiftdeps)", "--output-filename=-"]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch { fail("cannot run swift-dependency-tool: \(error)") }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { fail("swift-dependency-tool could not read \(swiftdeps)") }
    var result = FileDependencies()
    var kind = "", aspect = "", context = "", name = ""
    func value(_ line: Substring) -> String {
        guard let colon = line.firstIndex(of: ":") else { return "" }
        var text = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("'"), text.hasSuffix("'"), text.count >= 2 { text = String(text.dropFirst().dropLast()) }
        return text
    }
    let text = String(decoding: data, as: UTF8.self)
    for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
        guard line.count > 6, line.hasPrefix("    ") else { continue }
        let body = line.drop { $0 == " " }
        switch body.first {
        case "k" where body.hasPrefix("kind:"): kind = value(body)
        case "a" where body.hasPrefix("aspect:"): aspect = value(body)
        case "c" where body.hasPrefix("context:"): context = value(body)
        case "n" where body.hasPrefix("name:"): name = value(body)
        case "i" where body.hasPrefix("isProvides:"):
            guard aspect == "interface", kind == "topLevel" || kind == "member", !name.isEmpty else { continue }
            let key = Name(kind: kind, context: context, name: name)
            if value(body) == "true" { result.provides.insert(key) } else { result.uses.insert(key) }
        default: continue
        }
    }
    return result
}

/// The `.swiftdeps` file of each source of `module`, from the debug build's output file map.
func dependencyFiles(of module: String, sources: [URL]) -> [String: String] {
    let buildDirectory = packageRoot.appendingPathComponent(".build/debug/\(module.replacingOccurrences(of: "-", with: "_")).build")
    let mapURL = buildDirectory.appendingPathComponent("output-file-map.json")
    guard let data = try? Data(contentsOf: mapURL),
          let map = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
        fail("\(module) has no debug build (\(mapURL.path)): run `swift build` first")
    }
    var result = [String: String]()
    for source in sources {
        guard let entry = map[source.path] as? [String: Any], let deps = entry["swift-dependencies"] as? String,
              let built = (try? fileManager.attributesOfItem(atPath: deps))?[.modificationDate] as? Date else {
            fail("\(source.path) is not in the debug build: run `swift build` first")
        }
        let edited = (try? fileManager.attributesOfItem(atPath: source.path))?[.modificationDate] as? Date ?? .distantPast
        if edited > built { fail("\(source.path) changed after the debug build: run `swift build` first") }
        result[source.path] = deps
    }
    return result
}

// MARK: The check

var failed = false
let modules = ((try? fileManager.contentsOfDirectory(atPath: root.path)) ?? []).sorted()
var moduleGraph = [String: Set<String>]()

for module in modules {
    let moduleURL = root.appendingPathComponent(module)
    let files = swiftFiles(in: moduleURL)
    guard !files.isEmpty else { continue }
    moduleGraph[module, default: []].formUnion([])
    var folderOf = [String: String]()  // source path -> folder
    var mentioned = [String: Set<String>]()  // source path -> the identifiers its code names
    var members = [String: Set<String>]()  // folder -> the member names its types and extensions declare
    for file in files {
        let relative = file.path.dropFirst(moduleURL.path.count + 1)
        let parts = relative.split(separator: "/")
        folderOf[file.path] = parts.count > 1 ? String(parts[0]) : "(top)"
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
        let stripped = code(of: text)
        mentioned[file.path] = identifiers(in: stripped)
        members[folderOf[file.path, default: ""], default: []].formUnion(memberNames(in: stripped))
        for name in imports(in: stripped) where modules.contains(name) && name != module {
            moduleGraph[module, default: []].insert(name)
        }
    }
    guard Set(folderOf.values).count > 1 else { continue }
    let deps = dependencyFiles(of: module, sources: files)
    var records = [String: FileDependencies]()
    let lock = NSLock()
    let paths = files.map(\.path)
    DispatchQueue.concurrentPerform(iterations: paths.count) { index in
        guard let swiftdeps = deps[paths[index]] else { return }
        let record = read(swiftdeps: swiftdeps)
        lock.lock(); records[paths[index]] = record; lock.unlock()
    }
    var providers = [Name: Set<String>]()  // name -> folders declaring it
    for (path, record) in records {
        guard let folder = folderOf[path] else { continue }
        for name in record.provides { providers[name, default: []].insert(folder) }
    }
    var folderGraph = [String: Set<String>]()
    var why = [String: Set<String>]()  // "A -> B" -> examples
    for path in paths {
        guard let folder = folderOf[path], let record = records[path] else { continue }
        folderGraph[folder, default: []].formUnion([])
        let relative = String(path.dropFirst(moduleURL.path.count + 1))
        let names = mentioned[path, default: []]
        for name in record.uses where name.name != "init" && names.contains(name.name) {
            let owners = providers[name, default: []]
            // An overload of the file's own folder may be the one chosen: no edge is claimed.
            guard !owners.contains(folder), name.kind != "member" || !members[folder, default: []].contains(name.name) else { continue }
            for owner in owners {
                folderGraph[folder, default: []].insert(owner)
                why["\(folder) -> \(owner)", default: []].insert("\(relative): \(name.readable)")
            }
        }
    }
    if !quiet {
        print("\(module):")
        for folder in folderGraph.keys.sorted() {
            let uses = folderGraph[folder, default: []].sorted()
            print("  \(folder) -> \(uses.isEmpty ? "(nothing)" : uses.joined(separator: ", "))")
        }
    }
    for cycle in cycles(folderGraph) {
        failed = true
        print("error: \(module)'s folders \(cycle.joined(separator: ", ")) depend on each other:")
        let members = Set(cycle)
        for edge in why.keys.sorted() {
            let ends = edge.components(separatedBy: " -> ")
            guard members.contains(ends[0]), members.contains(ends[1]) else { continue }
            let examples = why[edge, default: []].sorted()
            let shown = verbose ? examples.count : 4
            print("  \(edge): \(examples.prefix(shown).joined(separator: "; "))\(examples.count > shown ? " and \(examples.count - shown) more" : "")")
        }
    }
}

if !quiet {
    print("modules:")
    for module in moduleGraph.keys.sorted() {
        let uses = moduleGraph[module, default: []].sorted()
        print("  \(module) -> \(uses.isEmpty ? "(nothing)" : uses.joined(separator: ", "))")
    }
}
for cycle in cycles(moduleGraph) {
    failed = true
    print("error: modules \(cycle.joined(separator: ", ")) import each other")
}
try? fileManager.removeItem(at: dependencyTool.deletingLastPathComponent())
if failed { exit(1) }
print("no cycle")

// Lists the dependencies between the package's modules (their `import`s) and between the
// folders of each layered module (ObjectStore) (the top-level names one folder declares and another uses), and
// fails when either graph has a cycle.
//
//     swift .ci/layers.swift [--quiet]          (from the package root)
//
// A folder's names are what it declares at the left margin (types, protocols, type aliases,
// free functions, global constants); comments and string literals are not read. Members an
// extension adds to a type of another folder count as that folder's, so an edge may be
// missed, never invented: the check finds every cycle made of the names it sees.
import Foundation

let quiet = CommandLine.arguments.contains("--quiet")
let verbose = CommandLine.arguments.contains("--verbose")
let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Sources")
let fileManager = FileManager.default
/// The modules whose folders are layers (one direction of dependency between them).
let layeredModules: Set<String> = ["ObjectStore", "ObjectStoreStorage"]

/// The Swift files below `directory`, by path.
func swiftFiles(in directory: URL) -> [URL] {
    guard let walker = fileManager.enumerator(at: directory, includingPropertiesForKeys: nil) else { return [] }
    return walker.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }.sorted { $0.path < $1.path }
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

let declaration = try NSRegularExpression(pattern:
    #"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|final|open|indirect|nonisolated)\s+)*(?:class|struct|enum|protocol|actor|typealias|func|let|var)\s+([A-Za-z_][A-Za-z0-9_]*)"#,
    options: [.anchorsMatchLines])
let importLine = try NSRegularExpression(pattern: #"^\s*(?:@\w+\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)"#,
                                         options: [.anchorsMatchLines])
let identifier = try NSRegularExpression(pattern: #"[A-Za-z_][A-Za-z0-9_]*"#)

func matches(_ regex: NSRegularExpression, in text: String) -> [String] {
    let range = NSRange(text.startIndex..., in: text)
    return regex.matches(in: text, range: range).compactMap { match in
        Range(match.range(at: match.numberOfRanges > 1 ? 1 : 0), in: text).map { String(text[$0]) }
    }
}

/// The strongly connected components of more than one node (or a node on its own edge).
func cycles(_ graph: [String: Set<String>]) -> [[String]] {
    var index = 0, stack = [String](), onStack = Set<String>()
    var indices = [String: Int](), lowlinks = [String: Int](), found = [[String]]()
    func visit(_ node: String) {
        indices[node] = index; lowlinks[node] = index; index += 1
        stack.append(node); onStack.insert(node)
        for next in graph[node, default: []].sorted() {
            if indices[next] == nil { visit(next); lowlinks[node] = min(lowlinks[node]!, lowlinks[next]!) }
            else if onStack.contains(next) { lowlinks[node] = min(lowlinks[node]!, indices[next]!) }
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

var failed = false
let modules = ((try? fileManager.contentsOfDirectory(atPath: root.path)) ?? []).sorted()
var moduleGraph = [String: Set<String>]()

for module in modules {
    let moduleURL = root.appendingPathComponent(module)
    let files = swiftFiles(in: moduleURL)
    guard !files.isEmpty else { continue }
    var texts = [(folder: String, file: String, code: String)]()
    var declared = [String: String]()  // name -> folder
    var ambiguous = Set<String>()
    for file in files {
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
        let relative = file.path.dropFirst(moduleURL.path.count + 1)
        let parts = relative.split(separator: "/")
        let folder = parts.count > 1 ? String(parts[0]) : "(top)"
        let stripped = code(of: text)
        texts.append((folder, String(relative), stripped))
        for name in matches(importLine, in: stripped) where modules.contains(name) && name != module {
            moduleGraph[module, default: []].insert(name)
        }
        for name in matches(declaration, in: stripped) {
            if let other = declared[name], other != folder { ambiguous.insert(name) }
            declared[name] = folder
        }
        moduleGraph[module, default: []].formUnion([])
    }
    for name in ambiguous { declared[name] = nil }
    var folderGraph = [String: Set<String>]()
    var why = [String: [String]]()  // "A -> B" -> examples
    for entry in texts {
        folderGraph[entry.folder, default: []].formUnion([])
        for name in Set(matches(identifier, in: entry.code)) {
            guard let owner = declared[name], owner != entry.folder else { continue }
            folderGraph[entry.folder, default: []].insert(owner)
            why["\(entry.folder) -> \(owner)", default: []].append("\(entry.file): \(name)")
        }
    }
    let folders = folderGraph.keys.sorted()
    if folders.count > 1 && layeredModules.contains(module) {
        if !quiet {
            print("\(module):")
            for folder in folders {
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
                let examples = why[edge]!.sorted()
                print("  \(edge): \(examples.prefix(verbose ? 1000 : 4).joined(separator: "; "))\(examples.count > (verbose ? 1000 : 4) ? " and \(examples.count - 4) more" : "")")
            }
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
if failed { exit(1) }
print("no cycle")

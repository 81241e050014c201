import Foundation
import Testing

/// The layers of docs/ARCHITECTURE.md, checked on the sources by `.ci/layers.swift`: no two
/// modules import each other, and no two folders of any module use each other's names (the
/// compiler's own record of what each file looked up, members added by extensions included).
@Suite struct SourceLayoutTests {
    static let swift: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("swift") }
            + [URL(fileURLWithPath: "/opt/swift/usr/bin/swift"), URL(fileURLWithPath: "/usr/bin/swift")]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// The package's root (this file is Tests/ObjectStoreTests/SourceLayoutTests.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `swift` with `arguments` in `directory`; its exit status and output.
    static func run(_ arguments: [String], in directory: URL) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = swift
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    /// The check run on the package at `directory` (built in debug first).
    static func layers(of directory: URL) throws -> (status: Int32, output: String) {
        try run([root.appendingPathComponent(".ci/layers.swift").path, "--package", directory.path], in: directory)
    }

    @Test(.enabled(if: swift != nil, "needs the swift command"))
    func theSourcesHaveNoCycle() throws {
        let (status, output) = try Self.layers(of: Self.root)
        #expect(status == 0, "\(output)")
        // Every module with folders is listed, each layer using only those below it.
        for line in ["Storage -> Concurrency, Values", "Context -> (nothing)", "Query -> Context", "Hashing -> (nothing)",
                     "Model -> Hashing", "Protocol -> Compression", "Engine -> Crypto, Protocol, Transport",
                     "Support -> (nothing)", "Language -> Support", "Tasks -> Language, Support", "(top) -> Commands"] {
            #expect(output.contains("  \(line)\n"), "\(line): \(output)")
        }
        for module in ["ObjectStore:", "ObjectStoreModel:", "ObjectStoreStorage:", "ObjectStoreSync:", "taskctl:"] {
            #expect(output.contains("\n\(module)\n") || output.hasPrefix("\(module)\n"), "\(module) is checked: \(output)")
        }
    }

    /// A cycle made only through a member an extension adds (the folder that uses it never
    /// names the folder's types) fails the check, and a comment or a string makes no edge.
    @Test(.enabled(if: swift != nil, "needs the swift command"))
    func aCycleThroughAnExtensionMemberFailsTheCheck() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("layers-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let sources = directory.appendingPathComponent("Sources/Planted")
        for folder in ["Storage", "Context", "Query"] {
            try FileManager.default.createDirectory(at: sources.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try Data("""
            // swift-tools-version:6.0
            import PackageDescription
            let package = Package(name: "Planted", targets: [.target(name: "Planted")])

            """.utf8).write(to: directory.appendingPathComponent("Package.swift"))
        // Storage declares Row; Context uses it and declares Object.
        try Data("struct Row { var bytes: [UInt8] = [] }\n".utf8).write(to: sources.appendingPathComponent("Storage/Row.swift"))
        try Data("""
            struct Object { var row = Row() }
            // Fetch in a comment, and in a string: neither is a use.
            let label = "Fetch"

            """.utf8).write(to: sources.appendingPathComponent("Context/Object.swift"))
        try Data("struct Fetch { var object: Object }\n".utf8).write(to: sources.appendingPathComponent("Query/Fetch.swift"))
        let built = try Self.run(["build"], in: directory)
        try #require(built.status == 0, "\(built.output)")
        let clean = try Self.layers(of: directory)
        #expect(clean.status == 0, "\(clean.output)")
        #expect(clean.output.contains("  Context -> Storage\n") && clean.output.contains("  Query -> Context\n"), "\(clean.output)")

        // Storage's row now reads a member that Query adds to Object: a cycle through
        // Storage -> Query -> Context -> Storage, with no type of Query named in Storage.
        try Data("extension Object { var summary: Int { row.bytes.count } }\n".utf8).write(to: sources.appendingPathComponent("Query/Object+Summary.swift"))
        try Data("struct Row { var bytes: [UInt8] = []\n    func describe(_ object: Object) -> Int { object.summary }\n}\n".utf8)
            .write(to: sources.appendingPathComponent("Storage/Row.swift"))
        let rebuilt = try Self.run(["build"], in: directory)
        try #require(rebuilt.status == 0, "\(rebuilt.output)")
        let (status, output) = try Self.layers(of: directory)
        #expect(status == 1)
        #expect(output.contains("error: Planted's folders Context, Query, Storage depend on each other"), "\(output)")
        #expect(output.contains("Storage -> Query: Storage/Row.swift: Object.summary"), "\(output)")
        #expect(!output.contains("Context -> Query"), "a comment or a string is no use: \(output)")
    }

    /// A source edited after the build is refused rather than checked on stale records.
    @Test(.enabled(if: swift != nil, "needs the swift command"))
    func aPackageWithoutABuildIsRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("layers-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        for folder in ["A", "B"] {
            let url = directory.appendingPathComponent("Sources/Unbuilt/\(folder)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try Data("struct \(folder) {}\n".utf8).write(to: url.appendingPathComponent("\(folder).swift"))
        }
        let (status, output) = try Self.layers(of: directory)
        #expect(status == 2)
        #expect(output.contains("run `swift build` first"), "\(output)")
    }
}

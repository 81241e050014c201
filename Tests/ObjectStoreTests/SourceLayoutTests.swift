import Foundation
import Testing

/// The layers of docs/ARCHITECTURE.md, checked on the sources by `.ci/layers.swift`: no two
/// modules import each other, and no two folders of ObjectStore use each other's names.
@Suite struct SourceLayoutTests {
    static let swift: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("swift") }
            + [URL(fileURLWithPath: "/opt/swift/usr/bin/swift"), URL(fileURLWithPath: "/usr/bin/swift")]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// The package's root (this file is Tests/ObjectStoreTests/SourceLayoutTests.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs the script in `directory`; its exit status and output.
    static func layers(in directory: URL) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = swift
        process.arguments = [root.appendingPathComponent(".ci/layers.swift").path]
        process.currentDirectoryURL = directory
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    @Test(.enabled(if: swift != nil, "needs the swift command"))
    func theSourcesHaveNoCycle() throws {
        let (status, output) = try Self.layers(in: Self.root)
        #expect(status == 0, "\(output)")
        #expect(output.contains("Storage -> Concurrency, Values"), "the engine uses nothing above it: \(output)")
    }

    /// The check finds a cycle through names a comment or a string does not hide.
    @Test(.enabled(if: swift != nil, "needs the swift command"))
    func aCycleBetweenFoldersFailsTheCheck() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("layers-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let sources = directory.appendingPathComponent("Sources/ObjectStore")
        for folder in ["Storage", "Context", "Query"] {
            try FileManager.default.createDirectory(at: sources.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try Data("struct Row { var layout: Layout? }\n".utf8).write(to: sources.appendingPathComponent("Storage/Row.swift"))
        try Data("final class Layout { let query = \"Fetch\" } // Fetch\nstruct Object { var row: Row }\n".utf8)
            .write(to: sources.appendingPathComponent("Context/Layout.swift"))
        try Data("struct Fetch { var object: Object }\n".utf8).write(to: sources.appendingPathComponent("Query/Fetch.swift"))
        let (status, output) = try Self.layers(in: directory)
        #expect(status != 0)
        #expect(output.contains("error: ObjectStore's folders Context, Storage depend on each other"), "\(output)")
        #expect(output.contains("Storage -> Context: Storage/Row.swift: Layout"), "\(output)")
        #expect(!output.contains("Context -> Query"), "a comment or a string is no use: \(output)")
    }
}

import Foundation
import Testing

/// Runs the built taskctl binary against a temporary store with a fixed clock.
final class TaskctlRunner {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static let binary: URL? = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("taskctl"),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("taskctl"),
            repository.appendingPathComponent(".build/debug/taskctl"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    let directory: URL
    var store: URL
    var now = "2026-11-22T12:00:00Z"
    var extraEnvironment: [String: String] = [:]

    init(storeName: String = "tasks.store") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("taskctl-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = directory.appendingPathComponent(storeName)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    struct Result {
        var status: Int32
        var out: String
        var err: String
    }

    var environment: [String: String] {
        var env = ["TASKCTL_STORE": store.path, "TASKCTL_NOW": now, "TZ": "UTC", "NO_COLOR": "1", "HOME": directory.path, "PATH": "/usr/bin:/bin"]
        for (key, value) in extraEnvironment { env[key] = value }
        return env
    }

    /// Starts taskctl without waiting.
    func start(_ arguments: [String]) throws -> (Process, Pipe, Pipe) {
        guard let binary = Self.binary else { throw CocoaError(.fileNoSuchFile) }
        return try start(program: binary, arguments)
    }

    /// Starts any program (a shell, script(1), groff) with this runner's environment, the
    /// built taskctl's directory first on PATH.
    func start(program: URL, _ arguments: [String], input: String? = nil) throws -> (Process, Pipe, Pipe) {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        var environment = self.environment
        if let binary = Self.binary { environment["PATH"] = binary.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "") }
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        // No answers to a question (a bulk change's), as in a script, unless given.
        let stdin = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        try process.run()
        if let input {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try? stdin.fileHandleForWriting.close()
        }
        return (process, out, err)
    }

    /// Runs a program to its end (see ``start(program:_:)``).
    func run(program path: String, _ arguments: [String]) throws -> Result {
        try finish(try start(program: URL(fileURLWithPath: path), arguments))
    }

    @discardableResult
    func run(_ arguments: String...) throws -> Result { try run(arguments) }

    @discardableResult
    func run(_ arguments: [String]) throws -> Result {
        try finish(try start(arguments))
    }

    /// Runs taskctl with `input` as its standard input (answers to its questions).
    @discardableResult
    func run(_ arguments: [String], input: String) throws -> Result {
        guard let binary = Self.binary else { throw CocoaError(.fileNoSuchFile) }
        return try finish(try start(program: binary, arguments, input: input))
    }

    func finish(_ started: (Process, Pipe, Pipe)) throws -> Result {
        let (process, out, err) = started
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, out: String(decoding: outData, as: UTF8.self), err: String(decoding: errData, as: UTF8.self))
    }

    /// Runs and expects success, returning stdout.
    @discardableResult
    func ok(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try run(arguments)
        #expect(result.status == 0, "taskctl \(arguments.joined(separator: " ")) failed: \(result.err)", sourceLocation: sourceLocation)
        return result.out
    }

    /// Runs and expects success, returning stdout.
    @discardableResult
    func ok(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try run(arguments)
        #expect(result.status == 0, "taskctl \(arguments.joined(separator: " ")) failed: \(result.err)", sourceLocation: sourceLocation)
        return result.out
    }

    /// `list --json` (with extra arguments) parsed.
    func tasks(_ arguments: String...) throws -> [[String: Any]] {
        let result = try run(["list", "--json"] + arguments)
        guard result.status == 0, let data = result.out.data(using: .utf8),
            let array = try JSONSerialization.jsonObject(with: data) as? [[String: Any]]
        else {
            Issue.record("list --json failed: \(result.err) \(result.out)")
            return []
        }
        return array
    }

    func texts(_ arguments: String...) throws -> [String] {
        let result = try run(["list", "--json"] + arguments)
        guard let data = result.out.data(using: .utf8), let array = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
            Issue.record("list --json \(arguments) failed: \(result.err)")
            return []
        }
        return array.compactMap { $0["text"] as? String }
    }
}

// Shared by ObjectStoreSyncTests and taskctlTests (each target has a symbolic link to this file).
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A small server for the tests that follows TaskChampion's sync protocol and its server's
/// rules (taskchampion-sync-server cannot be installed here): one chain of versions per
/// client, a version accepted only on the latest (else 409 naming it), 404 after the
/// latest, 410 for a version the server does not have, a snapshot asked for after 10
/// versions (urgently after 100), snapshots stored as sent. Blobs are stored as sealed: the server never sees
/// a key. For fault tests, `GET /fail-next/N` makes the next N requests answer 500,
/// `GET /lose-next/N` makes the next N new versions be stored but answered with 500 (a lost
/// acknowledgement), `GET /slow/SECONDS` delays every answer (0: no more), and
/// `GET /forget` drops every client's versions up to its snapshot (410 after them).
final class ProtocolServer: @unchecked Sendable {
    /// The server's program, beside this file (through the targets' links to it).
    static let script = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("sync_server.py")

    let process = Process()
    let url: URL

    /// The python3 that runs it (Debian's python3; .ci/run has it).
    static let python: String? = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
    /// Whether the tests that need it run: where python3 is, and always under CI.
    static let available = python != nil || ProcessInfo.processInfo.environment["CI"] == "true"

    /// Starts the server; it writes its port to a file, which is waited for (up to 10 s).
    init() throws {
        let portFile = FileManager.default.temporaryDirectory.appendingPathComponent("sync-server-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: portFile) }
        process.executableURL = URL(fileURLWithPath: Self.python ?? "/usr/bin/python3")
        process.arguments = [Self.script.path, portFile.path]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let port = Self.port(writtenTo: portFile)
        guard !port.isEmpty, let url = URL(string: "http://127.0.0.1:\(port)/") else {
            process.terminate()
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "the test sync server did not start"])
        }
        self.url = url
    }

    /// The port a test server wrote to `file` (a line), waited for up to 10 s; empty when none came.
    static func port(writtenTo file: URL) -> String {
        for _ in 0..<1000 {
            if let text = try? String(contentsOf: file, encoding: .utf8), text.hasSuffix("\n") { return text.trimmingCharacters(in: .whitespacesAndNewlines) }
            usleep(10_000)
        }
        return ""
    }

    /// Asks the server for a fault (`fail-next/N`, `forget`).
    func control(_ path: String) throws {
        _ = try Data(contentsOf: url.appendingPathComponent(path))
    }

    deinit {
        // SIGKILL: a child of the test process may inherit SIGTERM blocked, and then
        // outlive `terminate()`.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

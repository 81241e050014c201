import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A hostile HTTP server (Tests/Support/hostile_server.py) in one of its modes.
final class HostileServer {
    let process = Process()
    let url: String

    init(_ mode: String, pause: Double = 1) throws {
        let portFile = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-server-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: portFile) }
        process.executableURL = URL(fileURLWithPath: ProtocolServer.python ?? "/usr/bin/python3")
        process.arguments = [ProtocolServer.script.deletingLastPathComponent().appendingPathComponent("hostile_server.py").path, portFile.path, mode, String(pause)]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let port = ProtocolServer.port(writtenTo: portFile)
        guard !port.isEmpty else {
            process.terminate()
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "the hostile server did not start"])
        }
        url = "http://127.0.0.1:\(port)/"
    }

    deinit {
        // SIGKILL, as for ProtocolServer: SIGTERM may be blocked in a child of the tests.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

import Foundation
import Testing
@testable import ObjectStoreSync

/// A small server for the tests that follows TaskChampion's sync protocol and its server's
/// rules (taskchampion-sync-server cannot be installed here): one chain of versions per
/// client, a version accepted only on the latest (else 409 naming it), 404 after the
/// latest, 410 for a version the server does not have, a snapshot asked for after 100
/// versions, snapshots stored as sent. Blobs are stored as sealed: the server never sees
/// a key.
final class ProtocolServer: @unchecked Sendable {
    static let script = #"""
    import sys, uuid, threading
    from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
    NIL = "00000000-0000-0000-0000-000000000000"
    lock = threading.Lock()
    clients = {}
    def client(cid):
        return clients.setdefault(cid, {"latest": NIL, "children": {}, "snapshot": None, "since": 0})
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args): pass
        def reply(self, code, headers=(), body=b""):
            self.send_response(code)
            for k, v in headers: self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def do_POST(self):
            cid = self.headers.get("X-Client-Id")
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            parts = self.path.strip("/").split("/")
            with lock:
                c = client(cid)
                if parts[:3] == ["v1", "client", "add-version"]:
                    parent = parts[3]
                    if parent != c["latest"]:
                        return self.reply(409, [("X-Parent-Version-Id", c["latest"])])
                    vid = str(uuid.uuid4())
                    c["children"][parent] = (vid, body)
                    c["latest"] = vid
                    c["since"] += 1
                    headers = [("X-Version-Id", vid)]
                    if c["since"] >= 100: headers.append(("X-Snapshot-Request", "urgency=high"))
                    elif c["since"] >= 10: headers.append(("X-Snapshot-Request", "urgency=low"))
                    return self.reply(200, headers)
                if parts[:3] == ["v1", "client", "add-snapshot"]:
                    c["snapshot"] = (parts[3], body)
                    c["since"] = 0
                    # Versions before the snapshot are gone.
                    return self.reply(200)
            self.reply(404)
        def do_GET(self):
            cid = self.headers.get("X-Client-Id")
            parts = self.path.strip("/").split("/")
            with lock:
                c = client(cid)
                if parts[:3] == ["v1", "client", "get-child-version"]:
                    parent = parts[3]
                    if parent in c["children"]:
                        vid, body = c["children"][parent]
                        return self.reply(200, [("X-Version-Id", vid), ("X-Parent-Version-Id", parent),
                                                ("Content-Type", "application/vnd.taskchampion.history-segment")], body)
                    if parent == c["latest"]: return self.reply(404)
                    return self.reply(410)
                if parts == ["v1", "client", "snapshot"]:
                    if c["snapshot"] is None: return self.reply(404)
                    vid, body = c["snapshot"]
                    return self.reply(200, [("X-Version-Id", vid), ("Content-Type", "application/vnd.taskchampion.snapshot")], body)
                if parts == ["forget"]:
                    c["children"] = {}
                    return self.reply(200)
            self.reply(404)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1] + ".tmp", "w") as f: f.write(str(server.server_address[1]) + "\n")
    import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    server.serve_forever()
    """#

    let process = Process()
    let url: URL

    /// Starts the server; it writes its port to a file, which is waited for (up to 10 s).
    init() throws {
        let portFile = FileManager.default.temporaryDirectory.appendingPathComponent("sync-server-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: portFile) }
        process.executableURL = URL(fileURLWithPath: PythonCheck.python ?? "/usr/bin/python3")
        process.arguments = ["-c", Self.script, portFile.path]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var port = ""
        for _ in 0..<1000 where port.isEmpty {
            if let text = try? String(contentsOf: portFile, encoding: .utf8), text.hasSuffix("\n") { port = text.trimmingCharacters(in: .whitespacesAndNewlines) }
            usleep(10_000)
        }
        guard !port.isEmpty, let url = URL(string: "http://127.0.0.1:\(port)/") else {
            process.terminate()
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "the test sync server did not start"])
        }
        self.url = url
    }

    deinit {
        // SIGKILL: a child of the test process may inherit SIGTERM blocked, and then
        // outlive `terminate()`.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

@Suite(.enabled(if: PythonCheck.available, PythonCheck.skipReason))
struct HTTPSyncServerTests {
    static let key = PBKDF2.sha256(password: Array("secret".utf8), salt: Array(repeating: 1, count: 16), iterations: 1, length: 32)

    func replica(_ server: ProtocolServer, client: UUID, key: [UInt8] = HTTPSyncServerTests.key) -> HTTPSyncServer {
        HTTPSyncServer(url: server.url, clientID: client, cryptor: SyncCryptor(key: key))
    }

    @Test func versionsChainOnTheLatestAndConflictsNameIt() async throws {
        let server = try ProtocolServer()
        let client = UUID()
        let a = replica(server, client: client), b = replica(server, client: client)
        let nilVersion = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let task = UUID()
        let first: [SyncOperation] = [.create(task), .update(task, property: "description", value: "milk", timestamp: SyncTimestamp(seconds: 1_714_566_896))]
        #expect(try await a.childVersion(of: nilVersion) == .upToDate)
        guard case .added(let v1, _) = try await a.addVersion(parent: nilVersion, operations: first) else {
            Issue.record("the first version was not added")
            return
        }
        // b still thinks the chain is empty: the server names the version to build on.
        #expect(try await b.addVersion(parent: nilVersion, operations: [.create(UUID())]) == .conflict(expectedParent: v1))
        #expect(try await b.childVersion(of: nilVersion) == .version(id: v1, parent: nilVersion, operations: first))
        #expect(try await b.childVersion(of: v1) == .upToDate)
        // A version the server does not know: gone.
        #expect(try await b.childVersion(of: UUID()) == .gone)
    }

    @Test func snapshotsAreSealedForTheirVersion() async throws {
        let server = try ProtocolServer()
        let a = replica(server, client: UUID())
        #expect(try await a.latestSnapshot() == nil)
        let task = UUID(), version = UUID()
        try await a.addSnapshot(version: version, tasks: [(task, [("description", "milk"), ("status", "pending")])])
        let snapshot = try #require(try await a.latestSnapshot())
        #expect(snapshot.version == version)
        #expect(snapshot.tasks.count == 1 && snapshot.tasks[0].uuid == task && snapshot.tasks[0].properties.map(\.value) == ["milk", "pending"])
    }

    @Test func aWrongSecretOrADeadServerIsNamed() async throws {
        let server = try ProtocolServer()
        let client = UUID()
        let nilVersion = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        guard case .added(let v1, _) = try await replica(server, client: client).addVersion(parent: nilVersion, operations: [.create(UUID())]) else {
            Issue.record("not added")
            return
        }
        let wrong = replica(server, client: client, key: PBKDF2.sha256(password: Array("wrong".utf8), salt: [], iterations: 1, length: 32))
        await #expect(throws: SyncServerError.self) { try await wrong.childVersion(of: nilVersion) }
        do {
            _ = try await wrong.childVersion(of: nilVersion)
        } catch let error as SyncServerError {
            #expect(error == .cannotDecrypt(version: v1, reason: "\(SyncCryptor.Failure.authenticationFailed)"))
            #expect("\(error)".contains("wrong encryption secret"))
        }
        let dead = HTTPSyncServer(url: URL(string: "http://127.0.0.1:9/")!, clientID: client, cryptor: SyncCryptor(key: Self.key))
        await #expect(throws: SyncServerError.self) { try await dead.childVersion(of: nilVersion) }
    }
}

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
/// latest, 410 for a version the server does not have, a snapshot asked for after 100
/// versions, snapshots stored as sent. Blobs are stored as sealed: the server never sees
/// a key. For fault tests, `GET /fail-next/N` makes the next N requests answer 500,
/// `GET /lose-next/N` makes the next N new versions be stored but answered with 500 (a lost
/// acknowledgement), and `GET /forget` drops every client's versions up to its snapshot (410 after them).
final class ProtocolServer: @unchecked Sendable {
    static let script = #"""
    import sys, uuid, threading
    from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
    NIL = "00000000-0000-0000-0000-000000000000"
    lock = threading.Lock()
    clients = {}
    faults = {"fail": 0, "lose": 0}
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
        def failing(self):
            with lock:
                if faults["fail"] > 0:
                    faults["fail"] -= 1
                    return True
            return False
        def do_POST(self):
            cid = self.headers.get("X-Client-Id")
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.failing(): return self.reply(500, body=b"injected failure")
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
                    if faults["lose"] > 0:
                        faults["lose"] -= 1
                        return self.reply(500, body=b"injected failure after storing the version")
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
            if parts[0] in ("fail-next", "lose-next"):
                with lock: faults["fail" if parts[0] == "fail-next" else "lose"] = int(parts[1])
                return self.reply(200)
            if self.failing(): return self.reply(500, body=b"injected failure")
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
                    # As the real server may: the versions up to each client's snapshot go.
                    for each in clients.values():
                        if each["snapshot"] is None: continue
                        parent = NIL
                        while parent != each["snapshot"][0] and parent in each["children"]:
                            parent = each["children"].pop(parent)[0]
                    return self.reply(200)
            self.reply(404)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1] + ".tmp", "w") as f: f.write(str(server.server_address[1]) + "\n")
    import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    server.serve_forever()
    """#

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

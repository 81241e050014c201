import Foundation
import Testing

/// The Rust TaskChampion replica (Taskwarrior 3's own sync code), through PyPI's
/// taskchampion-py 2.0.2, which ships one wheel, for Python 3.9 on Linux. The test makes a
/// virtual environment of a Python 3.9 (pyenv's on these machines) and installs it there,
/// once per machine.
enum RustReplica {
    static let version = "2.0.2"
    static let environment = FileManager.default.temporaryDirectory.appendingPathComponent("objectstore-taskchampion-py-\(version)")
    static var python: String { environment.appendingPathComponent("bin/python").path }

    /// A Python 3.9: on PATH, or pyenv's.
    static let python39: String? = {
        var candidates = ["/usr/bin/python3.9", "/usr/local/bin/python3.9"]
        let pyenv = (ProcessInfo.processInfo.environment["PYENV_ROOT"] ?? NSHomeDirectory() + "/.pyenv") + "/versions"
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: pyenv)) ?? []).sorted() where name.hasPrefix("3.9") {
            candidates.append("\(pyenv)/\(name)/bin/python3")
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Why the replica cannot be had here, or nil once it is installed.
    static let unavailable: String? = {
        if FileManager.default.isExecutableFile(atPath: python), (try? run(python, ["-c", "import taskchampion"])) != nil { return nil }
        guard let python39 else { return "no Python 3.9 (taskchampion-py \(version) has a wheel for 3.9 only)" }
        let staging = environment.path + ".tmp-\(getpid())"
        do {
            try? FileManager.default.removeItem(atPath: staging)
            _ = try run(python39, ["-m", "venv", staging])
            _ = try run(staging + "/bin/pip", ["install", "--quiet", "taskchampion-py==\(version)"])
            try? FileManager.default.removeItem(at: environment)
            try FileManager.default.moveItem(atPath: staging, toPath: environment.path)
            // A venv names its own path in its scripts, not in its interpreter: the python works moved.
            _ = try run(python, ["-c", "import taskchampion"])
            return nil
        } catch {
            return "cannot install taskchampion-py \(version): \(error)"
        }
    }()

    /// Runs a program, returning stdout; a failure throws with its stderr.
    @discardableResult
    static func run(_ program: String, _ arguments: [String], input: String? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let out = Pipe(), err = Pipe(), stdin = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try? stdin.fileHandleForWriting.close()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "\(program) \(arguments.prefix(2).joined(separator: " ")): " + String(decoding: errors, as: UTF8.self)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The replica's program: reads JSON `{"set": {uuid: {key: value or null}}}` on stdin,
    /// applies it (creating tasks it lacks), syncs, and prints every task as JSON.
    static let script = #"""
    import json, re, sys
    import taskchampion as tc
    db, url, client, secret = sys.argv[1:5]
    replica = tc.Replica.new_on_disk(db, True, tc.AccessMode.ReadWrite)
    request = json.loads(sys.stdin.read() or "{}")
    ops = tc.Operations()
    for uuid, keys in request.get("set", {}).items():
        task = replica.get_task(uuid) or replica.create_task(uuid, ops)
        for key, value in keys.items():
            task.set_value(key, value, ops)
    if len(ops): replica.commit_operations(ops)
    replica.sync_to_remote(url, client, secret, False)
    tasks = {}
    for uuid in replica.all_task_uuids():
        text = repr(replica.get_task_data(uuid))
        tasks[str(uuid)] = json.loads(re.search(r"taskmap: (\{.*\}) \}$", text).group(1))
    print(json.dumps(tasks))
    """#
}

@Suite(.enabled(if: ProtocolServer.available, "needs python3 for the test sync server; CI has it"))
struct RustReplicaTests {
    /// Syncs the Rust replica at `db` after setting `keys`, returning every task it has.
    func rust(_ db: URL, _ server: ProtocolServer, set keys: [String: [String: String?]] = [:]) throws -> [String: [String: String]] {
        let request = try JSONSerialization.data(withJSONObject: ["set": keys.mapValues { $0.mapValues { $0 as Any? ?? NSNull() } }])
        let output = try RustReplica.run(RustReplica.python, ["-c", RustReplica.script, db.path, server.url.absoluteString, SyncTests.clientID, SyncTests.secret],
                                         input: String(decoding: request, as: UTF8.self))
        return try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: [String: String]] ?? [:]
    }

    /// A task written by Taskwarrior 3's replica reaches taskctl whole, and taskctl's edits
    /// and tasks reach it, every key it had (user-defined attributes, dependencies) untouched.
    @Test func taskctlAndTheRustReplicaShareOneTaskList() throws {
        if let reason = RustReplica.unavailable {
            #expect(ProcessInfo.processInfo.environment["CI"] != "true", "CI must run the Rust replica: \(reason)")
            print("skipped: \(reason)")
            return
        }
        let server = try ProtocolServer()
        let a = try SyncTests().replica(server)
        let db = a.directory.appendingPathComponent("rust-replica")
        let task = "5f22baa0-9935-4240-86ab-6bd2b598479d", blocker = "0a6f3c1e-5b7d-4c2a-9e8f-1d2c3b4a5f60"
        let written: [String: String] = [
            "description": "Written by the Rust replica", "status": "pending", "entry": "1795000000", "modified": "1795000000",
            "priority": "M", "due": "1798156799", "project": "garden", "tag_home": "", "annotation_1795000100": "first note",
            "estimate": "3", "dep_\(blocker)": "",
        ]
        let blockerKeys: [String: String?] = ["description": "Blocker", "status": "pending", "entry": "1795000000"]
        _ = try rust(db, server, set: [task: written.mapValues { $0 }, blocker: blockerKeys])

        a.now = "2026-11-26T06:00:00Z"
        let received = try a.run("sync")
        #expect(received.status == 0 && received.err.isEmpty, "\(received.err)")
        let shown = try #require(try a.tasks("--all").first { $0["uuid"] as? String == task })
        #expect(shown["text"] as? String == "Written by the Rust replica" && shown["priority"] as? String == "medium")
        #expect(shown["due"] as? String == "2026-12-24T23:59:59Z" && shown["project"] as? String == "garden" && shown["tags"] as? [String] == ["home"])
        #expect((shown["annotations"] as? [[String: Any]])?.first?["text"] as? String == "first note")

        // taskctl edits the task, annotates it, and adds one of its own.
        a.now = "2026-11-26T07:00:00Z"
        try a.ok("edit", task, "--priority", "high", "--tag", "urgent", "--untag", "home")
        try a.ok("annotate", task, "second note")
        try a.ok("add", "Written by taskctl", "+work", "loc:office", "due:2026-12-01")
        try a.ok("done", blocker)
        try SyncTests().sync(a, at: "2026-11-26T07:01:00Z")

        let seen = try rust(db, server)
        var expected = written
        expected["priority"] = "H"
        expected["tag_home"] = nil
        expected["tag_urgent"] = ""
        expected["annotation_1795676400"] = "second note"
        // The edit's time: taskctl's clock (07:00), or just after the Rust replica's real-time
        // stamps it received when those are later (the hybrid clock: a change never goes
        // before one it followed).
        let modified = Int(seen[task]?["modified"] ?? "") ?? 0
        #expect(modified >= 1_795_676_400 && modified <= Int(Date().timeIntervalSince1970) + 1, "modified \(modified)")
        expected["modified"] = seen[task]?["modified"]
        #expect(seen[task] == expected)
        #expect(seen[blocker]?["status"] == "completed" && seen[blocker]?["end"] == "1795676400")
        let ours = try #require(seen.first { $0.value["description"] == "Written by taskctl" }?.value)
        #expect(ours["status"] == "pending" && ours["tag_work"] == "" && ours["location"] == "office" && ours["due"] == "1796169599" && ours["entry"] == "1795676400")

        // The Rust replica's next edit comes back; both hold the same tasks.
        _ = try rust(db, server, set: [task: ["description": "Edited by the Rust replica", "modified": "1795680000"]])
        try SyncTests().sync(a, at: "2026-11-26T08:00:00Z")
        #expect(try a.tasks("--all").contains { $0["text"] as? String == "Edited by the Rust replica" })
        #expect(try a.tasks("--all").count == seen.count)
    }
}

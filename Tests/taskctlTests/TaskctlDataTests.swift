import Foundation
import Testing

/// Import, export, concurrency, migration and crashes, through the built binary.
@Suite(.enabled(if: TaskctlRunner.binary != nil, "needs the built taskctl (swift build)"))
struct TaskctlDataTests {
    static func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    @Test func undoOfALargeImportRemovesEveryImportedTask() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "kept")
        let tasks = (1...3000).map { #"{"description": "imported \#($0)", "uuid": "\#(UUID().uuidString)"}"# }
        let file = t.directory.appendingPathComponent("many.json")
        try Data(("[" + tasks.joined(separator: ",") + "]").utf8).write(to: file)
        try t.ok("import", file.path)
        try t.ok("done", "1")
        #expect(try t.ok("undo") == "undid done of task 1\n")
        #expect(try t.ok("undo") == "undid import of tasks 2-3001\n")
        #expect(try t.texts() == ["kept"])
    }

    @Test func aTaskwarriorExportImportsAndRoundTripsLosingNothing() throws {
        let t = try TaskctlRunner()
        let file = TaskctlRunner.fixtures.appendingPathComponent("taskwarrior-2.6.2-export.json")
        #expect(try t.ok("import", file.path) == "imported 13 tasks from \(file.path) (Taskwarrior JSON): 13 added, 0 updated\n")
        let all = try t.tasks("--all")
        #expect(all.count == 11, "pending and done; the deleted task and the recurring template are not listed")
        let milk = try #require(all.first { $0["uuid"] as? String == "97ad9ea4-d25a-45b1-97f6-fa2109037db6" })
        #expect(milk["text"] as? String == "Buy milk and eggs" && milk["priority"] as? String == "high")
        #expect(milk["due"] as? String == "2026-11-22T00:00:00Z" && milk["project"] as? String == "home" && milk["tags"] as? [String] == ["shopping"])
        let done = try #require(all.first { $0["text"] as? String == "Fix bike tyre" })
        #expect(done["status"] as? String == "done" && done["completed"] as? String == "2026-11-21T21:10:50Z")
        #expect(all.contains { $0["text"] as? String == "Plan Émilie's birthday — cake, balloons & \"surprise\"" })

        // Exported back, every task is the object Taskwarrior wrote.
        let exported = try #require(try Self.json(t.ok("export", "--format", "taskwarrior", "--all")) as? [[String: Any]])
        let original = try #require(try Self.json(String(contentsOf: file, encoding: .utf8)) as? [[String: Any]])
        #expect(exported.count == original.count)
        for task in original {
            let uuid = try #require(task["uuid"] as? String)
            let back = try #require(exported.first { $0["uuid"] as? String == uuid })
            #expect(NSDictionary(dictionary: back).isEqual(to: task), "\(uuid) changed in the round trip")
        }

        // Importing again updates instead of duplicating, all or nothing.
        #expect(try t.ok("import", file.path).contains("0 added, 13 updated"))
        let broken = t.directory.appendingPathComponent("broken.json")
        // (A task without a UUID gets one, as in Taskwarrior; one that is not a UUID is refused.)
        try Data(#"[{"description": "ok", "uuid": "11111111-1111-4111-8111-111111111111"}, {"description": "bad", "uuid": "not-a-uuid"}]"#.utf8).write(to: broken)
        let failed = try t.run("import", broken.path)
        #expect(failed.status == 1 && failed.err.contains("task 2 (line 1): uuid 'not-a-uuid' is not a UUID"), "\(failed.err)")
        #expect(try t.tasks("--all").count == 11, "nothing of a failed import is kept")
    }

    @Test func todoTxtImportsAndRoundTrips() throws {
        let t = try TaskctlRunner()
        let todo = TaskctlRunner.fixtures.appendingPathComponent("todo.txt")
        let done = TaskctlRunner.fixtures.appendingPathComponent("done.txt")
        try t.ok("import", todo.path)
        try t.ok("import", done.path)
        let tasks = try t.tasks("--all")
        #expect(tasks.count == 7)
        let mom = try #require(tasks.first { ($0["text"] as? String)?.hasPrefix("Call Mom") == true })
        #expect(mom["priority"] as? String == "high" && mom["due"] as? String == "2026-11-23T23:59:59Z")
        #expect(mom["location"] as? String == "phone" && mom["project"] as? String == "Family" && mom["created"] as? String == "2026-11-21T00:00:00Z")
        let cleaning = try #require(tasks.first { ($0["text"] as? String)?.hasPrefix("Pick up") == true })
        #expect(cleaning["status"] as? String == "done")
        #expect(tasks.contains { $0["text"] as? String == "Email Zoë about the café menu +Party @computer" })
        let exported = try t.ok("export", "--format", "todo.txt").split(separator: "\n").map(String.init)
        let expected = try (String(contentsOf: todo, encoding: .utf8) + String(contentsOf: done, encoding: .utf8)).split(separator: "\n").map(String.init)
        #expect(exported.sorted() == expected.sorted())
    }

    @Test func taskctlsOwnExportRoundTrips() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "One", "--priority", "high", "--due", "friday", "--location", "Home", "--project", "p", "--tag", "a,b")
        try t.ok("add", "Two")
        try t.ok("done", "2")
        let exported = t.directory.appendingPathComponent("export.json")
        try Data(try t.ok("export").utf8).write(to: exported)
        let other = try TaskctlRunner()
        #expect(try other.ok("import", exported.path).contains("2 added"))
        let strip: ([[String: Any]]) -> [NSDictionary] = { $0.map { var d = $0; d["id"] = nil; return NSDictionary(dictionary: d) } }
        #expect(strip(try other.tasks("--all")) == strip(try t.tasks("--all")))
    }

    /// An export of more tasks than one batch (the export renders and releases 10,000 at a
    /// time, writing as it goes) is whole in every format: each task once, in id order, the
    /// JSON arrays valid across the batches' seams.
    @Test func anExportOfMoreThanABatchIsWhole() throws {
        let t = try TaskctlRunner()
        let count = 10_001
        var lines: [String] = []
        for i in 0..<count {
            lines.append(#"{"description":"Task \#(i)","status":"pending","entry":"20261101T000000Z","uuid":"\#(UUID().uuidString.lowercased())"}"#)
        }
        let file = t.directory.appendingPathComponent("many.json")
        try Data(("[" + lines.joined(separator: ",") + "]").utf8).write(to: file)
        #expect(try t.ok("import", file.path).contains("\(count) added"))
        for format in ["taskctl", "taskwarrior"] {
            let text = try t.ok("export", "--format", format)
            let array = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]], "\(format): not a JSON array")
            #expect(array.count == count, "\(format)")
            let titles = array.compactMap { ($0["text"] ?? $0["description"]) as? String }
            #expect(titles == (0..<count).map { "Task \($0)" }, "\(format): each task once, in order")
        }
        let todo = try t.ok("export", "--format", "todo.txt").split(separator: "\n")
        #expect(todo.count == count && todo.last?.contains("Task \(count - 1)") == true)
    }

    /// `list --json` of more tasks than a batch (read in two passes: the sort keys, then the
    /// tasks again in order, a batch at a time) lists each task once, in the list's order
    /// (urgency, then due date, priority and id), and `--limit` cuts that order.
    @Test func aJSONListOfMoreThanABatchIsWholeAndInOrder() throws {
        let t = try TaskctlRunner()
        let count = 10_003
        var lines: [String] = []
        for i in 0..<count {
            let priority = ["", #","priority":"H""#, #","priority":"M""#, #","priority":"L""#][i % 4]
            let due = i % 5 == 0 ? "" : #","due":"202611\#(10 + i % 17)T000000Z""#
            lines.append(#"{"description":"Task \#(i)","status":"pending","entry":"20261101T000000Z","uuid":"\#(UUID().uuidString.lowercased())"\#(priority)\#(due)}"#)
        }
        let file = t.directory.appendingPathComponent("many.json")
        try Data(("[" + lines.joined(separator: ",") + "]").utf8).write(to: file)
        #expect(try t.ok("import", file.path).contains("\(count) added"))
        let listed = try t.tasks()
        let ids = listed.compactMap { $0["id"] as? Int }
        #expect(ids.count == count && Set(ids).count == count)
        let rank = ["high": 3, "medium": 2, "low": 1, "none": 0]
        func key(_ row: [String: Any]) -> (Double, String, Int, Int) {
            ((row["urgency"] as? Double) ?? 0, (row["due"] as? String) ?? "~", rank[(row["priority"] as? String) ?? ""] ?? 0, (row["id"] as? Int) ?? 0)
        }
        let inOrder = zip(listed, listed.dropFirst()).allSatisfy { a, b in
            let (x, y) = (key(a), key(b))
            if x.0 != y.0 { return x.0 > y.0 }
            if x.1 != y.1 { return x.1 < y.1 }
            if x.2 != y.2 { return x.2 > y.2 }
            return x.3 < y.3
        }
        #expect(inOrder, "urgency, due date, priority, id")
        let limited = try t.tasks("--limit", "10002").compactMap { $0["id"] as? Int }
        #expect(limited == Array(ids.prefix(10_002)))
        let byText = try t.tasks("--sort", "-text").compactMap { $0["text"] as? String }
        #expect(byText == byText.sorted { $0.lowercased() > $1.lowercased() } && byText.count == count)
    }

    @Test func concurrentAddsFromSeveralProcessesAllLand() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "first")
        var processes: [(Process, Pipe, Pipe)] = []
        for worker in 0..<6 {
            for i in 0..<4 { processes.append(try t.start(["add", "w\(worker) t\(i)"])) }
        }
        var ids: [String] = []
        for (process, out, _) in processes {
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            ids.append(text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect(Set(ids).count == 24, "every process got its own id")
        let texts = try t.texts()
        #expect(texts.count == 25 && Set(texts).count == 25)
        #expect(try t.ok("store", "check").hasPrefix("ok:"))
    }

    @Test func anOldStoreIsMigratedWithANotice() throws {
        let t = try TaskctlRunner()
        let fixture = TaskctlRunner.repository.appendingPathComponent("Tests/ObjectStoreTests/Fixtures/Tasks/v1.store")
        try FileManager.default.copyItem(at: fixture, to: t.store)
        let plan = try t.ok("migrate", "--dry-run")
        #expect(plan == "step: v1 -> v2 (inferred)\nstep: v2 -> v3 (custom mapping)\nstep: v3 -> v4 (inferred)\nstep: v4 -> v7 (inferred)\nstep: v7 -> v8 (inferred)\nstep: v8 -> v9 (inferred)\nobjects: Location: 2, Task: 4\ndry run: every object migrates and validates; nothing was written\n")
        #expect(try Data(contentsOf: t.store) == Data(contentsOf: fixture))
        let result = try t.run("list")
        #expect(result.status == 0)
        #expect(result.err.contains("taskctl: migrating tasks.store to the current model"))
        #expect(result.err.contains("the old store is kept at \(t.store.path).v1-backup"))
        #expect(try t.texts().sorted() == ["Buy milk", "Call Zoë ☎", "Read", "Write report"])
        #expect(try t.run("list").err.isEmpty, "the notice comes once")
    }

    /// A migration killed after it linked the backup name to the store and before it renamed
    /// the new store in leaves the original under two names; the next run migrates it (the
    /// long kill harness found runs refused for the store's two hard links), and a backup
    /// of an earlier, finished migration (another file) is kept.
    @Test func aMigrationKilledBeforeItsRenameIsRunAgain() throws {
        let t = try TaskctlRunner()
        let fixture = TaskctlRunner.repository.appendingPathComponent("Tests/ObjectStoreTests/Fixtures/Tasks/v1.store")
        try FileManager.default.copyItem(at: fixture, to: t.store)
        let earlier = URL(fileURLWithPath: t.store.path + ".v1-backup")
        try Data("an earlier backup".utf8).write(to: earlier)
        let stale = t.store.path + ".v1-backup-2"
        #expect(link(t.store.path, stale) == 0)
        let result = try t.run("list")
        #expect(result.status == 0, "\(result.err)")
        #expect(try t.texts().sorted() == ["Buy milk", "Call Zoë ☎", "Read", "Write report"])
        #expect(try Data(contentsOf: earlier) == Data("an earlier backup".utf8))
        #expect(try Data(contentsOf: URL(fileURLWithPath: stale)) == Data(contentsOf: fixture), "the original, kept as this migration's backup")
    }

    /// The pre-release formats, as taskctl wrote them: `format3.store` (binary format 3: a
    /// snapshot with wide entries, then a commit in the log) with that taskctl's export
    /// `format3-export.json`; `format4.store` is it compacted in format 4 (narrow entries),
    /// then a task added and one done in its log; `format5.store` that compacted in format
    /// 5 (packed entries, sparse rows), then a task with a project, a location and a tag
    /// added and one done; `format6.store` that compacted in format 6 (typed rows, a string
    /// dictionary), then a task with two tags added, one edited and one done;
    /// `format7.store` that compacted in format 7 (the log placed apart), then a task with
    /// two tags added, one edited, one done and one annotated; each with that taskctl's
    /// export. Today's taskctl upgrades each on open to store format 1.0 with a notice,
    /// keeps the original as a backup, and reads it as that taskctl did.
    @Test(arguments: [3, 4, 5, 6, 7])
    func aPreReleaseFormatIsUpgradedWithABackupAndReadsAsBefore(format: Int) throws {
        let t = try TaskctlRunner()
        let fixture = TaskctlRunner.fixtures.appendingPathComponent("format\(format).store")
        try FileManager.default.copyItem(at: fixture, to: t.store)
        let expected = try String(contentsOf: TaskctlRunner.fixtures.appendingPathComponent("format\(format)-export.json"), encoding: .utf8)
        #expect(try Data(contentsOf: t.store)[8] == UInt8(format))
        let first = try t.run("export")
        #expect(first.status == 0, "\(first.err)")
        #expect(first.out == expected)
        // Written with model v4 (v5 and v6 share its hashes): migrated to v8 in the same run.
        let backup = URL(fileURLWithPath: t.store.path + ".v4-backup")
        #expect(first.err.contains("upgraded the store from the pre-release binary format \(format) to store format 1.0; the old store is kept at \(backup.path)"), "\(first.err)")
        #expect(try Data(contentsOf: backup) == Data(contentsOf: fixture), "the original, untouched")
        #expect(try Data(contentsOf: t.store)[8] == 8, "store format 1.0")
        #expect(try t.ok("store", "check").hasPrefix("ok:"))
        // A range of due dates (the store's dueDate index serves it): what that taskctl listed.
        let dueTexts = try t.tasks("--due-after", "2026-12-19", "--due-before", "2026-12-21").compactMap { $0["text"] as? String }.sorted()
        #expect(dueTexts == (["Task 19 of the format-3 fixture", "Task 2 of the format-3 fixture"] + (format >= 4 ? ["Added after the format-4 compaction"] : [])).sorted())
        let again = try t.run("export")
        #expect(again.out == expected)
        #expect(again.err.isEmpty, "upgraded once: \(again.err)")
        try t.ok("add", "After the upgrade")
        try t.ok("store", "compact")
        #expect(try t.texts().contains("After the upgrade"))
        #expect(try t.ok("store", "check").hasPrefix("ok:"))
    }

    /// Four taskctl processes meet a pre-release store at once, through a symbolic link:
    /// one upgrades it (one backup, beside the real file, the fixture byte for byte), the
    /// others wait for the lock and read the file it put in place; each export is the one
    /// that taskctl made, the link stays a link, and a process that writes next works.
    @Test func severalProcessesUpgradeAPreReleaseStoreOnceThroughALink() throws {
        let t = try TaskctlRunner()
        let data = t.directory.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let real = data.appendingPathComponent("tasks.store")
        let fixture = TaskctlRunner.fixtures.appendingPathComponent("format7.store")
        try FileManager.default.copyItem(at: fixture, to: real)
        try FileManager.default.createSymbolicLink(at: t.store, withDestinationURL: real)
        let expected = try String(contentsOf: TaskctlRunner.fixtures.appendingPathComponent("format7-export.json"), encoding: .utf8)
        let started = try (0..<4).map { _ in try t.start(["export"]) }
        var notices = 0
        for (process, out, err) in started {
            let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(message)")
            #expect(printed == expected)
            if message.contains("upgraded the store from the pre-release binary format 7") { notices += 1 }
        }
        #expect(notices == 1, "one process upgraded the store")
        let beside = try FileManager.default.contentsOfDirectory(atPath: data.path).sorted()
        #expect(beside == ["tasks.store", "tasks.store.v4-backup"], "\(beside)")
        #expect(try Data(contentsOf: data.appendingPathComponent("tasks.store.v4-backup")) == Data(contentsOf: fixture))
        #expect(try Data(contentsOf: real)[8] == 8)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: t.store.path)) != nil, "the link stays a link")
        try t.ok("add", "After the upgrade, through the link")
        #expect(try t.ok("store", "check").hasPrefix("ok:"))
        #expect(try t.ok("--store", real.path, "export").contains("After the upgrade, through the link"))
    }

    @Test func killedMidSaveTheStoreStaysWholeAndHoldsEveryConfirmedAdd() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "seed")
        var confirmed: Set<String> = ["seed"]
        var killed = 0
        let rounds = max(25, ReliabilityTests.rounds)
        let delay = try ReliabilityTests.killDelays(t)
        for round in 0..<rounds {
            let text = "round \(round)"
            let (process, out, _) = try t.start(["add", text, "--location", "L\(round % 3)"])
            // Kill at moments spread from before the save to after it.
            usleep(delay(round))
            kill(process.processIdentifier, SIGKILL)
            let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            if process.terminationReason == .exit && process.terminationStatus == 0 && !printed.isEmpty {
                confirmed.insert(text)
            } else {
                killed += 1
            }
            // After every kill the store opens and checks out.
            let check = try t.run("store", "check")
            #expect(check.status == 0, "round \(round): \(check.err)")
        }
        let texts = Set(try t.texts())
        #expect(confirmed.isSubset(of: texts), "every add that returned its id is in the store")
        #expect(texts.allSatisfy { $0 == "seed" || $0.hasPrefix("round ") })
        ReliabilityTests.expectBothOutcomes(killed: killed, confirmed: confirmed.count - 1, rounds: rounds)
        print("kill harness (adds): \(rounds) rounds, \(killed) killed before finishing, \(confirmed.count) confirmed adds all present")
    }
}

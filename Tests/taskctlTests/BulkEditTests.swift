import Foundation
import Testing

/// `edit --where` of attributes alone runs as a batch update in the store; it must leave
/// exactly what the one-task-at-a-time edit leaves (the `--json` edit still takes that path),
/// undo as one, and refuse what that edit refuses, before changing anything.
@Suite struct BulkEditTests {
    /// A store with pending tasks of each priority (some due), a done one, a recurring series
    /// and a task imported from Taskwarrior with its `modified` time.
    static func seeded() throws -> TaskctlRunner {
        let t = try TaskctlRunner()
        try t.ok("add", "low one", "--priority", "low")
        try t.ok("add", "low due", "--priority", "low", "--due", "tomorrow", "--location", "Home", "--tag", "x")
        try t.ok("add", "none")
        try t.ok("add", "medium", "--priority", "medium", "--project", "p")
        try t.ok("add", "done one", "--priority", "low")
        try t.ok("done", "5")
        try t.ok("add", "weekly", "--priority", "low", "--due", "2026-11-20", "--recur", "weekly")
        return t
    }

    static func copy(_ t: TaskctlRunner) throws -> TaskctlRunner {
        let other = try TaskctlRunner()
        try FileManager.default.copyItem(at: t.store, to: other.store)
        return other
    }

    @Test(arguments: [
        ["--priority", "medium"],
        ["--priority", "none", "--text", "renamed"],
        ["--no-due"],
        ["--priority", "high"],
        ["--priority", "high", "--no-due"],
    ])
    func theBatchEditLeavesWhatTheOneByOneEditLeaves(changes: [String]) throws {
        let batch = try Self.seeded()
        let single = try Self.copy(batch)
        let before = try batch.ok("export")
        let command = ["edit", "--where", "priority <= 1 AND dueDate != nil", "--yes"] + changes
        let batchOut = try batch.run(command)
        let singleOut = try single.run(command + ["--json"])
        #expect(batchOut.status == singleOut.status, "\(batchOut.err) | \(singleOut.err)")
        #expect(try batch.ok("export") == single.ok("export"))
        if batchOut.status == 0 {
            #expect(batchOut.out.split(separator: "\n").allSatisfy { $0.hasPrefix("edited ") || $0.contains("already had those values") }, "\(batchOut.out)")
            // The same changes in one transaction (listed in another order).
            #expect(try batch.ok("log").split(separator: "\n").sorted() == single.ok("log").split(separator: "\n").sorted())
            try batch.ok("undo")
            try single.ok("undo")
            #expect(try batch.ok("export") == before)
            #expect(try single.ok("export") == before)
        }
    }

    /// The rule a one-by-one edit finds at its first task is found over the whole selection
    /// first: nothing changes.
    @Test func aHighPriorityWithoutADueDateIsRefusedBeforeAnythingChanges() throws {
        let t = try Self.seeded()
        let before = try t.ok("export")
        let refused = try t.run("edit", "--where", "priority <= 1", "--priority", "high", "--yes")
        #expect(refused.status == 1)
        #expect(refused.err.contains("a high-priority task needs a due date"))
        #expect(try t.ok("export") == before)
        // Tasks already high without a due date stay editable by other attributes.
        try t.ok("edit", "--where", "title == 'low due'", "--priority", "high", "--yes")
        let removed = try t.run("edit", "--where", "title == 'low due'", "--no-due", "--yes")
        #expect(removed.status == 1 && removed.err.contains("needs a due date"))
    }

    /// Tasks whose Taskwarrior fields the edit must touch (a `modified` time kept from an
    /// import) take the one-by-one path, which stamps it.
    @Test func aSelectionWithTaskwarriorFieldsIsEditedOneByOne() throws {
        let t = try TaskctlRunner()
        let file = t.directory.appendingPathComponent("import.json")
        try Data(#"[{"uuid":"8c2f3a7e-1b4d-4e5f-9a6b-7c8d9e0f1a2b","description":"from tw","status":"pending","entry":"20261101T000000Z","modified":"20261102T000000Z"}]"#.utf8).write(to: file)
        try t.ok("import", file.path)
        try t.ok("edit", "--where", "title == 'from tw'", "--priority", "low", "--yes")
        #expect(try t.ok("_get", "1.modified") == "2026-11-22T12:00:00\n")
    }

    /// `FILTER done`, `delete` and `reopen` by a filter run as a batch: the same stored
    /// result, warnings and lines as the one-by-one path (`--json` takes that one), one undo.
    @Test(arguments: [["+x", "done"], ["priority:L", "delete"], ["status:completed", "reopen"], ["+nomatch", "done"]])
    func aStatusChangeByFilterLeavesWhatTheOneByOneChangeLeaves(words: [String]) throws {
        let batch = try Self.seeded()
        try batch.ok("add", "tagged", "--tag", "x", "--priority", "low")
        try batch.ok("add", "already", "--tag", "x")
        try batch.ok("done", "8")
        let single = try Self.copy(batch)
        let before = try batch.ok("export")
        let batchOut = try batch.run(words + ["--yes"])
        let singleOut = try single.run(words + ["--yes", "--json"])
        #expect(batchOut.status == singleOut.status, "\(batchOut.err) | \(singleOut.err)")
        #expect(batchOut.err == singleOut.err)
        #expect(try batch.ok("export") == single.ok("export"))
        guard batchOut.status == 0 else { return }
        #expect(try batch.ok("log").split(separator: "\n").sorted() == single.ok("log").split(separator: "\n").sorted())
        try batch.ok("undo")
        #expect(try batch.ok("export") == before)
    }

    /// The batch edit and done run while other processes add tasks and compact the store, one
    /// of them through a symlink to the store: every command lands, the store checks, each
    /// task that existed before is edited, and the adds are all there.
    @Test func batchChangesRunBesideOtherProcessesAndThroughASymlink() throws {
        let t = try TaskctlRunner()
        for i in 0..<30 { try t.ok("add", "task \(i)", "--tag", i % 2 == 0 ? "even" : "odd") }
        let real = t.store
        let link = t.directory.appendingPathComponent("link.store")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        var started: [(Process, Pipe, Pipe, String)] = []
        t.store = link
        for (label, words) in [("edit", ["edit", "--where", "title BEGINSWITH 'task'", "--priority", "low", "--yes"]), ("done", ["+odd", "done", "--yes"])] {
            let (p, o, e) = try t.start(words)
            started.append((p, o, e, label))
        }
        t.store = real
        for i in 0..<4 {
            let (p, o, e) = try t.start(["add", "added \(i)"])
            started.append((p, o, e, "add \(i)"))
        }
        let (p, o, e) = try t.start(["store", "compact"])
        started.append((p, o, e, "compact"))
        for (process, _, err, label) in started {
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(label): \(message)")
        }
        #expect(try t.run("store", "check").status == 0)
        let tasks = try t.tasks("--all")
        #expect(tasks.count == 34)
        let original = tasks.filter { ($0["text"] as? String)?.hasPrefix("task") == true }
        #expect(original.count == 30 && original.allSatisfy { $0["priority"] as? String == "low" })
        #expect(original.filter { $0["status"] as? String == "done" }.count == 15)
    }
}

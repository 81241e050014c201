import Foundation
import Testing

/// The stepped kill harness: a command is run once to list its file-changing steps (every
/// write, flush, truncation, rename and link of the store, counted by the debug build's
/// `OBJECTSTORE_STEP_LOG`), then once per step from the same store, killed with SIGKILL
/// just before that step (`OBJECTSTORE_KILL_AT_STEP`). After each kill the store must be
/// as before the command or as after it, pass `store check`, take the command again and
/// undo it. Unlike the timed kill harness of ReliabilityTests, no point is left to luck.
@Suite struct SteppedKillTests {
    struct Step: Equatable {
        var number: Int
        var name: String
        var path: String
    }

    /// The steps `arguments` takes from the store as it is (the store is put back after).
    static func steps(_ t: TaskctlRunner, _ arguments: [String]) throws -> [Step] {
        let saved = try Data(contentsOf: t.store)
        defer { try? saved.write(to: t.store) }
        let log = t.directory.appendingPathComponent("steps-\(UUID().uuidString).log")
        t.extraEnvironment["OBJECTSTORE_STEP_LOG"] = log.path
        defer { t.extraEnvironment["OBJECTSTORE_STEP_LOG"] = nil }
        let result = try t.run(arguments)
        #expect(result.status == 0, "taskctl \(arguments.joined(separator: " ")): \(result.err)")
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let number = Int(parts[0]) else { return nil }
            let rest = String(parts[1])
            let name = ["sync directory", "truncate", "write", "sync", "rename", "link", "create"].first { rest.hasPrefix($0 + " ") } ?? rest
            return Step(number: number, name: name, path: String(rest.dropFirst(name.count + 1)))
        }
    }

    /// Whether a command's steps include a log cut: a commit flushes once, a cut twice more
    /// (its new log, then the header pointing at it) and cuts the file after it.
    static func cutsTheLog(_ steps: [Step]) -> Bool {
        steps.filter { $0.name == "sync" }.count >= 3 && steps.last?.name == "truncate"
    }

    /// The store's export without UUIDs (an `add` run again makes another).
    static func state(_ t: TaskctlRunner) throws -> String {
        let result = try t.run(["export"])
        guard result.status == 0 else { return "export failed: " + result.err }
        return result.out.replacingOccurrences(of: #""uuid": "[0-9a-f-]{36}""#, with: "\"uuid\"", options: .regularExpression)
    }

    /// Runs `command` from the store as it is, killed at each of its steps in turn; checks
    /// what each kill left. Returns how many steps were tried.
    @discardableResult
    static func killAtEveryStep(_ t: TaskctlRunner, _ command: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        let original = try Data(contentsOf: t.store)
        let before = try state(t)
        let steps = try steps(t, command)
        #expect(!steps.isEmpty, "the command took no step", sourceLocation: sourceLocation)
        _ = try t.run(command)
        let after = try state(t)
        #expect(before != after, sourceLocation: sourceLocation)
        for step in steps {
            try original.write(to: t.store)
            t.extraEnvironment["OBJECTSTORE_KILL_AT_STEP"] = String(step.number)
            let killed = try t.run(command)
            t.extraEnvironment["OBJECTSTORE_KILL_AT_STEP"] = nil
            let label = "killed before step \(step.number) (\(step.name) \(step.path))"
            #expect(killed.status == SIGKILL, "\(label): exit \(killed.status) \(killed.err)", sourceLocation: sourceLocation)
            let check = try t.run(["store", "check"])
            #expect(check.status == 0, "\(label): store check: \(check.err)\(check.out)", sourceLocation: sourceLocation)
            let export = try state(t)
            #expect(export == before || export == after, "\(label): neither the state before nor after: \(export)", sourceLocation: sourceLocation)
            // The command again (after a kill that left the state before) lands; undo takes it back.
            if export == before {
                let again = try t.run(command)
                #expect(again.status == 0, "\(label): the command again: \(again.err)", sourceLocation: sourceLocation)
            }
            #expect(try state(t) == after, "\(label)", sourceLocation: sourceLocation)
            let undo = try t.run(["undo"])
            #expect(undo.status == 0, "\(label): undo: \(undo.err)", sourceLocation: sourceLocation)
            #expect(try state(t) == before, "\(label): undo did not give the state before", sourceLocation: sourceLocation)
            let add = try t.run(["add", "after the kill"])
            #expect(add.status == 0, "\(label): add: \(add.err)", sourceLocation: sourceLocation)
            #expect(try t.run(["store", "check"]).status == 0, "\(label)", sourceLocation: sourceLocation)
        }
        return steps.count
    }

    /// Edits with `arguments(round)` until the next one cuts the log; returns that edit.
    static func editUntilACut(_ t: TaskctlRunner, _ arguments: (Int) -> [String]) throws -> [String]? {
        for round in 0..<60 {
            let command = arguments(round)
            if cutsTheLog(try steps(t, command)) { return command }
            let result = try t.run(command)
            #expect(result.status == 0, "\(result.err)")
        }
        return nil
    }

    static func runner() throws -> TaskctlRunner {
        let t = try TaskctlRunner()
        // A log of 6 KiB is cut (or compacted) instead of 256 KiB: a few edits reach it.
        t.extraEnvironment["OBJECTSTORE_COMPACTION_THRESHOLD"] = "6000"
        return t
    }

    /// A cut whose history goes with the new log (its transactions are few): edits of one
    /// long task's priority write the whole row each time and a short transaction.
    @Test func aLogCutCarryingItsHistoryKilledAtEveryStepLeavesTheStoreBeforeOrAfter() throws {
        let t = try Self.runner()
        try t.ok("add", String(repeating: "a long text ", count: 50))
        try t.ok("add", "another task", "--tag", "x")
        try t.ok("store", "compact")
        let command = try #require(try Self.editUntilACut(t) { ["edit", "1", "--priority", $0 % 2 == 0 ? "low" : "medium"] })
        let count = try Self.killAtEveryStep(t, command)
        print("stepped kills of a log cut carrying its history: \(count) steps")
    }

    /// A cut whose history gets a region of its own before the new log: edits of a long
    /// text, whose transactions (old and new text) outweigh the rows.
    @Test func aLogCutWritingAHistoryRegionKilledAtEveryStepLeavesTheStoreBeforeOrAfter() throws {
        let t = try Self.runner()
        try t.ok("add", "first")
        try t.ok("add", "another task", "--tag", "x")
        try t.ok("store", "compact")
        let command = try #require(try Self.editUntilACut(t) { ["edit", "1", "--text", String(repeating: "round \($0) ", count: 120)] })
        let count = try Self.killAtEveryStep(t, command)
        print("stepped kills of a log cut writing a history region: \(count) steps")
    }

    /// Ordinary commits, of a command that makes objects and links and of one that changes
    /// a task and its links, killed at each step of the commit the same way.
    @Test(arguments: [["add", "new", "--location", "Office", "--tag", "y", "--project", "p"], ["done", "2"], ["edit", "2", "--untag", "x", "--no-location"],
                      ["edit", "--where", "priority == 0", "--priority", "low", "--yes"], ["+x", "done"]])
    func anOrdinaryCommitKilledAtEveryStepLeavesTheStoreBeforeOrAfter(command: [String]) throws {
        let t = try TaskctlRunner()
        try t.ok("add", "first", "--location", "Home")
        try t.ok("add", "second", "--tag", "x", "--location", "Home")
        try Self.killAtEveryStep(t, command)
    }

    /// A migration on open (a store of model v1: six steps, each a new file beside the store,
    /// then the backup's link and the rename that puts the result in place), killed before
    /// each of its file steps in turn: the next run finds either the old store (and migrates
    /// it, removing what the killed run left) or the migrated one, lists the same tasks, and
    /// passes `store check`; no temporary file is left once a run has finished.
    @Test func aMigrationKilledAtEveryStepLeavesTheOldStoreOrTheNew() throws {
        let t = try TaskctlRunner()
        let fixture = TaskctlRunner.repository.appendingPathComponent("Tests/ObjectStoreTests/Fixtures/Tasks/v1.store")
        let expected = ["Buy milk", "Call Zo\u{00EB} \u{260E}", "Read", "Write report"]
        let directory = t.store.deletingLastPathComponent()
        func reset() throws {
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasPrefix(t.store.lastPathComponent) {
                try FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            }
            try FileManager.default.copyItem(at: fixture, to: t.store)
        }
        try reset()
        let steps = try Self.steps(t, ["list"])
        #expect(steps.contains { $0.name == "link" } && steps.contains { $0.name == "rename" }, "\(steps)")
        for step in steps {
            try reset()
            t.extraEnvironment["OBJECTSTORE_KILL_AT_STEP"] = String(step.number)
            let killed = try t.run(["list"])
            t.extraEnvironment["OBJECTSTORE_KILL_AT_STEP"] = nil
            let label = "killed before step \(step.number) (\(step.name) \(step.path))"
            #expect(killed.status == SIGKILL, "\(label): exit \(killed.status) \(killed.err)")
            let again = try t.run(["list"])
            #expect(again.status == 0, "\(label): \(again.err)")
            #expect(try t.texts().sorted() == expected, "\(label)")
            #expect(try t.ok("store", "check").hasPrefix("ok:"), "\(label)")
            let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".migrating-") }
            #expect(left.isEmpty, "\(label): \(left)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: t.store.path + ".v1-backup")) == Data(contentsOf: fixture), "\(label): the backup is the original")
        }
    }
}

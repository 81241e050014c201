import Foundation
import Testing

/// Crashes, concurrent writers and full disks, through the built binary. Rounds come from
/// OBJECTSTORE_KILL_ROUNDS (a short run in CI; docs/reliability.md has a long one).
@Suite(.enabled(if: TaskctlRunner.binary != nil, "needs the built taskctl (swift build)"))
struct ReliabilityTests {
    static let rounds = ProcessInfo.processInfo.environment["OBJECTSTORE_KILL_ROUNDS"].flatMap(Int.init) ?? 12

    /// Kill delays spread evenly from 0 to about four times a command's run time on this
    /// machine, measured first: the short ones kill before or inside the save, the long ones
    /// let it finish, so every run both kills and confirms (a harness that only ever killed,
    /// or never did, would prove nothing), whatever the machine's speed.
    static func killDelays(_ t: TaskctlRunner, probe: [String] = ["list"]) throws -> (Int) -> UInt32 {
        var durations: [Double] = []
        for _ in 0..<3 {
            let start = Date()
            _ = try t.run(probe)
            durations.append(Date().timeIntervalSince(start))
        }
        let typical = durations.sorted()[1] * 1_000_000
        return { round in UInt32(min(2_000_000, Double(round % 6) / 5.0 * 4.0 * typical)) }
    }

    /// Requires both outcomes in a kill harness run: some commands killed, some confirmed.
    static func expectBothOutcomes(killed: Int, confirmed: Int, rounds: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        let minimum = max(1, rounds / 6)
        #expect(killed >= minimum, "only \(killed) of \(rounds) commands were killed before finishing", sourceLocation: sourceLocation)
        #expect(confirmed >= minimum, "only \(confirmed) of \(rounds) commands confirmed their change: the harness proved nothing", sourceLocation: sourceLocation)
    }

    /// Runs a command and kills it with SIGKILL after `delay` microseconds; returns whether
    /// it finished on its own (status 0) first.
    static func runKilled(_ t: TaskctlRunner, _ arguments: [String], delay: UInt32) throws -> Bool {
        let (process, out, _) = try t.start(arguments)
        usleep(delay)
        kill(process.processIdentifier, SIGKILL)
        _ = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationReason == .exit && process.terminationStatus == 0
    }

    @Test(arguments: ["tasks.store", "tasks.json"])
    func killsDuringEditsDeletesAndRelationshipChangesLoseNothingConfirmed(storeName: String) throws {
        let t = try TaskctlRunner(storeName: storeName)
        for i in 1...6 { try t.ok("add", "task \(i)", "--location", "L\(i % 2)") }
        var expected: [Int: String] = [:]  // id -> text every confirmed edit left
        for i in 1...6 { expected[i] = "task \(i)" }
        var deleted: Set<Int> = []
        var killed = 0, confirmed = 0
        let delay = try Self.killDelays(t)
        defer { print("kill harness (\(storeName)): \(Self.rounds) rounds, \(killed) killed before finishing, \(confirmed) confirmed, store checked after each") }
        for round in 0..<Self.rounds {
            let id = 1 + round % 6
            let action = round % 4
            let arguments: [String]
            switch action {
            case 0: arguments = ["edit", String(id), "--text", "edited \(round)", "--location", "L\(round % 3)"]
            case 1: arguments = ["done", String(id)]
            case 2: arguments = ["location", "rename", "L\(round % 3)", "M\(round)"]
            default: arguments = ["delete", String(id)]
            }
            let finished = try Self.runKilled(t, arguments, delay: delay(round))
            if finished { confirmed += 1 } else { killed += 1 }
            if finished && action == 0 { expected[id] = "edited \(round)" }
            if finished && action == 3 { deleted.insert(id) }
            let check = try t.run("store", "check")
            #expect(check.status == 0, "round \(round) (\(arguments)): \(check.err)")
            // Whatever happened, the task holds either its old or its new text, never a mix.
            let all = try t.tasks("--all")
            for task in all {
                guard let taskID = task["id"] as? Int, let text = task["text"] as? String else { continue }
                if let want = expected[taskID], !finished || action != 0 || taskID != id {
                    #expect(text == want || text.hasPrefix("edited "), "task \(taskID): \(text)")
                }
            }
        }
        let final = try t.tasks("--all")
        for task in final {
            guard let id = task["id"] as? Int else { continue }
            #expect(!deleted.contains(id), "a confirmed delete came back: \(id)")
        }
        Self.expectBothOutcomes(killed: killed, confirmed: confirmed, rounds: Self.rounds)
    }

    @Test func aKilledMigrationLeavesTheOriginalOpenable() throws {
        let fixture = TaskctlRunner.repository.appendingPathComponent("Tests/ObjectStoreTests/Fixtures/Tasks/v1.store")
        let original = try Data(contentsOf: fixture)
        for _ in 0..<max(3, Self.rounds / 3) {
            let t = try TaskctlRunner()
            try original.write(to: t.store)
            let finished = try Self.runKilled(t, ["list"], delay: UInt32.random(in: 0...60_000))
            let after = try Data(contentsOf: t.store)
            if !finished {
                // Either untouched, or fully migrated (the rename happened before the kill).
                let migrated = try t.run("migrate", "--dry-run").out.contains("already at the current")
                #expect(after == original || migrated)
            }
            #expect(try t.texts().sorted() == ["Buy milk", "Call Zoë ☎", "Read", "Write report"], "the next run migrates and keeps every task")
        }
    }

    @Test func aKilledCompactionLeavesAWholeStore() throws {
        let t = try TaskctlRunner()
        for i in 1...5 { try t.ok("add", "task \(i)") }
        for round in 0..<max(4, Self.rounds / 2) {
            for i in 1...5 { try t.ok("edit", String(i), "--text", "round \(round) task \(i)") }
            _ = try Self.runKilled(t, ["store", "compact"], delay: UInt32.random(in: 0...20_000))
            #expect(try t.run("store", "check").status == 0)
            #expect(try t.texts().sorted() == (1...5).map { "round \(round) task \($0)" })
        }
    }

    @Test func concurrentEditorsOfDifferentFieldsBothLand() throws {
        let t = try TaskctlRunner()
        for i in 1...8 { try t.ok("add", "task \(i)") }
        var processes: [(Process, Pipe, Pipe)] = []
        for i in 1...8 {
            processes.append(try t.start(["edit", String(i), "--priority", "low"]))
            processes.append(try t.start(["edit", String(i), "--location", "Office"]))
            processes.append(try t.start(["done", String((i % 8) + 1)]))
        }
        for (process, _, err) in processes {
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(message)")
        }
        let tasks = try t.tasks("--all")
        #expect(tasks.count == 8)
        #expect(tasks.allSatisfy { $0["priority"] as? String == "low" && $0["location"] as? String == "Office" && $0["status"] as? String == "done" })
    }

    @Test func aFullDiskFailsTheSaveCleanlyAndKeepsThePreviousState() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "before")
        let before = try Data(contentsOf: t.store)
        guard let binary = TaskctlRunner.binary else { return }
        // A file-size limit (bash counts KiB) below the store's end: the next save's append
        // cannot be written.
        let limitBlocks = before.count / 1024
        let result = try t.run(program: "/bin/bash", ["-c", "ulimit -f \(limitBlocks); exec \"$0\" add \"$1\"", binary.path, String(repeating: "long text ", count: 40)])
        let message = result.err
        #expect(result.status == 2, "\(message)")
        #expect(message.contains("cannot write") || message.contains("File too large"), "\(message)")
        #expect(try t.texts() == ["before"])
        #expect(try t.run("store", "check").status == 0)
        try t.ok("add", "after")
        #expect(try t.texts().sorted() == ["after", "before"])
    }
}

import Foundation
import Testing

/// A large import saves in batches and commits them together (`committingTogether`). The
/// debug build lets TASKCTL_IMPORT_BATCH make the batches small, so a few hundred tasks go
/// through the same path as a million.
@Suite(.serialized, .enabled(if: TaskctlRunner.binary != nil, "needs the built taskctl (swift build)"))
struct BatchedImportTests {
    /// A Taskwarrior export of `count` tasks: projects, tags, locations (a UDA taskctl reads
    /// as the location), due dates, annotations; the UUID of task `repeatOf` again at the end.
    static func export(count: Int, repeating repeatOf: Int? = nil, first: Int = 0) -> String {
        var tasks: [String] = []
        func uuid(_ i: Int) -> String { String(format: "00000000-0000-0000-0000-%012d", i + 1) }
        for i in first..<(first + count) {
            var fields = ["\"description\": \"Task \(i)\"", "\"entry\": \"20261101T000000Z\"", "\"status\": \"\(i % 10 == 9 ? "completed" : "pending")\"",
                          "\"uuid\": \"\(uuid(i))\"", "\"project\": \"project\(i % 7)\"", "\"tags\": [\"tag\(i % 5)\", \"all\"]"]
            if i % 10 == 9 { fields.append("\"end\": \"20261110T000000Z\"") }
            if i % 3 == 0 { fields.append("\"due\": \"202612\(String(format: "%02d", 1 + i % 28))T120000Z\"") }
            if i % 11 == 0 { fields.append("\"annotations\": [{\"entry\": \"20261102T000000Z\", \"description\": \"note \(i)\"}]") }
            tasks.append("{" + fields.joined(separator: ", ") + "}")
        }
        if let repeatOf {
            tasks.append("{\"description\": \"Task \(repeatOf) again\", \"entry\": \"20261101T000000Z\", \"status\": \"pending\", \"uuid\": \"\(uuid(repeatOf))\", \"tags\": [\"again\"]}")
        }
        return "[\n" + tasks.joined(separator: ",\n") + "\n]\n"
    }

    private func write(_ text: String, in t: TaskctlRunner, as name: String) throws -> String {
        let url = t.directory.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    /// In batches of 100, an import of 1,051 records (one updating a stored task, one
    /// repeating a UUID of an earlier batch) leaves the store a single save leaves: the same
    /// export and counts, one transaction in the log, and one undo back to before it; with
    /// the file parsed on a second thread a batch ahead (RecordStream) and on this one.
    @Test func aBatchedImportIsOneSaveOneTransactionAndOneUndo() throws {
        var exports: [String] = []
        for (batch, ahead) in [("100", true), ("100", false), (nil, false)] {
            let t = try TaskctlRunner()
            if let batch { t.extraEnvironment["TASKCTL_IMPORT_BATCH"] = batch }
            if !ahead { t.extraEnvironment["TASKCTL_IMPORT_AHEAD"] = "0" }
            try t.ok("import", try write(Self.export(count: 5, first: 2_000), in: t, as: "before.json"))
            try t.ok("import", try write(Self.export(count: 1, first: 40), in: t, as: "stored.json"))
            let before = try t.ok("export")
            let result = try t.run(["import", try write(Self.export(count: 1_050, repeating: 7), in: t, as: "large.json")])
            #expect(result.status == 0 && result.out.contains("imported 1051 tasks") && result.out.contains("1049 added, 2 updated"), "\(result.out) \(result.err)")
            #expect(result.err.contains("imported in 11 batches") == (batch != nil), "\(result.err)")
            #expect(result.err.contains("parsed ahead") == ahead, "\(result.err)")
            #expect(try t.run("store", "check").status == 0)
            exports.append(try t.ok("export"))
            let log = try t.ok("log")
            #expect(log.components(separatedBy: "\n").filter { $0.hasPrefix("#") }.count == 3, "\(log.prefix(300))")
            try t.ok("undo")
            #expect(try t.ok("export") == before, "one undo reverts the whole import")
        }
        #expect(exports.count == 3 && Set(exports).count == 1)
    }

    /// A task the parse refuses in the last chunk, or JSON broken there, with the file parsed
    /// a chunk ahead: the import stops with the message the parse on this thread gives, and
    /// nothing of the chunks before it stays. So does an import refused in its first chunk,
    /// while the rest is being parsed.
    @Test(arguments: [("\"due\": \"202612", "\"due\": \"not a date"), ("\"Task 449\",", "\"Task 449\" \"x\","), ("\"Task 3\"", "\"\(String(repeating: "x", count: 100_001))\"")])
    func aFailureAfterTheChunksParsedAheadImportsNothing(_ replacing: String, _ with: String) throws {
        var errors: [String] = []
        for ahead in [true, false] {
            let t = try TaskctlRunner()
            t.extraEnvironment["TASKCTL_IMPORT_BATCH"] = "100"
            if !ahead { t.extraEnvironment["TASKCTL_IMPORT_AHEAD"] = "0" }
            try t.ok("add", "kept")
            let before = try Data(contentsOf: t.store)
            var text = Self.export(count: 450)
            // The last occurrence: in the last chunk.
            let range = try #require(text.range(of: replacing, options: .backwards))
            text.replaceSubrange(range, with: with)
            let result = try t.run(["import", try write(text, in: t, as: "bad.json")])
            #expect(result.status != 0 && !result.err.isEmpty, "\(result.out) \(result.err)")
            #expect(try Data(contentsOf: t.store) == before)
            #expect(try t.texts() == ["kept"])
            errors.append(result.err.replacingOccurrences(of: t.directory.path, with: "DIR"))
        }
        #expect(errors[0] == errors[1])
    }

    /// Two processes importing large files at once, one through a symbolic link to the
    /// store, each parsing a batch ahead: both imports land whole (each commits its batches
    /// together while holding the store), and the store checks clean.
    @Test func twoBatchedImportsAtOnceThroughTwoNamesBothLand() throws {
        let t = try TaskctlRunner()
        t.extraEnvironment["TASKCTL_IMPORT_BATCH"] = "100"
        try t.ok("add", "kept")
        let link = t.directory.appendingPathComponent("link.store")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: t.store)
        let first = try write(Self.export(count: 450), in: t, as: "first.json")
        let second = try write(Self.export(count: 450, first: 1_000), in: t, as: "second.json")
        let a = try t.start(["import", first])
        t.extraEnvironment["TASKCTL_STORE"] = link.path
        let b = try t.start(["import", second])
        t.extraEnvironment["TASKCTL_STORE"] = nil
        let results = [try t.finish(a), try t.finish(b)]
        for result in results { #expect(result.status == 0 && result.out.contains("450 added") && result.err.contains("parsed ahead"), "\(result.out) \(result.err)") }
        #expect(try t.tasks("--all").count == 901)
        #expect(try t.run("store", "check").status == 0)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) == t.store.path, "the link is still a link")
    }

    /// A record the store refuses in the last batch: nothing of the earlier batches stays.
    @Test func aRefusedRecordInTheLastBatchImportsNothing() throws {
        let t = try TaskctlRunner()
        t.extraEnvironment["TASKCTL_IMPORT_BATCH"] = "100"
        try t.ok("add", "kept")
        let before = try Data(contentsOf: t.store)
        var text = Self.export(count: 450)
        text = text.replacingOccurrences(of: "\"description\": \"Task 449\"", with: "\"description\": \"\(String(repeating: "x", count: 100_001))\"")
        let result = try t.run(["import", try write(text, in: t, as: "bad.json")])
        #expect(result.status != 0 && result.err.contains("nothing imported"), "\(result.err)")
        #expect(try Data(contentsOf: t.store) == before)
        #expect(try t.texts() == ["kept"])
    }

    /// Killed at any moment, a batched import leaves the store as it was or with every task,
    /// and whole.
    @Test func aKilledBatchedImportLeavesAllOrNothing() throws {
        let t = try TaskctlRunner()
        t.extraEnvironment["TASKCTL_IMPORT_BATCH"] = "150"
        try t.ok("add", "kept")
        let path = try write(Self.export(count: 1_200), in: t, as: "large.json")
        let started = Date()
        try t.ok("import", path)
        let typical = Date().timeIntervalSince(started) * 1_000_000
        var killed = 0, confirmed = 0
        let rounds = max(6, ReliabilityTests.rounds / 2)
        defer { print("kill harness (batched import): \(rounds) rounds, \(killed) killed before finishing, \(confirmed) confirmed, store checked after each") }
        for round in 0..<rounds {
            let fresh = try TaskctlRunner()
            fresh.extraEnvironment = t.extraEnvironment
            try fresh.ok("add", "kept")
            // From 0 to 4 times the import's time, as the other harnesses spread theirs (up to
            // 1.5 times, a loaded machine once finished no import in 6 rounds).
            let finished = try ReliabilityTests.runKilled(fresh, ["import", path], delay: UInt32(min(4_000_000, Double(round % 6) / 5.0 * 4.0 * typical)))
            if finished { confirmed += 1 } else { killed += 1 }
            #expect(try fresh.run("store", "check").status == 0, "round \(round)")
            let count = try fresh.tasks("--all").count
            #expect(count == 1 || count == 1_201, "round \(round): \(count) tasks")
            if finished { #expect(count == 1_201) }
        }
        ReliabilityTests.expectBothOutcomes(killed: killed, confirmed: confirmed, rounds: rounds)
    }
}

import Foundation
import Testing
@testable import taskctl

/// Recurring tasks as Taskwarrior keeps them: templates and instances, compared with
/// Taskwarrior 2.6 on the same commands at the same frozen times, with the Rust TaskChampion
/// replica over sync, and on a store written before (taskctl 0.3 kept a recurring task as one
/// pending task).
@Suite struct RecurrenceTests {
    /// Each series as (template's mask, its instances' due dates, statuses and places): the
    /// fields Taskwarrior and taskctl must agree on, UUIDs aside (each side names its own).
    static func series(_ json: String) throws -> [String: [String]] {
        guard let array = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]] else { return [:] }
        var templates: [String: String] = [:]
        for task in array where task["status"] as? String == "recurring" {
            templates[task["uuid"] as? String ?? ""] = task["description"] as? String
        }
        var result: [String: [String]] = [:]
        for task in array {
            let description = task["description"] as? String ?? ""
            func text(_ key: String) -> String { (task[key]).map { "\($0)" } ?? "-" }
            if task["status"] as? String == "recurring" {
                result[description, default: []].append("template mask \(text("mask")) due \(text("due")) until \(text("until"))")
            } else if let parent = task["parent"] as? String {
                let owner = templates[parent] ?? "?"
                // Taskwarrior writes back an imask it imported as 0.000000.
                let place = (task["imask"] as? NSNumber)?.intValue ?? Int(text("imask")) ?? -1
                result[owner, default: []].append("#\(place) \(text("status")) due \(text("due")) wait \(text("wait")) scheduled \(text("scheduled"))")
            }
        }
        return result.mapValues { $0.sorted() }
    }

    /// Series of every kind of period, made by `add`, then time passing, instances done and
    /// deleted: the same instances, due dates, statuses and masks as Taskwarrior's.
    @Test func seriesAreTheInstancesTaskwarriorMakes() throws {
        guard let (tw, t) = try TaskwarriorDifferentialTests.sideBySide(settings: "recurrence=on\n") else { return }
        let adds: [[String]] = [
            ["add", "Weekly", "recur:weekly", "due:2026-11-02T09:00"],
            ["add", "Monthly on the 31st", "recur:monthly", "due:2026-08-31T09:00"],
            ["add", "Weekdays", "recur:weekdays", "due:2026-11-19T09:00"],
            ["add", "Every P1M", "recur:P1M", "due:2026-10-15T09:00"],
            ["add", "Every P4M", "recur:P4M", "due:2026-03-10T09:00"],
            ["add", "Every 2mo", "recur:2mo", "due:2026-09-01T09:00"],
            ["add", "Every 1mth", "recur:1mth", "due:2026-10-01T09:00"],
            ["add", "Quarterly", "recur:quarterly", "due:2026-05-31T09:00"],
            ["add", "Yearly leap", "recur:yearly", "due:2024-02-29T09:00"],
            ["add", "Until", "recur:weekly", "due:2026-11-02T09:00", "until:2026-11-12T00:00"],
            ["add", "Daily waiting", "recur:daily", "due:2026-11-24T18:00", "wait:2026-11-24T12:00", "scheduled:2026-11-20T08:00"],
            ["add", "Every 3d", "recur:3d", "due:2026-11-20T09:00", "+home", "project:garden", "pri:M"],
        ]
        for words in adds {
            _ = try tw.run(words)
            let result = try t.run(words)
            #expect(result.status == 0, "\(words): \(result.err)")
        }
        _ = try tw.run(["list"])  // Taskwarrior makes instances before a report
        func compare(_ step: String) throws {
            let expected = try Self.series(try tw.run(["export"]))
            let got = try Self.series(try t.ok("export", "--all", "--format", "taskwarrior"))
            #expect(expected.count == adds.count, "\(step): Taskwarrior has every series")
            for (name, lines) in expected {
                #expect(got[name] == lines, "\(step): \(name)\n taskctl \(got[name] ?? [])\n Taskwarrior \(lines)")
            }
        }
        try compare("after add")
        // An instance done, one deleted: the template's mask says so.
        for words in [["description:Weekly", "due.before:2026-11-05", "done"], ["description:Weekdays", "due.before:2026-11-21", "due.after:2026-11-20", "delete"]] {
            _ = try tw.run(words)
            let result = try t.run(words)
            #expect(result.status == 0, "\(words): \(result.err)")
        }
        try compare("after done and delete")
        // Three weeks on: the instances due since then are made (by Taskwarrior before its
        // report, by taskctl with the next change).
        tw.now = "2026-12-16 12:00:00"
        t.now = "2026-12-16T12:00:00Z"
        _ = try tw.run(["list"])
        _ = try tw.run(["add", "A change"])
        _ = try t.ok("add", "A change")
        try compare("three weeks on")
    }

    /// `recur:` words Taskwarrior refuses are refused; the rest are kept as typed.
    @Test func periodsTaskctlCannotCountAreRefused() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "one")
        for period in ["fortnightly", "0d", "-1w", "P0M", "3x"] {
            let result = try t.run("add", "x", "recur:\(period)", "due:tomorrow")
            #expect(result.status == 1 && result.err.contains("is not a recurrence"), "\(period): \(result.err)")
        }
        #expect(try t.texts("--all") == ["one"])
        #expect(Recurrence("2mo")?.step == .days(60) && Recurrence("1mth")?.step == .days(30) && Recurrence("P1W")?.step == .days(7))
        #expect(Recurrence("6m")?.step == .months(6, keepsTime: true) && Recurrence("P5M")?.step == .months(5, keepsTime: false))
        let calendar = Calendar.taskctl(in: TimeZone(identifier: "UTC") ?? .current)
        let friday = Date(timeIntervalSince1970: 1_795_770_000)  // 2026-11-27T09:00:00Z
        #expect(Recurrence("weekdays")?.next(after: friday, calendar: calendar) == Date(timeIntervalSince1970: 1_796_029_200), "Monday 09:00")
    }

    /// A store written by taskctl 0.3 kept a recurring task as one pending task with its
    /// period; the next change makes it a template with its instances, as Taskwarrior's
    /// validation does, and Taskwarrior reads the result as its own series (it makes no
    /// instance of its own on top).
    @Test func aRecurringTaskOfAnOlderStoreBecomesATemplate() throws {
        guard let (tw, t) = try TaskwarriorDifferentialTests.sideBySide(settings: "recurrence=on\n") else { return }
        try FileManager.default.copyItem(at: TaskctlRunner.fixtures.appendingPathComponent("format7.store"), to: t.store)
        t.now = "2026-12-05T12:00:00Z"
        let before = try t.ok("export", "--all", "--format", "taskwarrior")
        #expect(before.contains(#""recur":"weekly","status":"pending""#), "\(before)")
        try t.ok("add", "A change")
        let after = try t.ok("export", "--all", "--format", "taskwarrior")
        let series = try Self.series(after)
        #expect(series["A recurring one"] == [
            "#0 pending due 20261130T235959Z wait - scheduled -", "#1 pending due 20261207T235959Z wait - scheduled -",
            "template mask -- due 20261130T235959Z until -",
        ], "\(series)")
        // One undo takes the whole change back, the old task included.
        try t.ok("undo")
        #expect(try t.ok("export", "--all", "--format", "taskwarrior") == before)
        try t.ok("add", "A change")
        // Taskwarrior, given the series, makes nothing more at the same time.
        let file = t.directory.appendingPathComponent("series.json")
        try Data(after.utf8).write(to: file)
        tw.now = "2026-12-05 12:00:00"
        _ = try tw.run(["import", file.path])
        _ = try tw.run(["list"])
        let theirs = try Self.series(try tw.run(["export"]))["A recurring one"]
        #expect(theirs == series["A recurring one"], "Taskwarrior: \(theirs ?? [])")
    }

    /// An add reads the series once (it read them twice: in the command, then again in its
    /// save), and that one reading still makes the instances that fell due since the last
    /// command: nine days later, adding an unrelated task makes the weekly series' next two.
    @Test func anAddReadsTheSeriesOnceAndStillMakesTheDueInstances() throws {
        let t = try TaskctlRunner()
        t.now = "2026-11-22T12:00:00Z"
        try t.ok("add", "Water the plants", "--due", "2026-11-23", "--recur", "weekly")
        try t.ok("add", "Plain", "--due", "2026-11-30")
        func instances() throws -> [String] {
            try t.tasks("--all").filter { $0["text"] as? String == "Water the plants" && $0["status"] as? String == "pending" }
                .compactMap { $0["due"] as? String }.sorted()
        }
        let before = try instances()
        t.now = "2026-12-01T12:00:00Z"
        t.extraEnvironment["TASKCTL_COUNT_FETCHES"] = "1"
        let result = try t.run("add", "Unrelated")
        #expect(result.status == 0, "\(result.err)")
        let fetches = result.err.split(separator: "\n").last { $0.hasPrefix("taskctl: fetches: ") }.flatMap { Int($0.dropFirst(18)) }
        // The store's tasks counted, the series read, one lookup per instance made (two).
        #expect(fetches == 4, "\(result.err)")
        t.extraEnvironment["TASKCTL_COUNT_FETCHES"] = nil
        // Up to and including the first due date after now, as Taskwarrior makes them.
        #expect(before == ["2026-11-23T23:59:59Z"])
        #expect(try instances() == ["2026-11-23T23:59:59Z", "2026-11-30T23:59:59Z", "2026-12-07T23:59:59Z"])
    }
}

/// Recurring tasks over sync with Taskwarrior 3's replica (the Rust TaskChampion library).
@Suite(.enabled(if: ProtocolServer.available, "needs python3 for the test sync server; CI has it"))
struct RecurrenceSyncTests {
    /// A template Taskwarrior 3 made (with its first instance) gets each later instance
    /// exactly once, although two taskctl replicas make them apart; an instance done on the
    /// Rust side is done on both; a series taskctl makes is a template and instances there.
    @Test func aTaskwarriorTemplateMakesOneInstancePerDueDateOnEveryReplica() throws {
        if let reason = RustReplica.unavailable {
            #expect(ProcessInfo.processInfo.environment["CI"] != "true", "CI must run the Rust replica: \(reason)")
            print("skipped: \(reason)")
            return
        }
        let server = try ProtocolServer()
        let sync = SyncTests()
        let a = try sync.replica(server), b = try sync.replica(server)
        let db = a.directory.appendingPathComponent("rust-replica")
        let template = "7d1c0a2e-3b4f-4c5d-8e6f-708192a3b4c5", first = "1e2d3c4b-5a69-4788-9a0b-1c2d3e4f5a6b"
        // 2026-11-16T09:00:00Z, weekly: Taskwarrior made the instance of that day.
        let due = "1794819600"
        _ = try RustReplicaTests().rust(db, server, set: [
            template: ["description": "Water plants", "status": "recurring", "recur": "weekly", "due": due, "mask": "-", "rtype": "periodic",
                       "entry": "1795300000", "tag_home": ""],
            first: ["description": "Water plants", "status": "pending", "recur": "weekly", "due": due, "parent": template, "imask": "0",
                    "rtype": "periodic", "entry": "1795300000", "tag_home": ""],
        ])
        // Both taskctl replicas receive the series without making instances (recurrence off),
        // then each makes the missing ones with its next change, apart.
        for replica in [a, b] {
            replica.now = "2026-11-25T12:00:00Z"
            #expect(try replica.run("rc.recurrence=off", "sync").status == 0)
            try replica.ok("add", "A change on \(replica === a ? "a" : "b")")
        }
        try sync.sync(a, at: "2026-11-25T12:10:00Z")
        try sync.sync(b, at: "2026-11-25T12:11:00Z")
        try sync.sync(a, at: "2026-11-25T12:12:00Z")
        let rust = try RustReplicaTests().rust(db, server)
        func instances(_ tasks: [String: [String: String]]) -> [String] {
            tasks.values.filter { $0["parent"] == template }.map { "\($0["imask"] ?? "?") \($0["due"] ?? "?") \($0["status"] ?? "?")" }.sorted()
        }
        // 11-16 (Taskwarrior's), 11-23 and 11-30 (the first after now): once each.
        #expect(instances(rust) == ["0 1794819600 pending", "1 1795424400 pending", "2 1796029200 pending"], "\(instances(rust))")
        #expect(rust[template]?["mask"] == "---" && rust[template]?["status"] == "recurring")
        let onA = try sync.tasks(a), onB = try sync.tasks(b)
        #expect(onA == onB)
        #expect(onA.count == rust.count, "taskctl \(onA.count) tasks, the Rust replica \(rust.count)")

        // Taskwarrior 3 completes the instance of 11-30 (and marks its template's mask); a
        // week later the next instance is made once, whichever replica makes it.
        let third = try #require(rust.first { $0.value["parent"] == template && $0.value["imask"] == "2" }?.key)
        _ = try RustReplicaTests().rust(db, server, set: [third: ["status": "completed", "end": "1796000000"], template: ["mask": "--+"]])
        for (replica, minute) in [(a, "20"), (b, "21"), (a, "22")] {
            replica.now = "2026-12-01T12:\(minute):00Z"
            try sync.sync(replica, at: "2026-12-01T12:\(minute):00Z")
        }
        let later = try RustReplicaTests().rust(db, server)
        #expect(instances(later) == ["0 1794819600 pending", "1 1795424400 pending", "2 1796029200 completed", "3 1796634000 pending"],
                "\(instances(later))")
        #expect(try sync.tasks(a) == (try sync.tasks(b)))

        // A series taskctl makes is a template and its instances there.
        a.now = "2026-12-01T13:00:00Z"
        try a.ok("add", "Stretch", "recur:daily", "due:2026-12-01T18:00")
        try sync.sync(a, at: "2026-12-01T13:01:00Z")
        let seen = try RustReplicaTests().rust(db, server)
        let made = try #require(seen.first { $0.value["description"] == "Stretch" && $0.value["status"] == "recurring" })
        #expect(made.value["recur"] == "daily" && made.value["mask"] == "-" && made.value["rtype"] == "periodic")
        #expect(seen.values.filter { $0["parent"] == made.key && $0["imask"] == "0" && $0["status"] == "pending" }.count == 1)
    }
}

/// A large import (saved in batches) makes no instances: each batch would read the whole
/// store; the next change makes them, as many as a small import makes at once.
@Suite struct RecurrenceImportTests {
    @Test func aLargeImportLeavesInstancesToTheNextChange() throws {
        var tasks: [[String: Any]] = [["description": "Weekly", "status": "recurring", "recur": "weekly", "due": "20261102T090000Z",
                                       "entry": "20261101T090000Z", "uuid": "7d1c0a2e-3b4f-4c5d-8e6f-708192a3b4c5"]]
        for n in 0..<250 { tasks.append(["description": "Task \(n)", "status": "pending", "entry": "20261101T090000Z"]) }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: tasks), as: UTF8.self)
        var counts: [String: Int] = [:]
        for batch in ["100", nil] {
            let t = try TaskctlRunner()
            t.now = "2026-11-25T12:00:00Z"
            if let batch { t.extraEnvironment["TASKCTL_IMPORT_BATCH"] = batch }
            let file = t.directory.appendingPathComponent("series.json")
            try Data(json.utf8).write(to: file)
            try t.ok("import", file.path)
            let weekly = { try t.texts().filter { $0 == "Weekly" }.count }
            if batch != nil { #expect(try weekly() == 0, "batched: none yet") }
            try t.ok("add", "A change")
            counts[batch ?? "one save"] = try weekly()
        }
        // 11-02, 11-09, 11-16, 11-23 and 11-30 (the first after now).
        #expect(counts == ["100": 5, "one save": 5], "\(counts)")
    }

    /// In a large store (made small here by the debug build's limit), a change that touches
    /// no series makes no instances; one that touches a series makes that series' due
    /// instances; sync makes every series'.
    @Test func aLargeStoreMakesTheInstancesOfTheSeriesAChangeTouches() throws {
        let t = try TaskctlRunner()
        t.now = "2026-11-02T12:00:00Z"
        try t.ok("add", "Weekly", "recur:weekly", "due:2026-11-02T18:00")
        try t.ok("add", "Daily", "recur:daily", "due:2026-11-02T18:00")
        t.extraEnvironment["TASKCTL_RECURRENCE_LIMIT_TASKS"] = "2"
        t.now = "2026-11-10T12:00:00Z"
        try t.ok("add", "Unrelated")
        #expect(try t.texts().filter { $0 == "Weekly" }.count == 1 && (try t.texts()).filter { $0 == "Daily" }.count == 1, "no series touched")
        // Done, an instance of Weekly brings its series up to date, not Daily's.
        let weekly = try #require(try t.tasks().first { $0["text"] as? String == "Weekly" }?["id"] as? Int)
        try t.ok("done", String(weekly))
        let afterDone = try t.texts()
        #expect(afterDone.filter { $0 == "Weekly" }.count == 2, "11-09 pending and 11-16, the first after now: \(afterDone)")
        #expect(try t.texts("--all").filter { $0 == "Weekly" }.count == 3)
        #expect(try t.texts().filter { $0 == "Daily" }.count == 1)
        // Without the limit, the next change brings every series up to date.
        t.extraEnvironment["TASKCTL_RECURRENCE_LIMIT_TASKS"] = nil
        try t.ok("add", "Another")
        let afterAll = try t.texts()
        #expect(afterAll.filter { $0 == "Daily" }.count == 9, "11-02 to 11-10: \(afterAll)")
    }
}

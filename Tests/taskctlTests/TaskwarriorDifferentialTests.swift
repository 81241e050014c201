import Foundation
import Testing

/// Taskwarrior 2.6 from Debian, run beside taskctl on a frozen clock (faketime), so a
/// filter's meaning is checked against Taskwarrior's own answer, not against our docs.
enum Taskwarrior {
    /// Why Taskwarrior and faketime cannot be had here, or nil once both are installed.
    static let unavailable: String? = {
        func present() -> Bool { ["/usr/bin/task", "/usr/bin/faketime"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) } }
        if present() { return nil }
        guard getuid() == 0 else { return "Taskwarrior or faketime is missing and installing them needs root (apt-get install taskwarrior faketime)" }
        do {
            _ = try RustReplica.run("/usr/bin/apt-get", ["update", "-qq"])
            _ = try RustReplica.run("/usr/bin/apt-get", ["install", "-y", "-qq", "taskwarrior", "faketime"])
        } catch {
            return "cannot install taskwarrior and faketime from Debian: \(error)"
        }
        return present() ? nil : "apt-get installed nothing at /usr/bin/task and /usr/bin/faketime"
    }()

    /// A Taskwarrior data folder with its own settings, beside a taskctl store.
    final class Replica {
        let directory: URL
        let now: String  // "2026-11-25 12:00:00", UTC
        /// What the last command wrote to stderr.
        var lastError = ""

        init(now: String) throws {
            self.now = now
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("taskwarrior-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
            // recurrence=off: export shows the tasks as imported, without new instances.
            // gc=off: Taskwarrior reads every task for every filter; with its shortcut (gc=on) a
            // filter naming "pending" or +ACTIVE skips done and deleted tasks even when it
            // would match them (status.not:pending), which taskctl does not copy
            // (docs/taskctl.md, "Differences from Taskwarrior").
            let rc = "data.location=\(directory.path)/data\nconfirmation=off\nverbose=nothing\nrecurrence=off\ngc=off\njson.array=on\nsearch.case.sensitive=yes\n"
            try rc.write(to: directory.appendingPathComponent("taskrc"), atomically: true, encoding: .utf8)
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        /// `task ARGUMENTS` at the frozen time; stdout.
        @discardableResult
        func run(_ arguments: [String], input: String? = nil) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/faketime")
            process.arguments = [now, "/usr/bin/task"] + arguments
            process.environment = ["TASKRC": directory.appendingPathComponent("taskrc").path, "TASKDATA": directory.appendingPathComponent("data").path,
                                   "TZ": "UTC", "HOME": directory.path, "PATH": "/usr/bin:/bin"]
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let output = out.fileHandleForReading.readDataToEndOfFile()
            let errors = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            lastError = String(decoding: errors, as: UTF8.self)
            return String(decoding: output, as: UTF8.self)
        }

        /// The UUIDs `task FILTER export` selects (nil when Taskwarrior refuses the filter).
        func selected(_ filter: [String]) throws -> Set<String>? {
            let text = try run(filter + ["export"])
            guard let data = text.data(using: .utf8), let array = (try? JSONSerialization.jsonObject(with: data)) as? [[String: Any]] else { return nil }
            return Set(array.compactMap { $0["uuid"] as? String })
        }
    }
}

@Suite struct TaskwarriorDifferentialTests {
    static let now = "2026-11-25 12:00:00"  // a Wednesday

    /// Tasks that tell the filters apart: projects that share a start, priorities, tags,
    /// due dates around the frozen day (yesterday, earlier and later today, tomorrow, this
    /// week, month, quarter and year), waiting, scheduled, started, annotated, done, deleted,
    /// dependencies, a recurring template and its instance, and a field no attribute names.
    static func tasks() -> [[String: Any]] {
        var tasks: [[String: Any]] = []
        func add(_ description: String, _ fields: [String: Any] = [:]) {
            var task: [String: Any] = ["description": description, "status": "pending", "entry": "20261101T090000Z",
                                       "uuid": String(format: "%08x-0000-4000-8000-000000000000", tasks.count + 1)]
            for (key, value) in fields { task[key] = value }
            tasks.append(task)
        }
        add("Buy milk", ["project": "home", "tags": ["shop"], "due": "20261126T100000Z", "priority": "M"])
        add("Write report", ["project": "homework", "priority": "H", "due": "20261125T080000Z"])
        add("Fix bike", ["project": "home.garden", "tags": ["shop", "bike"],
                         "annotations": [["entry": "20261102T090000Z", "description": "ask about the milk pump"]]])
        add("Call Anna", ["project": "work", "tags": ["work"], "due": "20261125T180000Z", "priority": "L"])
        add("Plan trip", ["due": "20261124T120000Z", "tags": ["travel"]])
        add("Pay rent", ["due": "20261129T200000Z", "priority": "H", "project": "home"])
        add("Renew passport", ["due": "20261215T120000Z", "project": "travel.docs"])
        add("File taxes", ["due": "20270210T120000Z", "priority": "M"])
        add("Clean garage", ["due": "20261230T090000Z", "wait": "20261201T000000Z"])
        add("Read book", ["scheduled": "20261120T000000Z"])
        add("Learn piano", ["scheduled": "20261210T000000Z", "tags": ["music"]])
        add("Old report", ["status": "completed", "end": "20261110T100000Z", "project": "work", "due": "20261101T100000Z", "tags": ["work"]])
        add("Dropped idea", ["status": "deleted", "end": "20261111T100000Z", "due": "20261125T200000Z"])
        add("Paint fence", ["start": "20261124T080000Z", "project": "home.garden", "until": "20270101T000000Z"])
        add("Buy MILK powder", ["tags": ["shop"]])
        add("Estimate job", ["estimate": "5"])
        add("Blocked chore", ["depends": "00000001-0000-4000-8000-000000000000"])
        add("Waits on done", ["depends": "0000000c-0000-4000-8000-000000000000"])
        add("Weekly review", ["status": "recurring", "recur": "weekly", "due": "20261127T170000Z", "mask": "--", "rtype": "periodic"])
        add("Weekly review", ["parent": "00000013-0000-4000-8000-000000000000", "imask": 1, "recur": "weekly", "due": "20261127T170000Z"])
        add("Next year plan", ["due": "20270601T120000Z"])
        add("Last year memo", ["due": "20251201T120000Z"])
        add("Milk the cows", ["project": "farm"])
        return tasks
    }

    /// Each filter selects the same tasks in both (UUIDs compared; ids differ by design:
    /// taskctl's ids are permanent, Taskwarrior's renumber).
    @Test func filtersSelectWhatTaskwarriorSelects() throws {
        if let reason = Taskwarrior.unavailable {
            #expect(ProcessInfo.processInfo.environment["CI"] != "true", "CI must compare with Taskwarrior: \(reason)")
            print("skipped: \(reason)")
            return
        }
        let tw = try Taskwarrior.Replica(now: Self.now)
        let t = try TaskctlRunner()
        t.now = "2026-11-25T12:00:00Z"
        let file = t.directory.appendingPathComponent("tasks.json")
        try JSONSerialization.data(withJSONObject: Self.tasks()).write(to: file)
        try tw.run(["import", file.path])
        try t.ok("import", file.path)
        let names = Dictionary(uniqueKeysWithValues: Self.tasks().map { ($0["uuid"] as? String ?? "", $0["description"] as? String ?? "") })
        #expect(try tw.selected([])?.count == Self.tasks().count, "Taskwarrior imported every task")

        var filters: [[String]] = [
            ["+shop"], ["-shop"], ["+shop", "+bike"], ["+shop", "or", "+work"], ["(", "+shop", "or", "+work", ")", "pri:H"],
            ["+shop", "xor", "project:home"], ["(+shop or project:work)"], ["+shop", "and", "(", "project:home", "or", "project:farm", ")"],
            ["project:home"], ["project.not:home"], ["project.is:home"], ["project.isnt:home"], ["project.startswith:ho"],
            ["project.endswith:work"], ["project.has:ome"], ["project.hasnt:ome"], ["project.none:"], ["project.any:"], ["project:"],
            ["proj:work"], ["pro:home.garden"],
            ["pri:H"], ["priority:M"], ["priority.not:H"], ["priority.above:M"], ["priority.below:M"], ["priority.under:L"],
            ["priority.none:"], ["priority.any:"], ["priority:"],
            ["due:today"], ["due:tomorrow"], ["due.before:today"], ["due.after:tomorrow"], ["due.by:eow"], ["due.before:now+3d"],
            ["due.after:eom-1w"], ["due.before:tomorrow+2d"], ["due.none:"], ["due.any:"], ["due:"], ["due.not:today"],
            ["due.before:2026-12-01"], ["due.after:2026-11-25T17:00"], ["due.is:2026-11-26T10:00"], ["due.isnt:2026-11-26T10:00"],
            ["due.before:eoy", "due.after:som"], ["due.under:P1W"], ["due.before:friday"],
            ["wait.after:now"], ["wait.any:"], ["scheduled.before:now"], ["scheduled.any:"], ["until.any:"], ["start.any:"], ["start.none:"],
            ["entry.before:2026-11-02"], ["end.after:2026-11-01"], ["end.any:"],
            ["description:Buy"], ["description.has:milk"], ["description.contains:pump"], ["description.startswith:Buy"],
            ["description.endswith:report"], ["description.word:milk"], ["description.noword:milk"], ["description.hasnt:milk"],
            ["desc.is:Buy milk"], ["description.isnt:Buy milk"],
            ["/milk/"], ["/^Buy/"], ["/[Mm]ilk/"], ["milk"], ["pump"], ["Milk"], ["bike", "or", "piano"],
            ["status:pending"], ["status:completed"], ["status:deleted"], ["status:waiting"], ["status:recurring"], ["status.not:pending"],
            ["tags.has:shop"], ["tags.hasnt:shop"], ["tags.none:"], ["tags.any:"], ["tags:work"],
            ["recur:weekly"], ["recur.any:"],
            ["00000003"], ["00000003-0000-4000-8000-000000000000"], ["uuid:00000004"], ["00000001", "00000002"],
            ["00000001", "+shop"],
        ]
        // Every virtual tag, both ways.
        for tag in ["ACTIVE", "ANNOTATED", "BLOCKED", "BLOCKING", "CHILD", "COMPLETED", "DELETED", "DUE", "DUETODAY", "INSTANCE", "LATEST",
                    "MONTH", "ORPHAN", "OVERDUE", "PARENT", "PENDING", "PRIORITY", "PROJECT", "QUARTER", "READY", "SCHEDULED", "TAGGED",
                    "TEMPLATE", "TODAY", "TOMORROW", "UDA", "UNBLOCKED", "UNTIL", "WAITING", "WEEK", "YEAR", "YESTERDAY"] {
            filters.append(["+" + tag])
            filters.append(["-" + tag])
        }
        var mismatches: [String] = []
        for filter in filters {
            guard let expected = try tw.selected(filter) else {
                mismatches.append("\(filter.joined(separator: " ")): Taskwarrior refused it: \(tw.lastError)")
                continue
            }
            let result = try t.run(filter + ["export", "--all"])
            guard result.status == 0, let data = result.out.data(using: .utf8),
                  let array = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
                mismatches.append("\(filter.joined(separator: " ")): taskctl failed: \(result.err)")
                continue
            }
            let got = Set(array.compactMap { $0["uuid"] as? String })
            if got != expected {
                func shown(_ uuids: Set<String>) -> String { uuids.map { names[$0] ?? $0 }.sorted().joined(separator: ", ") }
                mismatches.append("\(filter.joined(separator: " ")): Taskwarrior [\(shown(expected))] taskctl [\(shown(got))]")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(filters.count) filters differ:\n\(mismatches.joined(separator: "\n"))")
    }
}

import Foundation
import Testing
@testable import taskctl

/// Taskwarrior's reports, urgency and dependencies, checked against Taskwarrior 2.6 itself on
/// the same tasks at the same frozen time (``TaskwarriorDifferentialTests/sideBySide``).
@Suite struct TaskwarriorReportTests {
    /// The differential fixture with a `modified` time on each task, as Taskwarrior's own
    /// exports always have one (the `long` report sorts by it).
    static func importBoth(_ tw: Taskwarrior.Replica, _ t: TaskctlRunner) throws {
        let tasks = TaskwarriorDifferentialTests.tasks().map { task -> [String: Any] in
            var task = task
            task["modified"] = task["entry"]
            return task
        }
        let file = t.directory.appendingPathComponent("report-tasks.json")
        try JSONSerialization.data(withJSONObject: tasks).write(to: file)
        try tw.run(["import", file.path])
        try t.ok("import", file.path)
    }

    /// The UUIDs a report lists, in its order (the report's columns set to the UUID alone).
    static func taskwarriorRows(_ tw: Taskwarrior.Replica, _ report: String, _ overrides: [String]) throws -> [String] {
        try tw.run(overrides + [report]).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    static func taskctlRows(_ t: TaskctlRunner, _ report: String, _ overrides: [String]) throws -> [String] {
        let result = try t.run(overrides + [report])
        guard result.status == 0 else { return ["exit \(result.status): \(result.err)"] }
        var rows: [String] = [], inTable = false
        for line in result.out.split(separator: "\n", omittingEmptySubsequences: false).map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("---") { inTable = true; continue }
            guard inTable, !line.isEmpty else { continue }
            if line.range(of: #"^\d+ tasks?$"#, options: .regularExpression) != nil { break }
            rows.append(line)
        }
        return rows
    }

    /// Every built-in report lists the tasks Taskwarrior lists, in Taskwarrior's order: its
    /// filter (virtual tags, statuses, dependencies), its sort keys with Taskwarrior's rules
    /// (missing dates last either way, priority H, M, L, none, urgency as Taskwarrior computes
    /// it, ties in Taskwarrior's file order), compared row by row. `next`'s `limit:page`
    /// depends on the terminal, so its filter is given without it on both sides.
    @Test func reportsListWhatTaskwarriorListsInItsOrder() throws {
        guard let (tw, t) = try TaskwarriorDifferentialTests.sideBySide() else { return }
        try Self.importBoth(tw, t)
        var compared = 0
        for report in ["next", "ls", "long", "minimal", "newest", "oldest", "overdue", "active", "completed", "waiting", "all", "ready",
                       "blocked", "unblocked", "blocking", "recurring"] {
            let filter = ReportDefinition.builtIn[report]?.filter.replacingOccurrences(of: "limit:page", with: "") ?? ""
            let overrides = ["rc.report.\(report).columns=uuid", "rc.report.\(report).labels=UUID", "rc.report.\(report).filter=\(filter)"]
            let expected = try Self.taskwarriorRows(tw, report, overrides)
            let got = try Self.taskctlRows(t, report, overrides)
            #expect(got == expected, "\(report): taskctl \(got.map { $0.prefix(8) }) Taskwarrior \(expected.map { $0.prefix(8) })")
            compared += expected.count
        }
        #expect(compared > 100, "the reports listed tasks to compare (\(compared) rows)")
        // A line's filter narrows the report's, and sorts as the report says.
        for line in [["+shop", "next"], ["project:home", "ls"], ["next", "due.before:eow"], ["(+shop", "or", "+work)", "all"]] {
            let report = line.first { ReportDefinition.builtIn[$0] != nil } ?? ""
            let overrides = ["rc.report.\(report).columns=uuid", "rc.report.\(report).labels=UUID",
                             "rc.report.\(report).filter=\(ReportDefinition.builtIn[report]?.filter.replacingOccurrences(of: "limit:page", with: "") ?? "")"]
            let expected = try tw.run(overrides + line).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            let result = try t.run(overrides + line)
            let got = result.out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { UUID(uuidString: $0) != nil }
            #expect(got == expected, "\(line.joined(separator: " "))")
        }
    }

    /// A report the settings define (columns, labels, sort, filter) is a command, in the
    /// settings file shared with Taskwarrior too; its rows match Taskwarrior's.
    @Test func aReportTheSettingsDefineIsACommand() throws {
        let settings = "report.mine.columns=uuid\nreport.mine.labels=UUID\nreport.mine.sort=project+,due-\nreport.mine.filter=status:pending +shop or +work\n"
        guard let (tw, t) = try TaskwarriorDifferentialTests.sideBySide(settings: settings, sharingSettings: true) else { return }
        try Self.importBoth(tw, t)
        let expected = try Self.taskwarriorRows(tw, "mine", [])
        #expect(expected.count >= 3)
        #expect(try Self.taskctlRows(t, "mine", []) == expected)
        // A report of taskctl's own command's name is refused, not half-applied.
        let refused = try t.run("rc.report.list.columns=id", "list")
        #expect(refused.status != 0 && refused.err.contains("taskctl's own command"), "\(refused.err)")
        // Columns or sort keys taskctl does not have are named.
        let badColumn = try t.run("rc.report.mine.columns=id,colour", "mine")
        #expect(badColumn.status == 1 && badColumn.err.contains("'colour'"), "\(badColumn.err)")
        let badSort = try t.run("rc.report.mine.sort=weight+", "mine")
        #expect(badSort.status == 1 && badSort.err.contains("'weight'"), "\(badSort.err)")
        // default.command runs when the line has no command.
        let byDefault = try t.run("rc.default.command=mine")
        #expect(byDefault.status == 0 && byDefault.out.contains(expected[0]), "\(byDefault.out)\(byDefault.err)")
        // Nothing matches: Taskwarrior's answer and exit status.
        let none = try t.run("+nosuchtag", "next")
        #expect(none.status == 1 && none.err.contains("no matches"))
    }

    /// Urgency is Taskwarrior's to three decimals for every pending task: its terms (age in
    /// whole days, blocked and blocking, scheduled, waiting, ...), and with coefficients the
    /// settings change (per tag, project, keyword and user-defined attribute too).
    @Test func urgencyIsTaskwarriorsWithItsCoefficients() throws {
        for settings in ["", "urgency.user.tag.shop.coefficient=7\nurgency.due.coefficient=3.5\nurgency.user.project.home.coefficient=2\n"
                         + "uda.estimate.type=numeric\nurgency.uda.estimate.coefficient=1.5\nurgency.blocking.coefficient=1\n"
                         + "urgency.user.keyword.report.coefficient=-2\nurgency.age.max=30\nurgency.uda.priority.L.coefficient=9\n",
                         "urgency.uda.priority.coefficient=2.5\nurgency.uda.priority.H.coefficient=0\nurgency.user.project.home.coefficient=1.25\n"] {
            guard let (tw, t) = try TaskwarriorDifferentialTests.sideBySide(settings: settings, sharingSettings: true) else { return }
            try Self.importBoth(tw, t)
            func urgencies(_ text: String) -> [String: Double] {
                guard let array = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]] else { return [:] }
                return Dictionary(uniqueKeysWithValues: array.compactMap { task in
                    (task["uuid"] as? String).flatMap { uuid in (task["urgency"] as? NSNumber).map { (uuid, $0.doubleValue) } }
                })
            }
            let expected = urgencies(try tw.run(["status:pending", "export"]))
            let got = urgencies(try t.ok("status:pending", "export"))
            #expect(expected.count > 15 && Set(got.keys) == Set(expected.keys))
            for (uuid, value) in expected {
                #expect(abs((got[uuid] ?? .nan) - value) < 0.0011, "\(uuid.prefix(8)): taskctl \(got[uuid] ?? .nan), Taskwarrior \(value) (\(settings.isEmpty ? "defaults" : "settings"))")
            }
        }
    }

    /// `depends:` adds and removes dependencies as Taskwarrior's modify does, by UUID start,
    /// and refuses what Taskwarrior refuses (itself, a circle, removing one it does not have);
    /// the stored dependencies and the blocked tasks match, also after a blocker is done.
    @Test func dependenciesAsTaskwarriorKeepsThem() throws {
        guard let (tw, t) = try TaskwarriorDifferentialTests.sideBySide() else { return }
        try Self.importBoth(tw, t)
        let steps: [(words: [String], accepted: Bool)] = [
            (["00000004", "modify", "depends:00000001,00000002"], true),
            (["00000001", "modify", "depends:00000004"], false),  // a circle
            (["00000005", "modify", "depends:00000004"], true),
            (["00000001", "modify", "depends:00000005"], false),  // a circle through 00000004
            (["00000004", "modify", "depends:00000004"], false),  // itself
            (["00000004", "modify", "depends:-00000002"], true),
            (["00000004", "modify", "depends:-00000003"], false),  // not one of its dependencies
            (["00000006", "modify", "depends:00000004,00000005"], true),
            (["00000006", "modify", "depends:"], true),
            (["00000007", "modify", "dep:00000006"], true),
        ]
        for step in steps {
            _ = try tw.run(step.words)
            let twAccepted = !tw.lastError.contains("ircular") && !tw.lastError.contains("itself") && !tw.lastError.contains("not found")
            let result = try t.run(step.words)
            #expect(twAccepted == step.accepted, "Taskwarrior: \(step.words.joined(separator: " ")): \(tw.lastError)")
            #expect((result.status == 0) == step.accepted, "taskctl: \(step.words.joined(separator: " ")): \(result.err)")
        }
        func dependencies(_ text: String) -> [String: Set<String>] {
            guard let array = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]] else { return [:] }
            var result: [String: Set<String>] = [:]
            for task in array {
                guard let uuid = task["uuid"] as? String else { continue }
                if let list = task["depends"] as? [String] { result[uuid] = Set(list) }
                if let text = task["depends"] as? String { result[uuid] = Set(text.split(separator: ",").map(String.init)) }
            }
            return result
        }
        let expected = dependencies(try tw.run(["export"]))
        #expect(expected.count >= 4)
        #expect(dependencies(try t.ok("export", "--format", "taskwarrior")) == expected)
        for filter in [["+BLOCKED"], ["+BLOCKING"], ["-BLOCKED", "status:pending"], ["+READY"]] {
            #expect(try t.ok(filter + ["_uuids"]).split(separator: "\n").map(String.init).sorted()
                    == (try tw.selected(filter) ?? []).sorted(), "\(filter)")
        }
        // Done, a blocker blocks no more.
        _ = try tw.run(["00000001", "done"])
        _ = try t.ok("00000001", "done")
        for filter in [["+BLOCKED"], ["+BLOCKING"]] {
            #expect(try t.ok(filter + ["_uuids"]).split(separator: "\n").map(String.init).sorted()
                    == (try tw.selected(filter) ?? []).sorted(), "after done: \(filter)")
        }
        // add with dependencies; show names them by id.
        let added = try t.ok("add", "Ship it", "depends:00000005")
        let shown = try t.ok("show", added.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(shown.contains("depends") && shown.contains("(blocked)"), "\(shown)")
    }

    /// One undo takes back a dependency change; a second undo the one before.
    @Test func undoTakesBackDependencyChangesOneAtATime() throws {
        let t = try TaskctlRunner()
        _ = try t.ok("add", "first")
        _ = try t.ok("add", "second")
        _ = try t.ok("add", "third")
        _ = try t.ok("2", "modify", "depends:1")
        _ = try t.ok("2", "modify", "depends:3")
        #expect(try t.ok("+BLOCKING", "_ids").split(separator: "\n") == ["1", "3"])
        _ = try t.ok("undo")
        #expect(try t.ok("+BLOCKING", "_ids").trimmingCharacters(in: .whitespacesAndNewlines) == "1")
        _ = try t.ok("undo")
        let none = try t.run("+BLOCKED", "_ids")
        #expect(none.out.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
    }
}

/// The manual's example settings, as written there (with comments after the values), are
/// read as they say.
@Suite struct SettingsExampleTests {
    @Test func theManualsReportAndUrgencyExampleIsRead() throws {
        let t = try TaskctlRunner()
        let manual = try String(contentsOf: TaskctlRunner.repository.appendingPathComponent("docs/taskctl.md"), encoding: .utf8)
        let start = try #require(manual.range(of: "report.mine.columns = "))
        let end = try #require(manual.range(of: "```", range: start.lowerBound..<manual.endIndex))
        let folder = t.directory.appendingPathComponent(".config/taskctl")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try String(manual[start.lowerBound..<end.lowerBound]).write(to: folder.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        try t.ok("add", "Dig", "+home", "project:garden", "due:3d")
        try t.ok("add", "Read")
        // default.command = next; report.mine groups by project with a blank line between.
        let next = try t.ok()
        #expect(next.contains("Dig") && next.contains("Read") && next.contains("2 tasks"), "\(next)")
        let mine = try t.ok("mine")
        let lines = mine.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let read = try #require(lines.firstIndex { $0.hasSuffix("Read 0") || $0.contains(" Read ") })
        #expect(lines[read + 1].isEmpty && lines[read + 2].contains("Dig"), "no project first, a blank line, then garden: \(mine)")
        // urgency.user.tag.home.coefficient = 3 counts: due 3.5 days ahead 7.2, project 1,
        // one tag 0.8, home 3.
        let dig = try #require(try t.tasks().first { $0["text"] as? String == "Dig" })
        #expect(abs((dig["urgency"] as? Double ?? 0) - 12.0) < 0.001, "\(dig)")
        // A '#' inside a value stays.
        try String("default.project = a#b\n").write(to: folder.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        try t.ok("add", "Hash")
        #expect(try t.tasks().first { $0["text"] as? String == "Hash" }?["project"] as? String == "a#b")
    }
}

import Foundation
import Testing
@testable import taskctl

/// Taskwarrior's information commands (projects, tags, summary, history, _get, calc),
/// answered by Taskwarrior 2.6 and taskctl on the same tasks at the same frozen time.
@Suite struct TaskwarriorInformationTests {
    /// A table's rows as words (labels, dashes, the bar and footers aside).
    static func rows(_ text: String) -> [[String]] {
        text.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }.filter { words in
            guard let first = words.first, !first.hasPrefix("---") else { return false }
            return !["Project", "Tag", "Year"].contains(first) && !(words.count >= 2 && words[1].hasPrefix("project")) && !(words.last ?? "").hasSuffix(")")
        }.map { words in words.filter { !$0.hasPrefix("=") } }
    }

    @Test func projectsTagsSummaryAndHistoryCountAsTaskwarriorCounts() throws {
        guard let (tw, t) = try TaskwarriorDifferentialTests.sideBySide(importing: true) else { return }
        for line in [["projects"], ["+shop", "projects"], ["tags"], ["project:home", "tags"], ["summary"], ["history.monthly"],
                     ["history.annual"], ["history"], ["_projects"], ["status:completed", "history.monthly"]] {
            let expected = Self.rows(try tw.run(line))
            let result = try t.run(line)
            #expect(result.status == 0, "\(line): \(result.err)")
            #expect(!expected.isEmpty, "\(line): Taskwarrior answered")
            #expect(Self.rows(result.out) == expected, "\(line)\n taskctl \(Self.rows(result.out))\n Taskwarrior \(expected)")
        }
    }

    /// The timesheet lists the same tasks in the same order, and counts them alike.
    @Test func theTimesheetListsWhatTaskwarriorLists() throws {
        guard let (tw, t) = try TaskwarriorDifferentialTests.sideBySide(importing: true) else { return }
        let descriptions = Set(TaskwarriorDifferentialTests.tasks().compactMap { $0["description"] as? String })
        func order(_ text: String) -> [String] {
            text.split(separator: "\n").compactMap { line in descriptions.first { line.hasSuffix(" " + $0) } }
        }
        for line in [["timesheet"], ["end.after:2026-01-01", "timesheet"]] {
            let expected = try tw.run(line + ["rc.verbose=affected"])
            let got = try t.ok(line)
            #expect(order(got) == order(expected) && !order(expected).isEmpty, "\(line): taskctl \(order(got)) Taskwarrior \(order(expected))")
            #expect(got.split(separator: "\n").last == expected.split(separator: "\n").last, "\(line)")
        }
    }

    @Test func getAndCalcAnswerAsTaskwarrior() throws {
        guard let (tw, t) = try TaskwarriorDifferentialTests.sideBySide(importing: true) else { return }
        let references = ["00000001.description", "00000001.due", "00000001.tags", "00000001.project", "00000001.priority", "00000001.status",
                          "00000001.uuid", "00000001.urgency", "00000001.entry", "00000003.annotations.1.description", "00000003.annotations.1.entry",
                          "00000003.annotations.count", "00000001.end", "0000000c.end", "00000001.wait", "00000009.wait", "00000003.tags.bike",
                          "00000003.tags.nosuch", "00000014.parent", "00000014.recur", "00000001.recur", "rc.dateformat", "rc.bulk"]
        for reference in references {
            let expected = try tw.run(["_get", reference])
            let got = try t.ok("_get", reference)
            #expect(got == expected, "_get \(reference): taskctl [\(got)] Taskwarrior [\(expected)]")
        }
        #expect(try t.ok("_get", "00000001.description", "00000002.description") == (try tw.run(["_get", "00000001.description", "00000002.description"])))
        let refused = try t.run("_get", "00000001.nosuch")
        #expect(refused.status == 1 && refused.err.contains("not a DOM reference"))
        for expression in ["1+2", "2*3+4", "now+3d", "eom", "2026-12-01 - 2026-11-25", "10/4", "3d", "1w + 2d", "now", "tomorrow",
                           "(1+2)*3", "5 - 7", "1.5 * 2", "2026-11-25T12:00:00 + P1D", "eoy - now", "7/2.0"] {
            let expected = try tw.run(["calc", expression])
            #expect(try t.ok("calc", expression) == expected, "calc \(expression)")
        }
        for bad in ["1 +", "(1", "x + 2", "now * now", "1/0"] {
            #expect(try t.run("calc", bad).status == 1, "calc \(bad) is refused")
        }
    }

    /// Taskwarrior's information report (`info ID`, or the id alone) lists the task's changes
    /// from the store's history with old and new values, undo included; `show` does with
    /// `--changes`.
    @Test func theInformationReportListsTheTasksChanges() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "Buy milk", "due:tomorrow")
        try t.ok("1", "modify", "pri:M")
        try t.ok("add", "Other")
        try t.ok("2", "modify", "pri:H", "due:friday")
        try t.ok("1", "done")
        try t.ok("undo")
        for line in [["info", "1"], ["1"], ["show", "1", "--changes"]] {
            let shown = try t.ok(line)
            let changes = shown.components(separatedBy: "changes\n").last ?? ""
            #expect(changes.contains("add: task 1 added: \"Buy milk\""), "\(line): \(shown)")
            #expect(changes.contains("modify: task 1: priority none -> medium"), "\(line): \(shown)")
            #expect(changes.contains("done: task 1:") && changes.contains("undo of #"), "\(line): \(shown)")
            #expect(!changes.contains("task 2"), "another task's changes are not listed: \(shown)")
        }
        #expect(!(try t.ok("show", "1")).contains("changes\n"))
    }
}

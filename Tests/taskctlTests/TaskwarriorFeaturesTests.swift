import Foundation
import Testing

/// What Taskwarrior users miss first, on Tasks model v4: annotations, start/stop, wait and
/// scheduled dates, recurrence, urgency, bulk edits.
@Suite(.enabled(if: TaskctlRunner.binary != nil, "needs the built taskctl (swift build)"))
struct TaskwarriorFeaturesTests {
    func task(_ t: TaskctlRunner, _ id: Int) throws -> [String: Any] {
        try #require(try t.tasks("--all").first { $0["id"] as? Int == id })
    }

    @Test func annotationsAreDatedShownExportedAndUndone() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "Buy milk")
        #expect(try t.ok("annotate", "1", "semi-skimmed,", "2 litres") == "annotated 1: Buy milk\n")
        t.now = "2026-11-22T13:30:00Z"
        try t.ok("annotate", "1", "check the date")
        let shown = try t.ok("show", "1")
        #expect(shown.contains("note      2026-11-22 12:00  semi-skimmed, 2 litres\nnote      2026-11-22 13:30  check the date"), "\(shown)")
        let notes = try #require(try task(t, 1)["annotations"] as? [[String: Any]])
        #expect(notes.map { $0["text"] as? String } == ["semi-skimmed, 2 litres", "check the date"])
        #expect(notes.first?["entry"] as? String == "2026-11-22T12:00:00Z")

        // Taskwarrior's export has them in its own shape, and they come back from it.
        let exported = try t.ok("export", "--format", "taskwarrior")
        #expect(exported.contains(#""annotations":[{"entry":"20261122T120000Z","description":"semi-skimmed, 2 litres"},{"entry":"20261122T133000Z","description":"check the date"}]"#), "\(exported)")
        let other = try TaskctlRunner()
        let file = other.directory.appendingPathComponent("tw.json")
        try Data(exported.utf8).write(to: file)
        try other.ok("import", file.path)
        #expect(try other.ok("export", "--format", "taskwarrior") == exported)

        #expect(try t.ok("undo") == "undid annotate of task 1\n")
        #expect((try task(t, 1)["annotations"] as? [[String: Any]])?.count == 1)
        let empty = try t.run("annotate", "1", " ")
        #expect(empty.status == 1 && empty.err.contains("needs text"))
        // Deleting a task deletes its annotations with it (cascade): store check stays clean.
        try t.ok("delete", "1")
        #expect(try t.ok("store", "check").hasPrefix("ok:"))
    }

    @Test func startAndStopMarkWhatIsInProgress() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "Write report")
        try t.ok("add", "Other")
        #expect(try t.ok("start", "1") == "started 1: Write report\n")
        #expect(try task(t, 1)["started"] as? String == "2026-11-22T12:00:00Z")
        #expect(try t.texts().first == "Write report", "an active task is more urgent (+4)")
        let again = try t.run("start", "1")
        #expect(again.status == 1 && again.err.contains("already started"))
        #expect(try t.ok("stop", "1") == "stopped 1: Write report\n")
        #expect(try task(t, 1)["started"] is NSNull)
        try t.ok("start", "1")
        try t.ok("done", "1")
        #expect(try task(t, 1)["started"] is NSNull, "done stops a task")
        let doneStart = try t.run("start", "1")
        #expect(doneStart.status == 1 && doneStart.err.contains("only pending tasks"))
        try t.ok("undo")
        #expect(try task(t, 1)["started"] as? String == "2026-11-22T12:00:00Z", "undoing done restarts it")
    }

    @Test func waitHidesATaskAndScheduledShows() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "Renew passport", "wait:2026-12-01", "scheduled:2026-11-25")
        try t.ok("add", "Now")
        #expect(try t.texts() == ["Now"])
        let passport = try task(t, 1)
        #expect(passport["wait"] as? String == "2026-12-01T00:00:00Z" && passport["scheduled"] as? String == "2026-11-25T00:00:00Z", "a bare day starts at midnight")
        try t.ok("edit", "1", "--no-wait")
        #expect(try t.texts().sorted() == ["Now", "Renew passport"])
        let both = try t.run("edit", "1", "--wait", "friday", "--no-wait")
        #expect(both.status == 1 && both.err.contains("not both"))
        // Scheduled in the past adds urgency (+5).
        t.now = "2026-11-26T12:00:00Z"
        #expect(try t.texts().first == "Renew passport")
    }

    /// A recurring task is a template and its instances: add prints the first instance's
    /// id; done marks it in the template; the next instance comes with the first change after
    /// its date is due, with the template's fields; one undo takes it back; until ends it.
    @Test func recurringTasksAreATemplateAndItsInstances() throws {
        let t = try TaskctlRunner()
        let added = try t.ok("add", "Water plants", "--recur", "weekly", "--due", "2026-11-22T18:00:00Z", "--tag", "home", "--until", "2026-12-10")
        #expect(added == "2\n", "the instance's id, not the template's")
        #expect(try t.texts() == ["Water plants"])
        #expect(try t.ok("show", "1").contains("status    recurring"))
        #expect(try t.ok("done", "2") == "done 2: Water plants\n")
        let series = try RecurrenceTests.series(try t.ok("export", "--all", "--format", "taskwarrior"))["Water plants"] ?? []
        #expect(series.contains("template mask + due 20261122T180000Z until 20261210T235959Z"), "\(series)")
        // The next day, a change makes the instance of 11-29 (the first after now).
        t.now = "2026-11-23T12:00:00Z"
        try t.ok("add", "Something else")
        let next = try task(t, 4)
        #expect(next["text"] as? String == "Water plants" && next["due"] as? String == "2026-11-29T18:00:00Z", "\(next)")
        #expect(next["tags"] as? [String] == ["home"] && next["recur"] as? String == "weekly" && next["status"] as? String == "pending")
        // One undo takes back the change and the instance it made.
        try t.ok("undo")
        #expect(try t.texts("--all").sorted() == ["Water plants"])
        // Past until, the instances expire and no more are made.
        t.now = "2026-12-11T12:00:00Z"
        try t.ok("add", "Later")
        #expect(try t.texts() == ["Later"])

        let noDue = try t.run("add", "Gym", "recur:daily")
        #expect(noDue.status == 1 && noDue.err.contains("needs a due date"))
        let bad = try t.run("add", "Gym", "--recur", "sometimes", "--due", "tomorrow")
        #expect(bad.status == 1 && bad.err.contains("not a recurrence"))
        // done on a template is refused, as in Taskwarrior: its instances are done.
        let template = try t.run("done", "1")
        #expect(template.status == 1 && template.err.contains("template"), "\(template.err)")
    }

    /// Around a clock change in New York: a repeated local time is its first instant (EDT),
    /// a skipped one an hour later, and a weekly recurrence keeps 09:00 across the change
    /// (Taskwarrior 2.6.2 adds 7 x 24 h: its next instance is at 13:00 UTC, 08:00 EST), as
    /// docs/taskctl.md says.
    @Test func clockChangesAreReadAsTheManualSays() throws {
        let t = try TaskctlRunner()
        t.extraEnvironment["TZ"] = "America/New_York"
        t.now = "2026-10-28T12:00:00Z"
        try t.ok("add", "repeated", "--due", "2026-11-01T01:30")
        try t.ok("add", "skipped", "--due", "2026-03-08T02:30")
        try t.ok("add", "weekly", "--due", "2026-10-29T09:00", "--recur", "weekly")
        try t.ok("done", "4")  // the first instance (3 is the template)
        t.now = "2026-10-30T12:00:00Z"
        try t.ok("add", "a change")
        let dues = Dictionary(try t.tasks("--all").compactMap { task in (task["text"] as? String).map { ($0, task["due"] as? String ?? "") } }, uniquingKeysWith: max)
        #expect(dues["repeated"] == "2026-11-01T05:30:00Z")
        #expect(dues["skipped"] == "2026-03-08T07:30:00Z")
        #expect(dues["weekly"] == "2026-11-05T14:00:00Z", "\(dues)")
    }

    @Test func urgencyFollowsTaskwarriorsCoefficients() throws {
        let t = try TaskctlRunner()
        // High priority 6, due in 14 days 0.2 x 12, a project 1, one tag 0.8.
        try t.ok("add", "Plan", "--priority", "high", "--due", "2026-12-06T12:00:00Z", "--project", "work", "--tag", "q1")
        #expect(try t.ok("show", "1").contains("urgency   10.2\n"))
        #expect(try task(t, 1)["urgency"] as? Double == 10.2)
        // A year old (age 2), two annotations (0.9), a week overdue (12).
        t.now = "2027-11-30T12:00:00Z"
        try t.ok("annotate", "1", "one")
        try t.ok("annotate", "1", "two")
        #expect(try task(t, 1)["urgency"] as? Double == 6 + 12 + 1 + 0.8 + 2 + 0.9)
        try t.ok("add", "Small")
        #expect(try t.texts("--sort", "urgency") == ["Plan", "Small"])
        #expect(try t.texts("--sort", "+urgency") == ["Small", "Plan"])
    }

    @Test func editByFilterChangesManyTasksAfterConfirmationAndUndoesAsOne() throws {
        let t = try TaskctlRunner()
        for i in 1...5 { try t.ok("add", "Task \(i)", "--project", i <= 4 ? "home" : "work") }
        let unconfirmed = try t.run("edit", "--where", "project.name == 'home'", "--priority", "low")
        #expect(unconfirmed.status == 1 && unconfirmed.err.contains("--yes"), "\(unconfirmed.err)")
        #expect(try t.tasks().allSatisfy { $0["priority"] as? String == "none" }, "nothing changed without confirmation")
        let edited = try t.ok("edit", "--where", "project.name == 'home'", "--priority", "low", "--yes")
        #expect(edited == "edited 1: Task 1\nedited 2: Task 2\nedited 3: Task 3\nedited 4: Task 4\n")
        #expect(try t.texts("--priority", "low").sorted() == ["Task 1", "Task 2", "Task 3", "Task 4"])
        // A few tasks by id need no confirmation.
        try t.ok("edit", "1", "5", "+urgent")
        #expect(try task(t, 5)["tags"] as? [String] == ["urgent"])
        try t.ok("undo")
        try t.ok("undo")
        #expect(try t.tasks().allSatisfy { $0["priority"] as? String == "none" && ($0["tags"] as? [String])?.isEmpty == true })
        let nothing = try t.run("edit", "--where", "priority == 3", "--priority", "low")
        #expect(nothing.status == 1 && nothing.err.contains("no task matches"))
        let both = try t.run("edit", "1", "--where", "priority == 0", "--priority", "low")
        #expect(both.status == 1 && both.err.contains("not both"))
    }

    @Test func agendaListsEachDaysTasksAndAMonthAsACalendar() throws {
        let t = try TaskctlRunner()  // Sunday 2026-11-22, 12:00 UTC
        try t.ok("add", "Overdue one", "--due", "yesterday")
        try t.ok("add", "Soon", "--due", "tomorrow", "--location", "Home")
        try t.ok("add", "Later", "--due", "2026-11-25T09:30")
        try t.ok("add", "December", "--due", "2026-12-03")
        let agenda = try t.ok("agenda")
        #expect(agenda.contains("Mon 2026-11-23 (tomorrow)\n  2 Soon @Home\nWed 2026-11-25\n  3 09:30 Later\nThu 2026-12-03\n  4 December\n"), "\(agenda)")
        let month = try t.ok("agenda", "--month")
        #expect(month.hasPrefix("November 2026: 3 tasks due\nMo    Tu    We    Th    Fr    Sa    Su\n                                     1\n"), "\(month)")
        #expect(month.contains("16    17    18    19    20    21(1) 22   *\n23(1) 24    25(1) 26    27    28    29\n30\n"), "\(month)")
        #expect(try t.ok("agenda", "--month", "2026-12", "--json") == "{\"month\": \"2026-12\", \"days\": [{\"date\": \"2026-12-03\", \"due\": 1}]}\n")
        let bad = try t.run("agenda", "--month", "2026-13")
        #expect(bad.status == 1 && bad.err.contains("YYYY-MM"))
    }

    @Test func statsCountWeeksAgesAndGroups() throws {
        let t = try TaskctlRunner()
        t.now = "2026-11-02T12:00:00Z"
        try t.ok("add", "Old", "--project", "home")
        try t.ok("add", "Done early")
        t.now = "2026-11-12T12:00:00Z"
        try t.ok("done", "2")  // ten days after it was added, in the week of Nov 9
        t.now = "2026-11-22T12:00:00Z"
        try t.ok("add", "New", "--location", "Desk", "--priority", "low")
        try t.ok("add", "Third", "--project", "home")
        try t.ok("done", "4")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(try t.ok("stats", "--json").utf8)) as? [String: Any])
        #expect(json["pending"] as? Int == 2 && json["done"] as? Int == 2 && json["deleted"] as? Int == 0)
        let weeks = try #require(json["donePerWeek"] as? [[String: Any]])
        #expect(weeks.count == 8 && weeks.last?["week"] as? String == "2026-11-16" && weeks.last?["done"] as? Int == 1)
        #expect(weeks[weeks.count - 2]["week"] as? String == "2026-11-09" && weeks[weeks.count - 2]["done"] as? Int == 1)
        #expect(json["averagePendingAgeDays"] as? Double == 10, "20 days and 0 days")
        #expect(json["averageDaysToDone"] as? Double == 5, "10 days and 0 days")
        #expect(json["oldestPending"] as? Int == 1)
        #expect((json["byProject"] as? [String: Int]) == ["home": 1, "(none)": 1])
        #expect((json["byPriority"] as? [String: Int])?["low"] == 1)
        let text = try t.ok("stats")
        #expect(text.hasPrefix("2 pending (0 overdue, 0 waiting, 0 started), 2 done, 0 deleted\n"))
        #expect(text.contains("the oldest is 1 Old (2026-11-02)"))
    }

    @Test func importRefusesEmptyAndNonUTF8FilesAndDetectsJSONAfterWhiteSpace() throws {
        let t = try TaskctlRunner()
        let empty = t.directory.appendingPathComponent("empty.json")
        try Data(" \n\t ".utf8).write(to: empty)
        let refused = try t.run("import", empty.path)
        #expect(refused.status == 1 && refused.err.contains("is empty: nothing to import"), "\(refused.err)")
        let latin1 = t.directory.appendingPathComponent("latin1.json")
        try Data([0x5B, 0x7B, 0x22, 0xE9, 0x22, 0x7D, 0x5D]).write(to: latin1)
        let notUTF8 = try t.run("import", latin1.path)
        #expect(notUTF8.status == 1 && notUTF8.err.contains("is not UTF-8 text"), "\(notUTF8.err)")
        let spaced = t.directory.appendingPathComponent("spaced.json")
        try Data("\n  [{\"description\": \"Spaced\", \"uuid\": \"\(UUID().uuidString)\"}]\n".utf8).write(to: spaced)
        #expect(try t.ok("import", spaced.path).contains("(Taskwarrior JSON): 1 added"))
    }
}

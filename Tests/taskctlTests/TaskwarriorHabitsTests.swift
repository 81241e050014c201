import Foundation
import Testing

/// What Taskwarrior users type, and the small surprises a day of use found.
@Suite(.enabled(if: TaskctlRunner.binary != nil, "needs the built taskctl (swift build)"))
struct TaskwarriorHabitsTests {
    @Test func taskwarriorsAttributeWordsAreOptionsNotText() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "Buy", "milk", "+shopping", "+errand", "due:tomorrow", "pri:H", "loc:Shop", "project:home.kitchen")
        let task = try #require(try t.tasks().first)
        #expect(task["text"] as? String == "Buy milk")
        #expect(Set(task["tags"] as? [String] ?? []) == ["shopping", "errand"])
        #expect(task["priority"] as? String == "high")
        #expect(task["location"] as? String == "Shop")
        #expect(task["project"] as? String == "home.kitchen")
        #expect((task["due"] as? String)?.hasPrefix("2026-11-23") == true)
        try t.ok("edit", "1", "-errand", "pri:L")
        let edited = try #require(try t.tasks().first)
        #expect(edited["tags"] as? [String] == ["shopping"] && edited["priority"] as? String == "low")
        // Filters: project:NAME is every project starting with NAME, as in Taskwarrior
        // (homework too); taskctl's --project is the project and its subprojects.
        try t.ok("add", "Other", "project:home")
        try t.ok("add", "Elsewhere", "project:homework")
        #expect(try t.texts("+shopping") == ["Buy milk"])
        #expect(try t.texts("project:home").sorted() == ["Buy milk", "Elsewhere", "Other"])
        #expect(try t.texts("--project", "home").sorted() == ["Buy milk", "Other"])
        #expect(try t.texts("project.not:home").isEmpty)
        // What taskctl lacks is refused, never stored as text; after -- words are text.
        let started = try t.run("add", "Later", "start:now")
        #expect(started.status == 1 && started.err.contains("does not have yet"), "\(started.err)")
        try t.ok("add", "--", "Literal", "+plus", "due:text")
        #expect(try t.texts().contains("Literal +plus due:text"))
    }

    @Test func commandsThatDoNothingSaySoAndFail() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "one")
        let bare = try t.run("edit", "1")
        #expect(bare.status == 1 && bare.err.contains("edit needs something to change"), "\(bare.err)")
        #expect(try t.ok("edit", "1", "--text", "uno") == "edited 1: uno\n")
        #expect(try t.ok("edit", "1", "--text", "uno").contains("nothing changed"))
        let reopen = try t.run("reopen", "1")
        #expect(reopen.status == 1 && reopen.err.contains("already pending"), "\(reopen.err)")
        try t.ok("delete", "1")
        let show = try t.run("show", "1")
        #expect(show.status == 1 && show.err.contains("is deleted"), "\(show.err)")
        #expect(try t.ok("show", "1", "--deleted").contains("deleted"))
        // The unchanged edit and the failed reopen left no undo step: undo takes back the delete.
        #expect(try t.ok("undo") == "undid delete of task 1\n")
    }

    @Test func importRefusesFilesThatAreNotTasksAndSaysWhatItRead() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "seed")
        let hosts = t.directory.appendingPathComponent("hosts")
        try "127.0.0.1 localhost\n::1 localhost ip6-localhost\n".write(to: hosts, atomically: true, encoding: .utf8)
        let refused = try t.run("import", hosts.path)
        #expect(refused.status == 1 && refused.err.contains("cannot tell what"), "\(refused.err)")
        #expect(try t.texts() == ["seed"])
        let todo = t.directory.appendingPathComponent("todo.txt")
        try "(A) Call Mom +family\n".write(to: todo, atomically: true, encoding: .utf8)
        #expect(try t.ok("import", todo.path).contains("(todo.txt): 1 added"))
    }

    @Test func doneTasksShowWhenTheyWereDoneNotOverdue() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "old", "--due", "2026-11-19")
        try t.ok("done", "1")
        let listed = try t.ok("list", "--done")
        #expect(listed.contains("done 2026-11-22 12:00") && !listed.contains("overdue"), "\(listed)")
    }

    @Test func colourVersionHelpAndPipes() throws {
        let t = try TaskctlRunner()
        let long = String(repeating: "word ", count: 40) + "END"
        try t.ok("add", long)
        // Piped output is not cut to a width: grep sees the whole text.
        #expect(try t.ok("list").contains("END"))
        t.extraEnvironment["NO_COLOR"] = ""
        #expect(!(try t.ok("list")).contains("\u{1B}["), "not a terminal: no colour")
        #expect(try t.ok("--color=always", "list").contains("\u{1B}["))
        #expect(try t.run("list", "--color", "sometimes").status == 1)
        // The version is the newest release CHANGELOG.md names (the one tagged).
        let changelog = try String(contentsOf: TaskctlRunner.repository.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let release = changelog.components(separatedBy: "\n").first { $0.hasPrefix("## ") && $0 != "## Unreleased" }?
            .split(separator: " ").dropFirst().first.map(String.init)
        #expect(try t.ok("--version") == "taskctl \(release ?? "none")\n")
        #expect(try t.ok("help", "help").contains("usage: taskctl help"))
        #expect(try t.ok("help", "dates").contains("Dates:"))
        #expect(try t.run("locations", "extra").status == 1)
    }

    @Test func exportsKeepTagsLineBreaksAndAFreshModifiedTime() throws {
        let t = try TaskctlRunner()
        let file = TaskctlRunner.fixtures.appendingPathComponent("taskwarrior-2.6.2-export.json")
        try t.ok("import", file.path)
        try t.ok("edit", "1", "--priority", "low")
        let exported = try t.ok("export", "--format", "taskwarrior")
        let tasks = try #require(try JSONSerialization.jsonObject(with: Data(exported.utf8)) as? [[String: Any]])
        let uuid = try #require(try t.tasks("--all").first { $0["id"] as? Int == 1 }?["uuid"] as? String)
        let first = try #require(tasks.first { ($0["uuid"] as? String)?.lowercased() == uuid })
        #expect(tasks.contains { $0["modified"] as? String != "20261122T120000Z" }, "the other tasks keep theirs")
        #expect(first["modified"] as? String == "20261122T120000Z", "an edited task was modified now: \(first)")

        let other = try TaskctlRunner()
        try other.ok("add", "two\nlines", "+a", "+b", "project:p")
        let todo = try other.ok("export", "--format", "todo.txt")
        #expect(todo.split(separator: "\n").count == 1, "one task, one line: \(todo)")
        #expect(todo.contains("two\\nlines") && todo.contains("+p +a +b"), "\(todo)")
        let file2 = other.directory.appendingPathComponent("back.txt")
        try todo.write(to: file2, atomically: true, encoding: .utf8)
        let third = try TaskctlRunner()
        try third.ok("import", file2.path)
        let back = try #require(try third.tasks().first)
        #expect((back["text"] as? String)?.hasPrefix("two\nlines") == true, "\(back)")
        #expect(Set(back["tags"] as? [String] ?? []) == ["a", "b"] && back["project"] as? String == "p")
    }

    @Test func groupsShareColumnsLeaveOutTheirKeyAndCountBeforeTheLimit() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "a", "--location", "Home")
        try t.ok("add", "b", "--location", "Home")
        try t.ok("add", "a rather longer text at work", "--location", "Work")
        let grouped = try t.ok("list", "--group-by", "location", "--limit", "2")
        #expect(grouped.hasPrefix("Home (2)\n"), "\(grouped)")
        #expect(!grouped.contains("Location"), "the grouped column is the titles: \(grouped)")
        #expect(!grouped.contains("Work"), "the limit caps rows after grouping: \(grouped)")
        let all = try t.ok("list", "--group-by", "location")
        let headers = all.split(separator: "\n").filter { $0.contains("ID") }
        #expect(headers.count == 2 && Set(headers).count == 1, "one width for every group: \(all)")
        let json = try t.ok("list", "--group-by", "location", "--json")
        let groups = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        #expect(groups.map { $0["group"] as? String } == ["Home", "Work"])
        #expect(groups.map { $0["count"] as? Int } == [2, 1])
        #expect((groups.first?["tasks"] as? [[String: Any]])?.count == 2)
    }

    @Test func importedWaitScheduledAndAnnotationsShowAndWaitingTasksWait() throws {
        let t = try TaskctlRunner()
        try t.ok("import", TaskctlRunner.fixtures.appendingPathComponent("taskwarrior-2.6.2-export.json").path)
        #expect(!(try t.texts()).contains("Renew passport"), "waits until 2026-12-01")
        #expect(try t.texts("--all").contains("Renew passport"))
        let all = try t.tasks("--all")
        func id(_ text: String) -> String { String(all.first { $0["text"] as? String == text }?["id"] as? Int ?? 0) }
        #expect(try t.ok("show", id("Renew passport")).contains("waits     2026-12-01"))
        #expect(try t.ok("show", id("Write quarterly report")).contains("scheduled 2026-11-23"))
        let milk = try t.ok("show", id("Buy milk and eggs"))
        #expect(milk.contains("note      2026-11-21 21:10  Semi-skimmed, 2 litres\nnote      2026-11-21 21:10  Check the date on the eggs"), "\(milk)")
        t.now = "2026-12-02T12:00:00Z"
        #expect(try t.texts().contains("Renew passport"), "after its wait date it is pending like the others")
    }

    @Test func oneWeekOfAgendaOnASundayShowsTheComingWeek() throws {
        let t = try TaskctlRunner()  // TASKCTL_NOW is Sunday 2026-11-22
        try t.ok("add", "Monday's", "--due", "2026-11-23")
        try t.ok("add", "Saturday's", "--due", "2026-11-28")
        let agenda = try t.ok("agenda", "--weeks", "1")
        let rows = agenda.split(separator: "\n").filter { $0.hasPrefix("11-") }
        #expect(rows.count == 2, "this week's Sunday and the next week: \(agenda)")
        #expect(rows.last?.split(separator: " ").filter { $0 == "1" }.count == 2, "\(agenda)")
        let json = try t.ok("agenda", "--weeks", "1", "--json")
        #expect(json.contains("\"date\": \"2026-11-23\", \"due\": 1") && json.contains("\"date\": \"2026-11-28\", \"due\": 1"), "\(json)")
    }

    @Test func bashCompletesCommandsOptionsLocationsAndIds() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "milk", "--location", "Home", "--tag", "shopping")
        try t.ok("add", "bread", "--location", "Hall")
        try t.ok("done", "2")
        guard FileManager.default.isExecutableFile(atPath: "/bin/bash") else { return }
        func complete(_ words: [String]) throws -> [String] {
            let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
            let script = "eval \"$(taskctl completion bash)\"; COMP_WORDS=(taskctl \(quoted)); COMP_CWORD=\(words.count); _taskctl; printf '%s\\n' \"${COMPREPLY[@]}\""
            return try t.run(program: "/bin/bash", ["-c", script]).out.split(separator: "\n").map(String.init)
        }
        #expect(try complete(["lo"]) == ["log", "locations", "location", "long"])
        #expect(try complete(["add", "x", "--location", "H"]) == ["Hall", "Home"])
        #expect(try complete(["list", "--gr"]) == ["--group-by"])
        #expect(try complete(["edit", "1", "--tag", ""]) == ["shopping"])
        #expect(try complete(["done", ""]).first == "1", "pending ids for done")
        #expect(try complete(["reopen", ""]).first == "2", "done ids for reopen")
        #expect(try t.ok("completion", "zsh").contains("compdef _taskctl taskctl"))
        #expect(try t.ok("completion", "fish").contains("complete -c taskctl"))
    }

    /// Locations, projects and tags are task data: a name such as `$(cmd)` or `` `cmd` ``
    /// (one line of an imported todo.txt) is offered as text, quoted, and never run.
    @Test func bashCompletionNeverRunsTaskData() throws {
        let t = try TaskctlRunner()
        guard FileManager.default.isExecutableFile(atPath: "/bin/bash") else { return }
        let marker = t.directory.appendingPathComponent("ran")
        let hostile = ["$(touch \(marker.path))", "`touch \(marker.path)`", "x;touch \(marker.path)", "Home Office"]
        let todo = t.directory.appendingPathComponent("todo.txt")
        try Data(hostile.enumerated().map { "task \($0.offset) @\($0.element.replacingOccurrences(of: " ", with: "_"))\n" }.joined().utf8).write(to: todo)
        try t.ok("import", todo.path)
        for (index, name) in hostile.enumerated() { try t.ok("add", "more \(index)", "--location", name, "--project", name, "--tag", name.replacingOccurrences(of: " ", with: "-")) }
        func complete(_ words: [String]) throws -> [String] {
            let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
            let script = "eval \"$(taskctl completion bash)\"; COMP_WORDS=(taskctl \(quoted)); COMP_CWORD=\(words.count); _taskctl; printf '%s\\n' \"${COMPREPLY[@]}\""
            return try t.run(program: "/bin/bash", ["-c", script]).out.split(separator: "\n").map(String.init)
        }
        for option in ["--location", "--project", "--tag"] {
            let offered = try complete(["add", "x", option, ""])
            #expect(!FileManager.default.fileExists(atPath: marker.path), "\(option) ran a name: \(offered)")
            // Each name offered once per spelling, quoted for the shell: reading it back gives the name.
            for name in offered {
                // The command line as the user's shell reads it once the name is inserted.
                let unquoted = try t.run(program: "/bin/bash", ["-c", "printf '%s' \(name)"]).out
                #expect(!FileManager.default.fileExists(atPath: marker.path), "\(name)")
                #expect(hostile.contains(unquoted) || hostile.map { $0.replacingOccurrences(of: " ", with: option == "--tag" ? "-" : "_") }.contains(unquoted), "\(option): \(name) -> \(unquoted)")
            }
            #expect(offered.count >= hostile.count, "\(option): \(offered)")
        }
        // A plain prefix match: `$` and `*` in what is typed are text too.
        #expect(try complete(["add", "x", "--location", "$"]).count == 2)
        #expect(try complete(["add", "x", "--location", "*"]).isEmpty)
        #expect(try complete(["add", "x", "--location", "Home"]) == [#"Home\ Office"#, "Home_Office"])
        #expect(!FileManager.default.fileExists(atPath: marker.path))
    }

    @Test func theManualPageIsTheHelpInRoff() throws {
        let t = try TaskctlRunner()
        let page = try t.ok("help", "man")
        #expect(page.hasPrefix(".TH TASKCTL 1"))
        for command in ["add", "list", "undo", "completion", "migrate"] { #expect(page.contains(".SS \(command)\n"), "\(command)") }
        #expect(page.contains("\\-\\-priority P"), "dashes escaped for roff")
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/groff") else { return }
        let file = t.directory.appendingPathComponent("taskctl.1")
        try page.write(to: file, atomically: true, encoding: .utf8)
        let rendered = try t.run(program: "/usr/bin/groff", ["-man", "-Tutf8", "-ww", file.path])
        #expect(rendered.err.isEmpty, "\(rendered.err)")
        #expect(rendered.out.contains("taskctl undo"))
    }

    /// Files written on Windows: "\r\n" ends a line of a todo.txt import and of the config
    /// file (a 3-line CRLF todo.txt imported as one task; a CRLF config stopped every command).
    @Test func windowsLineEndingsEndLines() throws {
        let t = try TaskctlRunner()
        let todo = t.directory.appendingPathComponent("todo.txt")
        try Data("(A) Call mom +family\r\nx 2026-11-20 Pay rent\r\nBuy milk @store\r\n\r\n".utf8).write(to: todo)
        #expect(try t.ok("import", todo.path).contains("imported 3 tasks"))
        #expect(try t.texts("--all", "--sort", "text") == ["Buy milk @store", "Call mom +family", "Pay rent"])
        // Old Mac line ends too.
        try Data("one\rtwo".utf8).write(to: todo)
        #expect(try t.ok("import", todo.path).contains("imported 2 tasks"))

        let config = t.directory.appendingPathComponent(".config/taskctl")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data("# written on Windows\r\nsort = -text\r\ncolor = never\r\n".utf8).write(to: config.appendingPathComponent("config"))
        #expect(try t.texts() == ["two", "one", "Call mom +family", "Buy milk @store"])
        try Data("sort = text\r\ncolour = never\r\n".utf8).write(to: config.appendingPathComponent("config"))
        let bad = try t.run("list")
        #expect(bad.status == 1 && bad.err.contains("config:2: unknown setting 'colour'"), "\(bad.err)")
    }

    /// Real Taskwarrior exports have long texts: a 5,000-character description and a
    /// 3,000-character annotation import (model v5; v4 refused the whole file past 500 and
    /// 2,000), and a text past the bound names its field, an annotation's as an annotation's.
    @Test func longTaskwarriorTextsImportAndAnOverlongOneNamesItsField() throws {
        let t = try TaskctlRunner()
        let file = t.directory.appendingPathComponent("long.json")
        func write(description: Int, annotation: Int) throws {
            let item: [String: Any] = ["uuid": "00000000-0000-4000-8000-000000000001", "description": String(repeating: "d", count: description),
                                       "status": "pending", "entry": "20261101T120000Z",
                                       "annotations": [["entry": "20261102T120000Z", "description": String(repeating: "a", count: annotation)]]]
            try JSONSerialization.data(withJSONObject: [item]).write(to: file)
        }
        try write(description: 5_000, annotation: 3_000)
        #expect(try t.ok("import", file.path).contains("1 added"))
        let task = try #require(try t.tasks().first)
        #expect((task["text"] as? String)?.count == 5_000)
        #expect(((task["annotations"] as? [[String: Any]])?.first?["text"] as? String)?.count == 3_000)
        try write(description: 10, annotation: 100_001)
        let refused = try t.run("import", file.path)
        #expect(refused.status == 1 && refused.err.contains("annotation text: has 100001 characters, at most 100000 allowed"), "\(refused.err)")
    }

    /// An empty attribute clears the field, as in Taskwarrior: `edit 1 due: pri: project:
    /// wait: location:` leaves none of them; `add ... pri: due:` stores none.
    @Test func anEmptyAttributeClearsTheField() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "x", "due:tomorrow", "pri:M", "project:home", "wait:tomorrow", "loc:Desk", "until:2027-06-01")
        var task = try #require(try t.tasks("--all").first)
        #expect(task["priority"] as? String == "medium" && task["project"] as? String == "home" && task["location"] as? String == "Desk")
        try t.ok("edit", "1", "until:", "due:", "pri:", "project:", "wait:", "location:")
        task = try #require(try t.tasks("--all").first)
        for key in ["due", "project", "wait", "location", "recur", "until"] { #expect(task[key] is NSNull, "\(key): \(task)") }
        #expect(task["priority"] as? String == "none")
        try t.ok("add", "y", "pri:", "due:", "project:")
        let y = try #require(try t.tasks("--all").first { $0["text"] as? String == "y" })
        #expect(y["priority"] as? String == "none" && y["due"] is NSNull && y["project"] is NSNull, "\(y)")
        #expect(Set(try t.texts("pri:")) == ["x", "y"])
    }

    /// `until` without a recurrence is an expiry date, as in Taskwarrior: past it the task
    /// leaves the lists, reads as deleted (exported with `end` = until), and a command that
    /// names it stores the deletion; a deleted task is exported with `end`, its deletion time.
    @Test func untilWithoutRecurrenceExpiresTheTaskAndDeletedTasksHaveAnEnd() throws {
        let t = try TaskctlRunner()
        t.now = "2026-11-25T10:00:00Z"
        try t.ok("add", "soon", "until:2026-11-25T12:00")
        try t.ok("add", "stays")
        try t.ok("add", "gone")
        try t.ok("delete", "3")
        #expect(try t.texts() == ["soon", "stays"])
        let deleted = try t.ok("export", "--format", "taskwarrior", "--all")
        #expect(deleted.contains(#""description":"gone","end":"20261125T100000Z""#), "\(deleted)")
        t.now = "2026-11-25T13:00:00Z"
        #expect(try t.texts() == ["stays"])
        #expect(try t.texts("--all") == ["stays"])
        let expired = try t.ok("export", "--format", "taskwarrior", "--all")
        #expect(expired.contains(#""description":"soon","end":"20261125T120000Z","entry":"20261125T100000Z","status":"deleted""#), "\(expired)")
        #expect(!(try t.ok("export")).contains("soon"))
        try t.ok("add", "later one")
        let edit = try t.run("edit", "1", "--text", "again")
        #expect(edit.status == 1 && edit.err.contains("task 1 is deleted"), "\(edit.err)")
        // A recurring task's until ends its series, and its instances expire with it, as in
        // Taskwarrior; before it, the series goes on.
        try t.ok("add", "weekly", "--due", "2026-11-20", "--recur", "weekly", "--until", "2026-11-21")
        #expect(!(try t.texts()).contains("weekly"))
        try t.ok("add", "weekly too", "--due", "2026-11-20", "--recur", "weekly", "--until", "2026-12-31")
        #expect(try t.texts().filter { $0 == "weekly too" }.count == 2, "the instance due before now and the next one")
    }

    /// Taskwarrior's filters: virtual tags, `-tag`, attribute modifiers and `status:`. The
    /// tasks and the expected answers are Taskwarrior 2.6.2's (`task +TODAY export` ...,
    /// run on Wednesday 2026-11-25 at 13:14:13 UTC with these due dates).
    @Test func taskwarriorsFiltersSelectWhatTaskwarriorSelects() throws {
        let t = try TaskctlRunner()
        t.now = "2026-11-25T13:14:13Z"
        let dues = [("yesterday", "2026-11-24T00:00:00Z"), ("today", "2026-11-25T00:00:00Z"), ("eod", "2026-11-25T23:59:59Z"),
                    ("tomorrow", "2026-11-26T00:00:00Z"), ("now+6d", "2026-12-01T13:14:13Z"), ("now+8d", "2026-12-03T13:14:13Z"),
                    ("eow", "2026-11-29T23:59:59Z"), ("sow", "2026-11-23T00:00:00Z"), ("now-8d", "2026-11-17T13:14:13Z")]
        for (name, due) in dues { try t.ok("add", "d " + name, "--due", due, "project:" + (name.hasPrefix("now") ? "work.code" : "home"), "+" + (name.count > 4 ? "shop" : "call")) }
        try t.ok("add", "waiting", "wait:tomorrow")
        try t.ok("add", "act")
        try t.ok("start", "11")
        func texts(_ filter: String...) throws -> Set<String> {
            let result = try t.run(["list", "--json"] + filter)
            let items = (try? JSONSerialization.jsonObject(with: Data(result.out.utf8))) as? [[String: Any]]
            #expect(items != nil, "\(filter): \(result.err)")
            return Set((items ?? []).compactMap { $0["text"] as? String })
        }
        #expect(try texts("+OVERDUE") == ["d yesterday", "d today", "d sow", "d now-8d"])
        #expect(try texts("+TODAY") == ["d today", "d eod"])
        #expect(try texts("+WEEK") == ["d yesterday", "d today", "d eod", "d tomorrow", "d eow", "d sow"])
        #expect(try texts("+DUE") == ["d today", "d eod", "d tomorrow", "d now+6d", "d eow"])
        #expect(try texts("+WAITING") == ["waiting"])
        #expect(try texts("+ACTIVE") == ["act"])
        #expect(try texts("+TOMORROW") == ["d tomorrow"])
        #expect(try texts("due.by:2026-11-26T00:00:00Z") == ["d yesterday", "d today", "d eod", "d tomorrow", "d sow", "d now-8d"])
        #expect(try texts("due.before:2026-11-26T00:00:00Z") == ["d yesterday", "d today", "d eod", "d sow", "d now-8d"])
        #expect(try texts("status:waiting") == ["waiting"])
        // Without a tag, a project, and text containing a word.
        // (a waiting task stays hidden unless asked for)
        #expect(try texts("-shop") == ["d eod", "d eow", "d sow", "act"])
        #expect(try texts("-OVERDUE", "-shop") == ["d eod", "d eow", "act"])
        #expect(try texts("project.not:work") == ["d yesterday", "d today", "d eod", "d tomorrow", "d eow", "d sow", "act"])
        // Case counts, as Taskwarrior's search.case.sensitive=yes, unless set otherwise.
        #expect(try texts("description.contains:NOW").isEmpty)
        #expect(try texts("description.contains:now") == ["d now+6d", "d now+8d", "d now-8d"])
        #expect(try texts("description.contains:NOW", "rc.search.case.sensitive=no") == ["d now+6d", "d now+8d", "d now-8d"])
        try t.ok("done", "1")
        #expect(try texts("status:completed") == ["d yesterday"])
        #expect(try t.run("list", "status:sleeping").err.contains("status is pending, completed, deleted, waiting or recurring"))
    }

    /// A Taskwarrior file with one UUID twice: the later record wins (as in Taskwarrior), the
    /// count says so ("1 added, 1 updated", not "2 added" for one stored task), and undo
    /// removes the one task.
    @Test func aUUIDTwiceInOneImportIsOneTaskTheLaterWinning() throws {
        let t = try TaskctlRunner()
        let file = t.directory.appendingPathComponent("dup.json")
        let uuid = "00000000-0000-4000-8000-000000000001"
        try Data(("[{\"uuid\":\"\(uuid)\",\"description\":\"first\",\"status\":\"pending\",\"entry\":\"20261101T120000Z\",\"tags\":[\"a\"]},"
                  + "{\"uuid\":\"\(uuid)\",\"description\":\"second\",\"status\":\"pending\",\"entry\":\"20261101T120000Z\",\"tags\":[\"b\"]}]").utf8).write(to: file)
        #expect(try t.ok("import", file.path).contains("imported 2 tasks from \(file.path) (Taskwarrior JSON): 1 added, 1 updated"))
        let tasks = try t.tasks("--all")
        #expect(tasks.count == 1)
        #expect(tasks.first?["text"] as? String == "second" && tasks.first?["tags"] as? [String] == ["b"], "\(tasks)")
        #expect(try t.ok("import", file.path, "--json").contains("{\"added\": 0, \"updated\": 2}"))
        // The second import changed nothing: one undo removes the task.
        try t.ok("undo")
        #expect(try t.tasks("--all").isEmpty)
    }

    @Test func aConfigFileSetsTheStoreSortAndColourAndRefusesWhatItDoesNotKnow() throws {
        let t = try TaskctlRunner()
        let config = t.directory.appendingPathComponent(".config/taskctl")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        let other = t.directory.appendingPathComponent("other.store")
        try "# mine\nstore = \(other.path)\nsort = -text\ncolor = always\n".write(to: config.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        t.extraEnvironment["TASKCTL_STORE"] = ""
        try t.ok("add", "alpha")
        try t.ok("add", "beta")
        #expect(FileManager.default.fileExists(atPath: other.path), "the config's store")
        let listed = try t.ok("list")
        #expect(listed.contains("\u{1B}["), "color = always")
        let json = try t.tasks()
        #expect(json.compactMap { $0["text"] as? String } == ["beta", "alpha"], "sort = -text")
        #expect(try t.texts("--sort", "text") == ["alpha", "beta"], "an option wins")
        try "store = x\ncolour = never\n".write(to: config.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        let bad = try t.run("list")
        #expect(bad.status == 1 && bad.err.contains("config:2: unknown setting 'colour' (did you mean 'color'?)"), "\(bad.err)")
        // Dates shown as the user reads them; --json stays ISO-8601.
        try "store = \(other.path)\ndateformat = a d.M.y\n".write(to: config.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        try t.ok("edit", "1", "--due", "2026-12-03T14:30")
        #expect(try t.ok("show", "1").contains("due       Thu 3.12.26 14:30 (in 11 days)"))
        #expect(try t.tasks().first { $0["text"] as? String == "alpha" }?["due"] as? String == "2026-12-03T14:30:00Z")
        try "dateformat = Q-M-D\n".write(to: config.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        let badFormat = try t.run("list")
        #expect(badFormat.status == 1 && badFormat.err.contains("config:1: dateformat takes"), "\(badFormat.err)")
    }
}

/// `taskctl install` and `uninstall`, into a temporary PREFIX, as the README's install line
/// does it (that line builds a static release first; this copies the built taskctl).
@Suite(.enabled(if: TaskctlRunner.binary != nil, "needs the built taskctl (swift build)"))
struct InstallTests {
    @Test func installPutsTaskctlItsManualAndCompletionsWhereShellsLookAndUninstallTakesThemAway() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "kept")
        let storeBefore = try Data(contentsOf: t.store)
        let prefix = t.directory.appendingPathComponent("prefix")
        let out = try t.ok("install", "--prefix", prefix.path)
        let files = ["bin/taskctl", "share/man/man1/taskctl.1", "share/bash-completion/completions/taskctl",
                     "share/zsh/site-functions/_taskctl", "share/fish/vendor_completions.d/taskctl.fish"]
        for file in files {
            #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent(file).path), "\(file)")
            #expect(out.contains("installed " + prefix.appendingPathComponent(file).path), "\(out)")
        }
        // The installed taskctl runs, on the same store.
        let installed = prefix.appendingPathComponent("bin/taskctl")
        #expect(FileManager.default.isExecutableFile(atPath: installed.path))
        #expect(try t.run(program: installed.path, ["--version"]).out.hasPrefix("taskctl "))
        #expect(try t.run(program: installed.path, ["list"]).out.contains("kept"))
        // The manual page is the roff of taskctl help man; the completions are the scripts.
        let page = try String(contentsOf: prefix.appendingPathComponent("share/man/man1/taskctl.1"), encoding: .utf8)
        #expect(page.hasPrefix(".TH TASKCTL 1") && page.contains(".SS install"))
        #expect(try String(contentsOf: prefix.appendingPathComponent("share/fish/vendor_completions.d/taskctl.fish"), encoding: .utf8) == (try t.ok("completion", "fish")))
        let zsh = try String(contentsOf: prefix.appendingPathComponent("share/zsh/site-functions/_taskctl"), encoding: .utf8)
        #expect(zsh.hasPrefix("#compdef taskctl\n") && zsh.hasSuffix("_taskctl \"$@\"\n"), "\(zsh)")
        // bash, as bash-completion loads the file: it completes commands.
        let bashFile = prefix.appendingPathComponent("share/bash-completion/completions/taskctl").path
        let completed = try t.run(program: "/bin/bash", ["-c", "source \(bashFile); COMP_WORDS=(taskctl lo); COMP_CWORD=1; _taskctl; printf '%s\\n' \"${COMPREPLY[@]}\""])
        #expect(completed.out == "log\nlocations\nlocation\nlong\n", "\(completed.out) \(completed.err)")

        let removed = try t.ok("uninstall", "--prefix", prefix.path)
        for file in files { #expect(!FileManager.default.fileExists(atPath: prefix.appendingPathComponent(file).path), "\(file)") }
        #expect(removed.contains("the store and the configuration are left as they are"))
        #expect(try t.ok("uninstall", "--prefix", prefix.path).contains("nothing of taskctl is installed"))
        #expect(try Data(contentsOf: t.store) == storeBefore)
    }
}

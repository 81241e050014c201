import Foundation
import Testing

/// End to end: the built taskctl binary against temporary stores.
@Suite(.enabled(if: TaskctlRunner.binary != nil, "needs the built taskctl (swift build)"))
struct TaskctlCommandTests {
    @Test func addListShowEditDoneReopenDelete() throws {
        let t = try TaskctlRunner()
        #expect(try t.ok("add", "Buy milk", "--priority", "high", "--due", "tomorrow", "--location", "Home", "--tag", "errand,food") == "1\n")
        #expect(try t.ok("add", "Call", "Mom", "--due", "2026-11-20") == "2\n")
        #expect(try t.ok("add", "Read", "--priority=l", "--project", "books") == "3\n")

        let tasks = try t.tasks()
        // Most urgent first (Taskwarrior's urgency): high priority due tomorrow beats two
        // days overdue without priority, which beats low priority without due date.
        #expect(tasks.map { $0["text"] as? String } == ["Buy milk", "Call Mom", "Read"])
        #expect(try t.texts("--sort", "due") == ["Call Mom", "Buy milk", "Read"], "overdue first, then due soonest")
        let milk = try #require(tasks.first { $0["id"] as? Int == 1 })
        #expect(milk["priority"] as? String == "high")
        #expect(milk["due"] as? String == "2026-11-23T23:59:59Z")
        #expect(milk["location"] as? String == "Home")
        #expect(milk["tags"] as? [String] == ["errand", "food"])
        #expect(milk["status"] as? String == "pending")
        #expect(milk["overdue"] as? Bool == false)
        #expect((milk["uuid"] as? String)?.count == 36)
        #expect(tasks[1]["overdue"] as? Bool == true)
        #expect(Set(tasks.flatMap { $0.keys }) == ["id", "uuid", "text", "priority", "due", "location", "project", "tags", "status", "overdue", "created", "completed",
                                                    "wait", "scheduled", "started", "recur", "until", "annotations", "depends", "urgency"])

        let shown = try t.ok("show", "1")
        #expect(shown.contains("text      Buy milk") && shown.contains("due       2026-11-23 (tomorrow)") && shown.contains("location  Home"))
        // By UUID prefix, too.
        let uuid = try #require(milk["uuid"] as? String)
        #expect(try t.ok("show", String(uuid.prefix(8)), "--json").contains("\"id\": 1"))

        try t.ok("edit", "1", "--text", "Buy oat milk", "--priority", "medium", "--no-due", "--no-location", "--untag", "food")
        let edited = try #require(try t.tasks().first { $0["id"] as? Int == 1 })
        #expect(edited["text"] as? String == "Buy oat milk" && edited["priority"] as? String == "medium")
        #expect(edited["due"] is NSNull && edited["location"] is NSNull && edited["tags"] as? [String] == ["errand"])

        #expect(try t.ok("done", "1", "2") == "done 1: Buy oat milk\ndone 2: Call Mom\n")
        #expect(try t.texts() == ["Read"])
        #expect(try t.texts("--done") == ["Buy oat milk", "Call Mom"].sorted { $0 > $1 } || t.texts("--done").count == 2)
        let done = try #require(try t.tasks("--done").first { $0["id"] as? Int == 1 })
        #expect(done["status"] as? String == "done" && done["completed"] as? String == "2026-11-22T12:00:00Z")
        try t.ok("reopen", "2")
        #expect(try t.texts().sorted() == ["Call Mom", "Read"])
        try t.ok("delete", "3")
        #expect(try t.texts() == ["Call Mom"])
        #expect(try t.texts("--all").count == 2, "deleted tasks are not listed")
        // Ids stay with their tasks.
        #expect(try t.ok("add", "Later") == "4\n")
    }

    @Test func filtersPredicatesSortingGroupingAndLimits() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "A home high", "--priority", "high", "--due", "1d", "--location", "Home")
        try t.ok("add", "B home low", "--priority", "low", "--location", "home")
        try t.ok("add", "C work medium", "--priority", "medium", "--due", "2026-11-30", "--location", "Work")
        try t.ok("add", "D overdue", "--due", "yesterday", "--project", "chores")
        try t.ok("add", "E none")
        #expect(try t.texts("--priority", "high") == ["A home high"])
        #expect(try t.texts("--location", "HOME").sorted() == ["A home high", "B home low"], "location names match without case")
        #expect(try t.texts("--overdue") == ["D overdue"])
        #expect(try t.texts("--due-before", "2026-11-25") == ["A home high", "D overdue"], "high priority due tomorrow is more urgent")
        #expect(try t.texts("--due-after", "today") == ["A home high", "C work medium"])
        #expect(try t.texts("--project", "chores") == ["D overdue"])
        #expect(try t.texts("--where", "priority >= 2 AND location.name ==[c] 'home'") == ["A home high"])
        #expect(try t.texts("--where", "text BEGINSWITH 'C' OR ANY tags.name == 'x'") == ["C work medium"])
        #expect(try t.texts("--sort", "-priority,text") == ["A home high", "C work medium", "B home low", "D overdue", "E none"])
        #expect(try t.texts("--sort", "due") == ["D overdue", "A home high", "C work medium", "B home low", "E none"], "no due date sorts last")
        #expect(try t.texts("--sort", "text", "--limit", "2") == ["A home high", "B home low"])
        let grouped = try t.ok("list", "--group-by", "location")
        #expect(grouped.hasPrefix("Home (2)\n"))
        #expect(grouped.contains("Work (1)\n") && grouped.contains("No location (2)\n"))
        let byPriority = try t.ok("list", "--group-by", "priority")
        #expect(byPriority.components(separatedBy: "\n").filter { $0.hasSuffix(")") } == ["High (1)", "Medium (1)", "Low (1)", "None (2)"])
        let byDue = try t.ok("list", "--group-by", "due")
        #expect(byDue.components(separatedBy: "\n").filter { $0.hasSuffix(")") } == ["Overdue (1)", "Tomorrow (1)", "Later (1)", "No due date (2)"])
    }

    @Test func theTableFitsTheTerminalWidth() throws {
        let t = try TaskctlRunner()
        t.extraEnvironment["COLUMNS"] = "50"
        try t.ok("add", String(repeating: "long words ", count: 20), "--location", "Somewhere")
        let lines = try t.ok("list").split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.count <= 50 })
        #expect(lines[1].hasSuffix("…"))
        // At 30 columns the location column makes way for the text.
        t.extraEnvironment["COLUMNS"] = "30"
        let narrow = try t.ok("list").split(separator: "\n")
        #expect(narrow.allSatisfy { $0.count <= 30 }, "\(narrow)")
        #expect(!narrow[0].contains("Location") && narrow[0].contains("Text"), "\(narrow)")
    }

    @Test func errorsSayWhatWasWrongWithExitStatusOneOrTwo() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "Something")
        let cases: [([String], Int32, String)] = [
            (["show", "42"], 1, "no task with id 42"),
            (["add", "X", "--due", "sometime"], 1, "bad date 'sometime'; use one of: 2026-12-01, 2026-12-01T14:30, 20261201T143000Z, today"),
            (["add", "X", "--priority", "urgent"], 1, "bad priority 'urgent'; use none, low, medium or high"),
            (["add", "X", "--priority", "high"], 1, "a high-priority task needs a due date"),
            (["add"], 1, "add needs the task's text"),
            (["list", "--where", "priority >> 2"], 1, "bad --where predicate at column 11"),
            (["list", "--where", "prio > 2"], 1, "Task has no property 'prio' (did you mean 'priority'?)"),
            (["list", "--sort", "dew"], 1, "unknown sort key 'dew' (did you mean 'due'?)"),
            (["lst"], 1, "unknown command 'lst' (did you mean 'list'?)"),
            (["list", "--prio", "high"], 1, "unknown option --prio for 'list' (did you mean --priority?)"),
            (["edit", "1", "--text", " "], 1, "a task's text cannot be empty"),
            (["edit", "1", "--text", String(repeating: "x", count: 100_001)], 1, "text: has 100001 characters, at most 100000 allowed"),
            (["location", "delete", "Nowhere"], 1, "no location named Nowhere"),
            (["undo", "extra"], 1, "undo takes no arguments"),
        ]
        for (arguments, status, message) in cases where status != 0 {
            let result = try t.run(arguments)
            #expect(result.status == status, "\(arguments): \(result.err)")
            #expect(result.err.hasPrefix("taskctl: "), "\(arguments)")
            #expect(result.err.contains(message), "\(arguments): \(result.err)")
            #expect(result.err.split(separator: "\n").count <= 3, "\(arguments): \(result.err)")
        }
        let caret = try t.run("list", "--where", "priority >> 2")
        #expect(caret.err.hasSuffix("  priority >> 2\n            ^\n"))
        // Help and success exit 0, and help matches per command.
        #expect(try t.run("--help").status == 0)
        #expect(try t.run("help", "list").out == t.run("list", "--help").out)
        #expect(try t.run("help", "dates").out.contains("eow, eom, eoq, eoy"))
        for command in ["add", "list", "show", "edit", "done", "reopen", "delete", "undo", "locations", "location", "import", "export", "agenda", "store", "migrate"] {
            let help = try t.run(command, "--help")
            #expect(help.status == 0 && help.out.hasPrefix("usage: taskctl \(command)") || help.out.contains("usage: taskctl"), "\(command)")
        }
    }

    @Test func aCorruptStoreIsExitTwoAndLeftUntouched() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "Something")
        var bytes = try Data(contentsOf: t.store)
        bytes[bytes.count - 3] ^= 0xFF
        try bytes.write(to: t.store)
        let result = try t.run("list")
        #expect(result.status == 2)
        #expect(result.err.contains("the store is damaged: checksum mismatch"))
        #expect(try Data(contentsOf: t.store) == bytes)
        let json = try TaskctlRunner(storeName: "tasks.json")
        try json.ok("add", "x")
        try Data("{ not json".utf8).write(to: json.store)
        let broken = try json.run("add", "y")
        #expect(broken.status == 2 && broken.err.contains("invalid JSON at line 1"))
        #expect(try String(contentsOf: json.store, encoding: .utf8) == "{ not json")
    }

    @Test func undoRevertsTheLastChangeOfAnyProcess() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "A", "--location", "Home")
        try t.ok("add", "B")
        try t.ok("edit", "2", "--text", "Bee", "--priority", "low")
        try t.ok("done", "1")
        try t.ok("location", "rename", "Home", "House")
        try t.ok("delete", "2")
        #expect(try t.ok("undo") == "undid delete of task 2\n")
        #expect(try t.texts() == ["Bee"])
        try t.ok("undo")
        #expect(try t.ok("locations").contains("Home"))
        try t.ok("undo")
        #expect(try t.texts().sorted() == ["A", "Bee"])
        try t.ok("undo")
        let b = try #require(try t.tasks().first { $0["id"] as? Int == 2 })
        #expect(b["text"] as? String == "B" && b["priority"] as? String == "none")
        try t.ok("undo")
        try t.ok("undo")
        #expect(try t.texts().isEmpty)
        let nothing = try t.run("undo")
        #expect(nothing.status == 1 && nothing.err.contains("nothing to undo"))
    }

    @Test func locationsAndTheirCommands() throws {
        let t = try TaskctlRunner()
        try t.ok("location", "add", "Home")
        #expect(try t.run("location", "add", "home").err.contains("there is already a location named home"))
        try t.ok("add", "Rent", "--priority", "high", "--due", "eom", "--location", "Home")
        try t.ok("add", "Dishes", "--location", "home")
        let listed = try t.ok("locations", "--json")
        #expect(listed.contains("{\"name\": \"Home\", \"pending\": 2, \"highPriority\": [1]}"))
        try t.ok("location", "rename", "Home", "House")
        #expect(try t.texts("--location", "house").count == 2)
        try t.ok("location", "delete", "House")
        #expect(try t.tasks().allSatisfy { $0["location"] is NSNull })
        try t.ok("add", "Mow", "--location", "Garden")
        try t.ok("location", "delete", "Garden", "--with-tasks")
        #expect(try t.texts().sorted() == ["Dishes", "Rent"])
    }

    @Test func agendaAndStoreCommands() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "Overdue one", "--due", "yesterday")
        try t.ok("add", "Soon", "--due", "tomorrow", "--location", "Home")
        try t.ok("add", "Later", "--due", "3d")
        let agenda = try t.ok("agenda")
        #expect(agenda.hasPrefix("3 pending, 1 overdue\n  ! 1 Overdue one (1 day overdue)\n"))
        #expect(agenda.contains("11-16       ·   ·   ·   ·   ·   ·  ·*\n11-23       1   ·   1   ·   ·   ·   ·"))
        let json = try t.ok("agenda", "--json")
        #expect(json.contains("\"overdue\": [1]") && json.contains("{\"date\": \"2026-11-23\", \"due\": 1}"))
        let info = try t.ok("store", "info", "--json")
        #expect(info.contains("\"format\": \"binary\"") && info.contains("\"modelVersion\": \"v10\"") && info.contains("\"Task\": 3"))
        #expect(try t.ok("store", "check").hasPrefix("ok: 4 objects"))
        #expect(try t.ok("migrate", "--dry-run") == "the store is already at the current model version\n")
    }

    @Test func aJSONStoreIsChosenByItsExtension() throws {
        let t = try TaskctlRunner(storeName: "tasks.json")
        try t.ok("add", "Readable")
        let text = try String(contentsOf: t.store, encoding: .utf8)
        #expect(text.contains("\"title\": \"Readable\""))
        #expect(try t.ok("store", "info").contains("format:        json"))
        // --store wins over TASKCTL_STORE, before or after the command.
        let other = t.directory.appendingPathComponent("other.store").path
        try t.ok("--store", other, "add", "Elsewhere")
        #expect(try t.ok("list", "--store", other).contains("Elsewhere"))
        #expect(try t.texts() == ["Readable"])
    }

    @Test func storeCheckFindsDuplicatesOfUniqueValues() throws {
        let t = try TaskctlRunner(storeName: "tasks.json")
        try t.ok("add", "a", "--location", "Home")
        try t.ok("location", "add", "Work")
        let text = try String(contentsOf: t.store, encoding: .utf8)
        try text.replacingOccurrences(of: "\"name\": \"Work\"", with: "\"name\": \"Home\"").write(to: t.store, atomically: true, encoding: .utf8)
        let check = try t.run("store", "check")
        #expect(check.status == 2)
        #expect(check.err.contains("Location 2 has the same name as Location 1"))
    }

    @Test func theDefaultStoreFollowsXDG() throws {
        let t = try TaskctlRunner()
        t.extraEnvironment["TASKCTL_STORE"] = ""
        t.extraEnvironment["XDG_DATA_HOME"] = t.directory.appendingPathComponent("xdg").path
        try t.ok("add", "Default")
        #expect(FileManager.default.fileExists(atPath: t.directory.appendingPathComponent("xdg/taskctl/tasks.store").path))
    }
}

/// Output taskctl cannot write (a full disk) is an error with a non-zero exit, not a crash
/// and not a silent success; what the command saved stays saved.
@Suite struct OutputFailureTests {
    @Test func aFullDiskForTheOutputIsAnErrorAndTheChangeStays() throws {
        guard FileManager.default.isWritableFile(atPath: "/dev/full"), let binary = TaskctlRunner.binary,
            let full = FileHandle(forWritingAtPath: "/dev/full")
        else { return }
        let t = try TaskctlRunner()
        let process = Process()
        process.executableURL = binary
        process.arguments = ["add", "Saved even though its confirmation cannot be printed"]
        process.environment = t.environment
        process.standardOutput = full
        let err = Pipe()
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 2)
        #expect(message.contains("cannot write the output"), "\(message)")
        #expect(try t.ok("list").contains("Saved even though"))
    }
}

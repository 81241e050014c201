import Foundation
import Testing
import ObjectStore
import ObjectStoreModel
@testable import taskctl

/// Bad paths, bad values and hand-edited stores: refused with a message, never stored.
@Suite(.enabled(if: TaskctlRunner.binary != nil, "needs the built taskctl (swift build)"))
struct StoreSafetyTests {
    @Test func locationNamesDifferingOnlyInCaseAreOneLocationEvenConcurrently() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "seed")
        let results = try ConcurrencyTests.runAll(t, [["add", "a", "--location", "Office1"], ["add", "b", "--location", "office1"], ["add", "c", "--location", "OFFICE1"]])
        for (arguments, status, message) in results { #expect(status == 0, "\(arguments): \(message)") }
        let tasks = try t.tasks("--where", "location != nil")
        #expect(tasks.count == 3)
        #expect(Set(tasks.compactMap { $0["location"] as? String }).count == 1, "\(tasks)")
        let adds = try ConcurrencyTests.runAll(t, [["location", "add", "Home"], ["location", "add", "HOME"], ["location", "add", "home"]])
        #expect(adds.filter { $0.1 == 0 }.count == 1, "\(adds)")
        #expect(adds.filter { $0.1 == 1 && $0.2.contains("already") }.count == 2, "\(adds)")
        #expect(try t.run("store", "check").status == 0)
    }

    @Test func storeCheckRunsTheModelsRulesAndChecksDestinations() throws {
        let t = try TaskctlRunner(storeName: "tasks.json")
        try t.ok("add", "x", "--location", "Home", "--project", "p")
        var text = try String(contentsOf: t.store, encoding: .utf8)
        for (old, new) in [("\"priority\": 0", "\"priority\": 99"), ("\"status\": \"pending\"", "\"status\": \"bogus\""),
                           ("\"title\": \"x\"", "\"title\": \"\""), ("\"location\": \"Location/1\"", "\"location\": \"Project/1\"")] {
            #expect(text.contains(old), "\(old)")
            text = text.replacingOccurrences(of: old, with: new)
        }
        try text.write(to: t.store, atomically: true, encoding: .utf8)
        let check = try t.run("store", "check")
        #expect(check.status == 2)
        for expected in ["Task 1.priority: 99 is greater than the maximum 3", "Task 1.status: \"bogus\" is not one of the allowed values",
                         "Task 1.title: has 0 characters, at least 1 required", "Task 1.location points at Project 1, but it must point at a Location"] {
            #expect(check.err.contains(expected), "\(expected) missing from: \(check.err)")
        }
    }

    @Test func readingCommandsDoNotCreateAStoreAtAMistypedPath() throws {
        let t = try TaskctlRunner()
        let missing = t.directory.appendingPathComponent("typo").appendingPathComponent("tasks.store")
        for command in [["list"], ["show", "1"], ["locations"], ["export"], ["store", "info"], ["store", "check"], ["agenda"]] {
            let result = try t.run(["--store", missing.path] + command)
            #expect(result.status == 2, "\(command): \(result.err)")
            #expect(result.err.contains("no store at"), "\(command): \(result.err)")
        }
        #expect(!FileManager.default.fileExists(atPath: missing.deletingLastPathComponent().path))
        // A writing command creates it.
        try t.ok("--store", missing.path, "add", "first")
        #expect(FileManager.default.fileExists(atPath: missing.path))
    }

    @Test func aDueDateNoStoreCouldReadBackIsRefused() throws {
        let t = try TaskctlRunner(storeName: "tasks.json")
        try t.ok("add", "first")
        let result = try t.run("add", "far", "--due", "40000y")
        #expect(result.status == 1, "\(result.err)")
        #expect(result.err.contains("outside the years 0001 to 9999"), "\(result.err)")
        #expect(try t.texts() == ["first"])
        #expect(try t.run("store", "check").status == 0)
    }

    @Test func hostileFiltersAreRefusedOrBoundedNotCrashes() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "x", "--tag", "a,b")
        let long = try t.run("list", "--where", "priority" + String(repeating: " + 1", count: 10_000) + " > 2")
        #expect(long.status == 1 && long.err.contains("too long"), "\(long.err)")
        let deep = try t.run("list", "--where", "location" + String(repeating: ".tasks.location", count: 2_000) + ".name == 'x'")
        #expect(deep.status == 1 && deep.err.contains("too long"), "\(deep.err)")
        let wide = try t.run("list", "--where", "ANY tags" + String(repeating: ".tasks.tags", count: 80) + ".name == 'a'")
        #expect(wide.status == 0 && wide.out.contains("x"), "\(wide.err)")
    }

    @Test func controlCharactersInTaskTextAreShownNotObeyedOnATerminal() throws {
        let t = try TaskctlRunner()
        let hostile = "evil\u{1B}]0;pwned\u{07}\r\nstatus    done\u{9B}2J"
        try t.ok("add", hostile, "--location", "Home\u{1B}[8m")
        guard let binary = TaskctlRunner.binary, FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return }
        for command in ["list", "show 1", "locations", "agenda"] {
            // script(1) gives taskctl a terminal for its standard output.
            let result = try t.run(program: "/usr/bin/script", ["-qec", "\(binary.path) \(command)", "/dev/null"])
            let screen = result.out
            #expect(result.status == 0, "\(command): \(screen)")
            #expect(!screen.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\u{9B}" }, "\(command): \(screen.debugDescription)")
            #expect(!screen.replacingOccurrences(of: "\r\n", with: "\n").contains("\r"), "\(command): \(screen.debugDescription)")
        }
        // The data itself is kept: JSON has it exactly.
        #expect(try t.texts() == [hostile])
    }

    @Test func aMigrationThatCannotValidateFailsClearlyAndTheDryRunSaysSo() throws {
        let t = try TaskctlRunner()
        // Valid v2 data that v3 refuses: two tasks with one UUID (v3 makes uuid unique).
        let v2 = try App.modelDirectory().model(version: "v2")
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: v2, storeURL: t.store))
        let shared = UUID()
        for title in ["first", "second"] {
            let task = try context.insertObject(entityName: "Task")
            try task.setValue(.string(title), forKey: "title")
            try task.setValue(.uuid(shared), forKey: "uuid")
        }
        try context.save()
        let before = try Data(contentsOf: t.store)

        let dry = try t.run("migrate", "--dry-run")
        #expect(dry.status == 2, "\(dry.out) \(dry.err)")
        #expect(dry.err.contains("cannot migrate the store; it was left as it was"), "\(dry.err)")
        #expect(dry.err.contains("Task 2.uuid: another Task already has uuid"), "\(dry.err)")
        let run = try t.run("list")
        #expect(run.status == 2, "\(run.err)")
        #expect(run.err.components(separatedBy: "migrating").count == 2, "migrated once, not retried: \(run.err)")
        #expect(run.err.contains("Task 2.uuid: another Task already has uuid"), "\(run.err)")
        #expect(try Data(contentsOf: t.store) == before)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: t.directory.path).filter { $0.contains("migrating") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test func aUUIDPrefixOfDigitsOnlyFindsItsTask() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "numbered")
        try ConcurrencyTests.changeOutsideTaskctl(t) { task in
            try task.setValue(.uuid(try #require(UUID(uuidString: "12345678-90AB-4CDE-8F01-234567890ABC"))), forKey: "uuid")
        }
        #expect(try t.ok("show", "12345678", "--json").contains("\"text\": \"numbered\""))
        #expect(try t.run("show", "99").err.contains("no task with id 99"))
    }
}

/// A store written by a newer taskctl (a Tasks model this one does not have).
@Suite(.enabled(if: TaskctlRunner.binary != nil, "needs the built taskctl (swift build)"))
struct NewerStoreTests {
    /// Every command refuses it with both versions named and leaves the file as it was: an
    /// older taskctl never migrates a newer store down.
    @Test func aStoreOfANewerTaskctlIsRefusedAndUntouched() throws {
        let t = try TaskctlRunner()
        let v4 = try String(contentsOf: TaskctlRunner.repository.appendingPathComponent("Models/Tasks/v4.json"), encoding: .utf8)
        // v5: v4 and one more entity.
        let v5 = v4.replacingOccurrences(of: #""entities": ["#, with: #""entities": [{"name": "Context", "attributes": [{"name": "label", "type": "string"}]},"#)
        #expect(v5 != v4)
        let model = try ManagedObjectModel(schema: v5, versionName: "v5")
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: t.store))
        try context.insertObject(entityName: "Context").setValue("at the desk", forKey: "label")
        let task = try context.insertObject(entityName: "Task")
        try task.setValue("written by v5", forKey: "title")
        try task.setValue(.uuid(UUID()), forKey: "uuid")
        try context.save()
        let before = try Data(contentsOf: t.store)
        for command in [["list"], ["add", "x"], ["store", "info"], ["migrate"], ["migrate", "--dry-run"], ["export"]] {
            let result = try t.run(command)
            #expect(result.status == 2, "\(command): \(result.err)")
            #expect(result.err.contains("model version v5") && result.err.contains("v1, v2, v3, v4"), "\(command): \(result.err)")
        }
        #expect(try Data(contentsOf: t.store) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: t.directory.path).filter { $0.contains("backup") || $0.contains("migrating") }.isEmpty)
    }
}

/// A row that fails its checksum, reached through a relationship.
@Suite(.enabled(if: TaskctlRunner.binary != nil, "needs the built taskctl (swift build)"))
struct DamagedRowTests {
    /// A damaged location, project, tag or annotation is an error wherever it is read
    /// (exit 2, "damaged", pointing at store check), never left out of an export taken as a
    /// backup; and any byte flipped anywhere either leaves the export whole or fails it.
    @Test func aDamagedRelatedRowIsAnErrorNeverAnAbsence() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "Buy milk", "--location", "Homeplace", "--project", "Errandsproject", "--tag", "shoppingtag")
        try t.ok("annotate", "1", "annotationtext")
        try t.ok("store", "compact")
        let original = try Data(contentsOf: t.store)
        let names = ["Homeplace", "Errandsproject", "shoppingtag", "annotationtext"]
        let commands = [["export"], ["export", "--format", "taskwarrior"], ["list", "--json"], ["show", "1"], ["locations"]]
        for name in names {
            let offset = try #require(original.range(of: Data(name.utf8))?.lowerBound)
            var damaged = original
            damaged[offset + 2] ^= 0x01
            try damaged.write(to: t.store)
            // `locations` reads locations only.
            for command in commands where command != ["locations"] || name == "Homeplace" {
                let result = try t.run(command)
                #expect(result.status == 2, "\(name) damaged, \(command): \(result.out)")
                #expect(result.err.contains("the store is damaged") && result.err.contains("taskctl store check"), "\(name), \(command): \(result.err)")
            }
            #expect(try t.run("store", "check").status == 2)
            #expect(try Data(contentsOf: t.store) == damaged)
        }
        // Byte flips over the whole file, every 23rd byte: the export is whole or refused
        // (a flip in the header may say "not an ObjectStore store" or "newer format").
        for offset in stride(from: 0, to: original.count, by: 23) {
            var damaged = original
            damaged[offset] ^= 0x5A
            try damaged.write(to: t.store)
            let result = try t.run("export")
            if result.status == 0 {
                for name in names + ["Buy milk"] { #expect(result.out.contains(name), "byte \(offset): export exit 0 without \(name)") }
            } else {
                #expect(result.status == 2, "byte \(offset): \(result.err)")
            }
        }
    }
}

/// Imports of a task with very many tags (Taskwarrior JSON), and new names among old ones.
@Suite(.enabled(if: TaskctlRunner.binary != nil, "needs the built taskctl (swift build)"))
struct LargeImportTests {
    /// 20,000 tags on one task import whole (16,000 took 17 s in release, 160 s in a debug
    /// build, when each new name was looked up with a fetch over every name inserted before
    /// it); tags and locations the store has are reused, ignoring case for locations. The
    /// work is counted, not timed (a time limit failed on a busy machine): the import runs
    /// a few fetches, not one per name.
    @Test func aTaskWithTwentyThousandTagsImports() throws {
        let t = try TaskctlRunner()
        t.extraEnvironment["TASKCTL_COUNT_FETCHES"] = "1"
        try t.ok("add", "first", "--location", "Home", "--tag", "t7", "--project", "p")
        let names = (0..<20_000).map { "t\($0)" }
        let item: [String: Any] = ["uuid": "00000000-0000-4000-8000-000000000001", "description": "many tags", "status": "pending",
                                   "entry": "20261101T120000Z", "tags": names, "location": "HOME", "project": "p"]
        let file = t.directory.appendingPathComponent("many.json")
        try JSONSerialization.data(withJSONObject: [item]).write(to: file)
        let result = try t.run("import", file.path)
        #expect(result.status == 0 && result.out.contains("1 added"), "\(result.err)")
        let fetches = result.err.split(separator: "\n").last { $0.hasPrefix("taskctl: fetches: ") }.flatMap { Int($0.dropFirst(18)) }
        #expect(fetches != nil && fetches! < 50, "\(result.err)")
        let tasks = try t.tasks("--all")
        let imported = try #require(tasks.first { $0["text"] as? String == "many tags" })
        #expect((imported["tags"] as? [String])?.count == 20_000)
        #expect(imported["location"] as? String == "Home", "the existing location, matched ignoring case")
        let check = try t.run("store", "check")
        #expect(check.status == 0, "\(check.err)")
        // One Tag t7, one location, one project: 20,000 + 1 + 1 + the two tasks.
        #expect(check.out.contains("ok: 20004 objects"), "\(check.out)")
    }
}

/// Repairs and imports that the first round of outside testing found blocked.
@Suite(.enabled(if: TaskctlRunner.binary != nil, "needs the built taskctl (swift build)"))
struct RepairTests {
    /// A hand-edited store whose task's location points at a Project or an Annotation:
    /// reading the task works, `edit --no-location` repairs it without touching the other
    /// entity's own relationships, and store check then finds the store sound (a location's
    /// tasks are derived from the tasks' locations, so no list is left naming the task).
    @Test(arguments: ["Project/1", "Annotation/1"])
    func aLocationPointingAtAnotherEntityCanBeRepaired(wrong: String) throws {
        let t = try TaskctlRunner(storeName: "tasks.json")
        try t.ok("add", "x", "--location", "Home", "--project", "p")
        try t.ok("annotate", "1", "a note")
        var text = try String(contentsOf: t.store, encoding: .utf8)
        #expect(text.contains("\"location\": \"Location/1\""))
        text = text.replacingOccurrences(of: "\"location\": \"Location/1\"", with: "\"location\": \"\(wrong)\"")
        try text.write(to: t.store, atomically: true, encoding: .utf8)
        #expect(try t.run("store", "check").err.contains("Task 1.location points at \(wrong.replacingOccurrences(of: "/", with: " ")), but it must point at a Location"))
        #expect(try t.tasks().first?["location"] is NSNull)
        try t.ok("show", "1")
        try t.ok("edit", "1", "--no-location")
        let after = try t.run("store", "check")
        #expect(after.status == 0, "\(after.err)")
        #expect(try t.tasks().first?["project"] as? String == "p")
        #expect(try t.tasks().first?["location"] is NSNull)
        try t.ok("edit", "1", "--location", "Home")
        #expect(try t.tasks().first?["location"] as? String == "Home")
        try t.ok("edit", "1", "--no-location")
        try t.ok("edit", "1", "--location", "Home")
        #expect(try t.run("store", "check").status == 0)
    }

    /// Taskwarrior allows a high-priority task without a due date; taskctl's rule asks for
    /// one. Such an imported task stays editable (text, tags, location); only an edit of its
    /// priority, due date or status must satisfy the rule. A taskctl JSON priority given as
    /// a number is read as one (3 became none), and a bad one is an error.
    @Test func importedTasksStayEditableAndNumericPrioritiesAreRead() throws {
        let t = try TaskctlRunner()
        let file = t.directory.appendingPathComponent("tw.json")
        try Data(#"[{"uuid": "00000000-0000-4000-8000-000000000001", "description": "urgent", "status": "pending", "entry": "20261101T120000Z", "priority": "H"}]"#.utf8).write(to: file)
        try t.ok("import", file.path)
        try t.ok("edit", "1", "--text", "still urgent", "--location", "Desk")
        #expect(try t.tasks().first?["text"] as? String == "still urgent")
        try t.ok("edit", "1", "--priority", "medium")
        let raised = try t.run("edit", "1", "--priority", "high")
        #expect(raised.status == 1 && raised.err.contains("a high-priority task needs a due date"), "\(raised.err)")
        try t.ok("add", "with due", "--priority", "high", "--due", "tomorrow")
        let cleared = try t.run("edit", "2", "--no-due")
        #expect(cleared.status == 1 && cleared.err.contains("needs a due date"), "\(cleared.err)")

        let own = t.directory.appendingPathComponent("own.json")
        try Data(#"[{"text": "numeric", "priority": 3, "due": "2026-12-01T10:00:00Z"}, {"text": "named", "priority": "low"}]"#.utf8).write(to: own)
        try t.ok("import", own.path, "--format", "taskctl")
        let priorities = Dictionary(uniqueKeysWithValues: try t.tasks().compactMap { task in (task["text"] as? String).map { ($0, task["priority"] as? String ?? "") } })
        #expect(priorities["numeric"] == "high" && priorities["named"] == "low", "\(priorities)")
        try Data(#"[{"text": "bad", "priority": 7}]"#.utf8).write(to: own)
        let bad = try t.run("import", own.path, "--format", "taskctl")
        #expect(bad.status == 1 && bad.err.contains("unknown priority 7"), "\(bad.err)")
        try Data(#"[{"uuid": "00000000-0000-4000-8000-000000000009", "description": "n", "status": "pending", "entry": "20261101T120000Z", "priority": 3}]"#.utf8).write(to: file)
        // Taskwarrior imports a priority it does not know as written, counting it as none:
        // taskctl keeps it for the round trip, says so, and never reads it as high.
        let numericTW = try t.run("import", file.path)
        #expect(numericTW.status == 0 && numericTW.err.contains("priority '3' is not H, M or L; kept as written and read as none"), "\(numericTW.err)")
        #expect(try t.tasks().first { $0["text"] as? String == "n" }?["priority"] as? String == "none")
        #expect(try t.ok("export", "--format", "taskwarrior").contains(#""description":"n","entry":"20261101T120000Z","priority":3"#))
    }
}

import Foundation
import Testing
@testable import taskctl
import ObjectStore
import ObjectStoreModel

/// taskctl's undo and log on the store's history: the defects of the journal it replaced
/// (a file beside the store), each with the test that failed with the journal.
@Suite(.enabled(if: TaskctlRunner.binary != nil, "needs the built taskctl (swift build)"))
struct UndoHistoryTests {
    /// Killed anywhere in a command, the change and its transaction land together or not at
    /// all: undo then reverts the last change that landed, never an older one (the journal,
    /// appended after the commit, undid the change before and deleted the wrong task).
    @Test func killedCommandsLeaveEveryLandedChangeUndoableInOrder() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "first")
        var killed = 0, confirmed = 0
        let delay = try ReliabilityTests.killDelays(t, probe: ["add", "probe"])
        try t.ok("undo")
        let rounds = max(12, ReliabilityTests.rounds)
        for round in 0..<rounds {
            let arguments: [String] = round % 3 == 0 ? ["add", "task \(round)", "--location", "L\(round % 2)"]
                : round % 3 == 1 ? ["edit", "1", "--text", "edit \(round)"] : ["done", "1"]
            if try ReliabilityTests.runKilled(t, arguments, delay: delay(round)) { confirmed += 1 } else { killed += 1 }
            #expect(try t.run("store", "check").status == 0)
        }
        print("kill harness (undo): \(rounds) rounds, \(killed) killed before finishing, \(confirmed) confirmed")
        ReliabilityTests.expectBothOutcomes(killed: killed, confirmed: confirmed, rounds: rounds)
        // Every landed change has its transaction: undoing them all, one by one, leaves the
        // store as it was before the first command, and each undo names what it reverted.
        let log = try t.ok("log", "--limit", "1000")
        var undos = 0
        while true {
            let result = try t.run("undo")
            if result.status != 0 {
                #expect(result.err.contains("nothing to undo"), "\(result.err)")
                break
            }
            undos += 1
        }
        #expect(try t.texts("--all").isEmpty, "\(log)")
        #expect(undos >= confirmed + 1)
    }

    /// Random chains of commands (adds with tags, projects and locations, edits that add
    /// and take links, done, delete, annotate, imports of an earlier export, undos in
    /// between), then undo down to the start: nothing on the way is refused, every undo
    /// says what it undid, and the store ends empty. Before, an undo's restoring of a link
    /// counted as a link made since: `add a --tag x; add b --tag x; edit 2 --untag x; undo;
    /// undo` failed "cannot undo add:  no longer exist" and task 2 stayed.
    @Test(arguments: 0..<20)
    func randomChainsUndoneToTheStartLeaveAnEmptyStore(seed: Int) throws {
        let t = try TaskctlRunner()
        var random = SeededRandom(seed: UInt64(seed) &* 7919 &+ 17)
        var exports: [URL] = []
        var trail: [String] = []
        func pending() throws -> [Int] {
            FileManager.default.fileExists(atPath: t.store.path) ? try t.tasks().compactMap { $0["id"] as? Int } : []
        }
        func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
        let steps = 10 + Int(random.next() % 6)
        for step in 0..<steps {
            let ids = try pending()
            var command: [String]
            switch (ids.isEmpty ? 0 : random.next() % 9) {
            case 0, 1:
                command = ["add", "task \(step)"]
                if random.next() % 2 == 0 { command += ["--tag", pick(["x", "y", "x,y"])] }
                if random.next() % 2 == 0 { command += ["--project", pick(["p", "q"])] }
                if random.next() % 2 == 0 { command += ["--location", pick(["Home", "Office"])] }
            case 2, 3:
                command = ["edit", String(pick(ids))] + pick([["--untag", "x"], ["--tag", "y"], ["--tag", "x"], ["--project", "q"], ["--no-project"],
                                                               ["--location", "Office"], ["--no-location"], ["--text", "edited \(step)"], ["--priority", "low"]])
            case 4: command = ["done", String(pick(ids))]
            case 5: command = ["delete", String(pick(ids))]
            case 6: command = ["annotate", String(pick(ids)), "note \(step)"]
            case 7:
                if exports.isEmpty || random.next() % 2 == 0 {
                    let file = t.directory.appendingPathComponent("export-\(step).json")
                    try t.ok("export").write(to: file, atomically: true, encoding: .utf8)
                    exports.append(file)
                    continue
                }
                command = ["import", pick(exports).path]
            default: command = ["undo"]
            }
            trail.append(command.joined(separator: " "))
            let result = try t.run(command)
            let nothing = command == ["undo"] && result.err.contains("nothing to undo")
            #expect(result.status == 0 || nothing, "seed \(seed): \(trail.joined(separator: "; ")): \(result.err)")
        }
        var undos = 0
        while undos < 200 {
            let result = try t.run("undo")
            if result.err.contains("nothing to undo") { break }
            #expect(result.status == 0 && result.out.hasPrefix("undid "), "seed \(seed): \(trail.joined(separator: "; ")); undo \(undos + 1): \(result.err)")
            if result.status != 0 { break }
            undos += 1
        }
        #expect(try t.tasks("--all").isEmpty, "seed \(seed): \(trail.joined(separator: "; "))")
        #expect(try t.ok("store", "check").hasPrefix("ok: 0 objects"), "seed \(seed): \(trail.joined(separator: "; "))")
    }

    /// The chains the issue reported, one by one.
    @Test func undoingAnAddAfterAnUndoneUnlinkRemovesTheTask() throws {
        for link in [["--tag", "x"], ["--project", "p"], ["--location", "Home"]] {
            let t = try TaskctlRunner()
            try t.ok(["add", "a"] + link)
            try t.ok(["add", "b"] + link)
            try t.ok(["edit", "2", link[0] == "--tag" ? "--untag" : link[0] == "--project" ? "--no-project" : "--no-location"] + (link[0] == "--tag" ? ["x"] : []))
            #expect(try t.ok("undo") == "undid edit of task 2\n")
            #expect(try t.ok("undo") == "undid add of task 2\n")
            #expect(try t.texts("--all") == ["a"])
            #expect(try t.ok("undo") == "undid add of task 1\n")
            #expect(try t.ok("store", "check").hasPrefix("ok: 0 objects"))
        }
    }

    /// A symbolic link planted at the old journal's name is removed as a name, never
    /// followed: the file it points at is untouched.
    @Test func aPlantedLinkAtTheJournalsNameIsNeverFollowed() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "first")
        let victim = t.directory.appendingPathComponent("victim.txt")
        try Data("precious\n".utf8).write(to: victim)
        let journal = t.store.path + ".undo.json"
        try FileManager.default.createSymbolicLink(atPath: journal, withDestinationPath: victim.path)
        let result = try t.run("add", "second")
        #expect(result.status == 0)
        #expect(result.err.contains("old undo journal"), "\(result.err)")
        #expect(try String(contentsOf: victim, encoding: .utf8) == "precious\n")
        #expect(!FileManager.default.fileExists(atPath: journal) && (try? FileManager.default.destinationOfSymbolicLink(atPath: journal)) == nil)
        #expect(try t.ok("undo") == "undid add of task 2\n")
    }

    /// A journal someone else wrote (forged lines naming tasks 1-5, absurd id ranges) is
    /// never obeyed: undo reverts what the history says.
    @Test func aForgedJournalIsNeverObeyed() throws {
        let t = try TaskctlRunner()
        for i in 1...5 { try t.ok("add", "task \(i)") }
        let forged = #"{"command": "add", "created": [[1, 5], [-9223372036854775808, 9223372036854775807]], "tasks": [], "locations": []}"#
        try Data((forged + "\n").utf8).write(to: URL(fileURLWithPath: t.store.path + ".undo.json"))
        #expect(try t.ok("undo") == "undid add of task 5\n")
        #expect(try t.texts() == ["task 1", "task 2", "task 3", "task 4"])
        #expect(!FileManager.default.fileExists(atPath: t.store.path + ".undo.json"))
    }

    /// A FIFO at the journal's name hung every writing command (and every taskctl waiting
    /// for the lock): it is removed without being opened.
    @Test func aFIFOAtTheJournalsNameHangsNothing() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "first")
        #expect(mkfifo(t.store.path + ".undo.json", 0o600) == 0)
        let (process, out, _) = try t.start(["add", "second"])
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        _ = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "add hung or failed on a FIFO")
        #expect(try t.texts() == ["first", "second"])
        #expect(try t.ok("undo") == "undid add of task 2\n")
    }

    /// A bulk edit's record (the journal held it as one line every later command read) is
    /// moved by the compaction into the history region, which opening the store does not
    /// read; undo still reverts the whole edit.
    @Test func aBulkEditsRecordIsNotReadByLaterCommands() throws {
        let t = try TaskctlRunner()
        let tasks = (1...3000).map { #"{"description": "task \#($0)", "uuid": "\#(UUID().uuidString)", "priority": "L"}"# }
        let file = t.directory.appendingPathComponent("many.json")
        try Data(("[" + tasks.joined(separator: ",") + "]").utf8).write(to: file)
        try t.ok("import", file.path)
        try t.ok("edit", "--where", "priority == 1", "--priority", "medium", "--yes")
        try t.ok("store", "compact")
        let header = Array(try Data(contentsOf: t.store).prefix(128))
        let field = { (offset: Int) in header[offset..<offset + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        #expect(field(80) > 0 && field(88) > 3000 * 8, "the transactions are in the region (\(field(88)) bytes at \(field(80)))")
        #expect(field(104) == 2)
        try t.ok("add", "one more")
        #expect(try t.ok("undo") == "undid add of task 3001\n")
        #expect(try t.ok("undo") == "undid edit of tasks 1-3000\n")
        #expect(try t.tasks().allSatisfy { $0["priority"] as? String == "low" })
    }

    /// Nothing is written beside the store: no journal, no temporary file that others could
    /// read; the store keeps its owner-only mode.
    @Test func nothingIsWrittenBesideTheStore() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "first", "--location", "home")
        try t.ok("edit", "1", "--text", "second")
        try t.ok("undo")
        let files = try FileManager.default.contentsOfDirectory(atPath: t.directory.path).filter { !$0.hasPrefix(".") }
        #expect(files == ["tasks.store"], "\(files)")
        let mode = try FileManager.default.attributesOfItem(atPath: t.store.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// Undo of a change to a task another program deleted since says so and fails, rather
    /// than report success.
    @Test func undoOfATaskThatIsGoneSaysSo() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "first")
        try t.ok("edit", "1", "--text", "edited")
        try ConcurrencyTests.changeOutsideTaskctl(t) { task in task.managedObjectContext?.delete(task) }
        let result = try t.run("undo")
        #expect(result.status == 1, "\(result.out)")
        #expect(result.err.contains("task 1 no longer exists"), "\(result.err)")
    }

    /// The refusal names the fields that changed since, and changes nothing.
    @Test func undoRefusesNamingTheFieldsChangedSince() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "first", "--priority", "low")
        try t.ok("edit", "1", "--priority", "high", "--due", "2026-12-01", "--text", "second")
        try ConcurrencyTests.changeOutsideTaskctl(t) { task in
            try task.setValue(1, forKey: "priority")
            try task.setValue(.null, forKey: "dueDate")
        }
        let result = try t.run("undo")
        #expect(result.status == 1)
        #expect(result.err.contains("cannot undo edit: task 1's due, priority changed since"), "\(result.err)")
        #expect(try t.texts() == ["second"])
    }

    /// An add records no values; another program's change to the task since still stops
    /// its undo, which would delete that change with the task.
    @Test func undoOfAnAddRefusesWhenAnotherProgramChangedTheTaskSince() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "first")
        try ConcurrencyTests.changeOutsideTaskctl(t) { task in try task.setValue(2, forKey: "priority") }
        let result = try t.run("undo")
        #expect(result.status == 1)
        #expect(result.err.contains("cannot undo add: task 1's priority changed since"), "\(result.err)")
        #expect(try t.texts() == ["first"])
    }

    /// A tag the undone add created stays when another program gave it to a task since;
    /// the add's own task goes.
    @Test func aTagAnotherProgramTookUpSinceOutlivesTheUndoOfItsAdd() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "first", "--tag", "shop")
        let coordinator = try PersistentStoreCoordinator(model: try App.modelDirectory().currentModel(), storeURL: t.store)
        let context = ManagedObjectContext(coordinator: coordinator)
        let shop = try #require(try context.fetch(FetchRequest(entityName: "Tag")).first)
        let task = try context.insertObject(entityName: "Task")
        try task.setValue("theirs", forKey: "title")
        try task.setValue(.uuid(UUID()), forKey: "uuid")
        try task.setObjects([shop], forKey: "tags")
        try context.save()
        #expect(try t.ok("undo") == "undid add of task 1\n")
        let left = try t.tasks()
        #expect(left.map { $0["text"] as? String } == ["theirs"])
        #expect(left.first?["tags"] as? [String] == ["shop"])
    }

    /// A deleted location comes back under its own identity, so undo can keep going back.
    @Test func undoBringsBackADeletedLocationAndGoesOnBack() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "milk", "--location", "home")
        try t.ok("location", "delete", "home")
        #expect(try t.ok("undo") == "undid location delete of task 1\n")
        #expect(try t.tasks().first?["location"] as? String == "home")
        #expect(try t.ok("undo") == "undid add of task 1\n")
        #expect(try t.texts().isEmpty)
        #expect(try t.ok("locations").contains("no locations"))
    }

    /// `log` lists what changed: when, which command, old -> new, and undos.
    @Test func logListsTheRecentChanges() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "milk", "--priority", "low", "--tag", "shop")
        try t.ok("edit", "1", "--priority", "high", "--due", "2026-11-30")
        try t.ok("undo")
        let log = try t.ok("log")
        #expect(log.contains("#1  2026-11-22 12:00  add\n  task 1 added: \"milk\"\n  tag shop added\n"), "\(log)")
        #expect(log.contains("#2  2026-11-22 12:00  edit\n  task 1: due none -> 2026-11-30T23:59:59Z, priority low -> high\n"), "\(log)")
        #expect(log.contains("#3  2026-11-22 12:00  undo of #2\n  task 1: due 2026-11-30T23:59:59Z -> none, priority high -> low\n"), "\(log)")
        #expect(try t.ok("log", "--limit", "1").hasPrefix("#3 "))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(t.ok("log", "--json").utf8)) as? [[String: Any]])
        #expect(json.map { $0["command"] as? String } == ["add", "edit", "undo 2"])
        #expect(json.allSatisfy { $0["author"] as? String == "taskctl" && $0["time"] as? String == "2026-11-22T12:00:00Z" })
    }

    /// Through a symbolic link to the store, and after another process compacted it (the
    /// file replaced, the history moved to a region) and cut nothing: a library opening
    /// fetches every taskctl save since its token, and undo still works from the link.
    @Test func historyReadsThroughALinkAfterAnotherProcessCompacted() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "first")
        let link = t.directory.appendingPathComponent("link.store")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: t.store)
        let coordinator = try PersistentStoreCoordinator(model: try App.modelDirectory().currentModel(), storeURL: link)
        let token = try coordinator.currentHistoryToken
        try t.ok("add", "second")
        try t.ok("store", "compact")
        try t.ok("edit", "2", "--priority", "high", "--due", "tomorrow")
        let names = try coordinator.fetchHistory(after: token).map(\.contextName)
        #expect(names == ["add", "edit"])
        t.store = link
        #expect(try t.ok("undo") == "undid edit of task 2\n")
        #expect(try coordinator.fetchHistory(after: token).map(\.contextName) == ["add", "edit", "undo 3"])
    }

    /// Another process's save (a taskctl command) is fetched by token and posted to a
    /// library program observing the store.
    @Test func aLibraryProgramSeesTaskctlsSavesByTokenAndNotification() async throws {
        let t = try TaskctlRunner()
        try t.ok("add", "first")
        let coordinator = try PersistentStoreCoordinator(model: try App.modelDirectory().currentModel(), storeURL: t.store)
        #expect(coordinator.keepsHistory)
        coordinator.remoteChangeInterval = 0.02
        let token = try coordinator.currentHistoryToken
        let changes = try coordinator.remoteChanges()
        try t.ok("add", "second")
        var received: RemoteChange?
        for await change in changes {
            received = change
            break
        }
        let change = try #require(received)
        #expect(change.transactions.map(\.contextName) == ["add"])
        #expect(change.transactions.first?.processID != getpid())
        let fetched = try coordinator.fetchHistory(after: token)
        #expect(fetched.map(\.author) == ["taskctl"])
        let inserted = try #require(fetched.first?.changes.first { $0.entityName == "Task" })
        #expect(inserted.kind == .insert)
        #expect(try ManagedObjectContext(coordinator: coordinator).existingObject(with: inserted.objectID)["title"] == "second")
    }
}

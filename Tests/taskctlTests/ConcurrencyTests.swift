import Foundation
import Testing
import ObjectStore
import ObjectStoreModel
@testable import taskctl

/// Several taskctl processes on one store at once, through several names of the file and
/// while it is replaced under them: nothing acknowledged is lost, reverted or cross-wired.
@Suite(.enabled(if: TaskctlRunner.binary != nil, "needs the built taskctl (swift build)"))
struct ConcurrencyTests {
    /// Starts every command at once and waits for all; returns (arguments, status, stderr).
    static func runAll(_ t: TaskctlRunner, _ commands: [[String]], store: URL? = nil) throws -> [([String], Int32, String)] {
        var started: [([String], Process, Pipe, Pipe)] = []
        for arguments in commands {
            let (process, out, err) = try t.start(store.map { ["--store", $0.path] + arguments } ?? arguments)
            started.append((arguments, process, out, err))
        }
        return started.map { arguments, process, out, err in
            _ = out.fileHandleForReading.readDataToEndOfFile()
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (arguments, process.terminationStatus, message)
        }
    }

    /// Processes that each run a sequence of commands, all processes at once (a shell loop per
    /// process, so the commands of different processes interleave).
    static func runLoops(_ t: TaskctlRunner, _ loops: [[[String]]]) throws -> [(Int32, String)] {
        guard let binary = TaskctlRunner.binary else { return [] }
        var started: [(Process, Pipe)] = []
        for loop in loops {
            let script = loop.map { words in
                "\"$0\" " + words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ") + " >/dev/null || echo \"FAILED $?: \(words.joined(separator: " "))\" >&2"
            }.joined(separator: "\n")
            let (process, _, err) = try t.start(program: URL(fileURLWithPath: "/bin/sh"), ["-c", script, binary.path])
            started.append((process, err))
        }
        return started.map { process, err in
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, message)
        }
    }

    /// Expiry and leftover cleanup with several processes at once: two add tasks that
    /// expire at once and tasks that do not, one through the real path and one through a
    /// symbolic link, while a third compacts the store (a new file each time) and lists.
    /// Every expired task reads as deleted whichever process wrote it; every other add
    /// lands; no copy of a compaction is left beside the store; `store check` passes.
    @Test(arguments: ["tasks.store", "tasks.json"])
    func expiryAndLeftoverCleanupHoldWithSeveralProcessesAtOnce(storeName: String) throws {
        let t = try TaskctlRunner(storeName: storeName)
        try t.ok("add", "seed")
        let link = t.directory.appendingPathComponent("link-" + storeName)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: t.store)
        func adds(_ prefix: String, store: URL) -> [[String]] {
            (0..<8).flatMap { i in [["--store", store.path, "add", "\(prefix) keep \(i)"],
                                    ["--store", store.path, "add", "\(prefix) expire \(i)", "until:2026-11-22T11:00"]] }
        }
        var housekeeping: [[String]] = []
        for _ in 0..<4 { housekeeping += [["store", "compact"], ["list"], ["--store", link.path, "store", "compact"]] }
        let results = try Self.runLoops(t, [adds("real", store: t.store), adds("link", store: link), housekeeping])
        for (status, message) in results { #expect(status == 0 && message.isEmpty, "\(message)") }
        try t.ok("add", "last")  // a writing command after all of them
        let all = try t.tasks("--all")
        let texts = Set(all.compactMap { $0["text"] as? String })
        for prefix in ["real", "link"] {
            for i in 0..<8 { #expect(texts.contains("\(prefix) keep \(i)"), "\(prefix) keep \(i)") }
        }
        #expect(!texts.contains { $0.contains("expire") }, "\(texts)")
        let export = try t.ok("export", "--all", "--format", "taskwarrior")
        #expect(export.components(separatedBy: "\"status\":\"deleted\"").count - 1 == 16, "every expired task deleted")
        #expect(try t.run("store", "check").status == 0)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: t.directory.path).filter { $0.contains(".tmp-") || $0.contains(".migrating-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test(arguments: ["tasks.store", "tasks.json"])
    func addsThroughASymlinkAHardLinkAndTheRealPathAllLand(storeName: String) throws {
        let t = try TaskctlRunner(storeName: storeName)
        try t.ok("add", "first", "--location", "Home")
        let symlink = t.directory.appendingPathComponent("link-" + storeName)
        try FileManager.default.createSymbolicLink(at: symlink, withDestinationURL: t.store)
        var names = [t.store, symlink]
        if storeName.hasSuffix(".store") {
            // A JSON store is rewritten on each save, which a hard link cannot follow (refused,
            // see below); a binary store appends in place.
            let hardLink = t.directory.appendingPathComponent("hard-" + storeName)
            try FileManager.default.linkItem(at: t.store, to: hardLink)
            names.append(hardLink)
        }
        var commands: [([String], URL)] = []
        for (n, name) in names.enumerated() {
            for i in 0..<12 { commands.append((["add", "n\(n) add \(i)", "--location", "Home"], name)) }
        }
        var started: [(Process, Pipe, Pipe, String)] = []
        for (arguments, name) in commands {
            let (process, out, err) = try t.start(["--store", name.path] + arguments)
            started.append((process, out, err, arguments[1]))
        }
        var confirmed: [String] = ["first"]
        for (process, out, err, text) in started {
            _ = out.fileHandleForReading.readDataToEndOfFile()
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(text): \(message)")
            if process.terminationStatus == 0 { confirmed.append(text) }
        }
        let tasks = try t.tasks("--all")
        #expect(tasks.compactMap { $0["text"] as? String }.sorted() == confirmed.sorted())
        let ids = tasks.compactMap { $0["id"] as? Int }
        #expect(Set(ids).count == ids.count, "duplicate ids: \(ids.sorted())")
        #expect(tasks.allSatisfy { $0["location"] as? String == "Home" })
        let check = try t.run("store", "check")
        #expect(check.status == 0, "\(check.out) \(check.err)")
        // The link is still a link, and every name shows the same tasks.
        let attributes = try FileManager.default.attributesOfItem(atPath: symlink.path)
        #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink)
        for name in names {
            #expect(try t.run("--store", name.path, "list", "--all", "--json").out == t.run("list", "--all", "--json").out)
        }
    }

    @Test func aJSONStoreWithTwoHardLinksIsRefusedNotSplit() throws {
        let t = try TaskctlRunner(storeName: "tasks.json")
        try t.ok("add", "first")
        let hardLink = t.directory.appendingPathComponent("hard.json")
        try FileManager.default.linkItem(at: t.store, to: hardLink)
        let before = try Data(contentsOf: t.store)
        let result = try t.run("add", "second")
        #expect(result.status == 2, "\(result.err)")
        #expect(result.err.contains("hard links"), "\(result.err)")
        #expect(try Data(contentsOf: t.store) == before)
        #expect(try Data(contentsOf: hardLink) == before)
    }

    @Test(arguments: ["tasks.store", "tasks.json"])
    func savesCompactionAndMigrationThroughASymlinkKeepTheLink(storeName: String) throws {
        let t = try TaskctlRunner(storeName: storeName)
        let fixture = TaskctlRunner.repository.appendingPathComponent("Tests/ObjectStoreTests/Fixtures/Tasks/v1" + (storeName.hasSuffix(".json") ? ".json" : ".store"))
        let real = t.directory.appendingPathComponent("data").appendingPathComponent(storeName)
        try FileManager.default.createDirectory(at: real.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: fixture, to: real)
        try FileManager.default.createSymbolicLink(at: t.store, withDestinationURL: real)
        func isLink() throws -> Bool {
            try FileManager.default.attributesOfItem(atPath: t.store.path)[.type] as? FileAttributeType == .typeSymbolicLink
        }
        try t.ok("list")  // migrates v1 -> v3 through the link
        #expect(try isLink())
        try t.ok("add", "through the link")
        if storeName.hasSuffix(".store") { try t.ok("store", "compact") }
        #expect(try isLink())
        // The real path sees everything written through the link, and the other way round.
        let viaReal = try t.run("--store", real.path, "list", "--all", "--json").out
        #expect(viaReal.contains("through the link"))
        try t.ok("--store", real.path, "add", "through the real path")
        #expect(try t.texts("--all").contains("through the real path"))
        #expect(try isLink())
    }

    @Test func storeInfoAndCompactThroughASymlinkGiveTheStoreFilesSize() throws {
        let t = try TaskctlRunner(storeName: "tasks.store")
        let real = t.directory.appendingPathComponent("data/tasks.store")
        try FileManager.default.createDirectory(at: real.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: t.store, withDestinationURL: real)
        for i in 0..<20 { try t.ok("add", "task \(i) with a title long enough to be worth compacting") }
        func realSize() throws -> Int { try FileManager.default.attributesOfItem(atPath: real.path)[.size] as? Int ?? -1 }
        let before = try realSize()
        #expect(try t.ok("store", "info").contains("size:          \(before) bytes"))
        let compacted = try t.ok("store", "compact")
        #expect(compacted.contains("compacted: \(before) -> \(try realSize()) bytes"), "\(compacted)")
    }

    @Test(arguments: ["tasks.store", "tasks.json"])
    func concurrentAddsSharingALocationTagAndProjectKeepEveryInverse(storeName: String) throws {
        let t = try TaskctlRunner(storeName: storeName)
        try t.ok("add", "seed", "--location", "Home", "--tag", "x", "--project", "p")
        let loops = (0..<4).map { w in
            (0..<8).map { i in ["add", "w\(w) task \(i)", "--location", "Home", "--tag", "x", "--project", "p"] }
        }
        for (status, message) in try Self.runLoops(t, loops) {
            #expect(status == 0 && message.isEmpty, "\(message)")
        }
        let check = try t.run("store", "check")
        #expect(check.status == 0, "\(check.out) \(check.err)")
        let locations = try t.ok("locations", "--json")
        #expect(locations.contains("\"name\": \"Home\", \"pending\": 33"), "the location's own list of tasks: \(locations)")
        #expect(try t.texts("--where", "location.name == 'Home' AND ANY tags.name == 'x' AND project.name == 'p'").count == 33)
    }

    /// `add --location Home --tag foo` racing `location delete Home` and the deletion of tag
    /// foo (by undoing the add that made it), through a symbolic link and across compactions:
    /// each add succeeds, linked to a Home and a foo
    /// that exist (the store refuses a link to an object deleted since under its lock, and taskctl
    /// runs the command again, making them anew); `store check`, `list` and `export` pass.
    /// Before, both exited 0 and the new task pointed at a deleted object: `list`, `show` and
    /// `export` of the whole store failed until it was mended by hand.
    @Test(arguments: ["tasks.store", "tasks.json"])
    func addsRacingTheDeletionOfTheirLocationAndTagLeaveASoundStore(storeName: String) throws {
        let t = try TaskctlRunner(storeName: storeName)
        try t.ok("add", "seed", "--location", "Home")
        let rounds = 12
        // The deleting loop reaches the store through a symbolic link, and compacts it (a new
        // file) now and then.
        let link = t.directory.appendingPathComponent("link-" + storeName)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: t.store)
        let adds = (0..<rounds).map { ["add", "racer \($0)", "--location", "Home", "--tag", "foo"] }
        var deletes: [[String]] = []
        for round in 0..<rounds {
            deletes += [["location", "delete", "Home"], ["add", "maker", "--location", "Home", "--tag", "foo"], ["undo"]]
            if round % 4 == 3 { deletes.append(["store", "compact"]) }
        }
        deletes = deletes.map { ["--store", link.path] + $0 }
        let results = try Self.runLoops(t, [adds, deletes])
        // The adds must all land; the other loop's commands may find nothing to delete or undo.
        #expect(!results[0].1.contains("FAILED"), "\(results[0].1)")
        #expect(try t.run("store", "check").status == 0)
        let export = try t.run("export")
        #expect(export.status == 0, "\(export.err)")
        let racers = try t.tasks("--all").filter { ($0["text"] as? String)?.hasPrefix("racer") == true }
        // An undo of the other loop may take back a racer's add (undo takes the last change).
        #expect(!racers.isEmpty && racers.count <= rounds)
        #expect(try t.run("list").status == 0)
        for racer in racers {
            #expect((racer["tags"] as? [String])?.contains("foo") == true, "\(racer)")
        }
    }

    @Test(arguments: ["tasks.store", "tasks.json"])
    func concurrentUndosEachUndoOneChange(storeName: String) throws {
        let t = try TaskctlRunner(storeName: storeName)
        for i in 1...10 { try t.ok("add", "task \(i)") }
        try t.ok("done", "3")
        let results = try Self.runAll(t, Array(repeating: ["undo"], count: 6))
        for (_, status, message) in results { #expect(status == 0, "\(message)") }
        // The done and the last five adds are undone, each once.
        let texts = try t.texts("--all").sorted()
        #expect(texts == (1...5).map { "task \($0)" }.sorted())
        #expect(try t.tasks("--all").allSatisfy { $0["status"] as? String == "pending" })
        let more = try Self.runAll(t, Array(repeating: ["undo"], count: 7))
        #expect(more.filter { $0.1 == 0 }.count == 5)
        #expect(more.filter { $0.1 == 1 && $0.2.contains("nothing to undo") }.count == 2)
        #expect(try t.texts("--all").isEmpty)
    }

    /// Opens the store with the Tasks model and runs `change` on task 1, as another program would.
    static func changeOutsideTaskctl(_ t: TaskctlRunner, _ change: (ManagedObject) throws -> Void) throws {
        let model = try App.modelDirectory().currentModel()
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: t.store)
        let context = ManagedObjectContext(coordinator: coordinator)
        let id = ObjectID(entityName: "Task", storeIdentifier: coordinator.store.identifier, key: .permanent(1))
        try change(try context.existingObject(with: id))
        try context.save()
    }

    @Test func undoRevertsOnlyTheFieldsItsCommandChanged() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "old text")
        try t.ok("edit", "1", "--text", "new text")
        // Another program marks the task done (its own transaction, not taskctl's).
        try Self.changeOutsideTaskctl(t) { task in
            try task.setValue("done", forKey: "status")
        }
        try t.ok("undo")
        let task = try #require(try t.tasks("--all").first)
        #expect(task["text"] as? String == "old text")
        #expect(task["status"] as? String == "done", "undoing the edit of the text kept the later done")
    }

    @Test func undoRefusesWhenTheFieldChangedSince() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "old text")
        try t.ok("edit", "1", "--text", "new text")
        try Self.changeOutsideTaskctl(t) { task in
            try task.setValue("someone else's text", forKey: "title")
        }
        let result = try t.run("undo")
        #expect(result.status == 1)
        #expect(result.err.contains("task 1's text changed since"), "\(result.err)")
        #expect(try t.texts() == ["someone else's text"])
    }

    @Test(arguments: ["tasks.store", "tasks.json"])
    func readersDuringWritesAndCompactionsNeverSeeADamagedStore(storeName: String) throws {
        let t = try TaskctlRunner(storeName: storeName)
        for i in 1...5 { try t.ok("add", "task \(i)") }
        var writer: [[String]] = []
        for round in 0..<10 {
            writer.append(["edit", String(1 + round % 5), "--text", "round \(round)"])
            if storeName.hasSuffix(".store") { writer.append(["store", "compact"]) }
        }
        let readers = (0..<3).map { _ in Array(repeating: ["list", "--all"], count: 12) }
        for (status, message) in try Self.runLoops(t, [writer] + readers) {
            #expect(status == 0 && message.isEmpty, "\(message)")
        }
        #expect(try t.run("store", "check").status == 0)
    }

    /// On a compacted store (uniqueness answered by the snapshot's index and the log):
    /// processes at once, some through a symbolic link, one compacting in between, adding
    /// the same location (one wins, the others are told) and tasks at a new location whose
    /// inserts merge into one (the merge policy's upsert).
    /// A program that keeps the store open (through a symbolic link) counts with the snapshot's
    /// columns, which it has read once; taskctl processes meanwhile edit priorities, add
    /// tasks and compact (replacing the file), some through the link. Every later count agrees
    /// with a store opened afresh: edits in the log override the columns, and a replaced file's
    /// columns are read anew.
    @Test func columnCountsFollowOtherProcessesEditsAndCompactions() throws {
        let t = try TaskctlRunner()
        for i in 1...40 { try t.ok("add", "seed \(i)", "--priority", "low", "--due", "2026-12-\(String(format: "%02d", i % 28 + 1))") }
        try t.ok("store", "compact")
        let link = t.directory.appendingPathComponent("link.store")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: t.store)
        let model = try App.modelDirectory().currentModel()
        let kept = try PersistentStoreCoordinator(model: model, storeURL: link)
        func count(_ coordinator: PersistentStoreCoordinator, _ priority: Int64) throws -> Int {
            try ManagedObjectContext(coordinator: coordinator).count(for: FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "priority == %@", .integer(priority))))
        }
        #expect(try count(kept, 1) == 40)
        /// Tasks due on a day of December, through the model's `byDueDate` index (a few rows of
        /// the snapshot), and as every task's due date read and filtered here.
        func due(_ coordinator: PersistentStoreCoordinator, _ day: Int) throws -> (indexed: Int, filtered: Int) {
            let start = try #require(ISO8601.parse(String(format: "2026-12-%02dT00:00:00Z", day)))
            let context = ManagedObjectContext(coordinator: coordinator)
            let indexed = try context.count(for: FetchRequest(entityName: "Task", predicate: try ObjectPredicate(
                format: "dueDate >= %@ AND dueDate < %@", .date(start), .date(start.addingTimeInterval(86_400)))))
            let filtered = try context.fetchValues(FetchRequest(entityName: "Task"), properties: ["dueDate"]).filter { row in
                guard case .date(let date) = row.values[0].value else { return false }
                return date >= start && date < start.addingTimeInterval(86_400)
            }.count
            return (indexed, filtered)
        }
        /// The rows `list` reads (fetchValues: no objects), as (id, title, priority, overdue).
        func listed(_ coordinator: PersistentStoreCoordinator) throws -> [String] {
            try ManagedObjectContext(coordinator: coordinator).fetchValues(FetchRequest(entityName: "Task"), properties: ["title", "priority", "isOverdue"])
                .map { "\($0.objectID.primaryKey ?? 0) \($0.values.map(\.value))" }
        }
        for round in 0..<3 {
            // Edits move tasks to December 3 and 4 (in the log, over the snapshot's index).
            let edits = (1...6).map { ["edit", String(round * 6 + $0), "--priority", "medium", "--due", "2026-12-0\(3 + $0 % 2)"] }
            let results = try Self.runAll(t, edits + [["store", "compact"], ["add", "new \(round)", "--priority", "low"]])
                + Self.runAll(t, [["edit", String(30 + round), "--priority", "medium"], ["add", "linked \(round)", "--priority", "low"]], store: link)
            for (arguments, status, message) in results { #expect(status == 0, "\(arguments): \(message)") }
            let fresh = try PersistentStoreCoordinator(model: model, storeURL: t.store)
            for priority: Int64 in [1, 2] {
                #expect(try count(kept, priority) == (try count(fresh, priority)), "round \(round), priority \(priority)")
            }
            // Values read without objects follow the other processes' edits, adds and the
            // replaced file too.
            #expect(try listed(kept) == (try listed(fresh)), "round \(round)")
            #expect(try listed(kept).count == 40 + 2 * (round + 1))
            var found = 0
            for day in 1...6 {
                let (indexed, filtered) = try due(kept, day)
                let reopened = try due(fresh, day).indexed
                #expect(indexed == filtered && indexed == reopened, "round \(round), December \(day)")
                found += indexed
            }
            #expect(found >= 12, "the days hold tasks")
            #expect(try count(fresh, 2) == 7 * (round + 1))
            #expect(try count(fresh, 1) == 40 + 2 * (round + 1) - 7 * (round + 1))
        }
        #expect(try t.ok("store", "check").hasPrefix("ok:"))
    }

    /// A location's and a tag's tasks are derived from the tasks (model v9). Processes add
    /// tasks to one location and tag through the real path and a symbolic link while others
    /// compact the file (replacing it) and list the locations: every add is in both lists, as
    /// another opening reads them through the link; deleting the location then clears it from
    /// every task (the delete rule reaches the derived side), and the store checks clean.
    @Test func derivedListsFollowOtherProcessesAddsThroughALinkAndCompactions() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "seed", "--location", "Home", "--tag", "shop")
        try t.ok("store", "compact")
        let link = t.directory.appendingPathComponent("link.store")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: t.store)
        var commands: [[String]] = []
        for i in 0..<10 {
            commands.append(["add", "real \(i)", "--location", "Home", "--tag", "shop"])
            commands.append(["--store", link.path, "add", "link \(i)", "--location", "home", "--tag", "shop"])
            if i % 3 == 0 { commands += [["store", "compact"], ["--store", link.path, "locations", "--json"]] }
        }
        for (arguments, status, message) in try Self.runAll(t, commands) { #expect(status == 0, "\(arguments): \(message)") }
        let locations = try t.ok("locations", "--json")
        #expect(locations.contains("\"name\": \"Home\", \"pending\": 21"), "\(locations)")
        #expect(try t.tasks("--tag", "shop").count == 21)
        let coordinator = try PersistentStoreCoordinator(model: try App.modelDirectory().currentModel(), storeURL: link)
        let context = ManagedObjectContext(coordinator: coordinator)
        let home = try #require(try context.fetch(FetchRequest(entityName: "Location")).first)
        let shop = try #require(try context.fetch(FetchRequest(entityName: "Tag")).first)
        #expect(try home.objectIDs(forRelationship: "tasks").count == 21)
        #expect(try shop.objectIDs(forRelationship: "tasks").count == 21)
        try t.ok("location", "delete", "Home")
        #expect(try t.tasks().allSatisfy { $0["location"] is NSNull })
        #expect(try t.tasks("--tag", "shop").count == 21)
        #expect(try t.ok("store", "check").hasPrefix("ok:"))
    }

    @Test func uniqueValuesHoldAcrossProcessesOnACompactedStoreThroughALink() throws {
        let t = try TaskctlRunner()
        for i in 1...30 { try t.ok("add", "seed \(i)", "--location", "Place \(i)") }
        try t.ok("store", "compact")
        #expect(try Data(contentsOf: t.store)[40..<48].contains { $0 != 0 }, "a snapshot store (its header gives the snapshot's length)")
        let link = t.directory.appendingPathComponent("link.store")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: t.store)
        let adds = try Self.runAll(t, [["location", "add", "Garage"], ["location", "add", "garage"], ["store", "compact"],
                                       ["location", "add", "GARAGE"], ["location", "add", "Place 7"]], store: nil)
        let linked = try Self.runAll(t, [["location", "add", "gArage"]], store: link)
        let garages = (adds + linked).filter { $0.0.count == 3 && $0.0[2].lowercased() == "garage" }
        #expect(garages.filter { $0.1 == 0 }.count == 1, "\(garages)")
        #expect(garages.filter { $0.1 == 1 && $0.2.contains("already") }.count == 3, "\(garages)")
        #expect(adds.contains { $0.0 == ["location", "add", "Place 7"] && $0.1 == 1 && $0.2.contains("already") }, "a name in the snapshot is taken")
        let tasks = try Self.runAll(t, [["add", "a", "--location", "Shed"], ["add", "b", "--location", "shed"], ["store", "compact"],
                                        ["add", "c", "--location", "SHED"]], store: link)
        for (arguments, status, message) in tasks { #expect(status == 0, "\(arguments): \(message)") }
        let inShed = try t.tasks("--location", "shed")
        #expect(inShed.count == 3 && Set(inShed.compactMap { $0["location"] as? String }).count == 1, "\(inShed)")
        #expect(try t.run("store", "check").status == 0)
        #expect(try t.ok("store", "check").hasPrefix("ok:"))
    }
}

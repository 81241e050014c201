import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

/// Two openings of one store file (as two processes have): each must see what the other
/// saved, whatever happened to the file in between, and never write back stale values.
@Suite struct SharedStoreTests {
    static let fileKinds: [StoreKind] = [.json, .binary]

    static func open(_ url: URL) throws -> ManagedObjectContext {
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url, clock: { TestModel.now }))
        context.undoManager = nil
        return context
    }

    static func url(_ kind: StoreKind, in directory: TemporaryDirectory) -> URL {
        directory.file(kind == .json ? "tasks.json" : "tasks.store")
    }

    @Test func anEditAfterTwoCompactionsIsNotRevertedByAStaleOpening() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let setup = try Self.open(url)
        let task = try setup.task("original")
        try setup.save()
        let id = task.objectID

        // A opens the store and reads the task; B then edits it and compacts twice, so the
        // file is replaced twice (and its inode number may come back).
        let a = try Self.open(url)
        let stale = try a.existingObject(with: id)
        #expect(stale["text"] == "original")
        let b = try Self.open(url)
        let edited = try b.existingObject(with: id)
        try edited.setValue("confirmed edit", forKey: "text")
        try b.save()
        for _ in 0..<2 { try (b.coordinator.store as? BinaryStore)?.compact() }

        // A edits another field: the default policy reports the conflict rather than
        // writing its stale text back.
        try stale.setValue(2, forKey: "priority")
        #expect(throws: StoreConflictError.self) { try a.save() }
        a.mergePolicy = .mergeByPropertyMemoryWins
        try a.save()
        let reread = try Self.open(url).existingObject(with: id)
        #expect(reread["text"] == "confirmed edit")
        #expect(reread["priority"] == 2)
    }

    /// A log whose rows were mostly written again since (one task edited save after save)
    /// is cut, not compacted: in place, the metadata and snapshot left as they are, the log
    /// one commit of each logged object's last row, the deletions and the next keys, written
    /// in turn after the log and where an earlier cut's log was (so the file stays small).
    /// An opening through a symbolic link cuts while another opening holds objects read
    /// before; both, and a new opening, then read the last values, no deleted task comes
    /// back, and keys are not handed out twice.
    @Test func aLogOfRowsWrittenAgainIsCutAndTheSnapshotKeptAsItIs() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let link = directory.file("link.store")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        let a = try Self.open(link)
        let tasks = try (0..<40).map { try a.task("task \($0)", priority: 1) }
        try a.save()
        let store = try #require(a.coordinator.store as? BinaryStore)
        try store.compact()
        let snapshotEnd = store.sizes.total
        let snapshot = try Data(contentsOf: url)[BinaryStore.headerSize..<snapshotEnd]

        // In the log: a snapshot task deleted, one inserted, and B holding the churned task.
        a.delete(tasks[3])
        let inserted = try a.task("inserted")
        try a.save()
        let b = try Self.open(url)
        let held = try b.existingObject(with: tasks[0].objectID)
        #expect(held["text"] == "task 0")
        let inode = try FileManager.default.attributesOfItem(atPath: url.path)[.systemFileNumber] as? Int
        store.compactionThreshold = 2_000
        for round in 0..<200 {
            try tasks[0].setValue(.string("churn \(round)"), forKey: "text")
            try a.save()
        }
        #expect(store.sizes.log <= 2_000, "the log was cut or compacted")
        #expect(try Data(contentsOf: url)[BinaryStore.headerSize..<snapshotEnd] == snapshot, "the snapshot as it was: the log was cut, not compacted")
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        #expect(attributes[.systemFileNumber] as? Int == inode, "cut in place: the file is not replaced")
        let size = try #require(attributes[.size] as? Int)
        #expect(size < snapshotEnd + 5_000, "the space of older logs is written again: \(size) bytes after 200 saves of ~80")

        // B's held object and a fresh fetch read the last text; B's edit is not lost.
        b.refresh(held, mergeChanges: false)
        #expect(held["text"] == "churn 199")
        #expect(try b.all("Task").count == 40)
        try held.setValue(3, forKey: "priority")
        try b.save()
        let later = try b.task("after the cut")
        try b.save()
        let keys = try Self.open(url).all("Task").compactMap(\.objectID.primaryKey)
        let deletedKey = try #require(tasks[3].objectID.primaryKey)
        #expect(Set(keys).count == 41 && !keys.contains(deletedKey))
        let laterKey = try #require(later.objectID.primaryKey), insertedKey = try #require(inserted.objectID.primaryKey)
        #expect(laterKey > insertedKey, "no key handed out twice")
        let fresh = try Self.open(link)
        #expect(try fresh.existingObject(with: tasks[0].objectID)["text"] == "churn 199")
        #expect(try fresh.existingObject(with: tasks[0].objectID)["priority"] == 3)
        #expect(try fresh.existingObject(with: inserted.objectID)["text"] == "inserted")
        #expect(try fresh.coordinator.checkIntegrity().problems.isEmpty)
    }

    /// A log of rows written again is cut as soon as it passes the threshold, not only once
    /// it is an eighth of the snapshot (as a compaction waits to be): a cut does not read
    /// the snapshot, and opening then reads at most that much log whatever the store holds.
    @Test func aLogOfRowsWrittenAgainIsCutAtTheThresholdWhateverTheSnapshotsSize() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let a = try Self.open(url)
        let tasks = try (0..<3_000).map { try a.task("task \($0)", priority: 1) }
        try a.save()
        let store = try #require(a.coordinator.store as? BinaryStore)
        try store.compact()
        let snapshot = store.sizes.total
        store.compactionThreshold = 2_000
        #expect(snapshot / 8 > 4 * 2_000, "a snapshot an eighth of which is far past the threshold: \(snapshot) bytes")
        let inode = try FileManager.default.attributesOfItem(atPath: url.path)[.systemFileNumber] as? Int
        var longest = 0
        for round in 0..<300 {
            try tasks[round % 3].setValue(.string("churn \(round)"), forKey: "text")
            try a.save()
            longest = max(longest, store.sizes.log)
        }
        #expect(try StoreHeader.logCuts(url) > 0)
        #expect(longest < 2_000 + 200, "the log never grew much past the threshold: \(longest) bytes")
        #expect(try FileManager.default.attributesOfItem(atPath: url.path)[.systemFileNumber] as? Int == inode, "cut, never compacted")
        #expect(try Self.open(url).existingObject(with: tasks[299 % 3].objectID)["text"] == "churn 299")
    }

    /// A cut stopped after writing its log (the header not moved), or after moving the
    /// header (the file not yet cut after the new log): the first cut, written after the
    /// log, and later ones, written where an earlier log was. Each time a new opening reads
    /// the last values, saves after them, and so does the stopped opening.
    @Test(arguments: [BinaryStore.CutStop.afterWritingTheLog, .afterMovingTheHeader], [1, 2, 3, 4])
    func aCutStoppedAtEitherStepLeavesTheStoreWhole(stop: BinaryStore.CutStop, cut: Int) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let a = try Self.open(url)
        let tasks = try (0..<40).map { try a.task("task \($0)", priority: 1) }
        try a.save()
        let store = try #require(a.coordinator.store as? BinaryStore)
        try store.compact()
        store.compactionThreshold = 2_000
        // Texts of one length, so a cut log has the length of the one two cuts before, written
        // at the same place: what follows it in the file is then the older log's next
        // commit, not a torn one.
        func text(_ round: Int) -> String { "churn " + String(String(100_000 + round).dropFirst()) }
        var round = 0
        func churn() throws {
            round += 1
            try tasks[round % 2].setValue(.string(text(round)), forKey: "text")
            try a.save()
        }
        // The cuts before the one stopped, each seen as the log shrinking.
        for _ in 1..<cut {
            var log = store.sizes.log
            while store.sizes.log >= log {
                log = store.sizes.log
                try churn()
            }
        }
        store.cutStop = stop
        while store.housekeepingWarning == nil { try churn() }
        #expect(store.housekeepingWarning?.contains("stopped where a test asked") == true)
        store.cutStop = nil

        func texts(_ context: ManagedObjectContext) throws -> [String] {
            try context.all("Task").compactMap { $0["text"].stringValue }.sorted()
        }
        let expected = ((2..<40).map { "task \($0)" } + [text(round), text(round - 1)]).sorted()
        let fresh = try Self.open(url)
        #expect(try texts(fresh) == expected)
        #expect(try fresh.coordinator.checkIntegrity().problems.isEmpty)
        // A save from a new opening, then from the stopped one: each over what the
        // stopped cut left.
        let task = try fresh.existingObject(with: tasks[5].objectID)
        try task.setValue("saved after the stop", forKey: "text")
        try fresh.save()
        try churn()
        let last = try Self.open(url)
        #expect(try texts(last) == ((2..<40).filter { $0 != 5 }.map { "task \($0)" } + [text(round), text(round - 1), "saved after the stop"]).sorted())
        #expect(try last.coordinator.checkIntegrity().problems.isEmpty)
        #expect(try last.existingObject(with: tasks[round % 2].objectID)["text"] == .string(text(round)))
    }

    /// Three openings of one file (as three processes have), on three threads, each editing
    /// its own tasks save after save with a small log limit, so their saves cut the log
    /// (and compact it) under each other: each reads another worker's task as that worker
    /// wrote it (never with a third one's text), and a new opening reads every last text.
    @Test func openingsThatCutTheLogUnderEachOtherLoseNothing() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let setup = try Self.open(url)
        let tasks = try (0..<30).map { try setup.task("task \($0)") }
        try setup.save()
        try setup.coordinator.compactStore()
        let ids = tasks.map(\.objectID)
        let rounds = 80
        let cuts = try await withThrowingTaskGroup(of: UInt64.self) { group in
            for worker in 0..<3 {
                group.addTask {
                    let context = try Self.open(url)
                    let store = try #require(context.coordinator.store as? BinaryStore)
                    store.compactionThreshold = 3_000
                    var cuts: UInt64 = 0
                    for round in 0..<rounds {
                        for n in 0..<2 {
                            let task = try context.existingObject(with: ids[worker * 2 + n])
                            try task.setValue(.string("worker \(worker) round \(round)"), forKey: "text")
                        }
                        try context.save()
                        #expect(store.housekeepingWarning == nil)
                        cuts = max(cuts, try StoreHeader.logCuts(url))
                        // Another worker's task, read again: its own text or that worker's,
                        // never another's (rows read from the wrong log would mix them).
                        let next = (worker + 1) % 3
                        let other = try context.existingObject(with: ids[next * 2])
                        context.refresh(other, mergeChanges: false)
                        let text = other["text"].stringValue ?? ""
                        #expect(text == "task \(next * 2)" || text.hasPrefix("worker \(next) round "), "\(text)")
                    }
                    return cuts
                }
            }
            return try await group.reduce(0) { max($0, $1) }
        }
        #expect(cuts > 0, "the log was cut")
        let check = try Self.open(url)
        for worker in 0..<3 {
            for n in 0..<2 {
                #expect(try check.existingObject(with: ids[worker * 2 + n])["text"] == .string("worker \(worker) round \(rounds - 1)"))
            }
        }
        #expect(try check.all("Task").count == 30)
        #expect(try check.coordinator.checkIntegrity().problems.isEmpty)
    }

    /// A log of rows that are all still current (a bulk insert) is compacted, not cut.
    @Test func aLogOfCurrentRowsIsCompacted() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let a = try Self.open(url)
        _ = try a.task("first")
        try a.save()
        let store = try #require(a.coordinator.store as? BinaryStore)
        try store.compact()
        let before = store.sizes.total
        store.compactionThreshold = 2_000
        for n in 0..<100 { _ = try a.task("bulk \(n)") }
        try a.save()
        #expect(store.sizes.log == 0, "a compaction leaves no log")
        #expect(store.sizes.total > before)
        #expect(try Self.open(url).all("Task").count == 101)
    }

    /// A compacted file shared by two openings, one through a symbolic link: each side's
    /// saves append rows to the log over the snapshot, each side reads what the other wrote,
    /// and after one compacts the file again (replacing it, with a new dictionary) both, and
    /// a new opening, read every value, list and ordered list as written.
    @Test func aCompactedFileSharedThroughALinkReadsTheSameOnEverySide() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let link = directory.file("link.store")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        let setup = try Self.open(url)
        let home = try setup.location("Home")
        var tasks: [ManagedObject] = []
        for n in 0..<40 {
            let task = try setup.task("task \(n)", priority: Int64(n % 4))
            if n % 3 == 0 { try task.setObject(home, forKey: "location") }
            tasks.append(task)
        }
        // Subtasks in descending and in ascending key order (an ordered relationship).
        try tasks[0].setObjects([tasks[9], tasks[5], tasks[7]], forKey: "subtasks")
        try tasks[1].setObjects([tasks[10], tasks[11], tasks[12]], forKey: "subtasks")
        try setup.save()
        try (setup.coordinator.store as? BinaryStore)?.compact()
        #expect(try Data(contentsOf: url)[8] == UInt8(BinaryStore.formatVersion))

        // What every side must read: text, priority, location, subtasks in order, per key.
        func view(_ context: ManagedObjectContext) throws -> [String] {
            try context.all("Task").map { task in
                let subtasks = try task.objectIDs(forRelationship: "subtasks").map { String($0.primaryKey ?? -1) }
                let place = try task.value(forKeyPath: "location.name").value?.stringValue ?? "-"
                return "\(task.objectID.primaryKey ?? -1) \(task["text"].stringValue ?? "?") \(task["priority"]) \(place) [\(subtasks.joined(separator: ","))]"
            }.sorted()
        }
        let a = try Self.open(url)
        let b = try Self.open(link)
        #expect(try view(a) == view(setup))

        // B edits through the link: rows in the log over the snapshot.
        let bTasks = try b.all("Task").sorted { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) }
        try bTasks[2].setValue("edited by B", forKey: "text")
        try bTasks[3].setObject(try b.all("Location").first, forKey: "location")
        try bTasks[4].setObjects([bTasks[20], bTasks[30]], forKey: "subtasks")
        try b.save()
        #expect(try Data(contentsOf: url)[8] == UInt8(BinaryStore.formatVersion), "the save's header says the current format")
        a.reset()
        #expect(try view(a) == view(b))

        // A edits, then B compacts (the file replaced under A).
        let aTask = try #require(try a.all("Task").first { $0["text"] == "task 6" })
        try aTask.setValue(3, forKey: "priority")
        try aTask.setObjects([bTasks[35].objectID, bTasks[33].objectID].map { try a.existingObject(with: $0) }, forKey: "subtasks")
        try a.save()
        b.reset()
        let expected = try view(b)
        #expect(try view(a) == expected)
        try (b.coordinator.store as? BinaryStore)?.compact()
        #expect(try Data(contentsOf: url)[8] == UInt8(BinaryStore.formatVersion))
        a.reset()
        #expect(try view(a) == expected)
        #expect(try view(Self.open(link)) == expected)
        #expect(try a.coordinator.checkIntegrity().problems.isEmpty)
    }

    /// Format 6: a compaction puts the strings rows repeat in the store's dictionary and
    /// typed rows write them as numbers. Each opening reads every string byte for byte (a
    /// decomposed "café" is not the dictionary's composed one) whichever dictionary its rows
    /// were written with: rows held from before a compaction, rows the other opening wrote
    /// with the new dictionary, and rows after another compaction chose another one.
    @Test func stringsReadBackAsWrittenAcrossCompactionsThatChangeTheDictionary() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        let a = try Self.open(url), b = try Self.open(url)
        for n in 0..<30 {
            _ = try a.task(n % 3 == 0 ? "errand" : n % 3 == 1 ? composed : "task \(n)")
        }
        _ = try a.task(decomposed)
        try a.save()
        func texts(_ context: ManagedObjectContext) throws -> [[UInt8]] {
            try context.all("Task").compactMap { $0["text"].stringValue.map { Array($0.utf8) } }.sorted { $0.lexicographicallyPrecedes($1) }
        }
        let written = try texts(a)
        #expect(written.filter { $0 == Array(decomposed.utf8) }.count == 1 && written.filter { $0 == Array(composed.utf8) }.count == 10)
        let held = try b.all("Task")
        let store = try #require(b.coordinator.store as? BinaryStore)
        try store.compact()
        #expect(Set(store.dictionary).isSuperset(of: ["errand", composed]) && !store.dictionary.contains { $0.hasPrefix("task") }, "\(store.dictionary)")
        // B's objects, read before the compaction, and A's after it read the same bytes.
        #expect(held.compactMap { $0["text"].stringValue.map { Array($0.utf8) } }.sorted { $0.lexicographicallyPrecedes($1) } == written)
        a.reset()
        #expect(try texts(a) == written)

        // A writes with the new dictionary; B reads it. Then B renames the errands and
        // compacts: another dictionary, and A's held objects still read what they read.
        for _ in 0..<5 { _ = try a.task("errand") }
        _ = try a.task(decomposed)
        try a.save()
        let aHeld = try a.all("Task")
        let aTexts = try texts(a)
        b.reset()
        #expect(try texts(b) == aTexts)
        for task in try b.all("Task") where task["text"] == "errand" { try task.setValue("chore", forKey: "text") }
        try b.save()
        try store.compact()
        #expect(Set(store.dictionary).isSuperset(of: ["chore", composed]) && !store.dictionary.contains("errand"), "\(store.dictionary)")
        #expect(aHeld.compactMap { $0["text"].stringValue.map { Array($0.utf8) } }.sorted { $0.lexicographicallyPrecedes($1) } == aTexts)
        a.reset()
        let renamed = aTexts.map { $0 == Array("errand".utf8) ? Array("chore".utf8) : $0 }.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(try texts(a) == renamed)
        #expect(try texts(Self.open(url)) == renamed)
        #expect(try a.coordinator.checkIntegrity().problems.isEmpty)
    }

    /// Format 6: typed rows write a date as its distance from the dictionary's date origin
    /// (the median of the dates a compaction found). Dates far from it, before 2001, of the
    /// year 1 and 9999 and between whole seconds read back to the bit, in rows held from
    /// before a compaction and in rows written after it, when another compaction moves the
    /// origin.
    @Test func datesReadBackToTheBitAcrossCompactionsThatMoveTheDateOrigin() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let a = try Self.open(url), b = try Self.open(url)
        let near = (0..<20).map { 817_000_000.0 + Double($0) * 86_400 }
        let far: [Double] = [-63_113_904_000, 252_423_993_599, -1, 0, 817_000_000.25, -0.0, 1e-300]
        for (n, seconds) in (near + far).enumerated() {
            try a.task("task \(n)").setValue(.date(Date(timeIntervalSinceReferenceDate: seconds)), forKey: "dueDate")
        }
        try a.save()
        func dates(_ context: ManagedObjectContext) throws -> [UInt64] {
            try context.all("Task").compactMap { $0["dueDate"].dateValue?.timeIntervalSinceReferenceDate.bitPattern }.sorted()
        }
        let written = try dates(a)
        #expect(written == (near + far).map(\.bitPattern).sorted())
        let held = try b.all("Task")
        let store = try #require(b.coordinator.store as? BinaryStore)
        try store.compact()
        // The whole seconds: the 20 near ones and four far ones, three of them before.
        #expect(store.dateOrigin == Int64(near[9]), "the median of the whole seconds")
        #expect(held.compactMap { $0["dueDate"].dateValue?.timeIntervalSinceReferenceDate.bitPattern }.sorted() == written)
        a.reset()
        #expect(try dates(a) == written)
        // Rows written with the origin, then an origin far away.
        try a.task("after").setValue(.date(Date(timeIntervalSinceReferenceDate: 817_000_123)), forKey: "dueDate")
        try a.save()
        b.reset()
        for task in try b.all("Task") where task["text"].stringValue?.hasPrefix("task 1") == true {
            try task.setValue(.date(Date(timeIntervalSinceReferenceDate: -63_113_904_000)), forKey: "dueDate")
        }
        try b.save()
        let expected = try dates(b)
        try store.compact()
        #expect(store.dateOrigin != Int64(near[9]))
        a.reset()
        #expect(try dates(a) == expected)
        #expect(try dates(Self.open(url)) == expected)
        #expect(try a.coordinator.checkIntegrity().problems.isEmpty)
    }

    @Test(arguments: fileKinds)
    func twoOpeningsAddingToOneLocationKeepBothTasks(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        let url = Self.url(kind, in: directory)
        let setup = try Self.open(url)
        let home = try setup.location("Home")
        try setup.task("seed").setObject(home, forKey: "location")
        try setup.save()

        let a = try Self.open(url), b = try Self.open(url)
        for (context, text) in [(a, "from a"), (b, "from b")] {
            context.mergePolicy = .mergeByPropertyMemoryWins
            let location = try context.existingObject(with: home.objectID)
            _ = try location.objects(forKey: "tasks")
            try context.task(text).setObject(location, forKey: "location")
        }
        try a.save()
        try b.save()  // conflicts on Home.tasks; merges its one new edge into a's list

        let check = try Self.open(url)
        let tasks = try check.existingObject(with: home.objectID).objects(forKey: "tasks").map { $0["text"] }
        #expect(Set(tasks) == ["seed", "from a", "from b"])
        #expect(try check.all("Task").allSatisfy { (try? $0.objectIDs(forRelationship: "location")) == [home.objectID] })
    }

    @Test func aTaskRemovedOnOneSideAndAddedOnTheOtherMergesEdgeByEdge() throws {
        let base: SlotValue = .toMany([Self.id(1), Self.id(2), Self.id(3)])
        let mine: SlotValue = .toMany([Self.id(1), Self.id(3), Self.id(5)])   // removed 2, added 5
        let theirs: SlotValue = .toMany([Self.id(1), Self.id(2), Self.id(3), Self.id(4)])  // added 4
        #expect(ManagedObjectContext.mergeEdges(base: base, mine: mine, theirs: theirs) == .toMany([Self.id(1), Self.id(3), Self.id(4), Self.id(5)]))
    }

    static func id(_ key: Int64) -> ObjectID {
        ObjectID(entityName: "Task", storeIdentifier: "S", key: .permanent(key))
    }

    @Test(arguments: fileKinds)
    func aReadOnlyFileIsRefusedNotReplaced(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        let url = Self.url(kind, in: directory)
        let context = try Self.open(url)
        try context.task("saved")
        try context.save()
        chmod(url.path, 0o444)
        let before = try Data(contentsOf: url)
        try context.task("refused")
        #expect(throws: StoreError.readOnly(path: url.path)) { try context.save() }
        if kind == .binary {
            #expect(throws: StoreError.readOnly(path: url.path)) { try (context.coordinator.store as? BinaryStore)?.compact() }
        }
        #expect(try Data(contentsOf: url) == before)
        let mode = (try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o444)
    }

    @Test(arguments: fileKinds)
    func aRewrittenFileKeepsItsPermissions(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        let url = Self.url(kind, in: directory)
        let context = try Self.open(url)
        try context.task("one")
        try context.save()
        chmod(url.path, 0o640)
        try context.task("two")
        try context.save()
        try (context.coordinator.store as? BinaryStore)?.compact()
        let mode = (try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o640)
    }

    @Test(arguments: fileKinds)
    func savesThroughASymlinkWriteBesideTheRealFile(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        let real = Self.url(kind, in: directory)
        let link = directory.file("link-" + real.lastPathComponent)
        // The link comes first: the store is created where it points.
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        let context = try Self.open(link)
        for i in 0..<3 {
            try context.task("task \(i)")
            try context.save()
            try (context.coordinator.store as? BinaryStore)?.compact()
        }
        #expect(try FileManager.default.attributesOfItem(atPath: link.path)[.type] as? FileAttributeType == .typeSymbolicLink)
        #expect(try Self.open(real).all("Task").count == 3)
    }

    /// Copies a killed compaction, save or migration left beside the store (a whole store
    /// each) are removed by the next write of a whole file (a compaction, a JSON save), but
    /// only those whose process is gone: a live process's copy and other files stay. Opening
    /// the store, which must stay cheap, lists nothing.
    @Test(arguments: fileKinds)
    func leftoversOfKilledProcessesAreRemovedByTheNextWholeFileWrite(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        let url = Self.url(kind, in: directory)
        try Self.open(url).task("kept")
        let context = try Self.open(url)
        try context.task("saved")
        try context.save()
        // A process that has ended: its id names no process now.
        let ended = Process()
        ended.executableURL = URL(fileURLWithPath: "/bin/true")
        try ended.run()
        ended.waitUntilExit()
        let dead = ended.processIdentifier
        let alive = ProcessInfo.processInfo.processIdentifier
        let name = url.lastPathComponent
        let deadOnes = ["\(name).tmp-\(dead)-12345", "\(name).migrating-p\(dead)-1-deadbeef", "\(name).migrating-p\(dead)-2-cafe0000.json"]
        let kept = ["\(name).tmp-\(alive)-777", "\(name).migrating-p\(alive)-1-0badf00d", "\(name).tmp-notapid", "other.store.tmp-\(dead)-1", "\(name).backup"]
        for file in deadOnes + kept { try Data("a copy".utf8).write(to: directory.file(file)) }
        func present() throws -> Set<String> { Set(try FileManager.default.contentsOfDirectory(atPath: directory.url.path)) }
        _ = try PersistentStoreCoordinator(model: TestModel.model, storeURL: url, readOnly: true)
        #expect(try present().isSuperset(of: deadOnes + kept), "a read-only open removes nothing")
        let reopened = try Self.open(url)
        #expect(try present().isSuperset(of: deadOnes + kept), "an open removes nothing")
        try reopened.task("another")
        try reopened.save()
        try (reopened.coordinator.store as? BinaryStore)?.compact()
        let after = try present()
        #expect(after.isDisjoint(with: deadOnes), "\(after)")
        #expect(after.isSuperset(of: kept), "\(after)")
        #expect(try reopened.all("Task").count == 2)
    }

    @Test func checkIntegrityFindsBrokenInversesAndRuleViolations() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.json")
        let context = try Self.open(url)
        let home = try context.location("Home")
        try context.task("Milk", priority: 1).setObject(home, forKey: "location")
        try context.save()
        #expect(try context.coordinator.checkIntegrity().problems.isEmpty)
        #expect(try context.coordinator.checkIntegrity().objectCount == 2)
        // Hand-edited: the location no longer lists its task, the priority breaks its max.
        var text = try String(contentsOf: url, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"tasks\": [\"Task/1\"]", with: "\"tasks\": []").replacingOccurrences(of: "\"priority\": 1", with: "\"priority\": 9")
        try text.write(to: url, atomically: true, encoding: .utf8)
        let problems = try Self.open(url).coordinator.checkIntegrity().problems
        #expect(problems.contains { $0.contains("Task 1.location -> Location 1, but its tasks does not point back") }, "\(problems)")
        #expect(problems.contains { $0.contains("Task 1.priority: 9 is greater than the maximum") }, "\(problems)")
    }

    /// A location with many tasks (its inverse list checked as a set): every task that it
    /// does not list is reported, and only those.
    @Test func checkIntegrityFindsAMissingBackPointerInALongInverse() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.json")
        let context = try Self.open(url)
        let home = try context.location("Home")
        for i in 0..<200 { try context.task("task \(i)").setObject(home, forKey: "location") }
        try context.save()
        #expect(try context.coordinator.checkIntegrity().problems.isEmpty)
        var text = try String(contentsOf: url, encoding: .utf8)
        for key in [7, 150] {
            #expect(text.contains("\"Task/\(key)\", "))
            text = text.replacingOccurrences(of: "\"Task/\(key)\", ", with: "")
        }
        try text.write(to: url, atomically: true, encoding: .utf8)
        let problems = try Self.open(url).coordinator.checkIntegrity().problems
        #expect(problems == ["Task 150.location -> Location 1, but its tasks does not point back", "Task 7.location -> Location 1, but its tasks does not point back"], "\(problems)")
    }

    @Test func aCompactionThatFailsAfterASaveLeavesTheSaveAndAWarning() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let context = try Self.open(url)
        let task = try context.task("v0")
        try context.save()
        // A second hard link: compaction (a rename) is refused, appends still work.
        try FileManager.default.linkItem(at: url, to: directory.file("other-name.store"))
        let store = try #require(context.coordinator.store as? BinaryStore)
        store.compactionThreshold = 1
        #expect(store.housekeepingWarning == nil)
        for i in 1...5 {
            try task.setValue(.string("v\(i)"), forKey: "text")
            try context.save()  // each save compacts on its own, and fails to
        }
        #expect(store.housekeepingWarning?.contains("hard links") == true, "\(store.housekeepingWarning ?? "no warning")")
        // Every save landed, through both names, and another opening sees the last one.
        let otherName = try Self.open(directory.file("other-name.store"))
        #expect(try otherName.all("Task").first?["text"] == "v5")
        #expect(try Self.open(url).coordinator.checkIntegrity().problems.isEmpty)
    }
}

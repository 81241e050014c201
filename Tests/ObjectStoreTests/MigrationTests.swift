import Foundation
import Testing
@testable import ObjectStore
import ObjectStoreModel
@testable import ObjectStoreStorage

@Suite struct MigrationTests {
    static var repository: URL { TasksFixtures.repository }
    static var fixtures: URL { TasksFixtures.fixtures }
    static func tasksDirectory() throws -> ModelDirectory { try TasksFixtures.tasksDirectory() }
    static func writeStore(version: String, to url: URL) throws { try TasksFixtures.writeStore(version: version, to: url) }

    /// Checks a store migrated to the current version holds the fixture's tasks.
    static func checkCurrent(_ url: URL, from version: String) throws {
        let directory = try tasksDirectory()
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: try directory.currentModel(), storeURL: url))
        let tasks = try context.fetch(FetchRequest(entityName: "Task", sortDescriptors: [SortKey("priority", ascending: false)]))
        #expect(tasks.map { $0["title"] } == ["Buy milk", "Write report", "Call Zoë ☎", "Read"], "\(version)")
        #expect(tasks.map { $0.objectID.primaryKey } == [1, 2, 3, 4], "keys are kept (\(version))")
        #expect(tasks[1]["dueDate"] == .date(Date(timeIntervalSince1970: 1_795_900_000.5)))
        #expect(try tasks[0].value(forKeyPath: "location.name").value == "Home")
        #expect(try tasks[2].object(forKey: "location") == nil)
        let uuids = tasks.map { $0["uuid"] }
        #expect(uuids.allSatisfy { if case .uuid = $0 { return true } else { return false } })
        #expect(Set(uuids).count == 4)
        if version == "v1" {
            #expect(tasks.allSatisfy { $0["status"] == "pending" })
            #expect(try context.count(for: FetchRequest(entityName: "Project")) == 0)
        } else {
            #expect(uuids[0] == .uuid(UUID(uuidString: "00000000-0000-4000-8000-000000000001")!))
            #expect(tasks[3]["status"] == "done")
            #expect(try tasks[0].value(forKeyPath: "tags.name").description == "[\"urgent\"]")
            #expect(try tasks[0].value(forKeyPath: "project.name").value == "errands")
            #expect(try tasks[1].value(forKeyPath: "project.name").value == "work")
            #expect(try tasks[3].object(forKey: "project") == nil)
            let errands = try #require(context.fetch(FetchRequest(entityName: "Project", predicate: try ObjectPredicate("name == 'errands'"))).first)
            #expect(try errands.value(forKeyPath: "tasks.@count").value == 2, "the inverse is filled (\(version))")
        }
        if version >= "v4" {
            #expect(try tasks[0].value(forKeyPath: "annotations.text").description == "[\"ask for oat milk\"]")
            #expect(tasks[1]["recurrence"] == "weekly" && tasks[1]["waitUntil"] == .date(Date(timeIntervalSince1970: 1_795_800_000)))
            #expect(tasks[2]["startedAt"] == .date(Date(timeIntervalSince1970: 1_795_250_000)))
        } else {
            #expect(tasks.allSatisfy { $0["recurrence"].isNull && $0["waitUntil"].isNull && $0["startedAt"].isNull }, "new attributes start empty (\(version))")
            #expect(try context.count(for: FetchRequest(entityName: "Annotation")) == 0)
        }
        let location = try #require(context.fetch(FetchRequest(entityName: "Location", predicate: try ObjectPredicate("name == 'Home'"))).first)
        #expect(try location.value(forKeyPath: "tasks.@count").value == 2)
        let added = try context.insertObject(entityName: "Task")
        try added.setValue("New", forKey: "title")
        try added.setValue(.uuid(UUID()), forKey: "uuid")
        try context.save()
        #expect(added.objectID.primaryKey == 6, "the deleted task's key 5 is not reused (\(version))")
    }

    @Test(arguments: ["v1", "v2", "v3", "v4"], ["store", "json"])
    func theCommittedFixtureOfEveryVersionOpensWithTheCurrentModel(version: String, format: String) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.\(format)")
        let fixture = Self.fixtures.appendingPathComponent("\(version).\(format)")
        // OBJECTSTORE_WRITE_FIXTURES=v4 writes the fixtures of a new version (once: a
        // shipped version's fixtures are what that version wrote, never rewritten).
        if ProcessInfo.processInfo.environment["OBJECTSTORE_WRITE_FIXTURES"] == version {
            try? FileManager.default.removeItem(at: fixture)
            try Self.writeStore(version: version, to: fixture)
            try? FileManager.default.removeItem(at: URL(fileURLWithPath: fixture.path + ".lock"))
        }
        try FileManager.default.copyItem(at: fixture, to: url)
        let migrator = StoreMigrator(models: try Self.tasksDirectory())
        let (_, result) = try migrator.openStore(at: url)
        // Every fixture predates v7 (its SyncState entity), v8 and v9: migrated. Every binary fixture is
        // in the pre-release format 1: upgraded as well.
        #expect(result != nil)
        #expect(result?.upgradedFormat == (format == "store" ? 1 : nil))
        if let result {
            let versions = ["v1", "v2", "v3", "v4", "v7", "v8", "v9"]
            #expect(result.plan.steps.map(\.destination) == Array(versions.drop { $0 <= version }))
            #expect(FileManager.default.fileExists(atPath: result.backupURL.path))
            #expect(try Data(contentsOf: result.backupURL) == Data(contentsOf: fixture), "the backup is the original")
        }
        try Self.checkCurrent(url, from: version)
    }

    /// A container reports a migration's progress, every step from 0 to all its objects; with
    /// `.keepLatest` only the new backup stays: earlier migrations' backups (other files) go,
    /// a symbolic link named like one and other files beside the store stay.
    @Test func theContainerReportsProgressAndCanKeepOnlyTheLatestBackup() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        try FileManager.default.copyItem(at: Self.fixtures.appendingPathComponent("v1.store"), to: url)
        let earlier = directory.file("tasks.store.v1-backup"), older = directory.file("tasks.store.v2-backup-3")
        try Data("an earlier migration's backup".utf8).write(to: earlier)
        try Data("an older one".utf8).write(to: older)
        let link = directory.file("tasks.store.v0-backup"), notes = directory.file("tasks.store.backup-notes")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: directory.file("elsewhere"))
        try Data("notes".utf8).write(to: notes)
        var reports: [StoreMigrator.Progress] = []
        let container = try PersistentContainer(name: "Tasks", models: Self.tasksDirectory(), storeURL: url, backupPolicy: .keepLatest) { reports.append($0) }
        let migration = try #require(container.migration)
        #expect(migration.plan.steps.count == 6)
        for step in 1...6 {
            let ofStep = reports.filter { $0.step == step }
            #expect(ofStep.first?.done == 0, "step \(step) starts at 0: \(ofStep)")
            #expect(ofStep.last.map { $0.done == $0.total && $0.total == 6 } == true, "step \(step) ends with every object: \(ofStep)")
        }
        #expect(migration.backupURL.lastPathComponent == "tasks.store.v1-backup-2")
        #expect(try Data(contentsOf: migration.backupURL) == Data(contentsOf: Self.fixtures.appendingPathComponent("v1.store")))
        #expect(!FileManager.default.fileExists(atPath: earlier.path) && !FileManager.default.fileExists(atPath: older.path))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) != nil)
        #expect(FileManager.default.fileExists(atPath: notes.path))
        #expect(try container.viewContext.count(for: FetchRequest(entityName: "Task")) == 4)
    }

    @Test func aDryRunPlansStepsAndCountsWithoutWriting() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        try Self.writeStore(version: "v1", to: url)
        let before = try Data(contentsOf: url)
        let plan = try StoreMigrator(models: try Self.tasksDirectory()).plan(storeURL: url)
        #expect(plan.steps == [.init(source: "v1", destination: "v2", usesCustomMapping: false), .init(source: "v2", destination: "v3", usesCustomMapping: true),
                               .init(source: "v3", destination: "v4", usesCustomMapping: false), .init(source: "v4", destination: "v7", usesCustomMapping: false),
                               .init(source: "v7", destination: "v8", usesCustomMapping: false), .init(source: "v8", destination: "v9", usesCustomMapping: false)])
        #expect(plan.objectCounts == ["Task": 4, "Location": 2])
        #expect(try Data(contentsOf: url) == before)
    }

    @Test func progressIsReported() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        try Self.writeStore(version: "v1", to: url)
        var migrator = StoreMigrator(models: try Self.tasksDirectory())
        migrator.batchSize = 2
        var reports: [StoreMigrator.Progress] = []
        try migrator.migrate(storeURL: url) { reports.append($0) }
        #expect(reports.first?.step == 1 && reports.last?.step == 6 && reports.last?.stepCount == 6)
        #expect(reports.allSatisfy { $0.total == 6 && $0.done <= $0.total })
    }

    @Test func aFailedMigrationLeavesTheOriginalUntouchedAndARetryWorks() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        try Self.writeStore(version: "v2", to: url)
        let before = try Data(contentsOf: url)
        // A mapping file whose result does not validate: titles become empty.
        var files: [String: String] = [:]
        let models = Self.repository.appendingPathComponent("Models/Tasks")
        for name in try FileManager.default.contentsOfDirectory(atPath: models.path) {
            files[name] = try String(contentsOf: models.appendingPathComponent(name), encoding: .utf8)
        }
        var broken = files
        broken["v2-to-v3.mapping.json"] = files["v2-to-v3.mapping.json"]?.replacingOccurrences(of: #""uuid": "coalesce($source.uuid, uuid())""#, with: #""uuid": "coalesce($source.uuid, uuid())", "title": "''""#)
        #expect {
            try StoreMigrator(models: try ModelDirectory(location: "broken", files: broken)).migrate(storeURL: url)
        } throws: { error in
            guard case .validation(let failures, let total)? = error as? MigrationError else { return false }
            return total == 4 && failures.first?.contains("title has 0 characters, at least 1 required") == true
        }
        #expect(try Data(contentsOf: url) == before)
        // A kill would leave temporary stores behind; they are cleaned up by the next run.
        try Data("half-written".utf8).write(to: URL(fileURLWithPath: url.path + ".migrating-1-deadbeef"))
        let result = try StoreMigrator(models: try ModelDirectory(location: "good", files: files)).migrate(storeURL: url)
        #expect(result != nil)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains(".migrating-") }
        #expect(leftovers.isEmpty)
        try Self.checkCurrent(url, from: "v2")
    }

    /// An older program opening a store written with a newer version of its model (or with
    /// a version it does not know) refuses it on every open path, names both versions, and
    /// leaves the file and its directory exactly as they were: no migration "down" that
    /// drops what the newer version added, no backup, no temporary store.
    @Test(arguments: ["store", "json"])
    func aStoreWrittenWithANewerModelIsRefusedNotMigratedDown(format: String) throws {
        let directory = try TemporaryDirectory()
        let v1 = #"{"entities": [{"name": "Note", "attributes": [{"name": "body", "type": "string"}]}]}"#
        let v2 = #"{"entities": [{"name": "Note", "attributes": [{"name": "body", "type": "string"}, {"name": "text", "type": "string"}]}, {"name": "Tag", "attributes": [{"name": "name", "type": "string"}]}]}"#
        let newer = try ModelDirectory(location: "new", files: ["manifest.json": #"{"versions": ["v1", "v2"], "current": "v2"}"#, "v1.json": v1, "v2.json": v2])
        let url = directory.file("notes.\(format)")
        let (written, _) = try StoreMigrator(models: newer).openStore(at: url)
        let context = ManagedObjectContext(coordinator: written)
        let note = try context.insertObject(entityName: "Note")
        try note.setValue("the text a v1 program would drop", forKey: "text")
        try context.insertObject(entityName: "Tag").setValue("kept", forKey: "name")
        try context.save()
        let before = try Data(contentsOf: url)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { !$0.hasSuffix(".lock") }.sorted()

        // The program knows v1 only; and a program that lists v2 but still ships v1 as current.
        let onlyV1 = try ModelDirectory(location: "old", files: ["manifest.json": #"{"versions": ["v1"], "current": "v1"}"#, "v1.json": v1])
        let unknown = StoreError.unknownModelVersion(path: url.path, storeVersion: "v2", knownVersions: ["v1"])
        let v2NotCurrent = try ModelDirectory(location: "old", files: ["manifest.json": #"{"versions": ["v1", "v2"], "current": "v1"}"#, "v1.json": v1, "v2.json": v2])
        let newerError = StoreError.newerModel(path: url.path, storeVersion: "v2", currentVersion: "v1")
        for (models, expected) in [(onlyV1, unknown), (v2NotCurrent, newerError)] {
            let migrator = StoreMigrator(models: models)
            #expect(throws: expected) { try migrator.openStore(at: url) }
            #expect(throws: expected) { try migrator.openStore(at: url, readOnly: true) }
            #expect(throws: expected) { try migrator.migrate(storeURL: url) }
            #expect(throws: expected) { try migrator.plan(storeURL: url) }
            #expect(throws: expected) { try migrator.dryRun(storeURL: url) }
            #expect(throws: expected) { try PersistentContainer(name: "Notes", models: models, storeURL: url) }
            #expect(throws: StoreError.self) { try PersistentStoreCoordinator(model: try models.currentModel(), storeURL: url) }
        }
        #expect(unknown.description.contains("model version v2") && unknown.description.contains("(v1)"), "\(unknown)")
        #expect(newerError.description.contains("v2, newer than this program's current version v1"), "\(newerError)")
        #expect(try Data(contentsOf: url) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { !$0.hasSuffix(".lock") }.sorted() == files)
        // The newer program still reads everything.
        let (again, _) = try StoreMigrator(models: newer).openStore(at: url)
        let reread = ManagedObjectContext(coordinator: again)
        #expect(try reread.fetch(FetchRequest(entityName: "Note")).first?["text"] == "the text a v1 program would drop")
        #expect(try reread.count(for: FetchRequest(entityName: "Tag")) == 1)
    }

    /// Tasks v10 adds only an index (on `recurrence`), which version hashes leave out: a store
    /// v9 wrote opens with v10 as it is (no step, still named v9, so a program that ships
    /// v1-v9 opens it after), its next compaction builds the index, and `recurrence != nil`
    /// is then answered from it (the rows with a period, no others).
    @Test func anIndexAddedInANewVersionIsBuiltAtTheNextCompaction() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let models = try Self.tasksDirectory()
        #expect(try models.model(version: "v9").entityVersionHashes == models.model(version: "v10").entityVersionHashes)
        do {
            let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: try models.model(version: "v9"), storeURL: url))
            for n in 0..<400 {
                let task = try context.insertObject(entityName: "Task")
                try task.setValue(.string("task \(n)"), forKey: "title")
                try task.setValue(.uuid(UUID()), forKey: "uuid")
                if n % 50 == 0 { try task.setValue(.string("weekly"), forKey: "recurrence") }
            }
            try context.save()
            try context.coordinator.compactStore()
        }
        #expect(try StoreMigrator(models: models).plan(storeURL: url).isNeeded == false)
        let (coordinator, migration) = try StoreMigrator(models: models).openStore(at: url)
        #expect(migration == nil)
        let task = try #require(coordinator.model.entity(named: "Task"))
        let recurring = try #require(SlotPredicate(try ObjectPredicate("recurrence != nil"), entity: task))
        func candidates() throws -> Int? {
            try coordinator.store.readRows { try $0.indexCandidates(ofEntity: "Task", predicate: recurring, limit: 100) }??.count
        }
        #expect(try candidates() == nil, "v9 built no index on recurrence")
        try coordinator.compactStore()
        #expect(try candidates() == 8)
        #expect(coordinator.store.metadata?.modelVersionName == "v9")
        let reader = ManagedObjectContext(coordinator: coordinator)
        let found = try reader.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("recurrence != nil")))
        #expect(Set(found.compactMap { $0["title"].stringValue }) == Set((0..<8).map { "task \($0 * 50)" }))
        // A program whose versions end at v9 still opens it.
        var files = try Self.tasksFiles()
        files["manifest.json"] = #"{"versions": ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9"], "current": "v9"}"#
        files["v10.json"] = nil
        let (older, olderMigration) = try StoreMigrator(models: try ModelDirectory(location: "v9", files: files)).openStore(at: url)
        #expect(olderMigration == nil)
        #expect(try ManagedObjectContext(coordinator: older).count(for: FetchRequest(entityName: "Task")) == 400)
        // Its integrity check names the index it does not define (and does not use), and its
        // compaction leaves the index out.
        let problems = try older.checkIntegrity().problems
        #expect(problems.count == 1 && problems.allSatisfy { $0.contains("index of Task the model does not define") }, "\(problems)")
        try older.compactStore()
        #expect(try older.checkIntegrity().problems.isEmpty)
        #expect(try candidates() == nil)
    }

    /// Tasks v5 changes only validation rules (longer texts), which version hashes leave out:
    /// a v4 store opens with v5 as it is and needs no step (`plan` says so); a store a v5
    /// program wrote is refused by a program whose versions end at v4, which cannot know v5's
    /// rules (it was opened, and written with v4's rules, before). (The models as a
    /// program that shipped v6 had them: v7 adds an entity, v8 an attribute and v9 derives three
    /// relationships from their inverses, which do need steps.)
    @Test func aVersionOfTheSameHashesNeedsNoMigration() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        try Self.writeStore(version: "v4", to: url)
        var shipped = try Self.tasksFiles()
        shipped["manifest.json"] = #"{"versions": ["v1", "v2", "v3", "v4", "v5", "v6"], "current": "v6"}"#
        shipped["v7.json"] = nil
        shipped["v8.json"] = nil
        shipped["v9.json"] = nil
        shipped["v10.json"] = nil
        let models = try ModelDirectory(location: "v6", files: shipped)
        #expect(models.currentVersionName == "v6")
        #expect(try models.model(version: "v4").entityVersionHashes == models.model(version: "v5").entityVersionHashes)
        #expect(try StoreMigrator(models: models).plan(storeURL: url).isNeeded == false)
        let before = try Data(contentsOf: url)
        let (_, migration) = try StoreMigrator(models: models).openStore(at: url)
        #expect(migration == nil)
        #expect(try Data(contentsOf: url) == before)
        // Written with v5, refused by a program that ships v1-v4, the file left as it was.
        let v5url = directory.file("v5.store")
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: try models.model(version: "v5"), storeURL: v5url))
        let task = try context.insertObject(entityName: "Task")
        try task.setValue(.string(String(repeating: "x", count: 600)), forKey: "title")
        try task.setValue(.uuid(UUID()), forKey: "uuid")
        try context.save()
        var files = try Self.tasksFiles()
        files["manifest.json"] = #"{"versions": ["v1", "v2", "v3", "v4"], "current": "v4"}"#
        files["v5.json"] = nil
        let older = try ModelDirectory(location: "older", files: files)
        let written = try Data(contentsOf: v5url)
        #expect(throws: StoreError.unknownModelVersionName(path: v5url.path, storeVersion: "v5", sameEntitiesAs: "v4", knownVersions: ["v1", "v2", "v3", "v4"])) {
            try StoreMigrator(models: older).openStore(at: v5url)
        }
        #expect(try Data(contentsOf: v5url) == written)
    }

    /// A store that names a version this program does not know (v11) but whose entities hash
    /// as v10's (v11 changed a validation rule, which hashes leave out) is refused on every
    /// open path, naming both, and left as it was. Before, it was opened and written to.
    @Test func aStoreNamingAnUnknownVersionWithKnownHashesIsRefused() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        var files = try Self.tasksFiles()
        let v10 = try #require(files["v10.json"])
        #expect(v10.contains(#""maxLength": 100000"#))
        files["v11.json"] = v10.replacingOccurrences(of: #""maxLength": 100000"#, with: #""maxLength": 200000"#)
        files["manifest.json"] = #"{"versions": ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11"], "current": "v11"}"#
        let newer = try ModelDirectory(location: "newer", files: files)
        #expect(try newer.model(version: "v11").entityVersionHashes == newer.model(version: "v10").entityVersionHashes)
        let (written, _) = try StoreMigrator(models: newer).openStore(at: url)
        let context = ManagedObjectContext(coordinator: written)
        let task = try context.insertObject(entityName: "Task")
        try task.setValue(.string(String(repeating: "x", count: 150_000)), forKey: "title")
        try task.setValue(.uuid(UUID()), forKey: "uuid")
        try context.save()
        #expect(written.store.metadata?.modelVersionName == "v11")
        let before = try Data(contentsOf: url)

        let current = try ModelDirectory(url: Self.repository.appendingPathComponent("Models/Tasks"))
        let migrator = StoreMigrator(models: current)
        let expected = StoreError.unknownModelVersionName(path: url.path, storeVersion: "v11", sameEntitiesAs: "v10", knownVersions: current.versionNames)
        #expect(throws: expected) { try migrator.openStore(at: url) }
        #expect(throws: expected) { try migrator.openStore(at: url, readOnly: true) }
        #expect(throws: expected) { try migrator.migrate(storeURL: url) }
        #expect(throws: expected) { try migrator.plan(storeURL: url) }
        #expect(expected.description.contains("model version v11, which this program does not know") && expected.description.contains("its entities are v10's"), "\(expected)")
        #expect(try Data(contentsOf: url) == before)
    }

    /// A custom mapping that splits `email` out of Employee into a new Contact entity, one
    /// Contact per Employee (no distinctBy), and links them with a lookup from the Employee's
    /// mapping: every Employee gets its Contact, and every Contact its Employee (the inverse),
    /// whichever order the file lists the two mappings in. Before, every `Employee.contact`
    /// was nil, without an error. Relationships copied to Employee still reach Employees, not
    /// the Contacts made from the same objects.
    @Test(arguments: [false, true], ["store", "json"])
    func aLookupFindsTheObjectMadeFromTheSameSourceObject(contactFirst: Bool, format: String) throws {
        let directory = try TemporaryDirectory()
        let v1 = #"""
        {"entities": [
          {"name": "Department", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "employees", "destination": "Employee", "inverse": "department", "toMany": true}]},
          {"name": "Employee", "attributes": [{"name": "name", "type": "string"}, {"name": "email", "type": "string"}],
           "relationships": [{"name": "department", "destination": "Department", "inverse": "employees"}]}]}
        """#
        let v2 = #"""
        {"entities": [
          {"name": "Department", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "employees", "destination": "Employee", "inverse": "department", "toMany": true}]},
          {"name": "Employee", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "department", "destination": "Department", "inverse": "employees"},
                             {"name": "contact", "destination": "Contact", "inverse": "employee"}]},
          {"name": "Contact", "attributes": [{"name": "email", "type": "string"}],
           "relationships": [{"name": "employee", "destination": "Employee", "inverse": "contact"}]}]}
        """#
        let contact = #"{ "destination": "Contact", "source": "Employee", "attributes": { "email": "$source.email" } }"#
        let employee = #"{ "destination": "Employee", "source": "Employee", "relationships": { "contact": { "lookup": "Contact", "key": "email", "value": "$source.email" } } }"#
        let departmentMapping = #"{ "destination": "Department", "source": "Department" }"#
        let mapping = "{ \"entities\": [" + (contactFirst ? [contact, employee, departmentMapping] : [departmentMapping, employee, contact]).joined(separator: ", ") + "] }"
        let files = ["manifest.json": #"{"versions": ["v1", "v2"], "current": "v2"}"#, "v1.json": v1, "v2.json": v2, "v1-to-v2.mapping.json": mapping]
        let models = try ModelDirectory(location: "org", files: files)
        let url = directory.file("org.\(format)")
        let old = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: try models.model(version: "v1"), storeURL: url))
        let finance = try old.insertObject(entityName: "Department")
        try finance.setValue("Finance", forKey: "name")
        for (name, email) in [("Ada", "ada@example.com"), ("Grace", "grace@example.com"), ("Edsger", "edsger@example.com")] {
            let person = try old.insertObject(entityName: "Employee")
            try person.setValue(.string(name), forKey: "name")
            try person.setValue(.string(email), forKey: "email")
            try person.setObject(finance, forKey: "department")
        }
        try old.save()

        try StoreMigrator(models: models).migrate(storeURL: url)
        let (coordinator, _) = try StoreMigrator(models: models).openStore(at: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        let people = try context.fetch(FetchRequest(entityName: "Employee", sortDescriptors: [SortKey("name")]))
        #expect(people.count == 3)
        for person in people {
            let email = try person.object(forKey: "contact")?["email"]
            #expect(email == .string("\(person["name"].stringValue?.lowercased() ?? "?")@example.com"), "\(person["name"])")
            #expect(try person.object(forKey: "contact")?.object(forKey: "employee")?.objectID == person.objectID)
            #expect(try person.object(forKey: "department")?["name"] == "Finance")
        }
        let department = try #require(try context.fetch(FetchRequest(entityName: "Department")).first)
        #expect(try department.objects(forKey: "employees").allSatisfy { $0.entity.name == "Employee" })
        #expect(try context.count(for: FetchRequest(entityName: "Contact")) == 3)
        #expect(try coordinator.checkIntegrity().problems.isEmpty)
    }

    static func tasksFiles() throws -> [String: String] {
        let url = repository.appendingPathComponent("Models/Tasks")
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: url.path) where name.hasSuffix(".json") {
            files[name] = try String(contentsOf: url.appendingPathComponent(name), encoding: .utf8)
        }
        return files
    }

    /// Opening an older store read-only says it needs a migration, naming the versions.
    @Test func anOlderStoreOpenedReadOnlySaysItNeedsAMigration() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        try Self.writeStore(version: "v2", to: url)
        #expect {
            try StoreMigrator(models: try Self.tasksDirectory()).openStore(at: url, readOnly: true)
        } throws: { error in
            "\(error)".contains("written with model version v2") && "\(error)".contains("cannot migrate it to the current v10")
        }
    }

    /// A name the backup would take that is a symbolic link, even a dangling one, is taken:
    /// the backup goes to the next name (the link failed with "File exists" before).
    @Test func aDanglingLinkAtTheBackupNameIsStepped() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        try Self.writeStore(version: "v2", to: url)
        try FileManager.default.createSymbolicLink(atPath: url.path + ".v2-backup", withDestinationPath: directory.file("gone").path)
        let result = try StoreMigrator(models: try Self.tasksDirectory()).migrate(storeURL: url)
        #expect(result?.backupURL.lastPathComponent == "tasks.store.v2-backup-2")
        try Self.checkCurrent(url, from: "v2")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: url.path + ".v2-backup") == directory.file("gone").path)
    }

    @Test func theSourceModelComesFromTheStoreWhenTheDirectoryNoLongerHasIt() throws {
        let directory = try TemporaryDirectory()
        let old = #"{"entities": [{"name": "Note", "attributes": [{"name": "body", "type": "string"}, {"name": "stars", "type": "int16"}]}]}"#
        let new = #"{"entities": [{"name": "Note", "attributes": [{"name": "text", "type": "string", "renamingIdentifier": "body"}, {"name": "stars", "type": "int64"}, {"name": "pinned", "type": "boolean", "optional": false, "default": false}]}]}"#
        let url = directory.file("notes.store")
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: try ManagedObjectModel(schema: old, versionName: "a"), storeURL: url))
        let note = try context.insertObject(entityName: "Note")
        try note.setValue("hello", forKey: "body")
        try note.setValue(4, forKey: "stars")
        try context.save()
        // The directory only knows the new version.
        let models = try ModelDirectory(location: "notes", files: ["manifest.json": #"{"versions": ["b"], "current": "b"}"#, "b.json": new])
        // Refused unless the caller says the store is older than the directory's versions.
        #expect(throws: StoreError.unknownModelVersion(path: url.path, storeVersion: "a", knownVersions: ["b"])) {
            try StoreMigrator(models: models).openStore(at: url)
        }
        var migrator = StoreMigrator(models: models)
        migrator.migratesFromStoredModel = true
        let (coordinator, result) = try migrator.openStore(at: url)
        #expect(result?.plan.steps.first?.source == "the model stored in the file")
        let migrated = try ManagedObjectContext(coordinator: coordinator).existingObject(with: note.objectID)
        #expect(migrated["text"] == "hello" && migrated["stars"] == 4 && migrated["pinned"] == false)
    }

    /// A version that adds a uniqueness constraint (case-insensitive, on the parent, so a
    /// sub-entity's objects count too) fails to migrate a store holding duplicates, even
    /// when they sit in different batches, names them, and leaves the store as it was; once
    /// the duplicates are gone it migrates.
    @Test(arguments: ["store", "json"])
    func aNewUniquenessConstraintIsCheckedAcrossTheWholeStep(format: String) throws {
        let directory = try TemporaryDirectory()
        let old = #"{"entities": [{"name": "Tag", "attributes": [{"name": "label", "type": "string"}]}, {"name": "Topic", "parent": "Tag", "attributes": [{"name": "depth", "type": "int16"}]}]}"#
        let new = old.replacingOccurrences(of: #"[{"name": "label", "type": "string"}]}"#,
                                           with: #"[{"name": "label", "type": "string", "collation": "caseInsensitive"}], "uniquenessConstraints": [["label"]]}"#)
        #expect(new != old)
        let url = directory.file("tags.\(format)")
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: try ManagedObjectModel(schema: old, versionName: "a"), storeURL: url))
        var tags: [ManagedObject] = []
        for i in 0..<9 {
            let tag = try context.insertObject(entityName: i == 7 ? "Topic" : "Tag")
            try tag.setValue(.string(i == 7 ? "Label 1" : "label \(i)"), forKey: "label")
            tags.append(tag)
        }
        try context.save()
        let before = try Data(contentsOf: url)
        let models = try ModelDirectory(location: "tags", files: ["manifest.json": #"{"versions": ["a", "b"], "current": "b"}"#, "a.json": old, "b.json": new])
        var migrator = StoreMigrator(models: models)
        migrator.batchSize = 2
        #expect {
            try migrator.migrate(storeURL: url)
        } throws: { error in
            guard case .validation(let failures, let total)? = error as? MigrationError else { return false }
            return total == 1 && failures.first?.hasPrefix(#"Topic 1.label: another Tag already has label = "Label 1" ("#) == true
        }
        #expect(try Data(contentsOf: url) == before)

        context.delete(tags[7])
        try context.save()
        #expect(try migrator.migrate(storeURL: url) != nil)
        let migrated = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: try models.currentModel(), storeURL: url))
        #expect(try migrated.count(for: FetchRequest(entityName: "Tag")) == 8)
        // The store keeps the constraint from now on.
        let duplicate = try migrated.insertObject(entityName: "Topic")
        try duplicate.setValue("LABEL 3", forKey: "label")
        #expect(throws: ValidationError.self) { try migrated.save() }
    }

    @Test func storesConvertBetweenBinaryAndJSON() throws {
        let directory = try TemporaryDirectory()
        let binary = directory.file("tasks.store")
        try Self.writeStore(version: "v1", to: binary)
        let json = directory.file("tasks.json")
        let migrator = StoreMigrator(models: try Self.tasksDirectory())
        try migrator.migrate(storeURL: binary, destinationURL: json)
        try Self.checkCurrent(json, from: "v1")
        // And back, now without a version change.
        let again = directory.file("again.store")
        #expect(try migrator.migrate(storeURL: json, destinationURL: again) != nil)
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: try Self.tasksDirectory().currentModel(), storeURL: again))
        #expect(try context.count(for: FetchRequest(entityName: "Task")) == 5)
    }
}

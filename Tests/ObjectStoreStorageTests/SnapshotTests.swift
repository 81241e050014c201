import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

/// The binary store's format 2: a snapshot (row directories, uniqueness indexes) followed by
/// the log of the saves since.
@Suite struct SnapshotTests {
    static let model: ManagedObjectModel = {
        let schema = #"""
        {
          "entities": [
            { "name": "Person",
              "attributes": [
                { "name": "email", "type": "string", "collation": "caseInsensitive" },
                { "name": "name", "type": "string" }
              ],
              "uniquenessConstraints": [["email"]]
            },
            { "name": "Employee", "parent": "Person",
              "attributes": [{ "name": "badge", "type": "integer 64" }],
              "uniquenessConstraints": [["badge"]]
            },
            { "name": "Note", "attributes": [{ "name": "body", "type": "string" }] }
          ]
        }
        """#
        do {
            return try ManagedObjectModel(schema: schema.replacingOccurrences(of: "integer 64", with: "int64"), file: "people")
        } catch {
            preconditionFailure("the test model does not load: \(error)")
        }
    }()

    private func open(_ url: URL, threshold: Int? = nil) throws -> (ManagedObjectContext, BinaryStore) {
        let store = try BinaryStore(url: url, model: Self.model)
        if let threshold { store.compactionThreshold = threshold }
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(model: Self.model, store: store))
        context.undoManager = nil
        return (context, store)
    }

    @discardableResult
    private func person(_ context: ManagedObjectContext, _ email: String, entity: String = "Person", badge: Int64? = nil) throws -> ManagedObject {
        let object = try context.insertObject(entityName: entity)
        try object.setValue(.string(email), forKey: "email")
        if let badge { try object.setValue(.integer(badge), forKey: "badge") }
        return object
    }

    private func refusesAsDuplicate(_ context: ManagedObjectContext, _ body: () throws -> Void) throws -> Bool {
        try body()
        do {
            try context.save()
            return false
        } catch let error as ValidationError {
            context.rollback()
            return error.failures.contains { $0.rule == .unique }
        }
    }

    /// An edit of a sub-entity's object is checked against the constraint it inherits: an
    /// employee's email moved onto another person's is refused, its name alone is saved.
    @Test func anEditIsCheckedAgainstTheConstraintASubEntityInherits() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("people.store")
        let (setup, _) = try open(url)
        try person(setup, "taken@example.com")
        let employee = try person(setup, "employee@example.com", entity: "Employee", badge: 1)
        try setup.save()
        let (context, _) = try open(url)
        let edited = try context.existingObject(with: employee.objectID)
        #expect(try refusesAsDuplicate(context) { try edited.setValue("Taken@Example.com", forKey: "email") })
        try edited.setValue("Ann", forKey: "name")
        try context.save()
        let reread = try open(url).0.existingObject(with: employee.objectID)
        #expect(reread["email"] == "employee@example.com" && reread["name"] == "Ann")
    }

    /// Through the index's entries (24 bits of each hash); the people of the sub-entity make
    /// the entries hold entity indexes.
    @Test func uniquenessHoldsThroughTheSnapshotIndexAndTheLog() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("people.store")
        let (setup, store) = try open(url, threshold: Int.max)
        for i in 0..<300 { try person(setup, "person\(i)@example.com") }
        try person(setup, "boss@example.com", entity: "Employee", badge: 7)
        try setup.save()
        try store.compact()
        #expect(try Data(contentsOf: url)[8] == UInt8(BinaryStore.formatVersion))

        // Another opener, as another process would: values in the snapshot are taken,
        // case folded, across the entity and its sub-entity.
        let (context, _) = try open(url, threshold: Int.max)
        #expect(try refusesAsDuplicate(context) { try person(context, "PERSON42@example.com") })
        #expect(try refusesAsDuplicate(context) { try person(context, "person7@example.com", entity: "Employee", badge: 1) })
        #expect(try refusesAsDuplicate(context) { try person(context, "Boss@Example.com") })
        #expect(try refusesAsDuplicate(context) { try person(context, "new@example.com", entity: "Employee", badge: 7) })

        // A value changed or deleted in the log is free again; the new one is taken.
        let people = try context.fetch(FetchRequest(entityName: "Person", predicate: try ObjectPredicate("email IN {'person1@example.com', 'person2@example.com'}")))
        #expect(people.count == 2)
        let first = try #require(people.first { $0["email"] == "person1@example.com" })
        let second = try #require(people.first { $0["email"] == "person2@example.com" })
        try first.setValue("renamed@example.com", forKey: "email")
        context.delete(second)
        try context.save()
        #expect(try refusesAsDuplicate(context) { try person(context, "Renamed@example.com") })
        try person(context, "person1@example.com")
        try person(context, "person2@example.com")
        try context.save()
        #expect(try refusesAsDuplicate(context) { try person(context, "PERSON1@example.com") })

        // After another compaction the index is rebuilt from the rows as they are now.
        try store.compact()
        let (reopened, reopenedStore) = try open(url)
        #expect(try refusesAsDuplicate(reopened) { try person(reopened, "renamed@example.com") })
        #expect(try refusesAsDuplicate(reopened) { try person(reopened, "person2@EXAMPLE.com") })
        try person(reopened, "person300@example.com")
        try reopened.save()
        #expect(try reopened.count(for: FetchRequest(entityName: "Person")) == 303)
        #expect(try reopenedStore.storageProblems().isEmpty)
        #expect(try reopened.coordinator.checkIntegrity().problems.isEmpty)
    }

    /// `==` finds canonically equivalent strings equal ("caf\u{E9}" and "cafe\u{301}"), so a
    /// uniqueness constraint does too: in the log, and through the snapshot's index (which
    /// hashes strings decomposed), case folded or not, in either layout.
    @Test func canonicallyEquivalentStringsAreOneValueUnderAConstraint() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("people.store")
        let (setup, store) = try open(url, threshold: Int.max)
        try person(setup, "caf\u{E9}@example.com")            // precomposed é
        try person(setup, "na\u{EF}ve@example.com", entity: "Employee", badge: 1)
        try setup.save()
        for compacted in [false, true] {
            if compacted { try store.compact() }
            let (context, _) = try open(url, threshold: Int.max)
            #expect(try refusesAsDuplicate(context) { try person(context, "cafe\u{301}@example.com") }, "compacted: \(compacted)")
            #expect(try refusesAsDuplicate(context) { try person(context, "CAFE\u{301}@EXAMPLE.COM") }, "compacted: \(compacted)")
            #expect(try refusesAsDuplicate(context) { try person(context, "NAI\u{308}VE@example.com") }, "compacted: \(compacted)")
            try person(context, "cafe\(compacted ? 2 : 1)@example.com")
            try context.save()
        }
        #expect(try store.storageProblems().isEmpty)
    }

    /// The store's own check (what it runs under its lock, whatever the context checked):
    /// rows of one save clash across an entity and its sub-entity, case folded, and a
    /// sub-entity's own constraint holds among its rows.
    @Test func theStoresCheckComparesTheRowsOfOneSaveAcrossSubentities() throws {
        let directory = try TemporaryDirectory()
        let (_, store) = try open(directory.file("people.store"))
        var inserted: UInt64 = 0
        func row(_ entityName: String, _ values: [String: Value]) throws -> StoredRow {
            inserted += 1
            let entity = try #require(Self.model.entity(named: entityName))
            var slots = entity.properties.map { $0.relationship == nil ? SlotValue.value(.null) : $0.relationship?.isToMany == true ? .toMany([]) : .toOne(nil) }
            for (name, value) in values { slots[try #require(entity.slot(of: name))] = .value(value) }
            return StoredRow(objectID: ObjectID(entityName: entityName, storeIdentifier: store.identifier, key: .temporary(inserted)), version: 1, slots: slots)
        }
        func refused(_ rows: [StoredRow]) throws -> [String] {
            var changes = StoreChanges()
            changes.inserted = rows
            do {
                _ = try store.save(changes)
                return []
            } catch let error as ValidationError {
                return error.failures.map { $0.key ?? "" }
            }
        }
        #expect(try refused([row("Person", ["email": .string("a@example.com")]), row("Employee", ["email": .string("A@Example.com"), "badge": .integer(1)])]) == ["email"])
        #expect(try refused([row("Employee", ["email": .string("b@example.com"), "badge": .integer(2)]), row("Employee", ["email": .string("c@example.com"), "badge": .integer(2)])]) == ["badge"])
        #expect(try refused([row("Person", ["email": .string("d@example.com")]), row("Employee", ["email": .string("e@example.com"), "badge": .integer(3)])]).isEmpty)
        #expect(try refused([row("Employee", ["email": .string("D@EXAMPLE.COM"), "badge": .integer(4)])]) == ["email"], "a saved value is taken")

        // The context's own check, before the store's: unsaved objects of both entities.
        let (context, _) = try open(directory.file("people.store"))
        try person(context, "f@example.com")
        try person(context, "F@Example.com", entity: "Employee", badge: 5)
        try person(context, "g@example.com", entity: "Employee", badge: 5)
        do {
            try context.save()
            Issue.record("saved two equal emails and two equal badges")
        } catch let error as ValidationError {
            #expect(error.failures.map { $0.key ?? "" }.sorted() == ["badge", "email"], "\(error)")
        }
    }

    @Test func aLargeSaveChecksUniquenessByReadingTheStoreOnce() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("people.store")
        let (context, store) = try open(url, threshold: Int.max)
        for i in 0..<100 { try person(context, "p\(i)@example.com") }
        try context.save()
        try store.compact()
        // More than 1,000 rows at once take the scanning path; a clash is still found.
        for i in 100..<1_200 { try person(context, "p\(i)@example.com") }
        try person(context, "P5@example.com")
        #expect(throws: ValidationError.self) { try context.save() }
    }

    @Test func aStoreGetsItsSnapshotAtItsFirstCompaction() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("people.store")
        let (context, _) = try open(url, threshold: Int.max)
        for i in 0..<20 { try person(context, "p\(i)@example.com").setValue(.string("P \(i)"), forKey: "name") }
        try context.save()
        #expect(try Data(contentsOf: url)[8] == UInt8(BinaryStore.formatVersion))
        #expect(try StoreHeader.snapshotLength(url) == 0)

        let (reader, store) = try open(url)
        #expect(try reader.count(for: FetchRequest(entityName: "Person")) == 20)
        try store.compact()
        #expect(try Data(contentsOf: url)[8] == UInt8(BinaryStore.formatVersion))
        #expect(try StoreHeader.snapshotLength(url) > 0)
        let (after, _) = try open(url)
        let names = try after.fetch(FetchRequest(entityName: "Person", sortDescriptors: [SortKey("name")])).map { $0["name"] }
        #expect(names.count == 20 && names.first == "P 0")
    }

    /// A committed format-1 fixture (a log without snapshot) is upgraded into store format
    /// 1.0 with a snapshot, and reads the same before (the legacy reader) and after.
    @Test func theCommittedFormatOneFixturesUpgradeWithASnapshot() throws {
        let directory = try TemporaryDirectory()
        let copy = directory.file("v3.store")
        try FileManager.default.copyItem(at: TasksFixtures.fixtures.appendingPathComponent("v3.store"), to: copy)
        #expect(try Data(contentsOf: copy)[8] == 1)
        let before = try FormatUpgradeTests.tasks(copy, legacy: true)
        #expect(!before.isEmpty)
        let v3 = try TasksFixtures.tasksDirectory().model(version: "v3")
        let upgrade = try BinaryStore.upgradeLegacyFile(at: copy, model: v3) { directory.file("v3.store.format\($0)-backup") }
        #expect(upgrade?.version == 1)
        #expect(try Data(contentsOf: copy)[8] == UInt8(BinaryStore.formatVersion))
        #expect(try StoreHeader.snapshotLength(copy) > 0)
        #expect(try FormatUpgradeTests.tasks(copy, legacy: false) == before)
        let problems = try PersistentStoreCoordinator(model: v3, storeURL: copy).checkIntegrity().problems
        #expect(problems.isEmpty, "\(problems)")
        #expect(try BinaryStore.upgradeLegacyFile(at: copy) { directory.file("again-\($0)") } == nil, "upgraded once")
    }

    /// Opens the store, reads every value of every object and checks its integrity; returns
    /// whether anything was reported.
    private func damageIsReported(_ url: URL) -> Bool {
        do {
            let (context, _) = try open(url)
            for entity in ["Person", "Note"] {
                for object in try context.fetch(FetchRequest(entityName: entity)) {
                    for property in object.entity.properties where property.attribute != nil { _ = try object.value(forKey: property.name) }
                }
            }
            return try !context.coordinator.checkIntegrity().problems.isEmpty
        } catch is StoreError {
            return true
        } catch {
            return false
        }
    }

    @Test func everyFlippedByteOfACompactedStoreIsReportedAndTheFileLeftAlone() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("people.store")
        let (context, store) = try open(url, threshold: Int.max)
        for i in 0..<4 { try person(context, "p\(i)@example.com").setValue(.string("P\(i)"), forKey: "name") }
        try person(context, "e@example.com", entity: "Employee", badge: 3)
        let note = try context.insertObject(entityName: "Note")
        try note.setValue("hello", forKey: "body")
        try context.save()
        try store.compact()
        #expect(try Data(contentsOf: url)[8] == UInt8(BinaryStore.formatVersion))
        // And a commit in the log over the snapshot.
        try note.setValue("hello again", forKey: "body")
        try context.save()
        let original = Array(try Data(contentsOf: url))
        #expect(try StoreHeader.snapshotLength(url) > 0)
        #expect(!damageIsReported(url))
        var unnoticed: [Int] = []
        for offset in 0..<original.count {
            var damaged = original
            damaged[offset] ^= 0x5A
            try Data(damaged).write(to: url)
            if !damageIsReported(url) { unnoticed.append(offset) }
            #expect(Array(try Data(contentsOf: url)) == damaged, "the file must be left untouched")
        }
        #expect(unnoticed.isEmpty, "flips at \(unnoticed.prefix(20)) of \(original.count) bytes went unnoticed")
    }

    /// CRC-32 (IEEE), to forge checksums the store accepts.
    private static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }

    @Test func forgedSnapshotTablesWithValidChecksumsAreRefusedNeverTrapped() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("people.store")
        let (context, store) = try open(url, threshold: Int.max)
        for i in 0..<3 { try person(context, "p\(i)@example.com") }
        try context.save()
        try store.compact()
        let original = Array(try Data(contentsOf: url))
        func u64(_ bytes: [UInt8], _ at: Int) -> Int { (0..<8).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        let snapshot = u64(original, 32)
        let entities = Int(original[snapshot + 4]) | Int(original[snapshot + 5]) << 8
        let indexes = Int(original[snapshot + 8]) | Int(original[snapshot + 9]) << 8
        let tableEnd = snapshot + 16 + entities * 40 + indexes * 32
        // Each offset and count of every entity's part and of every index, set to values that
        // would overflow offset arithmetic, with the table's checksum made to match.
        var fields: [Int] = []
        for entity in 0..<entities {
            for offset in [0, 8, 16, 24] { fields.append(snapshot + 16 + entity * 40 + offset) }
        }
        for index in 0..<indexes {
            for offset in [8, 16] { fields.append(snapshot + 16 + entities * 40 + index * 32 + offset) }
        }
        for field in fields {
            for value in [UInt64(Int64.max - 5), UInt64.max, UInt64(Int64.max / 2)] {
                var forged = original
                for i in 0..<8 { forged[field + i] = UInt8(truncatingIfNeeded: value >> UInt64(8 * i)) }
                let crc = Self.crc32(forged[(snapshot + 16)..<tableEnd])
                for i in 0..<4 { forged[snapshot + 12 + i] = UInt8(truncatingIfNeeded: crc >> UInt32(8 * i)) }
                try Data(forged).write(to: url)
                #expect(damageIsReported(url), "field at \(field - snapshot) = \(value)")
            }
        }
    }

    /// Faults fired one by one read rows singly from the file until the store reads the
    /// entity whole (past 256 of them); either way each object gets its saved values, the
    /// log's newer rows win over the snapshot's, and deleted rows stay gone.
    @Test func faultsFiredOneByOneReadTheSameRowsBeforeAndAfterTheEntityIsReadWhole() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("people.store")
        let (setup, store) = try open(url, threshold: Int.max)
        var ids: [ObjectID] = []
        for i in 0..<700 {
            let object = try person(setup, "p\(i)@example.com")
            try object.setValue(.string("name \(i)"), forKey: "name")
            ids.append(object.objectID)
        }
        try setup.save()
        ids = try setup.fetch(FetchRequest(entityName: "Person", sortDescriptors: [SortKey("email")])).map(\.objectID)
        try store.compact()
        // In the log, over the snapshot: renames and deletions spread over the keys.
        let (writer, _) = try open(url, threshold: Int.max)
        var expected: [ObjectID: String?] = [:]
        for id in ids {
            let object = try writer.existingObject(with: id)
            let email = object["email"].stringValue ?? ""
            let number = Int(email.dropFirst().prefix { $0 != "@" }) ?? -1
            if number % 50 == 7 {
                writer.delete(object)
                expected[id] = .some(nil)
            } else if number % 30 == 3 {
                try object.setValue(.string("renamed \(number)"), forKey: "name")
                expected[id] = "renamed \(number)"
            } else {
                expected[id] = "name \(number)"
            }
        }
        try writer.save()
        // A new opening reads only what it is asked for: every object faulted singly, in an
        // order that is not the keys'.
        let (reader, _) = try open(url, threshold: Int.max)
        var seen = 0
        for id in ids.reversed() {
            guard let wanted = expected[id] else { continue }
            if let name = wanted {
                #expect(try reader.existingObject(with: id)["name"].stringValue == name, "\(id)")
                seen += 1
            } else {
                #expect(throws: (any Error).self, "\(id) was deleted") { try reader.existingObject(with: id) }
            }
        }
        #expect(seen > 600)

        // Another opening, through a symbolic link, renames and deletes a row the reader has
        // read whole, then compacts (the file is replaced): after its next count (which,
        // as a fetch or save would, reads what others saved) the reader reads the new file.
        let link = directory.file("link.store")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        let (other, otherStore) = try open(link, threshold: Int.max)
        let renamed = try #require(ids.first { expected[$0]??.hasPrefix("name") == true })
        let removed = try #require(ids.last { expected[$0]??.hasPrefix("name") == true && $0 != renamed })
        try other.existingObject(with: renamed).setValue("renamed elsewhere", forKey: "name")
        other.delete(try other.existingObject(with: removed))
        try other.save()
        try otherStore.compact()
        let fresh = ManagedObjectContext(coordinator: reader.coordinator)
        #expect(try fresh.count(for: FetchRequest(entityName: "Person")) == seen - 1)
        #expect(try fresh.existingObject(with: renamed)["name"] == "renamed elsewhere")
        #expect(throws: (any Error).self) { try fresh.existingObject(with: removed) }
        for id in ids.prefix(300) where id != renamed && id != removed {
            if let name = expected[id] ?? nil { #expect(try fresh.existingObject(with: id)["name"].stringValue == name, "\(id)") }
        }
    }

    @Test func askingForAnEntityTheStoreDoesNotHaveIsAnInvalidRequestNotAnIOError() throws {
        let directory = try TemporaryDirectory()
        let (_, store) = try open(directory.file("people.store"))
        #expect(throws: StoreError.invalidRequest(path: directory.file("people.store").path, reason: "entity Nope is not in this store")) {
            try store.allocateKeys(count: 1, entityName: "Nope")
        }
    }

    /// A bulk load's save inside `deferringHousekeeping` leaves its log alone until the body
    /// has let go of its objects; then the store compacts once, and reads as before. A body
    /// that throws after saving still has its save compacted, and its error comes out.
    @Test func deferredHousekeepingCompactsOnceAfterTheBody() throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("bulk.store")
        let (context, store) = try open(url, threshold: 2_000)
        let coordinator = context.coordinator
        try coordinator.deferringHousekeeping {
            for i in 0..<300 { try person(context, "p\(i)@example.com") }
            try context.save()
            #expect(store.sizes.log > 2_000, "not compacted inside the body")
            context.reset()
        }
        #expect(store.sizes.log == 0, "compacted after the body")
        #expect(coordinator.housekeepingWarning == nil)
        let (reader, _) = try open(url)
        #expect(try reader.count(for: FetchRequest(entityName: "Person")) == 300)

        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try coordinator.deferringHousekeeping {
                for i in 300..<600 { try person(context, "p\(i)@example.com") }
                try context.save()
                #expect(store.sizes.log > 2_000)
                throw Stop()
            }
        }
        #expect(store.sizes.log == 0, "compacted although the body threw")

        // Without the hold, the same save compacts as it commits.
        for i in 600..<900 { try person(context, "p\(i)@example.com") }
        try context.save()
        #expect(store.sizes.log == 0)
        #expect(try reader.count(for: FetchRequest(entityName: "Person")) == 900)
    }
}

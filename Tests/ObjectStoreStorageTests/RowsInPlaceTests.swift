import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

/// Objects loaded from the binary store read their values from the store's encoded row
/// until the first write (docs/ARCHITECTURE.md, "Objects read from the store's rows"): they
/// must read exactly what decoding gives, change and revert as decoded objects do, and keep
/// their loaded values while other openings rewrite or replace the file.
@Suite struct RowsInPlaceTests {
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 11
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    static let codec = RowCodec(entityNames: ["Task", "Location", "Tag"], storeIdentifier: "S")

    static func randomSlot(_ g: inout Generator) -> SlotValue {
        func id() -> ObjectID { codec.objectID(entity: g.below(3), key: Int64(g.below(1000)) + 1) }
        switch g.below(16) {
        case 0: return .value(.null)
        case 1: return .value(.bool(g.below(2) == 0))
        case 2: return .value(.integer(Int64(bitPattern: g.next() << 11) >> Int64(g.below(64))))
        case 3: return .value(.double([0.0, -0.0, 1.5, -1e300, .infinity, .nan][g.below(6)]))
        case 4: return .value(.decimal(Decimal(string: ["0", "-12.5", "3.14159", "1e20"][g.below(4)]) ?? 0))
        case 5: return .value(.string(["", "home", "Straße", "a longer text of more than fifteen bytes", "日本"][g.below(5)]))
        case 6: return .value(.date(Date(timeIntervalSinceReferenceDate: Double(g.below(1_000_000_000)) - 5e8)))
        case 7: return .value(.data(Data((0..<g.below(40)).map { _ in UInt8(g.below(256)) })))
        case 8: return .value(.uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, UInt8(g.below(256))))))
        case 9: return .value(.uri(URL(string: "https://example.com/\(g.below(100))") ?? URL(fileURLWithPath: "/")))
        case 10: return .toOne(nil)
        case 11: return .toOne(id())
        case 12: return .toMany((0..<g.below(5)).map { _ in id() })
        case 13:
            // Objects of one entity in ascending key order (format 5 writes their distances).
            let entity = g.below(3)
            var key = Int64(g.below(1000)) + 1
            return .toMany((0..<(2 + g.below(5))).map { _ in
                defer { key += 1 + Int64(g.below(2) == 0 ? g.below(30) : g.below(1 << 20)) }
                return codec.objectID(entity: entity, key: key)
            })
        default: return .value(.integer(Int64(g.below(100))))
        }
    }

    /// What decoding the whole row gives, or nil when it throws.
    static func decoded(_ bytes: [UInt8], shape: RowCodec.Shape, codec: RowCodec = codec) -> [SlotValue]? {
        var reader = ByteReader(bytes)
        return try? codec.decode(from: &reader, shape: shape)
    }

    /// Whether two slot values are the same (NaN equal to NaN, strings byte for byte).
    static func same(_ a: SlotValue, _ b: SlotValue) -> Bool {
        if case .value(.double(let x)) = a, case .value(.double(let y)) = b, x.isNaN, y.isNaN { return true }
        if case .value(.string(let x)) = a, case .value(.string(let y)) = b { return x.utf8.elementsEqual(y.utf8) }
        return a == b
    }

    /// The kind a typed row writes a value as, and its slot's blank (for a value that is a
    /// blank, a kind at random): `destination` for a reference, at random its own entity's
    /// or another (a sub-entity's object, whose index the row writes).
    static func kindAndBlank(of slot: SlotValue, _ g: inout Generator) -> (RowCodec.SlotKind, SlotValue) {
        let attributeKinds: [RowCodec.SlotKind] = [.bool, .integer, .double, .decimal, .string, .date, .data, .uuid, .uri]
        switch slot {
        case .value(.null): return (attributeKinds[g.below(attributeKinds.count)], slot)
        case .value(.bool): return (.bool, .value(.null))
        case .value(.integer): return (.integer, .value(.null))
        case .value(.double): return (.double, .value(.null))
        case .value(.decimal): return (.decimal, .value(.null))
        case .value(.string): return (.string, .value(.null))
        case .value(.date): return (.date, .value(.null))
        case .value(.data): return (.data, .value(.null))
        case .value(.uuid): return (.uuid, .value(.null))
        case .value(.uri): return (.uri, .value(.null))
        case .toOne(let id):
            let own = id.flatMap { codec.entityIndex(of: $0) } ?? g.below(3)
            return (.toOne(g.below(2) == 0 ? own : (own + 1) % 3), .toOne(nil))
        case .toMany: return (.tagged, [.value(.null), .toOne(nil), .toMany([])][g.below(3)])
        }
    }

    /// The typed rows' codec: a dictionary with a composed "café", so the decomposed one
    /// (equal to it for Swift's ==) must be written as its own bytes, and a date origin.
    static let typedCodec = codec.with(strings: ["home", "caf\u{E9}", "日本", "Straße"], dateOrigin: 300_000_000)
    /// Another dictionary, as a compaction may choose: typed rows written again for it (in
    /// place, without making values) must read back the same.
    static let otherCodec = codec.with(strings: ["日本", "cafe\u{301}", "a longer text of more than fifteen bytes"], dateOrigin: -5_000_000)

    /// Rows with every slot tagged (as before format 5), sparse ones (format 5: blanks left
    /// out, per a bitmap) and typed ones (format 6: sparse, values without tags, strings of
    /// the dictionary as numbers), whole and damaged.
    @Test(arguments: ["tagged", "sparse", "typed"])
    func aRowIsAcceptedForReadingInPlaceExactlyWhenItDecodes(form: String) throws {
        var g = Generator(state: form == "sparse" ? 20261124 : form == "typed" ? 20261125 : 20261123)
        var accepted = 0, refused = 0, left = 0, ascending = 0, typedRows = 0, untypeable = 0
        let blankKinds: [SlotValue] = [.value(.null), .toOne(nil), .toMany([])]
        let codec = form == "typed" ? Self.typedCodec : Self.codec
        for round in 0..<3000 {
            // Up to 70 slots, so a bitmap of more than 64 bits is read too.
            var slots = (0..<(1 + g.below(round % 10 == 0 ? 70 : 12))).map { _ in Self.randomSlot(&g) }
            if form == "typed", g.below(3) == 0 {
                // Canonically equivalent strings, one of them in the dictionary.
                slots[g.below(slots.count)] = .value(.string(g.below(2) == 0 ? "caf\u{E9}" : "cafe\u{301}"))
            }
            var shape: RowCodec.Shape
            if form == "typed" {
                let pairs = slots.map { Self.kindAndBlank(of: $0, &g) }
                shape = RowCodec.Shape(blanks: pairs.map(\.1), kinds: pairs.map(\.0))
                // Now and then a value of another type than its slot's: the row is written sparse.
                if round % 10 == 5 {
                    let i = g.below(slots.count)
                    if slots[i] != shape.blanks[i], shape.kinds[i] != .tagged {
                        shape.kinds[i] = shape.kinds[i] == .integer ? .string : .integer
                        untypeable += 1
                    }
                }
            } else {
                // Each slot's blank, of a kind at random: a slot holds its blank or another value.
                shape = RowCodec.Shape(blanks: slots.map { _ in blankKinds[g.below(3)] })
            }
            var writer = ByteWriter()
            if form == "tagged" {
                try codec.encode(slots, into: &writer)
            } else {
                try codec.encodeRow(slots, shape: shape, into: &writer)
                var sparse = ByteWriter()
                try codec.encodeRow(slots, shape: RowCodec.Shape(blanks: shape.blanks), into: &sparse)
                var tagged = ByteWriter()
                try codec.encode(slots, into: &tagged)
                // The tagged row, less each blank's bytes (a tag; an empty list's count too),
                // plus a byte of count and the bitmap.
                let blankBytes = zip(slots, shape.blanks).reduce(0) { sum, pair in pair.0 != pair.1 ? sum : sum + (pair.1 == .toMany([]) ? 2 : 1) }
                let expected = tagged.bytes.count - blankBytes + 1 + (slots.count + 7) / 8
                // Lists of one entity's objects in ascending order take their key distances:
                // fewer bytes; any other row exactly that many.
                let ascendingLists = zip(slots, shape.blanks).contains { slot, blank in
                    guard slot != blank, case .toMany(let ids) = slot, ids.count >= 2 else { return false }
                    return zip(ids, ids.dropFirst()).allSatisfy { $0.entityName == $1.entityName && ($0.primaryKey ?? 0) < ($1.primaryKey ?? 0) }
                }
                if ascendingLists { ascending += 1 }
                #expect(ascendingLists ? sparse.bytes.count < expected : sparse.bytes.count == expected, "round \(round)")
                left += blankBytes
                if form == "typed" {
                    // Typed when every value is of its slot's kind; never longer than sparse.
                    let isTyped = writer.bytes.first == 0
                    let typeable = zip(slots, zip(shape.blanks, shape.kinds)).allSatisfy { slot, pair in
                        let (blank, kind) = pair
                        return slot == blank || kind == Self.kindAndBlank(of: slot, &g).0 || kind == .tagged || {
                            if case .toOne = kind, case .toOne = slot { return true }
                            return false
                        }()
                    }
                    #expect(isTyped == typeable, "round \(round)")
                    #expect(isTyped ? writer.bytes.count <= sparse.bytes.count : writer.bytes == sparse.bytes, "round \(round)")
                    if isTyped {
                        typedRows += 1
                        var recoded = ByteWriter()
                        #expect(try codec.recode(writer.bytes, from: 0, shape: shape, to: Self.otherCodec, into: &recoded))
                        var recodedReader = ByteReader(recoded.bytes)
                        let back = try Self.otherCodec.decode(from: &recodedReader, shape: shape)
                        #expect(recodedReader.position == recoded.bytes.count && back.count == slots.count && zip(back, slots).allSatisfy(Self.same), "round \(round)")
                        // The strings and dates a compaction counts are the row's.
                        var texts: [[UInt8]] = [], seconds: [Int64] = []
                        #expect(try codec.forEachTypedValue(writer.bytes, from: 0, shape: shape, string: { texts.append(Array($0)) }, date: { seconds.append($0) }))
                        let held = zip(slots, shape.blanks).filter { $0.0 != $0.1 }.map(\.0)
                        #expect(texts == held.compactMap { if case .value(.string(let text)) = $0 { return Array(text.utf8) } else { return nil } })
                        #expect(seconds == held.compactMap {
                            if case .value(.date(let date)) = $0 { return date.timeIntervalSinceReferenceDate.exactWholeNumber } else { return nil }
                        })
                    } else {
                        var sparseWriter = ByteWriter()
                        #expect(try !codec.recode(writer.bytes, from: 0, shape: shape, to: Self.otherCodec, into: &sparseWriter) && sparseWriter.bytes.isEmpty)
                    }
                } else {
                    #expect(writer.bytes == sparse.bytes)
                }
            }
            var bytes = writer.bytes
            if round % 3 != 0 {
                // Damage: bytes changed, or the row cut short.
                if g.below(4) == 0, bytes.count > 1 {
                    bytes.removeLast(1 + g.below(bytes.count - 1))
                } else {
                    for _ in 0..<(1 + g.below(3)) { bytes[g.below(bytes.count)] = UInt8(g.below(256)) }
                }
            }
            let whole = Self.decoded(bytes, shape: shape, codec: codec)
            if form == "typed" {
                // Written again for another dictionary, damaged or not: no crash, and what
                // it writes reads as the row does.
                var recoded = ByteWriter()
                if (try? codec.recode(bytes, from: 0, shape: shape, to: Self.otherCodec, into: &recoded)) == true, let whole {
                    #expect(Self.decoded(recoded.bytes, shape: shape, codec: Self.otherCodec).map { zip($0, whole).allSatisfy(Self.same) } == true, "round \(round)")
                }
                _ = try? codec.forEachTypedValue(bytes, from: 0, shape: shape, string: { _ in }, date: { _ in })
            }
            var reader = ByteReader(bytes)
            let checked = try? codec.check(&reader, shape: shape)
            #expect(checked == whole?.count, "round \(round): check \(String(describing: checked)), decoding \(String(describing: whole?.count))")
            guard let whole, checked == whole.count else {
                refused += 1
                continue
            }
            accepted += 1
            if round % 3 == 0 { #expect(whole.count == slots.count && zip(whole, slots).allSatisfy(Self.same), "round \(round)") }
            // Read in place, slot by slot, as an object reads it.
            for index in whole.indices {
                var slotReader = ByteReader(bytes)
                let one = try codec.slot(index, from: &slotReader, shape: shape)
                #expect(Self.same(one, whole[index]), "round \(round), slot \(index)")
            }
            // Decoding some slots, into an array or by mark, and each slot in turn agree with
            // decoding the row whole, and end where it ends.
            let wanted = whole.indices.filter { _ in g.below(2) == 0 }
            var someReader = ByteReader(bytes), markReader = ByteReader(bytes), eachReader = ByteReader(bytes), wholeReader = ByteReader(bytes)
            let some = try codec.decode(slots: wanted, from: &someReader, shape: shape)
            #expect(zip(some, wanted.map { whole[$0] }).allSatisfy(Self.same))
            var marked = [SlotValue](repeating: .value(.integer(-1)), count: whole.count)
            try codec.decode(into: &marked, wanted: whole.indices.map { wanted.contains($0) }, from: &markReader, shape: shape)
            #expect(whole.indices.allSatisfy { wanted.contains($0) ? Self.same(marked[$0], whole[$0]) : marked[$0] == .value(.integer(-1)) })
            var each: [SlotValue] = []
            try codec.forEachSlot(from: &eachReader, shape: shape) { each.append($1); return true }
            #expect(each.count == whole.count && zip(each, whole).allSatisfy(Self.same))
            _ = try codec.decode(from: &wholeReader, shape: shape)
            #expect(eachReader.position == wholeReader.position)
        }
        #expect(accepted > 1000 && refused > 500)
        if form != "tagged" { #expect(left > 1000 && ascending > 100, "slots that held their blank: \(left) bytes; rows with ascending lists: \(ascending)") }
        if form == "typed" { #expect(typedRows > 900 && untypeable > 100, "typed rows \(typedRows), rows with a value of another type \(untypeable)") }
    }

    static func open(_ url: URL) throws -> ManagedObjectContext {
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url, clock: { TestModel.now }))
        return context
    }

    /// A store with two tasks of every kind of value, and their IDs.
    static func seeded(_ url: URL) throws -> (first: ObjectID, second: ObjectID) {
        let context = try open(url)
        let home = try context.location("Home")
        let tag = try context.insertObject(entityName: "Tag")
        try tag.setValue("urgent", forKey: "label")
        let first = try context.task("Straße fegen", priority: 2)
        try first.setValue(.date(TestModel.now), forKey: "dueDate")
        try first.setValue(.decimal(Decimal(string: "2.5") ?? 0), forKey: "estimate")
        try first.setValue(.double(0.25), forKey: "ratio")
        try first.setValue("ABC", forKey: "code")
        try first.setValue("kept in memory only", forKey: "scratch")
        try first.setObject(home, forKey: "location")
        try first.setObjects([tag], forKey: "tags")
        let second = try context.task("second", priority: 1)
        try context.save()
        return (first.objectID, second.objectID)
    }

    @Test(arguments: [false, true])
    func loadedObjectsReadTheirRowInPlaceAndChangeAsDecodedOnesDo(byPredicate: Bool) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let (firstID, secondID) = try Self.seeded(url)
        let context = try Self.open(url)
        let request = FetchRequest(entityName: "Task", predicate: byPredicate ? try ObjectPredicate(format: "priority >= 1") : nil)
        let tasks = try context.fetch(request)
        #expect(tasks.count == 2)
        let first = try #require(tasks.first { $0.objectID == firstID })
        let second = try #require(tasks.first { $0.objectID == secondID })

        #expect(first["text"] == "Straße fegen")
        #expect(first["priority"] == 2)
        #expect(first["dueDate"] == .date(TestModel.now))
        #expect(first["estimate"] == .decimal(Decimal(string: "2.5") ?? 0))
        #expect(first["ratio"] == 0.25)
        #expect(first["status"] == "open")
        #expect(first["scratch"] == .null)  // transient: not stored, its initial value
        #expect(first["doubled"] == 4)      // derived from the row's priority
        #expect(try first.value(forKeyPath: "location.name").value == "Home")
        #expect(try first.objectIDs(forRelationship: "tags").count == 1)
        // Read, nothing decoded: the values are still the row's.
        #expect(first.slots.isEncoded && first.committedSlots?.isEncoded == true)
        #expect(!first.isUpdated && !context.hasChanges && first.changedValues().isEmpty)

        // Writing the value it has is no change; another value is one, and only that.
        try first.setValue(2, forKey: "priority")
        #expect(!first.isUpdated)
        try first.setValue("new text", forKey: "text")
        #expect(first.isUpdated)
        #expect(Set(first.changedValues().keys) == ["text"])
        #expect(try first["priority"] == 2 && first.objectIDs(forRelationship: "location").count == 1)
        #expect(first.committedValues(forKeys: ["text"])["text"] == .value("Straße fegen"))

        // Undone, rolled back: the row's values again.
        context.undo()
        #expect(first["text"] == "Straße fegen" && !first.isUpdated)
        try second.setValue(3, forKey: "priority")
        context.rollback()
        #expect(second["priority"] == 1 && !context.hasChanges)

        // Saved: another opening reads the change.
        try second.setValue(3, forKey: "priority")
        try context.save()
        #expect(try Self.open(url).existingObject(with: secondID)["priority"] == 3)
    }

    /// Whether an object changed is remembered between writes (a save asks it several
    /// times): every write, write-back, undo, redo, save and rollback must be seen. Random
    /// steps over objects read in place, each checked against the values the test expects.
    @Test func whatChangedFollowsEveryWriteUndoSaveAndRollback() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let setup = try Self.open(url)
        for i in 0..<6 { _ = try setup.task("task \(i)", priority: Int64(i % 3)) }
        try setup.save()
        let context = try Self.open(url)
        context.undoManager = UndoStack()
        let tasks = try context.fetch(FetchRequest(entityName: "Task"))
        #expect(tasks.count == 6)
        func values(_ task: ManagedObject) -> [String: Value] { ["text": task["text"], "priority": task["priority"]] }
        var saved = tasks.map(values)
        var g = Generator(state: 7)
        var history: [[[String: Value]]] = []  // the expected values before each undoable write
        var undone: [[[String: Value]]] = []
        for step in 0..<600 {
            let before = tasks.map(values)
            switch g.below(10) {
            case 0..<5:
                // A write, often of the value the slot had when saved (a change undone by hand).
                let task = tasks[g.below(tasks.count)]
                let index = tasks.firstIndex { $0 === task } ?? 0
                context.undoManager?.beginGrouping()
                if g.below(2) == 0 {
                    try task.setValue(g.below(2) == 0 ? saved[index]["text"] ?? .null : .string("text \(g.below(3))"), forKey: "text")
                } else {
                    try task.setValue(g.below(2) == 0 ? saved[index]["priority"] ?? .null : .integer(Int64(g.below(3))), forKey: "priority")
                }
                context.undoManager?.endGrouping()
                if tasks.map(values) != before { history.append(before); undone.removeAll() }
            case 5:
                guard let last = history.popLast() else { continue }
                undone.append(before)
                context.undo()
                #expect(tasks.map(values) == last, "step \(step): undo")
            case 6:
                guard let next = undone.popLast() else { continue }
                history.append(before)
                context.redo()
                #expect(tasks.map(values) == next, "step \(step): redo")
            case 7, 8:
                // Undo reaches back past a save (then the saved values are the changes).
                try context.save()
                saved = tasks.map(values)
            default:
                context.rollback()
                #expect(tasks.map(values) == saved, "step \(step): rollback")
                history.removeAll()
                undone.removeAll()
                context.undoManager?.removeAll()
            }
            for (index, task) in tasks.enumerated() {
                let changed = Set(["text", "priority"].filter { values(task)[$0] != saved[index][$0] })
                #expect(task.isUpdated == !changed.isEmpty, "step \(step), task \(index)")
                #expect(Set(task.changedValues().keys) == changed, "step \(step), task \(index)")
            }
            let updated = Set(tasks.indices.filter { tasks.map(values)[$0] != saved[$0] })
            #expect(Set(context.updatedObjects.compactMap { object in tasks.firstIndex { $0 === object } }) == updated, "step \(step)")
            #expect(context.hasChanges == !updated.isEmpty, "step \(step)")
        }
        // What was saved last is what another opening reads.
        let other = try Self.open(url)
        for (index, task) in tasks.enumerated() {
            #expect(values(try other.existingObject(with: task.objectID)) == saved[index])
        }
    }

    /// Core Data's refresh reads "the latest values from the persistent store": an object
    /// refreshed alone (no fetch in between) sees what another opening saved.
    @Test(arguments: ["tasks.store", "tasks.json"], [false, true])
    func aRefreshedObjectReadsWhatAnotherOpeningSaved(file: String, mergeChanges: Bool) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file(file)
        let setup = try Self.open(url)
        let task = try setup.task("before", priority: 1)
        try setup.save()
        // Held through a second name of the file.
        let link = directory.file("link-" + file)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        let context = try Self.open(link)
        let held = try context.existingObject(with: task.objectID)
        #expect(held["text"] == "before")
        let other = try Self.open(url)
        try other.existingObject(with: task.objectID).setValue("after", forKey: "text")
        try other.save()
        if mergeChanges { try held.setValue(3, forKey: "priority") }
        context.refresh(held, mergeChanges: mergeChanges)
        #expect(held["text"] == "after")
        #expect(held["priority"] == (mergeChanges ? 3 : 1))
    }

    @Test func heldObjectsKeepTheirValuesWhileOthersRewriteOrReplaceTheFile() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tasks.store")
        let (firstID, _) = try Self.seeded(url)
        let context = try Self.open(url)
        let held = try context.existingObject(with: firstID)
        #expect(held.slots.isEncoded)

        // Another opening edits the task and compacts twice (the file is rewritten).
        let other = try Self.open(url)
        try other.existingObject(with: firstID).setValue("edited elsewhere", forKey: "text")
        try other.save()
        for _ in 0..<2 { try other.coordinator.compactStore() }
        #expect(held["text"] == "Straße fegen" && held["priority"] == 2)
        context.refresh(held, mergeChanges: false)
        #expect(held["text"] == "edited elsewhere")

        // The file replaced by another store with the same task edited again: objects read
        // before keep what they read; a refresh reads the new file.
        let replacement = directory.file("replacement.store")
        try FileManager.default.copyItem(at: url, to: replacement)
        let elsewhere = try Self.open(replacement)
        try elsewhere.existingObject(with: firstID).setValue("from the replacement", forKey: "text")
        try elsewhere.save()
        try elsewhere.coordinator.compactStore()
        #expect(rename(replacement.path, url.path) == 0)
        #expect(held["text"] == "edited elsewhere" && held["priority"] == 2)
        #expect(try held.value(forKeyPath: "location.name").value == "Home")
        context.refresh(held, mergeChanges: false)
        #expect(held["text"] == "from the replacement")
    }
}

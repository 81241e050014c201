import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

/// `IN` a list of UUIDs, strings or integers is a set's lookup (``DirectTest``), in the
/// store's scan and for objects a context holds. It must find what the same list written as
/// `==` comparisons joined by OR finds, whatever the values: nil, another kind, canonically
/// equivalent text, numbers of another type.
@Suite struct InListTests {
    static let model: ManagedObjectModel = {
        let schema = #"""
        {
          "entities": [
            { "name": "Item",
              "attributes": [
                { "name": "label", "type": "string" },
                { "name": "key", "type": "uuid", "optional": true },
                { "name": "text", "type": "string", "optional": true },
                { "name": "n", "type": "int64", "optional": true },
                { "name": "d", "type": "double", "optional": true }
              ]
            }
          ]
        }
        """#
        do {
            return try ManagedObjectModel(schema: schema, file: "items")
        } catch {
            preconditionFailure("the test model does not load: \(error)")
        }
    }()

    static func key(_ n: Int) -> UUID { UUID(uuid: (UInt8(n % 256), 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, UInt8(n / 256), 1)) }
    static let texts = ["caf\u{E9}", "cafe\u{301}", "Caf\u{E9}", "plain", "", "\u{212A}", "K"]

    static func labels(_ context: ManagedObjectContext, _ predicate: ObjectPredicate) throws -> [String] {
        try context.fetch(FetchRequest(entityName: "Item", predicate: predicate, sortDescriptors: [SortKey("label")])).map { object in
            if case .string(let label) = object["label"] { return label }
            return "?"
        }
    }

    @Test func inAListFindsWhatTheComparisonsJoinedByOrFind() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("items.store")
        let store = try BinaryStore(url: url, model: Self.model)
        store.compactionThreshold = .max
        let binary = PersistentStoreCoordinator(model: Self.model, store: store)
        let memory = PersistentStoreCoordinator(inMemoryWith: Self.model)
        func fill(_ rows: Range<Int>) throws {
            for coordinator in [binary, memory] {
                let context = ManagedObjectContext(coordinator: coordinator)
                for n in rows {
                    let item = try context.insertObject(entityName: "Item")
                    try item.setValue(.string(String(format: "i%03d", n)), forKey: "label")
                    if n % 7 != 0 { try item.setValue(.uuid(Self.key(n)), forKey: "key") }
                    if n % 5 != 0 { try item.setValue(.string(Self.texts[n % Self.texts.count]), forKey: "text") }
                    if n % 6 != 0 { try item.setValue(.integer(Int64(n % 9)), forKey: "n") }
                    if n % 4 != 0 { try item.setValue(.double(Double(n % 5) / 2), forKey: "d") }
                }
                try context.save()
            }
        }
        try fill(0..<150)
        try store.compact()
        try fill(150..<200)  // rows in the log after the snapshot
        #expect(store.sizes.log > 0)

        let lists: [(key: String, values: [Value])] = [
            ("key", (0..<40).map { .uuid(Self.key($0 * 5)) } + [.uuid(UUID())]),
            ("key", [.uuid(Self.key(3))]),
            ("key", [.uuid(Self.key(14)), .uuid(Self.key(4)), .uuid(Self.key(199))]),
            ("text", [.string("caf\u{E9}"), .string("")]),
            ("text", [.string("cafe\u{301}")]),
            ("text", [.string("K"), .string("missing")]),
            ("n", [.integer(1), .integer(4), .integer(8)]),
            ("n", [.integer(2), .double(3)]),
            ("d", [.integer(1), .double(1.5)]),
            ("d", [.integer(2)]),
            ("label", (0..<200).filter { $0 % 3 == 0 }.map { .string(String(format: "i%03d", $0)) }),
        ]
        func predicates(_ list: (key: String, values: [Value])) throws -> (listed: ObjectPredicate, joined: ObjectPredicate) {
            let listed = ObjectPredicate.comparison(PredicateComparison(.keyPath(.evaluatedObject, [list.key]), .in, .array(list.values.map { .constant($0) })))
            let comparisons = list.values.map { ObjectPredicate.comparison(PredicateComparison(.keyPath(.evaluatedObject, [list.key]), .equal, .constant($0))) }
            let joined = comparisons.dropFirst().reduce(comparisons.first ?? ObjectPredicate.constant(false)) { ObjectPredicate.or($0, $1) }
            return (listed, joined)
        }
        var matched = 0
        for list in lists {
            let (listed, joined) = try predicates(list)
            let expected = try Self.labels(ManagedObjectContext(coordinator: memory), joined)
            matched += expected.isEmpty ? 0 : 1
            let description = "\(list.key) IN \(list.values.prefix(3))"
            #expect(try Self.labels(ManagedObjectContext(coordinator: memory), listed) == expected, "in memory: \(description)")
            #expect(try Self.labels(ManagedObjectContext(coordinator: binary), listed) == expected, "binary: \(description)")
            #expect(try ManagedObjectContext(coordinator: binary).count(for: FetchRequest(entityName: "Item", predicate: listed)) == expected.count,
                    "count: \(description)")
            #expect(try Self.labels(ManagedObjectContext(coordinator: binary), .not(listed)) == Self.labels(ManagedObjectContext(coordinator: memory), .not(joined)),
                    "NOT: \(description)")
        }
        #expect(matched >= 9, "the lists find items")

        // Objects a context holds, with unsaved values, are tested by the compiled closures.
        let held = ManagedObjectContext(coordinator: binary)
        let items = try held.fetch(FetchRequest(entityName: "Item", sortDescriptors: [SortKey("label")]))
        try items[1].setValue(.uuid(Self.key(5)), forKey: "key")
        try items[2].setValue(.null, forKey: "key")
        try items[3].setValue(.string("cafe\u{301}"), forKey: "text")
        try items[4].setValue(.integer(8), forKey: "n")
        for list in lists {
            let (listed, joined) = try predicates(list)
            #expect(try Self.labels(held, listed) == Self.labels(held, joined), "held: \(list.key) IN \(list.values.prefix(3))")
            let entity = try #require(Self.model.entity(named: "Item"))
            let test = try held.compiled(listed, entity: entity), oracle = try held.compiled(joined, entity: entity)
            let scope = held.evaluationScope()
            #expect(try items.map { try test($0, scope) } == items.map { try oracle($0, scope) }, "compiled: \(list.key) IN \(list.values.prefix(3))")
        }
    }

    /// UUIDs order as their text does (`uuidString`), now read from their bytes.
    @Test func uuidsOrderAsTheirText() {
        var random = SeededRandom(seed: 53)
        var uuids = (0..<300).map { _ -> UUID in
            let b = random.bytes(16)
            return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
        }
        uuids += [uuids[0], Self.key(1), Self.key(256), Self.key(255)]
        for a in uuids.prefix(60) {
            for b in uuids {
                let text: ComparisonResult = a.uuidString < b.uuidString ? .orderedAscending : (a.uuidString > b.uuidString ? .orderedDescending : .orderedSame)
                #expect(Value.uuid(a).compare(to: .uuid(b)) == text, "\(a) \(b)")
            }
        }
    }
}

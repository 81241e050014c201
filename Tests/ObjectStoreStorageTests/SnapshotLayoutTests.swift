import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage
import ObjectStoreModel

/// The widths of a snapshot's entries and column values: each field as wide as its largest
/// value needs, wide entries only where a value cannot be packed, and every row, index
/// entry and value read back as it was written.
@Suite struct SnapshotLayoutTests {
    /// A snapshot written to a file of its own (at byte 0) and opened again.
    private func written(rows: [[Snapshot.Row]], indexes: [Snapshot.Index] = [], columns: [[(slot: Int, column: Column)]] = [],
                         in directory: TemporaryDirectory) throws -> (Snapshot, Int32, String) {
        let url = directory.file("snapshot-\(UUID().uuidString)")
        let bytes = Snapshot.bytes(rows: rows, indexes: indexes, columns: columns)
        try Data(bytes).write(to: url)
        let fd = open(url.path, O_RDONLY)
        try #require(fd >= 0)
        return (try Snapshot.open(fd, base: 0, length: bytes.count, entityCount: rows.count, path: url.path), fd, url.path)
    }

    private func row(_ key: Int64, version: Int64 = 1, _ text: String) -> Snapshot.Row {
        let bytes = Array(text.utf8)
        return Snapshot.Row(key: key, version: version, source: bytes, start: 0, length: bytes.count)
    }

    /// Every row of each entity is found by a binary search in the file and by position,
    /// and read with its entity loaded whole (each row checked against its checksum); a key
    /// that is not there is not found.
    private func expectEveryRowReadsBack(_ entities: [[Snapshot.Row]], from snapshot: Snapshot, missing: Int64, fd: Int32, path: String) throws {
        for (entity, rows) in entities.enumerated() {
            for (position, expected) in rows.enumerated() {
                let found = try #require(try snapshot.find(key: expected.key, entity: entity, fd: fd, path: path))
                #expect(found.entry.key == expected.key && found.entry.version == expected.version && found.bytes[...] == expected.bytes)
                let at = try #require(try snapshot.row(at: position, entity: entity, fd: fd, path: path))
                #expect(at.entry.key == expected.key && at.bytes[...] == expected.bytes)
            }
            #expect(try snapshot.find(key: missing, entity: entity, fd: fd, path: path) == nil)
            let loaded = try snapshot.load(entity: entity, fd: fd, path: path)
            #expect(Array(loaded.keys) == rows.map(\.key))
            for (position, expected) in rows.enumerated() {
                let (entry, start) = try loaded.row(at: position, path: path)
                #expect(entry.version == expected.version && loaded.bytes[start..<start + entry.size] == expected.bytes)
            }
        }
    }

    /// Each entity's entries pack its keys, versions and row ends in the bytes its largest
    /// need; an entity with a negative key or version (which no save writes, but a row's
    /// fields allow) gets wide entries, and its rows read back the same.
    @Test func eachEntityGetsPackedEntriesAndWideOnesOnlyWhereAValueIsNegative() throws {
        let directory = try TemporaryDirectory()
        let small = [row(1, "one"), row(2, version: 7, ""), row(3, "three"), row(4_000_000_000, version: 4_294_967_295, "big but 32-bit")]
        let large = [row(5, "five"), row(1 << 40, "a key past 32 bits")]
        let negative = [row(-3, "a negative key"), row(9, version: 1 << 33, "a version past 32 bits")]
        let (snapshot, fd, path) = try written(rows: [small, large, negative], in: directory)
        defer { close(fd) }
        // Keys to 4e9: 4 bytes, versions to 2^32 - 1: 4, rows end by byte 28: 1.
        #expect(snapshot.entities[0].widths == Snapshot.DirectoryWidths(key: 4, version: 4, end: 1))
        #expect(snapshot.entities[1].widths == Snapshot.DirectoryWidths(key: 6, version: 1, end: 1))
        #expect(snapshot.entities[2].widths == nil)
        #expect(snapshot.entities[2].entrySize == 32)
        try expectEveryRowReadsBack([small, large, negative], from: snapshot, missing: 6, fd: fd, path: path)
    }

    /// The search of an index probes one entry at a time, then reads the last few hundred
    /// at once: every bound, inclusive or not, below, inside and past 1,000 entries of
    /// repeated (and negative) values finds what a filter of all the entries finds.
    @Test func anIndexSearchFindsEveryBoundWhereverItFalls() throws {
        let directory = try TemporaryDirectory()
        let count = 1_000
        let rows = [(0..<count).map { row(Int64($0 + 1), "r") }]
        let values = (0..<count).map { Int64($0 / 3) - 100 }
        let index = Snapshot.Index(owner: 0, constraint: Snapshot.schemaIndexFlag, signature: 1,
                                   entries: zip(values, rows[0]).map { (UInt64(bitPattern: $0), 0, $1.key) }, positions: Array(0..<count))
        let (snapshot, fd, path) = try written(rows: rows, indexes: [index], in: directory)
        defer { close(fd) }
        let part = try #require(snapshot.indexes.first)
        let probes: [Int64] = [-500, -101, -100, -99, -1, 0, 1, 100, 150, 200, 232, 233, 234, 1_000]
        var bounds: [Snapshot.Bound?] = [nil]
        for value in probes { for inclusive in [true, false] { bounds.append(Snapshot.Bound(bits: UInt64(bitPattern: value), inclusive: inclusive)) } }
        for lower in bounds {
            for upper in bounds {
                let expected = values.indices.filter { i in
                    let v = values[i]
                    let aboveLower = lower.map { b in b.inclusive ? v >= Int64(bitPattern: b.bits) : v > Int64(bitPattern: b.bits) } ?? true
                    let belowUpper = upper.map { b in b.inclusive ? v <= Int64(bitPattern: b.bits) : v < Int64(bitPattern: b.bits) } ?? true
                    return aboveLower && belowUpper
                }
                let found = try snapshot.range(part, kind: .integer, from: lower, to: upper, fd: fd, path: path)
                #expect(found.map(\.position) == expected, "\(String(describing: lower)) ... \(String(describing: upper))")
            }
        }
    }

    /// An index's search reads each step's entry once per snapshot and searches both bounds
    /// from the whole index, so the steps of a lookup are read again by no later lookup
    /// and the upper bound ends in the block the lower one read: in 100,000 entries, a
    /// first lookup reads its steps and one block, and once the values were looked up, a
    /// lookup of any of them again reads one block (each was a dozen reads and more).
    /// What each finds is what a filter of the entries finds.
    @Test func anIndexSearchReadsEachStepOncePerSnapshot() throws {
        let directory = try TemporaryDirectory()
        let count = 100_000
        let rows = [(0..<count).map { row(Int64($0 + 1), "r") }]
        let values = (0..<count).map { Int64($0 / 3) }
        let index = Snapshot.Index(owner: 0, constraint: Snapshot.schemaIndexFlag, signature: 1,
                                   entries: zip(values, rows[0]).map { (UInt64(bitPattern: $0), 0, $1.key) }, positions: Array(0..<count))
        let (snapshot, fd, path) = try written(rows: rows, indexes: [index], in: directory)
        defer { close(fd) }
        let part = try #require(snapshot.indexes.first)
        func reads() -> Int { FileIO.readsByDescriptor.withLock { $0[fd] ?? 0 } }
        func lookUp(_ value: Int64) throws -> (found: [Int], reads: Int) {
            let before = reads()
            let bound = Snapshot.Bound(bits: UInt64(bitPattern: value), inclusive: true)
            let span = try snapshot.span(part, kind: .integer, from: bound, to: bound, fd: fd, path: path)
            return (Array(span), reads() - before)
        }
        // Values whose three entries lie inside one block of the search's last step.
        let looked: [Int64] = [5, 1_234, 9_999, 20_000, 33_333]
        var first: [Int] = []
        for value in looked {
            let (found, made) = try lookUp(value)
            #expect(found == values.indices.filter { values[$0] == value }, "\(value)")
            first.append(made)
        }
        // The first lookup reads its steps (one entry each) and one block, not the steps twice.
        let depth = Int(ceil(log2(Double(count) / Double(Snapshot.searchBlock))))
        #expect(first[0] > 1 && first[0] <= depth + 1, "\(first)")
        for value in looked {
            let (found, made) = try lookUp(value)
            #expect(found == values.indices.filter { values[$0] == value })
            #expect(made == 1, "\(value): \(made) reads")
        }
    }

    /// A snapshot packs each field of a directory entry into as many bytes as the entity's
    /// largest key, version and row end need, per entity; every row reads back by key, by
    /// position and with its entity loaded whole.
    @Test func packedDirectoriesTakeTheBytesTheirLargestValuesNeed() throws {
        let directory = try TemporaryDirectory()
        // Keys 1 to 300 but 150 (consecutive keys would be left out: below).
        let small = (1...300).filter { $0 != 150 }.map { row(Int64($0), version: $0 == 7 ? 2 : 1, "row \($0)") }
        let large = [row(5, "five"), row(1 << 40, version: 70_000, "a key past 32 bits"), row((1 << 40) + 1, version: 1 << 33, "")]
        let empty: [Snapshot.Row] = []
        let (snapshot, fd, path) = try written(rows: [small, large, empty], in: directory)
        defer { close(fd) }
        // Keys to 300: 2 bytes; versions 1 byte; the rows end by byte 1,985: 2 bytes.
        #expect(snapshot.entities[0].widths == Snapshot.DirectoryWidths(key: 2, version: 1, end: 2))
        #expect(snapshot.entities[1].widths == Snapshot.DirectoryWidths(key: 6, version: 5, end: 1))
        #expect(snapshot.entities.map(\.entrySize) == [9, 16, 7])
        try expectEveryRowReadsBack([small, large, empty], from: snapshot, missing: 301, fd: fd, path: path)
    }

    /// A snapshot writes no keys in a directory whose keys are consecutive (the entity table
    /// holds the first): rows read back by key, by position and loaded whole, keys before
    /// the first and past the last are not found, and an entity with a gap keeps its keys.
    @Test func aDenseDirectoryOfConsecutiveKeysWritesNone() throws {
        let directory = try TemporaryDirectory()
        let consecutive = (1...300).map { row(Int64($0), version: $0 == 7 ? 2 : 1, "row \($0)") }
        let fromLater = (1_000...1_009).map { row(Int64($0), "later \($0)") }
        let gap = [row(1, "one"), row(2, "two"), row(4, "four")]
        let one = [row(1 << 40, "a lone key past 32 bits")]
        let empty: [Snapshot.Row] = []
        let entities = [consecutive, fromLater, gap, one, empty]
        let (snapshot, fd, path) = try written(rows: entities, in: directory)
        defer { close(fd) }
        #expect(snapshot.entities.map(\.firstKey) == [1, 1_000, nil, 1 << 40, nil])
        #expect(snapshot.entities[0].widths == Snapshot.DirectoryWidths(key: 0, version: 1, end: 2))
        #expect(snapshot.entities.map(\.entrySize) == [7, 6, 7, 6, 7])
        try expectEveryRowReadsBack(entities, from: snapshot, missing: 500, fd: fd, path: path)
        #expect(try snapshot.find(key: 3, entity: 2, fd: fd, path: path) == nil, "the gap")
        for (entity, rows) in entities.enumerated() where !rows.isEmpty {
            let loaded = try snapshot.load(entity: entity, fd: fd, path: path)
            for key in [rows[0].key - 1, rows[rows.count - 1].key + 1] {
                #expect(try snapshot.find(key: key, entity: entity, fd: fd, path: path) == nil)
                #expect(loaded.find(key) == nil)
            }
        }
    }

    /// A dense directory's first key comes from the entity table: one so large that the
    /// last row's key would pass Int64's range is damage, not a crash.
    @Test func aDenseDirectoryWhoseKeysWouldOverflowIsRefused() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("snapshot")
        var bytes = Snapshot.bytes(rows: [[row(1, "a"), row(2, "b")]], indexes: [], columns: [])
        // The first entity's rows-offset field (bytes 16-23 of its table entry, after the
        // 16-byte prefix) holds the first key; the tables' checksum is made to match.
        let field = Snapshot.prefixSize + 16
        for k in 0..<8 { bytes[field + k] = UInt8(truncatingIfNeeded: UInt64(Int64.max) >> (8 * UInt64(k))) }
        let tables = Array(bytes[Snapshot.prefixSize..<Snapshot.prefixSize + Snapshot.entityPartSize])
        let crc = CRC32.checksum(tables)
        for k in 0..<4 { bytes[12 + k] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(k))) }
        try Data(bytes).write(to: url)
        let fd = open(url.path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(throws: StoreError.self) { try Snapshot.open(fd, base: 0, length: bytes.count, entityCount: 1, path: url.path) }
    }

    /// A uniqueness index keeps the top 24 bits of each hash in an index of fewer than 2^20
    /// entries (hashes that differ only below them are each other's candidates; the store
    /// compares their rows), entity indexes only when an entry is not the owner's, and keys
    /// in the bytes the largest needs.
    @Test func aUniquenessIndexKeeps24BitsOfEachHash() throws {
        let directory = try TemporaryDirectory()
        let hash: UInt64 = 0xDEAD_BEEF_CAFE_1234
        let entries: [(hash: UInt64, entity: Int, key: Int64)] = [(hash, 0, 1), (hash ^ 0xFF_FFFF_FFFF, 0, 2), (hash ^ 0x100_0000_0000, 0, 3)]
        let ownerOnly = Snapshot.Index(owner: 0, constraint: 0, signature: 9, entries: entries)
        let mixed = Snapshot.Index(owner: 0, constraint: 1, signature: 9, entries: entries + [(hash, 1, 70_000)])
        let rows = [[row(1, "a"), row(2, "b"), row(3, "c")], [row(70_000, "d")]]
        let (snapshot, fd, path) = try written(rows: rows, indexes: [ownerOnly, mixed], in: directory)
        defer { close(fd) }
        #expect(snapshot.indexes.map(\.widths) == [Snapshot.IndexWidths(value: 3, middle: 0, key: 1), Snapshot.IndexWidths(value: 3, middle: 1, key: 3)])
        #expect(snapshot.indexes.map(\.entrySize) == [4, 7])
        let shared = try #require(try snapshot.candidates(owner: 0, constraint: 0, signature: 9, hash: hash, fd: fd, path: path))
        #expect(shared.map(\.key).sorted() == [1, 2], "both hashes that share the kept bits are candidates")
        #expect(shared.allSatisfy { $0.entity == 0 })
        #expect(try snapshot.candidates(owner: 0, constraint: 0, signature: 9, hash: hash ^ 0x100_0000_0000, fd: fd, path: path)?.map(\.key) == [3])
        #expect(try snapshot.candidates(owner: 0, constraint: 0, signature: 9, hash: hash ^ 0x200_0000_0000, fd: fd, path: path)?.isEmpty == true)
        let both = try #require(try snapshot.candidates(owner: 0, constraint: 1, signature: 9, hash: hash, fd: fd, path: path))
        #expect(both.map { "\($0.entity)/\($0.key)" }.sorted() == ["0/1", "0/2", "1/70000"])
        #expect(try snapshot.indexEntries(snapshot.indexes[1], fd: fd, path: path).map(\.hash).allSatisfy { $0 & 0xFF_FFFF_FFFF == 0 })
    }

    /// A packed schema index writes each value as narrow as its column would (a signed
    /// whole number, for dates and doubles one the Double holds exactly) and reads it back
    /// as the column's bits: ranges, the value at a rank and the entries all agree with the
    /// values as written.
    @Test(arguments: [
        (Column.Kind.integer, [-200, -3, 5, 5, 90], 2),
        (Column.Kind.date, [-978_307_200, 0, 817_689_600, 817_689_600], 4),
        (Column.Kind.double, [-1.5, 0, 2], 8),
        (Column.Kind.integer, [Double(Int64(Int32.max)) * 4], 8),
    ] as [(Column.Kind, [Double], Int)])
    func aPackedSchemaIndexNarrowsItsValues(kind: Column.Kind, numbers: [Double], width: Int) throws {
        let directory = try TemporaryDirectory()
        let values: [UInt64] = numbers.map { kind == .integer ? UInt64(bitPattern: Int64($0)) : $0.bitPattern }
        let rows = [(0..<values.count).map { row(Int64($0 + 1), "r") }]
        let index = Snapshot.Index(owner: 0, constraint: Snapshot.schemaIndexFlag, signature: 1,
                                   entries: zip(values, rows[0]).map { ($0, 0, $1.key) }, positions: Array(values.indices), kind: kind)
        let (snapshot, fd, path) = try written(rows: rows, indexes: [index], in: directory)
        defer { close(fd) }
        let part = try #require(snapshot.indexes.first)
        #expect(part.widths?.value == width)
        #expect(try snapshot.indexEntries(part, fd: fd, path: path).map(\.hash) == values)
        for (rank, value) in values.enumerated() {
            #expect(try snapshot.entryValue(part, at: rank, fd: fd, path: path) == value)
            let found = try snapshot.range(part, kind: kind, from: Snapshot.Bound(bits: value, inclusive: true), to: Snapshot.Bound(bits: value, inclusive: true), fd: fd, path: path)
            #expect(found.map(\.position) == values.indices.filter { values[$0] == value })
        }
    }

    /// A date at a whole second is written as a varint of its seconds since 2001 (format 4),
    /// any other date as its Double's 8 bytes; each reads back bit for bit.
    @Test(arguments: [
        (817_689_600.0, 5),            // 2026-11-30: 5 bytes instead of 8
        (0.0, 1), (-1.0, 1), (63.0, 1), (64.0, 2),
        (-978_307_200.0, 5),           // 1970
        (252_423_993_599.0, 6),        // the end of 9999
        (-0.0, 8),                     // a whole number, but not the same bits as 0
        (817_689_600.5, 8),
        (0x1p62, 8),                   // whole, but its varint would take more than 8 bytes
    ])
    func datesAtWholeSecondsTakeAVarint(seconds: Double, size: Int) throws {
        let codec = RowCodec(entityNames: ["E"], storeIdentifier: "S")
        var writer = ByteWriter()
        try codec.encode([.value(.date(Date(timeIntervalSinceReferenceDate: seconds)))], into: &writer)
        #expect(writer.bytes.count == 2 + size, "a count, a tag and \(size) bytes")
        var reader = ByteReader(writer.bytes)
        guard case .value(.date(let date)) = try codec.decode(from: &reader, shape: RowCodec.Shape()).first else {
            Issue.record("no date read back")
            return
        }
        #expect(date.timeIntervalSinceReferenceDate.bitPattern == seconds.bitPattern)
        var checker = ByteReader(writer.bytes)
        #expect(try codec.check(&checker, shape: RowCodec.Shape()) == 1)
        // A typed row (format 6) writes it without the tag: a byte less, or the same bytes
        // for a date that is not a whole second (a byte that says so, then the Double).
        let shape = RowCodec.Shape(blanks: [.value(.null)], kinds: [.date])
        var typed = ByteWriter()
        try codec.encodeRow([.value(.date(Date(timeIntervalSinceReferenceDate: seconds)))], shape: shape, into: &typed)
        #expect(typed.bytes.count == 2 + (size == 8 ? 9 : size), "a mark, a bitmap and the value")
        var typedReader = ByteReader(typed.bytes)
        guard case .value(.date(let typedDate)) = try codec.decode(from: &typedReader, shape: shape).first else {
            Issue.record("no date read back from a typed row")
            return
        }
        #expect(typedDate.timeIntervalSinceReferenceDate.bitPattern == seconds.bitPattern)
    }

    /// Each value's width is the narrowest that reads back to the same bits: integers by
    /// their range, doubles and dates only when they hold a whole number (-0.0 and 2.5 stay
    /// 8 bytes), and nils cost no value.
    static let widthCases: [(Column.Kind, [Value], Int)] = [
        (.integer, [.integer(-128), .integer(127), .null], 1),
        (.integer, [.integer(-129)], 2),
        (.integer, [.integer(32_767), .integer(-32_768)], 2),
        (.integer, [.integer(32_768)], 4),
        (.integer, [.integer(Int64(Int32.max)), .integer(Int64(Int32.min))], 4),
        (.integer, [.integer(Int64(Int32.max) + 1)], 8),
        (.integer, [.integer(.min), .integer(.max)], 8),
        (.boolean, [.bool(true), .bool(false)], 1),
        (.double, [.double(3), .double(-1_000)], 2),
        (.double, [.double(2.5)], 8),
        (.double, [.double(-0.0)], 8),
        (.double, [.double(.infinity)], 8),
        (.double, [.double(0x1p31)], 8),
        (.double, [.double(-0x1p31)], 4),
        (.date, [.date(Date(timeIntervalSinceReferenceDate: 817_689_600)), .null], 4),
        (.date, [.date(Date(timeIntervalSinceReferenceDate: 817_689_600.25))], 8),
        (.date, [.date(Date(timeIntervalSinceReferenceDate: 3e9))], 8),
        (.integer, [.null, .null], 1),
    ]

    @Test(arguments: widthCases)
    func columnValuesTakeTheNarrowestWidthThatReadsBackTheSame(kind: Column.Kind, values: [Value], width: Int) throws {
        let column = try #require(Column(kind: kind, values: values.map { .value($0) }))
        #expect(column.width == width)
        let bytes = column.bytes
        #expect(bytes.count == Column.byteCount(rows: values.count, present: column.present, width: width))
        let read = try #require(Column(kind: kind, rows: values.count, present: column.present, width: width, bytes: bytes))
        #expect(read.values == column.values, "the same bits")
        #expect((0..<values.count).map { read.value(at: $0) } == values)
        // Wide, as format 3 wrote every column.
        let wide = column.widened
        #expect(wide.bytes.count == Column.byteCount(rows: values.count, present: column.present))
        #expect(Column(kind: kind, rows: values.count, present: column.present, bytes: wide.bytes)?.values == column.values)
    }
}

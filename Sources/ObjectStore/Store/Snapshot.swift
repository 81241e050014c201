import Foundation
import ObjectStoreModel

/// The compacted part of a binary store file (format 2 and later): every live row as of the last
/// compaction, laid out so that opening reads only a small table (docs/store-format.md,
/// "Snapshot"). A row is read, and its checksum checked, when it is asked for; an entity's
/// directory and rows are read in one piece when all of them are.
///
/// Offsets are relative to the snapshot's first byte. Every integer is little-endian.
struct Snapshot {
    static let magic: [UInt8] = [0x4F, 0x53, 0x4E, 0x50]  // O S N P
    static let prefixSize = 16
    static let entityPartSize = 40
    static let indexPartSize = 32
    /// A directory entry: wide (key 8, version 8, offset 8, size 4, CRC 4; every snapshot
    /// before format 4) or narrow (key 4, version 4, end of the row 4, CRC 4), which format
    /// 4 writes when every key, version and row end fits in 32 bits.
    static let directoryEntrySize = 32
    static let narrowDirectoryEntrySize = 16
    /// A uniqueness index entry: wide (hash 8, entity 4, zero 4, key 8) or narrow (the
    /// hash's top 48 bits 6, entity 2, key 4).
    static let indexEntrySize = 24
    static let narrowIndexEntrySize = 12
    /// A schema index entry: wide (value 8, entity 4, position 4, key 8) or narrow (value
    /// 8, position 4, key 4).
    static let narrowSchemaIndexEntrySize = 16
    static let columnPartSize = 24
    /// Marks a schema index in an index part's constraint number. Readers before schema
    /// indexes look parts up by constraint number, so they pass these by.
    static let schemaIndexFlag = 0x8000_0000

    /// One entity's rows: a directory of fixed-size entries sorted by key, then the rows.
    struct EntityPart: Equatable {
        var rowCount: Int
        var directoryOffset: Int
        var rowsOffset: Int
        var rowsLength: Int
        /// CRC-32 of the whole directory.
        var directoryCRC: UInt32
        /// ``directoryEntrySize`` or ``narrowDirectoryEntrySize``.
        var entrySize: Int = Snapshot.directoryEntrySize

        var isNarrow: Bool { entrySize == Snapshot.narrowDirectoryEntrySize }
    }

    /// One uniqueness constraint's index: (hash of the values, entity, key) sorted; or one
    /// schema index (`constraint` has ``schemaIndexFlag`` set): (column value, entity,
    /// directory position, key) of the rows that have a value, sorted by value then key.
    struct IndexPart: Equatable {
        /// The owner's entity-table index, and the constraint's position among its
        /// constraints (or ``schemaIndexFlag`` and the schema index's number).
        var owner: Int
        var constraint: Int
        var count: Int
        var offset: Int
        var crc: UInt32
        /// What the index was built for (``BinaryStore/signature(of:in:)``).
        var signature: UInt32
        /// The size of an entry: ``indexEntrySize`` or, narrow,
        /// ``narrowIndexEntrySize`` (a uniqueness index) or ``narrowSchemaIndexEntrySize``.
        var entrySize: Int = Snapshot.indexEntrySize

        var isSchemaIndex: Bool { constraint & Snapshot.schemaIndexFlag != 0 }
        var isNarrow: Bool { entrySize != Snapshot.indexEntrySize }
        /// The bits of a hash a uniqueness index keeps: all, or narrow the top 48.
        var hashMask: UInt64 { isNarrow ? ~0xFFFF : ~0 }
    }

    /// One column of fixed-width values: where it is (its length follows from the row count).
    struct ColumnPart: Equatable {
        var entity: Int
        var slot: Int
        var kind: Column.Kind
        var offset: Int
        var crc: UInt32
        /// How many rows have a value (the others are nil).
        var present: Int
        /// The bytes of each value (``Column/width``).
        var width: Int = 8
    }

    /// One directory entry. The checksum covers key, version and the row's bytes, so a
    /// damaged entry or row is found when it is read.
    struct Entry: Equatable {
        var key: Int64
        var version: Int64
        var offset: Int
        var size: Int
        var crc: UInt32
    }

    /// Where the snapshot starts in the file.
    let base: Int
    let length: Int
    let entities: [EntityPart]
    let indexes: [IndexPart]
    let columns: [ColumnPart]

    // MARK: Reading

    /// Reads and checks the snapshot's tables (not its rows): a few hundred bytes.
    static func open(_ fd: Int32, base: Int, length: Int, entityCount: Int, path: String) throws -> Snapshot {
        func corrupt(_ reason: String) -> StoreError { .corrupt(path: path, reason: "snapshot at byte \(base): \(reason)") }
        let prefix = try FileIO.read(fd, count: prefixSize, at: base, path: path)
        guard prefix.count == prefixSize, length >= prefixSize, Array(prefix[0..<4]) == magic else { throw corrupt("no snapshot signature") }
        var reader = ByteReader(prefix, from: 4)
        let (entityTotal, indexTotal, crc) = try (Int(reader.u32()), Int(reader.u32()), reader.u32())
        guard entityTotal == entityCount, indexTotal <= 1 << 16 else { throw corrupt("its entity table does not match the store's entities") }
        let headSize = entityTotal * entityPartSize + indexTotal * indexPartSize
        guard headSize <= length - prefixSize else { throw corrupt("its tables run past its end") }
        var table = try FileIO.read(fd, count: headSize, at: base + prefixSize, path: path)
        guard table.count == headSize else { throw corrupt("its tables run past its end") }
        var entities: [EntityPart] = []
        var columnCounts: [Int] = []
        var indexes: [IndexPart] = []
        var columns: [ColumnPart] = []
        var tableReader = ByteReader(table)
        do {
            for _ in 0..<entityTotal {
                var part = EntityPart(
                    rowCount: Int(truncatingIfNeeded: try tableReader.u64()), directoryOffset: Int(truncatingIfNeeded: try tableReader.u64()),
                    rowsOffset: Int(truncatingIfNeeded: try tableReader.u64()), rowsLength: Int(truncatingIfNeeded: try tableReader.u64()),
                    directoryCRC: try tableReader.u32())
                // The entity's column count (zero before format 3; its columns follow the
                // indexes), and above it the size of a directory entry (zero before format 4: wide).
                let countAndSize = try tableReader.u32()
                let columnCount = Int(countAndSize & 0xFFFF)
                guard columnCount <= 1 << 12 else { throw corrupt("an entity claims \(columnCount) columns") }
                columnCounts.append(columnCount)
                switch countAndSize >> 16 {
                case 0: part.entrySize = directoryEntrySize
                case UInt32(narrowDirectoryEntrySize): part.entrySize = narrowDirectoryEntrySize
                default: throw corrupt("an entity's directory has entries of an unknown size")
                }
                // Checked in an order that cannot overflow, whatever the (checksummed) table says.
                guard part.rowCount >= 0, part.rowCount <= length / part.entrySize, part.directoryOffset >= 0,
                      part.directoryOffset <= length, part.rowsOffset == part.directoryOffset + part.rowCount * part.entrySize,
                      part.rowsLength >= 0, part.rowsOffset <= length, part.rowsLength <= length - part.rowsOffset
                else { throw corrupt("an entity's rows lie outside it") }
                entities.append(part)
            }
            for _ in 0..<indexTotal {
                // The owner, and above it the size of an entry (zero before format 4: wide).
                let ownerAndSize = try tableReader.u32()
                var part = IndexPart(
                    owner: Int(ownerAndSize & 0xFFFF), constraint: Int(try tableReader.u32()), count: Int(truncatingIfNeeded: try tableReader.u64()),
                    offset: Int(truncatingIfNeeded: try tableReader.u64()), crc: try tableReader.u32(), signature: try tableReader.u32())
                let narrow = part.isSchemaIndex ? narrowSchemaIndexEntrySize : narrowIndexEntrySize
                switch Int(ownerAndSize >> 16) {
                case 0: part.entrySize = indexEntrySize
                case narrow: part.entrySize = narrow
                default: throw corrupt("an index has entries of an unknown size")
                }
                guard part.owner < entityTotal, part.count >= 0, part.count <= length / part.entrySize, part.offset >= 0,
                      part.offset <= length - part.count * part.entrySize
                else { throw corrupt("an index lies outside it") }
                indexes.append(part)
            }
            let columnTotal = columnCounts.reduce(0, +)
            guard columnTotal * columnPartSize <= length - prefixSize - headSize else { throw corrupt("its tables run past its end") }
            let columnTable = try FileIO.read(fd, count: columnTotal * columnPartSize, at: base + prefixSize + headSize, path: path)
            guard columnTable.count == columnTotal * columnPartSize else { throw corrupt("its tables run past its end") }
            table += columnTable
            guard CRC32.checksum(table) == crc else { throw corrupt("the table checksum does not match") }
            tableReader = ByteReader(columnTable)
            for (entity, count) in columnCounts.enumerated() {
                for _ in 0..<count {
                    let slot = Int(try tableReader.u32())
                    // The kind, and above it the width of a value (zero before format 4: 8).
                    let kindAndWidth = try tableReader.u32()
                    guard let kind = Column.Kind(rawValue: kindAndWidth & 0xFF) else { throw corrupt("a column has an unknown kind") }
                    let width = kindAndWidth >> 8 == 0 ? 8 : Int(kindAndWidth >> 8)
                    guard Column.widths.contains(width) else { throw corrupt("a column has values of an unknown width") }
                    let offset = Int(truncatingIfNeeded: try tableReader.u64())
                    let crc = try tableReader.u32()
                    let present = Int(try tableReader.u32())
                    let rows = entities[entity].rowCount
                    guard slot < 1 << 16, present <= rows, offset >= 0, offset <= length,
                          Column.byteCount(rows: rows, present: present, width: width) <= length - offset else { throw corrupt("a column lies outside it") }
                    columns.append(ColumnPart(entity: entity, slot: slot, kind: kind, offset: offset, crc: crc, present: present, width: width))
                }
            }
        } catch is ByteReader.Truncated {
            throw corrupt("its tables are truncated")
        }
        return Snapshot(base: base, length: length, entities: entities, indexes: indexes, columns: columns)
    }

    /// Reads one column, checked against its checksum.
    func column(_ part: ColumnPart, fd: Int32, path: String) throws -> Column {
        let rows = entities[part.entity].rowCount
        let size = Column.byteCount(rows: rows, present: part.present, width: part.width)
        let bytes = try FileIO.read(fd, count: size, at: base + part.offset, path: path)
        guard bytes.count == size, CRC32.checksum(bytes) == part.crc,
              let column = Column(kind: part.kind, rows: rows, present: part.present, width: part.width, bytes: bytes) else {
            throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): a column checksum does not match")
        }
        return column
    }

    /// Which rows of a loaded entity had their checksum checked. Used under the store's lock.
    final class CheckedRows {
        private var bits: [UInt64]
        init(count: Int) { bits = [UInt64](repeating: 0, count: (count + 63) / 64) }
        func contains(_ i: Int) -> Bool { bits[i >> 6] & (1 << UInt64(i & 63)) != 0 }
        func insert(_ i: Int) { bits[i >> 6] |= 1 << UInt64(i & 63) }
    }

    /// An entity's directory and rows, read in one piece (for fetches that visit every row).
    struct Loaded {
        let part: EntityPart
        /// The directory followed by the rows.
        let bytes: [UInt8]
        /// The directory's keys, in order.
        let keys: [Int64]
        private let checked: CheckedRows

        init(part: EntityPart, bytes: [UInt8]) {
            self.part = part
            self.bytes = bytes
            keys = (0..<part.rowCount).map { Snapshot.key(in: bytes, at: $0, part: part) }
            checked = CheckedRows(count: part.rowCount)
        }

        func entry(at index: Int) -> Entry {
            Snapshot.entry(in: bytes, at: index, first: 0, part: part)
        }

        /// The directory position of a key.
        func find(_ key: Int64) -> Int? {
            var low = 0, high = keys.count
            while low < high {
                let mid = (low + high) / 2
                let found = keys[mid]
                if found == key { return mid }
                if found < key { low = mid + 1 } else { high = mid }
            }
            return nil
        }

        /// The row at a directory position: where its encoded slots start, checked against
        /// its checksum the first time it is asked for (the caller holds the store's lock).
        func row(at index: Int, path: String) throws -> (entry: Entry, start: Int) {
            let (entry, start) = try place(at: index, path: path)
            if !checked.contains(index) {
                guard Snapshot.checksum(entry, bytes[start..<start + entry.size]) == entry.crc else {
                    throw StoreError.corrupt(path: path, reason: "a snapshot row of key \(entry.key) does not match its checksum")
                }
                checked.insert(index)
            }
            return (entry, start)
        }

        /// The row at a directory position, its place checked but not its bytes: for a row
        /// the caller lists and will not read (the columns rejected it).
        func place(at index: Int, path: String) throws -> (entry: Entry, start: Int) {
            let entry = entry(at: index)
            let start = entry.offset &- part.directoryOffset
            guard entry.offset >= part.rowsOffset, start >= 0, entry.size >= 0, start <= bytes.count, entry.size <= bytes.count - start else {
                throw StoreError.corrupt(path: path, reason: "a snapshot row of key \(entry.key) lies outside its entity")
            }
            return (entry, start)
        }
    }

    /// Reads an entity's directory and rows, checking the directory's checksum and order.
    func load(entity index: Int, fd: Int32, path: String) throws -> Loaded {
        let part = entities[index]
        let count = part.rowsOffset + part.rowsLength - part.directoryOffset
        let bytes = try FileIO.read(fd, count: count, at: base + part.directoryOffset, path: path)
        let directoryLength = part.rowCount * part.entrySize
        guard bytes.count == count, CRC32.checksum(bytes[0..<directoryLength]) == part.directoryCRC else {
            throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): a directory checksum does not match")
        }
        let loaded = Loaded(part: part, bytes: bytes)
        var previous = Int64.min
        for key in loaded.keys {
            guard key > previous else { throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): a directory is out of order") }
            previous = key
        }
        // Each row is checked the first time it is read (rows a query's columns reject are
        // never read, nor checked).
        return loaded
    }

    /// Finds one row without reading the entity: a binary search over the directory in the
    /// file, then one read of the row. Returns its entry and encoded slots.
    func find(key: Int64, entity index: Int, fd: Int32, path: String) throws -> (entry: Entry, bytes: [UInt8])? {
        let part = entities[index]
        var low = 0, high = part.rowCount
        // Halve with single entries, then read the last few hundred in one go.
        while high - low > 128 {
            let mid = (low + high) / 2
            let bytes = try FileIO.read(fd, count: part.entrySize, at: base + part.directoryOffset + mid * part.entrySize, path: path)
            let found = Self.key(in: bytes, at: 0, part: part)
            if found == key { low = mid; high = mid + 1; break }
            if found < key { low = mid + 1 } else { high = mid }
        }
        guard low < high else { return nil }
        let (run, first) = try directoryRun(part, low..<high, fd: fd, path: path)
        for i in low..<high where Self.key(in: run, at: i - first, part: part) == key {
            let entry = Self.entry(in: run, at: i, first: first, part: part)
            return (entry, try readRow(entry, of: part, fd: fd, path: path))
        }
        return nil
    }

    /// The directory entries of `positions` as read from the file, and the position of the
    /// first entry read: a narrow entry holds where its row ends, so the one before is read too.
    private func directoryRun(_ part: EntityPart, _ positions: Range<Int>, fd: Int32, path: String) throws -> (bytes: [UInt8], first: Int) {
        let first = part.isNarrow ? max(0, positions.lowerBound - 1) : positions.lowerBound
        let count = (positions.upperBound - first) * part.entrySize
        let run = try FileIO.read(fd, count: count, at: base + part.directoryOffset + first * part.entrySize, path: path)
        guard run.count == count else { throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): a directory is truncated") }
        return (run, first)
    }

    /// The encoded slots a directory entry points at, checked to lie in the entity's rows
    /// and against the row's checksum.
    private func readRow(_ entry: Entry, of part: EntityPart, fd: Int32, path: String) throws -> [UInt8] {
        guard entry.offset >= part.rowsOffset, entry.size >= 0, entry.offset <= part.rowsOffset + part.rowsLength,
              entry.size <= part.rowsOffset + part.rowsLength - entry.offset else {
            throw StoreError.corrupt(path: path, reason: "a snapshot row of key \(entry.key) lies outside its entity")
        }
        let bytes = try FileIO.read(fd, count: entry.size, at: base + entry.offset, path: path)
        guard bytes.count == entry.size, Self.checksum(entry, bytes[...]) == entry.crc else {
            throw StoreError.corrupt(path: path, reason: "a snapshot row of key \(entry.key) does not match its checksum")
        }
        return bytes
    }

    /// The (entity, key) pairs an index lists under a hash.
    /// `nil` when there is no index for the constraint as the model defines it now.
    func candidates(owner: Int, constraint: Int, signature: UInt32, hash: UInt64, fd: Int32, path: String) throws -> [(entity: Int, key: Int64)]? {
        guard let part = indexes.first(where: { $0.owner == owner && $0.constraint == constraint && $0.signature == signature }) else { return nil }
        func read(_ range: Range<Int>) throws -> [UInt8] { try readEntries(part, range, fd: fd, path: path) }
        // The first entry whose hash is not below `hash` (as much of it as the index keeps).
        let hash = hash & part.hashMask
        var low = 0, high = part.count
        while high - low > 128 {
            let mid = (low + high) / 2
            if Self.indexEntry(in: try read(mid..<mid + 1), at: 0, part: part).value < hash { low = mid + 1 } else { high = mid }
        }
        var result: [(Int, Int64)] = []
        var start = low
        while start < part.count {
            let end = min(part.count, start + 128)
            let bytes = try read(start..<end)
            for i in 0..<(end - start) {
                let found = Self.indexEntry(in: bytes, at: i, part: part)
                if found.value < hash { continue }
                if found.value > hash { return result }
                result.append((found.entity, found.key))
            }
            start = end
        }
        return result
    }

    /// Entry `i` of index bytes that start with an entry: the hash (as much as the index
    /// keeps) or the value, the entity, the directory position (zero in a uniqueness index)
    /// and the key. Callers read whole entries.
    private static func indexEntry(in bytes: [UInt8], at i: Int, part: IndexPart) -> (value: UInt64, entity: Int, position: Int, key: Int64) {
        let at = i * part.entrySize
        guard at >= 0, bytes.count - at >= part.entrySize else { return (0, 0, 0, 0) }
        return bytes.withUnsafeBytes { raw in
            func u64(_ offset: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at + offset, as: UInt64.self)) }
            func u32(_ offset: Int) -> UInt32 { UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at + offset, as: UInt32.self)) }
            func u16(_ offset: Int) -> UInt16 { UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: at + offset, as: UInt16.self)) }
            switch (part.isNarrow, part.isSchemaIndex) {
            case (false, _): return (u64(0), Int(u32(8)), Int(u32(12)), Int64(bitPattern: u64(16)))
            case (true, true): return (u64(0), part.owner, Int(u32(8)), Int64(u32(12)))
            case (true, false): return ((UInt64(u32(2)) << 32 | UInt64(u16(0)) << 16), Int(u16(6)), 0, Int64(u32(8)))
            }
        }
    }

    /// Every entry of an index, checked against its checksum (for integrity checks).
    func indexEntries(_ part: IndexPart, fd: Int32, path: String) throws -> [(hash: UInt64, entity: Int, position: Int, key: Int64)] {
        let bytes = try FileIO.read(fd, count: part.count * part.entrySize, at: base + part.offset, path: path)
        guard bytes.count == part.count * part.entrySize, CRC32.checksum(bytes) == part.crc else {
            throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): an index checksum does not match")
        }
        return (0..<part.count).map { i in
            let entry = Self.indexEntry(in: bytes, at: i, part: part)
            return (entry.value, entry.entity, entry.position, entry.key)
        }
    }

    /// One end of a range: a column value (as the column stores it) and whether it is in.
    struct Bound {
        var bits: UInt64
        var inclusive: Bool
    }

    /// The (directory position, key) of the rows a schema index lists between two bounds
    /// (values compared as `kind` orders them), in index order: a binary search of the
    /// entries in the file, then one read of the range. The entries are not checksummed
    /// here (``indexEntries(_:fd:path:)`` is, for integrity checks); each position is
    /// checked against the row's directory entry by the caller.
    func range(_ part: IndexPart, kind: Column.Kind, from lower: Bound?, to upper: Bound?, fd: Int32, path: String) throws -> [(position: Int, key: Int64)] {
        try entries(part, try span(part, kind: kind, from: lower, to: upper, fd: fd, path: path), fd: fd, path: path)
    }

    /// The (directory position, key) of a span of an index's entries (from ``span(_:kind:from:to:fd:path:)``).
    func entries(_ part: IndexPart, _ span: Range<Int>, fd: Int32, path: String) throws -> [(position: Int, key: Int64)] {
        guard !span.isEmpty else { return [] }
        let bytes = try readEntries(part, span, fd: fd, path: path)
        return (0..<span.count).map { i in
            let entry = Self.indexEntry(in: bytes, at: i, part: part)
            return (entry.position, entry.key)
        }
    }

    /// The value (as its column stores it) of entry `i` of an index, in index order.
    func entryValue(_ part: IndexPart, at i: Int, fd: Int32, path: String) throws -> UInt64 {
        guard (0..<part.count).contains(i) else { throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): an index is truncated") }
        return Self.indexEntry(in: try readEntries(part, i..<i + 1, fd: fd, path: path), at: 0, part: part).value
    }

    private func readEntries(_ part: IndexPart, _ range: Range<Int>, fd: Int32, path: String) throws -> [UInt8] {
        let bytes = try FileIO.read(fd, count: range.count * part.entrySize, at: base + part.offset + range.lowerBound * part.entrySize, path: path)
        guard bytes.count == range.count * part.entrySize else { throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): an index is truncated") }
        return bytes
    }

    /// The entries between two bounds: a binary search that reads one entry per step until
    /// at most ``searchBlock`` entries remain, then reads those at once and ends in memory;
    /// the upper bound's search starts where the lower one's ended.
    func span(_ part: IndexPart, kind: Column.Kind, from lower: Bound?, to upper: Bound?, fd: Int32, path: String) throws -> Range<Int> {
        let less = kind.less
        // The first entry from `low` for which `before` is false (entries are sorted so it is monotone).
        func partition(from low: Int, _ before: (UInt64) -> Bool) throws -> Int {
            var low = low, high = part.count
            while high - low > Self.searchBlock {
                let mid = (low + high) / 2
                if before(Self.indexEntry(in: try readEntries(part, mid..<mid + 1, fd: fd, path: path), at: 0, part: part).value) { low = mid + 1 } else { high = mid }
            }
            guard low < high else { return low }
            let block = try readEntries(part, low..<high, fd: fd, path: path)
            var first = 0, last = high - low
            while first < last {
                let mid = (first + last) / 2
                if before(Self.indexEntry(in: block, at: mid, part: part).value) { first = mid + 1 } else { last = mid }
            }
            return low + first
        }
        let start = try lower.map { bound in try partition(from: 0) { bound.inclusive ? less($0, bound.bits) : !less(bound.bits, $0) } } ?? 0
        let end = try upper.map { bound in try partition(from: start) { bound.inclusive ? !less(bound.bits, $0) : less($0, bound.bits) } } ?? part.count
        return start < end ? start..<end : start..<start
    }

    /// Entries a binary search of an index reads in one piece once its range is this narrow
    /// (4 KiB of narrow schema index entries).
    static let searchBlock = 256

    /// One row at a directory position, without reading the entity: its entry and encoded
    /// slots, checked against the row's checksum. Nil when the position is past the directory.
    func row(at position: Int, entity index: Int, fd: Int32, path: String) throws -> (entry: Entry, bytes: [UInt8])? {
        let part = entities[index]
        guard position >= 0, position < part.rowCount else { return nil }
        let (run, first) = try directoryRun(part, position..<position + 1, fd: fd, path: path)
        let entry = Self.entry(in: run, at: position, first: first, part: part)
        return (entry, try readRow(entry, of: part, fd: fd, path: path))
    }

    /// The key of entry `i` of directory bytes that start with an entry (zero when short).
    private static func key(in bytes: [UInt8], at i: Int, part: EntityPart) -> Int64 {
        let at = i * part.entrySize
        guard at >= 0, bytes.count - at >= part.entrySize else { return 0 }
        return bytes.withUnsafeBytes { raw in
            part.isNarrow ? Int64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
                : Int64(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)))
        }
    }

    /// The entry at directory position `position`, from directory bytes that start with the
    /// entry at position `first` (for a narrow entry, the one before it as well, when there
    /// is one). Callers check that the directory holds the entry; a short one reads as zeros.
    private static func entry(in bytes: [UInt8], at position: Int, first: Int, part: EntityPart) -> Entry {
        let at = (position - first) * part.entrySize
        guard at >= 0, bytes.count - at >= part.entrySize, !part.isNarrow || position == 0 || at >= part.entrySize else {
            return Entry(key: 0, version: 0, offset: 0, size: 0, crc: 0)
        }
        return bytes.withUnsafeBytes { raw in
            func u64(_ offset: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at + offset, as: UInt64.self)) }
            func u32(_ offset: Int) -> UInt32 { UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at + offset, as: UInt32.self)) }
            guard part.isNarrow else {
                return Entry(key: Int64(bitPattern: u64(0)), version: Int64(bitPattern: u64(8)), offset: Int(truncatingIfNeeded: u64(16)),
                             size: Int(u32(24)), crc: u32(28))
            }
            // A row starts where the one before it ends (the first at the entity's rows).
            let start = position == 0 ? 0 : Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at - part.entrySize + 8, as: UInt32.self)))
            return Entry(key: Int64(u32(0)), version: Int64(u32(4)), offset: part.rowsOffset + start, size: Int(u32(8)) - start, crc: u32(12))
        }
    }

    static func checksum(_ entry: Entry, _ row: ArraySlice<UInt8>) -> UInt32 {
        // Key and version little-endian, as ByteWriter writes them, without an array.
        let head = (UInt64(bitPattern: entry.key).littleEndian, UInt64(bitPattern: entry.version).littleEndian)
        let headCRC = withUnsafeBytes(of: head) { CRC32.checksum($0) }
        return CRC32.checksum(row, continuing: headCRC)
    }

    /// FNV-1a: a hash that is the same in every process (Swift's `Hasher` is seeded per run).
    static func hash(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    // MARK: Writing

    /// One row to write: its key, version and encoded slots (`length` bytes of `source`
    /// from `start`: the commit or snapshot part it was read from, not a copy).
    struct Row {
        var key: Int64
        var version: Int64
        var source: [UInt8]
        var start: Int
        var length: Int

        var bytes: ArraySlice<UInt8> { source[start..<start + length] }
    }

    /// One index to write. A uniqueness index is written sorted by (hash, entity, key); a
    /// schema index (with `positions`) in the order given, each entry with its row's
    /// directory position.
    struct Index {
        var owner: Int
        var constraint: Int
        var signature: UInt32
        var entries: [(hash: UInt64, entity: Int, key: Int64)]
        var positions: [Int]? = nil
    }

    /// The bytes of a snapshot: `rows[i]` are entity i's rows sorted by key, `columns[i]` its
    /// columns (in the rows' order). `narrow` (format 4): directories, indexes and columns
    /// take the narrow entries and values wherever theirs fit; otherwise (and always when
    /// false, as format 3 wrote them) wide ones.
    static func bytes(rows: [[Row]], indexes: [Index], columns: [[(slot: Int, column: Column)]], narrow: Bool = true) -> [UInt8] {
        let columnTotal = columns.reduce(0) { $0 + $1.count }
        let tableSize = rows.count * entityPartSize + indexes.count * indexPartSize + columnTotal * columnPartSize
        var body = ByteWriter()
        var offset = prefixSize + tableSize
        var parts: [EntityPart] = []
        let fits32 = { (n: Int64) in n >= 0 && n <= Int64(UInt32.max) }
        for entityRows in rows {
            let rowsLength = entityRows.reduce(0) { $0 + $1.length }
            let entrySize = narrow && rowsLength <= Int(UInt32.max) && entityRows.allSatisfy({ fits32($0.key) && fits32($0.version) })
                ? narrowDirectoryEntrySize : directoryEntrySize
            let directoryOffset = offset
            let rowsOffset = directoryOffset + entityRows.count * entrySize
            var directory = ByteWriter()
            directory.bytes.reserveCapacity(entityRows.count * entrySize)
            var rowOffset = rowsOffset
            for row in entityRows {
                var entry = Entry(key: row.key, version: row.version, offset: rowOffset, size: row.bytes.count, crc: 0)
                entry.crc = checksum(entry, row.bytes)
                rowOffset += row.bytes.count
                if entrySize == narrowDirectoryEntrySize {
                    directory.u32(UInt32(entry.key))
                    directory.u32(UInt32(entry.version))
                    directory.u32(UInt32(rowOffset - rowsOffset))
                } else {
                    directory.u64(UInt64(bitPattern: entry.key))
                    directory.u64(UInt64(bitPattern: entry.version))
                    directory.u64(UInt64(entry.offset))
                    directory.u32(UInt32(entry.size))
                }
                directory.u32(entry.crc)
            }
            parts.append(EntityPart(rowCount: entityRows.count, directoryOffset: directoryOffset, rowsOffset: rowsOffset,
                                    rowsLength: rowOffset - rowsOffset, directoryCRC: CRC32.checksum(directory.bytes), entrySize: entrySize))
            body.bytes += directory.bytes
            for row in entityRows { body.bytes += row.bytes }
            offset = rowOffset
        }
        var indexParts: [IndexPart] = []
        for index in indexes {
            var entries = ByteWriter()
            let entrySize: Int
            if let positions = index.positions {
                let isNarrow = narrow && index.owner <= Int(UInt16.max) && positions.allSatisfy { $0 <= Int(UInt32.max) }
                    && index.entries.allSatisfy { fits32($0.key) }
                entrySize = isNarrow ? narrowSchemaIndexEntrySize : indexEntrySize
                for (entry, position) in zip(index.entries, positions) {
                    entries.u64(entry.hash)
                    if !isNarrow { entries.u32(UInt32(entry.entity)) }
                    entries.u32(UInt32(position))
                    if isNarrow { entries.u32(UInt32(entry.key)) } else { entries.u64(UInt64(bitPattern: entry.key)) }
                }
            } else {
                let isNarrow = narrow && index.owner <= Int(UInt16.max) && index.entries.allSatisfy { $0.entity <= Int(UInt16.max) && fits32($0.key) }
                entrySize = isNarrow ? narrowIndexEntrySize : indexEntrySize
                // Sorted by as much of the hash as is written, so a search finds every entry of one.
                let mask: UInt64 = isNarrow ? ~0xFFFF : ~0
                for entry in index.entries.sorted(by: { ($0.hash & mask, $0.entity, $0.key) < ($1.hash & mask, $1.entity, $1.key) }) {
                    if isNarrow {
                        entries.u16(UInt16(truncatingIfNeeded: entry.hash >> 16))
                        entries.u32(UInt32(truncatingIfNeeded: entry.hash >> 32))
                        entries.u16(UInt16(entry.entity))
                        entries.u32(UInt32(entry.key))
                    } else {
                        entries.u64(entry.hash)
                        entries.u32(UInt32(entry.entity))
                        entries.u32(0)
                        entries.u64(UInt64(bitPattern: entry.key))
                    }
                }
            }
            indexParts.append(IndexPart(owner: index.owner, constraint: index.constraint, count: index.entries.count, offset: offset,
                                        crc: CRC32.checksum(entries.bytes), signature: index.signature, entrySize: entrySize))
            body.bytes += entries.bytes
            offset += entries.bytes.count
        }
        var columnParts: [ColumnPart] = []
        for (entity, entityColumns) in columns.enumerated() {
            for (slot, column) in entityColumns {
                let column = narrow ? column : column.widened
                let bytes = column.bytes
                columnParts.append(ColumnPart(entity: entity, slot: slot, kind: column.kind, offset: offset, crc: CRC32.checksum(bytes),
                                              present: column.present, width: column.width))
                body.bytes += bytes
                offset += bytes.count
            }
        }
        var table = ByteWriter()
        for (entity, part) in parts.enumerated() {
            table.u64(UInt64(part.rowCount))
            table.u64(UInt64(part.directoryOffset))
            table.u64(UInt64(part.rowsOffset))
            table.u64(UInt64(part.rowsLength))
            table.u32(part.directoryCRC)
            // A wide directory says 0, as before format 4.
            table.u32(UInt32(entity < columns.count ? columns[entity].count : 0) | UInt32(part.isNarrow ? part.entrySize : 0) << 16)
        }
        for part in indexParts {
            table.u32(UInt32(part.owner) | UInt32(part.isNarrow ? part.entrySize : 0) << 16)
            table.u32(UInt32(part.constraint))
            table.u64(UInt64(part.count))
            table.u64(UInt64(part.offset))
            table.u32(part.crc)
            table.u32(part.signature)
        }
        for part in columnParts {
            table.u32(UInt32(part.slot))
            table.u32(part.kind.rawValue | UInt32(part.width == 8 ? 0 : part.width) << 8)
            table.u64(UInt64(part.offset))
            table.u32(part.crc)
            table.u32(UInt32(part.present))
        }
        var result = ByteWriter()
        result.bytes = magic
        result.u32(UInt32(rows.count))
        result.u32(UInt32(indexes.count))
        result.u32(CRC32.checksum(table.bytes))
        return result.bytes + table.bytes + body.bytes
    }
}

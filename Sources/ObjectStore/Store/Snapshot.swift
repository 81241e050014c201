import Foundation
import ObjectStoreModel

/// The compacted part of a format-2 binary store file: every live row as of the last
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
    static let directoryEntrySize = 32
    static let indexEntrySize = 24
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
                let part = EntityPart(
                    rowCount: Int(truncatingIfNeeded: try tableReader.u64()), directoryOffset: Int(truncatingIfNeeded: try tableReader.u64()),
                    rowsOffset: Int(truncatingIfNeeded: try tableReader.u64()), rowsLength: Int(truncatingIfNeeded: try tableReader.u64()),
                    directoryCRC: try tableReader.u32())
                // The entity's column count (zero before format 3): its columns follow the indexes.
                let columnCount = Int(try tableReader.u32())
                guard columnCount <= 1 << 12 else { throw corrupt("an entity claims \(columnCount) columns") }
                columnCounts.append(columnCount)
                // Checked in an order that cannot overflow, whatever the (checksummed) table says.
                guard part.rowCount >= 0, part.rowCount <= length / directoryEntrySize, part.directoryOffset >= 0,
                      part.directoryOffset <= length, part.rowsOffset == part.directoryOffset + part.rowCount * directoryEntrySize,
                      part.rowsLength >= 0, part.rowsOffset <= length, part.rowsLength <= length - part.rowsOffset
                else { throw corrupt("an entity's rows lie outside it") }
                entities.append(part)
            }
            for _ in 0..<indexTotal {
                let part = IndexPart(
                    owner: Int(try tableReader.u32()), constraint: Int(try tableReader.u32()), count: Int(truncatingIfNeeded: try tableReader.u64()),
                    offset: Int(truncatingIfNeeded: try tableReader.u64()), crc: try tableReader.u32(), signature: try tableReader.u32())
                guard part.owner < entityTotal, part.count >= 0, part.count <= length / indexEntrySize, part.offset >= 0,
                      part.offset <= length - part.count * indexEntrySize
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
                    guard let kind = Column.Kind(rawValue: try tableReader.u32()) else { throw corrupt("a column has an unknown kind") }
                    let offset = Int(truncatingIfNeeded: try tableReader.u64())
                    let crc = try tableReader.u32()
                    let present = Int(try tableReader.u32())
                    let rows = entities[entity].rowCount
                    guard slot < 1 << 16, present <= rows, offset >= 0, offset <= length,
                          Column.byteCount(rows: rows, present: present) <= length - offset else { throw corrupt("a column lies outside it") }
                    columns.append(ColumnPart(entity: entity, slot: slot, kind: kind, offset: offset, crc: crc, present: present))
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
        let size = Column.byteCount(rows: rows, present: part.present)
        let bytes = try FileIO.read(fd, count: size, at: base + part.offset, path: path)
        guard bytes.count == size, CRC32.checksum(bytes) == part.crc,
              let column = Column(kind: part.kind, rows: rows, present: part.present, bytes: bytes) else {
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
            keys = (0..<part.rowCount).map { Snapshot.entry(in: bytes, at: $0 * Snapshot.directoryEntrySize).key }
            checked = CheckedRows(count: part.rowCount)
        }

        func entry(at index: Int) -> Entry {
            Snapshot.entry(in: bytes, at: index * Snapshot.directoryEntrySize)
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
        let directoryLength = part.rowCount * Self.directoryEntrySize
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
            let bytes = try FileIO.read(fd, count: 8, at: base + part.directoryOffset + mid * Self.directoryEntrySize, path: path)
            var reader = ByteReader(bytes)
            let found = Int64(bitPattern: (try? reader.u64()) ?? 0)
            if found == key { low = mid; high = mid + 1; break }
            if found < key { low = mid + 1 } else { high = mid }
        }
        guard low < high else { return nil }
        let run = try FileIO.read(fd, count: (high - low) * Self.directoryEntrySize, at: base + part.directoryOffset + low * Self.directoryEntrySize, path: path)
        guard run.count == (high - low) * Self.directoryEntrySize else { throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): a directory is truncated") }
        for i in 0..<(high - low) {
            let entry = Self.entry(in: run, at: i * Self.directoryEntrySize)
            guard entry.key == key else { continue }
            return (entry, try readRow(entry, of: part, fd: fd, path: path))
        }
        return nil
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
        // The first entry whose hash is not below `hash`.
        var low = 0, high = part.count
        while high - low > 128 {
            let mid = (low + high) / 2
            var reader = ByteReader(try read(mid..<mid + 1))
            if (try? reader.u64()) ?? 0 < hash { low = mid + 1 } else { high = mid }
        }
        var result: [(Int, Int64)] = []
        var start = low
        while start < part.count {
            let end = min(part.count, start + 128)
            let bytes = try read(start..<end)
            var reader = ByteReader(bytes)
            for _ in start..<end {
                let (found, entity, _, key) = try (reader.u64(), reader.u32(), reader.u32(), Int64(bitPattern: reader.u64()))
                if found < hash { continue }
                if found > hash { return result }
                result.append((Int(entity), key))
            }
            start = end
        }
        return result
    }

    /// Every entry of an index, checked against its checksum (for integrity checks).
    func indexEntries(_ part: IndexPart, fd: Int32, path: String) throws -> [(hash: UInt64, entity: Int, position: Int, key: Int64)] {
        let bytes = try FileIO.read(fd, count: part.count * Self.indexEntrySize, at: base + part.offset, path: path)
        guard bytes.count == part.count * Self.indexEntrySize, CRC32.checksum(bytes) == part.crc else {
            throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): an index checksum does not match")
        }
        var reader = ByteReader(bytes)
        var result: [(UInt64, Int, Int, Int64)] = []
        for _ in 0..<part.count {
            let (hash, entity, position, key) = try (reader.u64(), reader.u32(), reader.u32(), Int64(bitPattern: reader.u64()))
            result.append((hash, Int(entity), Int(position), key))
        }
        return result
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
        let entries = try span(part, kind: kind, from: lower, to: upper, fd: fd, path: path)
        guard !entries.isEmpty else { return [] }
        var reader = ByteReader(try readEntries(part, entries, fd: fd, path: path))
        var result: [(position: Int, key: Int64)] = []
        result.reserveCapacity(entries.count)
        for _ in entries {
            let (_, _, position, key) = try (reader.u64(), reader.u32(), reader.u32(), Int64(bitPattern: reader.u64()))
            result.append((Int(position), key))
        }
        return result
    }

    /// The value (as its column stores it) of entry `i` of an index, in index order.
    func entryValue(_ part: IndexPart, at i: Int, fd: Int32, path: String) throws -> UInt64 {
        guard (0..<part.count).contains(i) else { throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): an index is truncated") }
        var reader = ByteReader(try readEntries(part, i..<i + 1, fd: fd, path: path))
        return try reader.u64()
    }

    /// How many rows ``range(_:kind:from:to:fd:path:)`` would list (a binary search only).
    func count(_ part: IndexPart, kind: Column.Kind, from lower: Bound?, to upper: Bound?, fd: Int32, path: String) throws -> Int {
        try span(part, kind: kind, from: lower, to: upper, fd: fd, path: path).count
    }

    private func readEntries(_ part: IndexPart, _ range: Range<Int>, fd: Int32, path: String) throws -> [UInt8] {
        let bytes = try FileIO.read(fd, count: range.count * Self.indexEntrySize, at: base + part.offset + range.lowerBound * Self.indexEntrySize, path: path)
        guard bytes.count == range.count * Self.indexEntrySize else { throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): an index is truncated") }
        return bytes
    }

    /// The entries between two bounds.
    private func span(_ part: IndexPart, kind: Column.Kind, from lower: Bound?, to upper: Bound?, fd: Int32, path: String) throws -> Range<Int> {
        func value(at i: Int) throws -> UInt64 {
            var reader = ByteReader(try readEntries(part, i..<i + 1, fd: fd, path: path))
            return try reader.u64()
        }
        let less = kind.less
        // The first entry for which `before` is false (entries are sorted so it is monotone).
        func partition(_ before: (UInt64) -> Bool) throws -> Int {
            var low = 0, high = part.count
            while low < high {
                let mid = (low + high) / 2
                if before(try value(at: mid)) { low = mid + 1 } else { high = mid }
            }
            return low
        }
        let start = try lower.map { bound in try partition { bound.inclusive ? less($0, bound.bits) : !less(bound.bits, $0) } } ?? 0
        let end = try upper.map { bound in try partition { bound.inclusive ? !less(bound.bits, $0) : less($0, bound.bits) } } ?? part.count
        return start < end ? start..<end : start..<start
    }

    /// One row at a directory position, without reading the entity: its entry and encoded
    /// slots, checked against the row's checksum. Nil when the position is past the directory.
    func row(at position: Int, entity index: Int, fd: Int32, path: String) throws -> (entry: Entry, bytes: [UInt8])? {
        let part = entities[index]
        guard position >= 0, position < part.rowCount else { return nil }
        let raw = try FileIO.read(fd, count: Self.directoryEntrySize, at: base + part.directoryOffset + position * Self.directoryEntrySize, path: path)
        guard raw.count == Self.directoryEntrySize else { throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): a directory is truncated") }
        let entry = Self.entry(in: raw, at: 0)
        return (entry, try readRow(entry, of: part, fd: fd, path: path))
    }

    private static func entry(in bytes: [UInt8], at position: Int) -> Entry {
        // Callers check that the directory holds the entry; a short one reads as zeros.
        guard position >= 0, bytes.count - position >= directoryEntrySize else { return Entry(key: 0, version: 0, offset: 0, size: 0, crc: 0) }
        return bytes.withUnsafeBytes { raw in
            func u64(_ at: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: position + at, as: UInt64.self)) }
            func u32(_ at: Int) -> UInt32 { UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: position + at, as: UInt32.self)) }
            return Entry(key: Int64(bitPattern: u64(0)), version: Int64(bitPattern: u64(8)), offset: Int(truncatingIfNeeded: u64(16)),
                         size: Int(u32(24)), crc: u32(28))
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
    /// columns (in the rows' order).
    static func bytes(rows: [[Row]], indexes: [Index], columns: [[(slot: Int, column: Column)]]) -> [UInt8] {
        let columnTotal = columns.reduce(0) { $0 + $1.count }
        let tableSize = rows.count * entityPartSize + indexes.count * indexPartSize + columnTotal * columnPartSize
        var body = ByteWriter()
        var offset = prefixSize + tableSize
        var parts: [EntityPart] = []
        for entityRows in rows {
            let directoryOffset = offset
            let rowsOffset = directoryOffset + entityRows.count * directoryEntrySize
            var directory = ByteWriter()
            var rowOffset = rowsOffset
            for row in entityRows {
                var entry = Entry(key: row.key, version: row.version, offset: rowOffset, size: row.bytes.count, crc: 0)
                entry.crc = checksum(entry, row.bytes)
                directory.u64(UInt64(bitPattern: entry.key))
                directory.u64(UInt64(bitPattern: entry.version))
                directory.u64(UInt64(entry.offset))
                directory.u32(UInt32(entry.size))
                directory.u32(entry.crc)
                rowOffset += row.bytes.count
            }
            parts.append(EntityPart(rowCount: entityRows.count, directoryOffset: directoryOffset, rowsOffset: rowsOffset,
                                    rowsLength: rowOffset - rowsOffset, directoryCRC: CRC32.checksum(directory.bytes)))
            body.bytes += directory.bytes
            for row in entityRows { body.bytes += row.bytes }
            offset = rowOffset
        }
        var indexParts: [IndexPart] = []
        for index in indexes {
            var entries = ByteWriter()
            if let positions = index.positions {
                for (entry, position) in zip(index.entries, positions) {
                    entries.u64(entry.hash)
                    entries.u32(UInt32(entry.entity))
                    entries.u32(UInt32(position))
                    entries.u64(UInt64(bitPattern: entry.key))
                }
            } else {
                for entry in index.entries.sorted(by: { ($0.hash, $0.entity, $0.key) < ($1.hash, $1.entity, $1.key) }) {
                    entries.u64(entry.hash)
                    entries.u32(UInt32(entry.entity))
                    entries.u32(0)
                    entries.u64(UInt64(bitPattern: entry.key))
                }
            }
            indexParts.append(IndexPart(owner: index.owner, constraint: index.constraint, count: index.entries.count, offset: offset,
                                        crc: CRC32.checksum(entries.bytes), signature: index.signature))
            body.bytes += entries.bytes
            offset += entries.bytes.count
        }
        var columnParts: [ColumnPart] = []
        for (entity, entityColumns) in columns.enumerated() {
            for (slot, column) in entityColumns {
                let bytes = column.bytes
                columnParts.append(ColumnPart(entity: entity, slot: slot, kind: column.kind, offset: offset, crc: CRC32.checksum(bytes), present: column.present))
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
            table.u32(UInt32(entity < columns.count ? columns[entity].count : 0))
        }
        for part in indexParts {
            table.u32(UInt32(part.owner))
            table.u32(UInt32(part.constraint))
            table.u64(UInt64(part.count))
            table.u64(UInt64(part.offset))
            table.u32(part.crc)
            table.u32(part.signature)
        }
        for part in columnParts {
            table.u32(UInt32(part.slot))
            table.u32(part.kind.rawValue)
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

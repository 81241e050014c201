import Foundation
import ObjectStoreModel

/// The compacted part of a binary store file (format 2 and later): every live row as of the last
/// compaction, laid out so that opening reads only a small table (docs/store-format.md,
/// "Snapshot"). A row is read, and its checksum checked, when it is asked for; an entity's
/// directory and rows are read in one piece when all of them are.
///
/// Offsets are relative to the snapshot's first byte. Every integer is little-endian.
package struct Snapshot {
    package static let magic: [UInt8] = [0x4F, 0x53, 0x4E, 0x50]  // O S N P
    package static let prefixSize = 16
    package static let entityPartSize = 40
    package static let indexPartSize = 32
    /// A directory entry: wide (key 8, version 8, offset 8, size 4, CRC 4; every snapshot
    /// before format 4), narrow (key 4, version 4, end of the row 4, CRC 4), which format 4
    /// writes when every key, version and row end fits in 32 bits, or packed (format 5: key,
    /// version and end each in as few bytes as the entity's largest needs, then CRC 4).
    package static let directoryEntrySize = 32
    package static let narrowDirectoryEntrySize = 16
    /// A uniqueness index entry: wide (hash 8, entity 4, zero 4, key 8) or narrow (the
    /// hash's top 48 bits 6, entity 2, key 4).
    package static let indexEntrySize = 24
    package static let narrowIndexEntrySize = 12
    /// A schema index entry: wide (value 8, entity 4, position 4, key 8) or narrow (value
    /// 8, position 4, key 4).
    package static let narrowSchemaIndexEntrySize = 16
    package static let columnPartSize = 24
    /// Marks packed entry widths in a table's size field (format 5).
    package static let packedFlag: UInt32 = 0x8000

    /// How entries are laid out: as format 3 wrote them (wide), as format 4 did (narrow
    /// where they fit), as format 5 did (packed: each field as wide as its largest value),
    /// or as format 6 does (dense: packed, and a directory of consecutive keys writes none).
    package enum Layout: Sendable {
        case wide, narrow, packed, dense
    }

    /// The widths of a directory entry that holds where its row ends (narrow: 4, 4, 4),
    /// before the row's CRC-32.
    package struct DirectoryWidths: Equatable {
        package var key: Int
        package var version: Int
        package var end: Int

        package static let narrow = DirectoryWidths(key: 4, version: 4, end: 4)
        /// The entry's size: the three fields and the row's CRC-32.
        package var entrySize: Int { key + version + end + 4 }
        /// The table's size field for them (format 5).
        package var code: UInt32 { packedFlag | UInt32(key) | UInt32(version) << 4 | UInt32(end) << 8 }

        package init(key: Int, version: Int, end: Int) {
            self.key = key
            self.version = version
            self.end = end
        }

        /// The widths a packed size field says, nil when it says none or one out of range.
        package init?(code: UInt32) {
            guard code & packedFlag != 0, code & ~(packedFlag | 0xFFF) == 0 else { return nil }
            (key, version, end) = (Int(code & 0xF), Int(code >> 4 & 0xF), Int(code >> 8 & 0xF))
            // Key width 0 (format 6): the keys are consecutive, from the entity's first key.
            guard (0...8).contains(key), (1...8).contains(version), (1...8).contains(end) else { return nil }
        }
    }

    /// The widths of a narrow or packed index entry: a uniqueness index's kept hash bytes
    /// (its top ones), entity bytes (0: every entry is the owner's) and key bytes; a schema
    /// index's value bytes, directory position bytes and key bytes, and whether a narrow
    /// value stands for a Double (a double or date column's whole number).
    package struct IndexWidths: Equatable {
        package var value: Int
        package var middle: Int
        package var key: Int
        package var doubles = false

        package static let narrowUniqueness = IndexWidths(value: 6, middle: 2, key: 4)
        package static let narrowSchema = IndexWidths(value: 8, middle: 4, key: 4)
        package var entrySize: Int { value + middle + key }
        package var code: UInt32 { packedFlag | UInt32(value) | UInt32(middle) << 4 | UInt32(key) << 8 | (doubles ? 0x1000 : 0) }

        package init(value: Int, middle: Int, key: Int, doubles: Bool = false) {
            self.value = value
            self.middle = middle
            self.key = key
            self.doubles = doubles
        }

        package init?(code: UInt32, schema: Bool) {
            guard code & packedFlag != 0, code & ~(packedFlag | 0x1FFF) == 0 else { return nil }
            (value, middle, key, doubles) = (Int(code & 0xF), Int(code >> 4 & 0xF), Int(code >> 8 & 0xF), code & 0x1000 != 0)
            guard (1...8).contains(value), (schema ? 1...8 : 0...8).contains(middle), (1...8).contains(key), schema || !doubles else { return nil }
        }
    }
    /// Marks a schema index in an index part's constraint number. Readers before schema
    /// indexes look parts up by constraint number, so they pass these by.
    package static let schemaIndexFlag = 0x8000_0000

    /// One entity's rows: a directory of fixed-size entries sorted by key, then the rows.
    package struct EntityPart: Equatable {
        package var rowCount: Int
        package var directoryOffset: Int
        package var rowsOffset: Int
        package var rowsLength: Int
        /// CRC-32 of the whole directory.
        package var directoryCRC: UInt32
        /// Nil for wide entries; otherwise the widths of entries that hold where their row ends.
        package var widths: DirectoryWidths? = nil
        /// The first key of a directory whose keys are consecutive and not written (key
        /// width 0, format 6): the row at position i has key `firstKey + i`. The table's
        /// rows-offset field holds it (the rows follow the directory).
        package var firstKey: Int64? = nil
        /// ``directoryEntrySize``, or the size of the narrow or packed entries ``widths`` gives.
        package var entrySize: Int { widths?.entrySize ?? Snapshot.directoryEntrySize }

        /// Whether entries hold where their row ends (narrow or packed), not offset and size.
        package var isNarrow: Bool { widths != nil }
        /// The directory's bytes.
        package var directoryLength: Int { rowCount * entrySize }
    }

    /// One uniqueness constraint's index: (hash of the values, entity, key) sorted; or one
    /// schema index (`constraint` has ``schemaIndexFlag`` set): (column value, entity,
    /// directory position, key) of the rows that have a value, sorted by value then key.
    package struct IndexPart: Equatable {
        /// The owner's entity-table index, and the constraint's position among its
        /// constraints (or ``schemaIndexFlag`` and the schema index's number).
        package var owner: Int
        package var constraint: Int
        package var count: Int
        package var offset: Int
        package var crc: UInt32
        /// What the index was built for (``BinaryStore/signature(of:in:)``).
        package var signature: UInt32
        /// Nil for wide entries.
        package var widths: IndexWidths? = nil
        /// The size of an entry: ``indexEntrySize``, or the size of the narrow or packed
        /// entries ``widths`` gives.
        package var entrySize: Int { widths?.entrySize ?? Snapshot.indexEntrySize }

        package var isSchemaIndex: Bool { constraint & Snapshot.schemaIndexFlag != 0 }
        package var isNarrow: Bool { widths != nil }
        /// The bits of a hash a uniqueness index keeps: all, or the top ones its entries hold
        /// (48 narrow).
        package var hashMask: UInt64 {
            guard let widths, !isSchemaIndex else { return ~0 }
            return ~0 << UInt64(64 - 8 * widths.value)
        }
    }

    /// One column of fixed-width values: where it is (its length follows from the row count).
    package struct ColumnPart: Equatable {
        package var entity: Int
        package var slot: Int
        package var kind: Column.Kind
        package var offset: Int
        package var crc: UInt32
        /// How many rows have a value (the others are nil).
        package var present: Int
        /// The bytes of each value (``Column/width``).
        package var width: Int = 8
    }

    /// One directory entry. The checksum covers key, version and the row's bytes, so a
    /// damaged entry or row is found when it is read.
    package struct Entry: Equatable {
        package var key: Int64
        package var version: Int64
        package var offset: Int
        package var size: Int
        package var crc: UInt32
    }

    /// Where the snapshot starts in the file.
    package let base: Int
    package let length: Int
    package let entities: [EntityPart]
    package let indexes: [IndexPart]
    package let columns: [ColumnPart]
    /// Index entries' values the binary searches of this snapshot's indexes have read, by
    /// the entry's place in the snapshot (``indexValue(_:at:fd:path:)``). The snapshot's
    /// bytes do not change while it is the store's (a new one is a new `Snapshot`), so a
    /// value read once holds.
    let probes = Locked<[Int: UInt64]>([:])

    // MARK: Reading

    /// Reads and checks the snapshot's tables (not its rows): a few hundred bytes.
    package static func open(_ fd: Int32, base: Int, length: Int, entityCount: Int, path: String) throws -> Snapshot {
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
                case 0: part.widths = nil
                case UInt32(narrowDirectoryEntrySize): part.widths = .narrow
                case let code:
                    guard let widths = DirectoryWidths(code: code) else { throw corrupt("an entity's directory has entries of an unknown size") }
                    part.widths = widths
                }
                // Checked in an order that cannot overflow, whatever the (checksummed) table says.
                guard part.rowCount >= 0, part.rowCount <= length / part.entrySize, part.directoryOffset >= 0,
                      part.directoryOffset <= length else { throw corrupt("an entity's rows lie outside it") }
                if part.widths?.key == 0 {
                    // Consecutive keys: the field holds the first, and the rows follow the directory.
                    let first = Int64(truncatingIfNeeded: part.rowsOffset)
                    guard first >= 0, first <= Int64.max - Int64(part.rowCount) else { throw corrupt("an entity's keys run past the largest key") }
                    part.firstKey = first
                    part.rowsOffset = part.directoryOffset + part.directoryLength
                }
                guard part.rowsOffset == part.directoryOffset + part.directoryLength,
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
                let narrow: IndexWidths = part.isSchemaIndex ? .narrowSchema : .narrowUniqueness
                switch ownerAndSize >> 16 {
                case 0: part.widths = nil
                case UInt32(narrow.entrySize): part.widths = narrow
                case let code:
                    guard let widths = IndexWidths(code: code, schema: part.isSchemaIndex) else { throw corrupt("an index has entries of an unknown size") }
                    part.widths = widths
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
                    guard Column.isWidth(width) else { throw corrupt("a column has values of an unknown width") }
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
    package func column(_ part: ColumnPart, fd: Int32, path: String) throws -> Column {
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
    package final class CheckedRows {
        private var bits: [UInt64]
        package init(count: Int) { bits = [UInt64](repeating: 0, count: (count + 63) / 64) }
        package func contains(_ i: Int) -> Bool { bits[i >> 6] & (1 << UInt64(i & 63)) != 0 }
        package func insert(_ i: Int) { bits[i >> 6] |= 1 << UInt64(i & 63) }
    }

    /// The keys of a directory, read from its bytes where they are (not copied into an
    /// array of their own: 8 bytes a row).
    package struct Keys: RandomAccessCollection {
        package let bytes: [UInt8]
        package let part: EntityPart
        package var startIndex: Int { 0 }
        package var endIndex: Int { part.rowCount }
        package subscript(position: Int) -> Int64 {
            if let first = part.firstKey { return first + Int64(position) }
            return Snapshot.key(in: bytes, at: position, part: part)
        }

        /// Calls `body` with each position and key in order, reading the directory in one pass.
        package func forEachKey(_ body: (Int, Int64) throws -> Void) rethrows {
            if let first = part.firstKey {
                for position in 0..<part.rowCount { try body(position, first + Int64(position)) }
                return
            }
            guard let widths = part.widths else {
                for position in 0..<part.rowCount { try body(position, self[position]) }
                return
            }
            let size = part.entrySize, width = widths.key, count = part.rowCount
            try bytes.withUnsafeBytes { raw in
                guard raw.count >= count * size else { return }
                for position in 0..<count { try body(position, Int64(bitPattern: Snapshot.littleEndian(raw, position * size, width))) }
            }
        }
    }

    /// An entity's directory and rows, read in one piece (for fetches that visit every row).
    package struct Loaded {
        package let part: EntityPart
        /// The directory followed by the rows.
        package let bytes: [UInt8]
        private let checked: CheckedRows

        package init(part: EntityPart, bytes: [UInt8]) {
            self.part = part
            self.bytes = bytes
            checked = CheckedRows(count: part.rowCount)
        }

        /// The directory's keys, in order.
        package var keys: Keys { Keys(bytes: bytes, part: part) }

        package func entry(at index: Int) -> Entry {
            Snapshot.entry(in: bytes, at: index, first: 0, part: part)
        }

        /// The directory position of a key.
        package func find(_ key: Int64) -> Int? {
            if let first = part.firstKey {
                guard key >= first, key - first < Int64(part.rowCount) else { return nil }
                return Int(key - first)
            }
            let keys = keys
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
        package func row(at index: Int, path: String) throws -> (entry: Entry, start: Int) {
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
        package func place(at index: Int, path: String) throws -> (entry: Entry, start: Int) {
            let entry = entry(at: index)
            let start = entry.offset &- part.directoryOffset
            guard entry.offset >= part.rowsOffset, start >= 0, entry.size >= 0, start <= bytes.count, entry.size <= bytes.count - start else {
                throw StoreError.corrupt(path: path, reason: "a snapshot row of key \(entry.key) lies outside its entity")
            }
            return (entry, start)
        }
    }

    /// Reads an entity's directory and rows, checking the directory's checksum and order.
    package func load(entity index: Int, fd: Int32, path: String) throws -> Loaded {
        let part = entities[index]
        let count = part.rowsOffset + part.rowsLength - part.directoryOffset
        let bytes = try FileIO.read(fd, count: count, at: base + part.directoryOffset, path: path)
        guard bytes.count == count, CRC32.checksum(bytes[0..<part.directoryLength]) == part.directoryCRC else {
            throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): a directory checksum does not match")
        }
        let loaded = Loaded(part: part, bytes: bytes)
        var previous = Int64.min
        try loaded.keys.forEachKey { _, key in
            guard key > previous else { throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): a directory is out of order") }
            previous = key
        }
        // Each row is checked the first time it is read (rows a query's columns reject are
        // never read, nor checked).
        return loaded
    }

    /// Whether `pattern` occurs in the rows of entity `index`, read from the file `piece`
    /// bytes at a time (and not kept); each read reaches into the next piece by the pattern's
    /// length less one, so no occurrence falls between two.
    package func rows(ofEntity index: Int, contain pattern: [UInt8], fd: Int32, path: String, piece: Int = 1 << 20) throws -> Bool {
        let part = entities[index]
        let piece = Swift.max(1, piece)
        var offset = 0
        while offset < part.rowsLength {
            let count = min(piece + pattern.count - 1, part.rowsLength - offset)
            let bytes = try FileIO.read(fd, count: count, at: base + part.rowsOffset + offset, path: path)
            guard bytes.count == count else { throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): the rows end early") }
            if bytes.withUnsafeBufferPointer({ StringMatching.bytes($0, contain: pattern) }) { return true }
            offset += piece
        }
        return false
    }

    /// Finds one row without reading the entity: a binary search over the directory in the
    /// file, then one read of the row. Returns its entry and encoded slots.
    package func find(key: Int64, entity index: Int, fd: Int32, path: String) throws -> (entry: Entry, bytes: [UInt8])? {
        let part = entities[index]
        if let first = part.firstKey {
            guard key >= first, key - first < Int64(part.rowCount) else { return nil }
            return try row(at: Int(key - first), entity: index, fd: fd, path: path)
        }
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
    package func directoryRun(_ part: EntityPart, _ positions: Range<Int>, fd: Int32, path: String) throws -> (bytes: [UInt8], first: Int) {
        let first = part.isNarrow ? max(0, positions.lowerBound - 1) : positions.lowerBound
        let count = (positions.upperBound - first) * part.entrySize
        let run = try FileIO.read(fd, count: count, at: base + part.directoryOffset + first * part.entrySize, path: path)
        guard run.count == count else { throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): a directory is truncated") }
        return (run, first)
    }

    /// The encoded slots a directory entry points at, checked to lie in the entity's rows
    /// and against the row's checksum.
    package func readRow(_ entry: Entry, of part: EntityPart, fd: Int32, path: String) throws -> [UInt8] {
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

    /// The `width` bytes at `at` as a little-endian unsigned number (the caller checked they
    /// are there).
    @inline(__always)
    package static func littleEndian(_ raw: UnsafeRawBufferPointer, _ at: Int, _ width: Int) -> UInt64 {
        switch width {
        case 1: return UInt64(raw[at])
        case 2: return UInt64(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt16.self)))
        case 3: return UInt64(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt16.self))) | UInt64(raw[at + 2]) << 16
        case 4: return UInt64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
        case 8: return UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self))
        default:
            var value: UInt64 = 0
            for k in 0..<width { value |= UInt64(raw[at + k]) << UInt64(8 * k) }
            return value
        }
    }

    /// The fewest bytes that hold a non-negative number (at least one).
    package static func bytesNeeded(_ n: UInt64) -> Int { max(1, (64 - n.leadingZeroBitCount + 7) / 8) }

    /// The key of entry `i` of directory bytes that start with an entry (zero when short),
    /// in a directory that writes its keys.
    package static func key(in bytes: [UInt8], at i: Int, part: EntityPart) -> Int64 {
        let at = i * part.entrySize
        guard at >= 0, bytes.count - at >= part.entrySize else { return 0 }
        return bytes.withUnsafeBytes { raw in
            guard let widths = part.widths else { return Int64(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self))) }
            return Int64(bitPattern: littleEndian(raw, at, widths.key))
        }
    }

    /// The entry at directory position `position`, from directory bytes that start with the
    /// entry at position `first` (for a narrow entry, the one before it as well, when there
    /// is one). Callers check that the directory holds the entry; a short one reads as zeros.
    package static func entry(in bytes: [UInt8], at position: Int, first: Int, part: EntityPart) -> Entry {
        let at = (position - first) * part.entrySize
        guard at >= 0, bytes.count - at >= part.entrySize, !part.isNarrow || position == 0 || at >= part.entrySize else {
            return Entry(key: 0, version: 0, offset: 0, size: 0, crc: 0)
        }
        return bytes.withUnsafeBytes { raw in
            func u64(_ offset: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at + offset, as: UInt64.self)) }
            func u32(_ offset: Int) -> UInt32 { UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at + offset, as: UInt32.self)) }
            guard let widths = part.widths else {
                return Entry(key: Int64(bitPattern: u64(0)), version: Int64(bitPattern: u64(8)), offset: Int(truncatingIfNeeded: u64(16)),
                             size: Int(u32(24)), crc: u32(28))
            }
            // A row starts where the one before it ends (the first at the entity's rows).
            let endAt = widths.key + widths.version
            let start = position == 0 ? 0 : Int(truncatingIfNeeded: littleEndian(raw, at - part.entrySize + endAt, widths.end))
            let end = Int(truncatingIfNeeded: littleEndian(raw, at + endAt, widths.end))
            let key = part.firstKey.map { $0 &+ Int64(position) } ?? Int64(bitPattern: littleEndian(raw, at, widths.key))
            return Entry(key: key, version: Int64(bitPattern: littleEndian(raw, at + widths.key, widths.version)),
                         offset: part.rowsOffset &+ start, size: end &- start, crc: u32(endAt + widths.end))
        }
    }

    /// The CRC-32 of a row's key and version (8 bytes each) and its slots.
    package static func checksum(_ entry: Entry, _ row: ArraySlice<UInt8>) -> UInt32 {
        // Key and version little-endian, as ByteWriter writes them, without an array.
        let head = (UInt64(bitPattern: entry.key).littleEndian, UInt64(bitPattern: entry.version).littleEndian)
        let headCRC = withUnsafeBytes(of: head) { CRC32.checksum($0) }
        return CRC32.checksum(row, continuing: headCRC)
    }

    /// FNV-1a: a hash that is the same in every process (Swift's `Hasher` is seeded per run).
    package static func hash(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { RowCodec.hash($0) }
    }

}

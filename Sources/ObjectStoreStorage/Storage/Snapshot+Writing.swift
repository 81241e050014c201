import Foundation
import ObjectStoreModel

// Writing a snapshot: the rows, directories, indexes and columns a compaction lays out.
extension Snapshot {
    /// One row to write: its key, version and encoded slots (`length` bytes of `source`
    /// from `start`: the commit or snapshot part it was read from, not a copy).
    package struct Row {
        package var key: Int64
        package var version: Int64
        package var source: [UInt8]
        package var start: Int
        package var length: Int

        package var bytes: ArraySlice<UInt8> { source[start..<start + length] }

        /// The bytes of `rows` when they lie one after another in one array, else nil.
        package static func span(_ rows: [Row]) -> ArraySlice<UInt8>? {
            guard let first = rows.first else { return [] }
            let base = first.source.withUnsafeBufferPointer { $0.baseAddress }
            var end = first.start
            for row in rows {
                guard row.start == end, row.source.withUnsafeBufferPointer({ $0.baseAddress }) == base else { return nil }
                end += row.length
            }
            return first.source[first.start..<end]
        }
    }

    /// One index to write. A uniqueness index is written sorted by (hash, entity, key); a
    /// schema index (with `positions`) in the order given, each entry with its row's
    /// directory position.
    package struct Index {
        package var owner: Int
        package var constraint: Int
        package var signature: UInt32
        package var entries: [(hash: UInt64, entity: Int, key: Int64)]
        package var positions: [Int]? = nil
        /// How a schema index's values order and narrow: its column's kind (hashes, and
        /// uniqueness indexes, as integers).
        package var kind: Column.Kind = .integer
    }

    /// The bytes of a snapshot (store format 1.0): `rows[i]` are entity i's rows sorted by
    /// key, `columns[i]` its columns (in the rows' order). Each field of the directories' and
    /// indexes' entries is as wide as its largest value needs (wide entries only where a
    /// value cannot be packed: a negative key or version), a directory of consecutive keys
    /// leaves them out, and column values are narrow where they fit.
    package static func bytes(rows: [[Row]], indexes: [Index], columns: [[(slot: Int, column: Column)]]) -> [UInt8] {
        Array(pieces(rows: rows, indexes: indexes, columns: columns).joined())
    }

    /// ``bytes(rows:indexes:columns:)`` in two pieces, written one after the other: the
    /// prefix with the table of parts, then the rows, directories, indexes and columns (not
    /// joined: a compaction of a million tasks held the snapshot twice for that).
    package static func pieces(rows: [[Row]], indexes: [Index], columns: [[(slot: Int, column: Column)]]) -> [[UInt8]] {
        let columnTotal = columns.reduce(0) { $0 + $1.count }
        let tableSize = rows.count * entityPartSize + indexes.count * indexPartSize + columnTotal * columnPartSize
        var body = ByteWriter()
        // Room for the rows, directories and indexes at their widest (columns grow it).
        body.bytes.reserveCapacity(rows.reduce(0) { $0 + $1.reduce(0) { $0 + $1.length } + $1.count * directoryEntrySize }
                                   + indexes.reduce(0) { $0 + $1.entries.count * indexEntrySize })
        var offset = prefixSize + tableSize
        var parts: [EntityPart] = []
        for entityRows in rows {
            let rowsLength = entityRows.reduce(0) { $0 + $1.length }
            let widths: DirectoryWidths?
            var firstKey: Int64? = nil
            if entityRows.allSatisfy({ $0.key >= 0 && $0.version >= 0 }) {
                let keys = entityRows.map { UInt64($0.key) }.max() ?? 0, versions = entityRows.map { UInt64($0.version) }.max() ?? 0
                var keyWidth = bytesNeeded(keys)
                // Consecutive keys (a store whose objects were never deleted): none written.
                if let first = entityRows.first?.key, entityRows.enumerated().allSatisfy({ $0.element.key == first + Int64($0.offset) }) {
                    keyWidth = 0
                    firstKey = first
                }
                widths = DirectoryWidths(key: keyWidth, version: bytesNeeded(versions), end: bytesNeeded(UInt64(rowsLength)))
            } else {
                widths = nil
            }
            let entrySize = widths?.entrySize ?? directoryEntrySize
            let directoryOffset = offset
            let rowsOffset = directoryOffset + entityRows.count * entrySize
            var directory = ByteWriter()
            directory.bytes.reserveCapacity(entityRows.count * entrySize)
            var rowOffset = rowsOffset
            for row in entityRows {
                var entry = Entry(key: row.key, version: row.version, offset: rowOffset, size: row.bytes.count, crc: 0)
                rowOffset += row.bytes.count
                entry.crc = checksum(entry, row.bytes)
                if let widths {
                    directory.littleEndian(UInt64(entry.key), widths.key)
                    directory.littleEndian(UInt64(entry.version), widths.version)
                    directory.littleEndian(UInt64(rowOffset - rowsOffset), widths.end)
                } else {
                    directory.u64(UInt64(bitPattern: entry.key))
                    directory.u64(UInt64(bitPattern: entry.version))
                    directory.u64(UInt64(entry.offset))
                    directory.u32(UInt32(entry.size))
                }
                directory.u32(entry.crc)
            }
            var part = EntityPart(rowCount: entityRows.count, directoryOffset: directoryOffset, rowsOffset: rowsOffset,
                                  rowsLength: rowOffset - rowsOffset, directoryCRC: CRC32.checksum(directory.bytes))
            part.widths = widths
            part.firstKey = firstKey
            parts.append(part)
            body.bytes += directory.bytes
            // Rows that follow one another in one array (a compaction's) in one copy.
            if let span = Row.span(entityRows) {
                body.bytes += span
            } else {
                for row in entityRows { body.bytes += row.bytes }
            }
            offset = rowOffset
        }
        var indexParts: [IndexPart] = []
        for index in indexes {
            var entries = ByteWriter()
            let widths: IndexWidths?
            let keysFit = index.entries.allSatisfy { $0.key >= 0 }
            let maxKey = UInt64(index.entries.map { max(0, $0.key) }.max() ?? 0)
            if let positions = index.positions {
                if keysFit && index.owner <= Int(UInt16.max) {
                    let value = Column.narrowest(index.entries.map(\.hash), kind: index.kind)
                    widths = IndexWidths(value: value, middle: bytesNeeded(UInt64(positions.max() ?? 0)), key: bytesNeeded(maxKey),
                                         doubles: value < 8 && (index.kind == .double || index.kind == .date))
                } else {
                    widths = nil
                }
                for (entry, position) in zip(index.entries, positions) {
                    guard let widths else {
                        entries.u64(entry.hash)
                        entries.u32(UInt32(entry.entity))
                        entries.u32(UInt32(position))
                        entries.u64(UInt64(bitPattern: entry.key))
                        continue
                    }
                    let value = widths.value == 8 ? entry.hash : UInt64(bitPattern: Column.narrowNumber(entry.hash, kind: index.kind) ?? 0)
                    entries.littleEndian(value, widths.value)
                    entries.littleEndian(UInt64(position), widths.middle)
                    entries.littleEndian(UInt64(entry.key), widths.key)
                }
            } else {
                let entities = index.entries.map(\.entity)
                if keysFit && index.owner <= Int(UInt16.max) && entities.allSatisfy({ $0 >= 0 }) {
                    // Four bytes of hash, three in an index of fewer than 2^20 entries (a
                    // lookup then lists another value's entry at most once in 16 lookups): a
                    // lookup compares every candidate's row anyway.
                    widths = IndexWidths(value: index.entries.count < 1 << 20 ? 3 : 4, middle: entities.allSatisfy({ $0 == index.owner }) ? 0 : bytesNeeded(UInt64(entities.max() ?? 0)),
                                         key: bytesNeeded(maxKey))
                } else {
                    widths = nil
                }
                // Sorted by as much of the hash as is written, so a search finds every entry of one.
                let mask: UInt64 = widths.map { ~0 << UInt64(64 - 8 * $0.value) } ?? ~0
                for entry in index.entries.sorted(by: { ($0.hash & mask, $0.entity, $0.key) < ($1.hash & mask, $1.entity, $1.key) }) {
                    guard let widths else {
                        entries.u64(entry.hash)
                        entries.u32(UInt32(entry.entity))
                        entries.u32(0)
                        entries.u64(UInt64(bitPattern: entry.key))
                        continue
                    }
                    entries.littleEndian(entry.hash >> UInt64(64 - 8 * widths.value), widths.value)
                    entries.littleEndian(UInt64(entry.entity), widths.middle)
                    entries.littleEndian(UInt64(entry.key), widths.key)
                }
            }
            var part = IndexPart(owner: index.owner, constraint: index.constraint, count: index.entries.count, offset: offset,
                                 crc: CRC32.checksum(entries.bytes), signature: index.signature)
            part.widths = widths
            indexParts.append(part)
            body.bytes += entries.bytes
            offset += entries.bytes.count
        }
        var columnParts: [ColumnPart] = []
        for (entity, entityColumns) in columns.enumerated() {
            for (slot, column) in entityColumns {
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
            // A directory without keys: its first key instead of where its rows are.
            table.u64(part.firstKey.map { UInt64($0) } ?? UInt64(part.rowsOffset))
            table.u64(UInt64(part.rowsLength))
            table.u32(part.directoryCRC)
            // A wide directory says 0; a packed one its fields' widths.
            let size = part.widths.map(\.code) ?? 0
            table.u32(UInt32(entity < columns.count ? columns[entity].count : 0) | size << 16)
        }
        for part in indexParts {
            let size = part.widths.map(\.code) ?? 0
            table.u32(UInt32(part.owner) | size << 16)
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
        result.bytes += table.bytes
        return [result.bytes, body.bytes]
    }
}

import Foundation
import ObjectStoreModel

// Reading a snapshot's indexes: the candidates of a uniqueness constraint's hash, and the
// spans and entries a schema index finds for a range of values.
extension Snapshot {
    /// The (entity, key) pairs an index lists under a hash.
    /// `nil` when there is no index for the constraint as the model defines it now.
    package func candidates(owner: Int, constraint: Int, signature: UInt32, hash: UInt64, fd: Int32, path: String) throws -> [(entity: Int, key: Int64)]? {
        guard let part = indexes.first(where: { $0.owner == owner && $0.constraint == constraint && $0.signature == signature }) else { return nil }
        func read(_ range: Range<Int>) throws -> [UInt8] { try readEntries(part, range, fd: fd, path: path) }
        // The first entry whose hash is not below `hash` (as much of it as the index keeps).
        let hash = hash & part.hashMask
        var low = 0, high = part.count
        while high - low > 128 {
            let mid = (low + high) / 2
            if try indexValue(part, at: mid, fd: fd, path: path) < hash { low = mid + 1 } else { high = mid }
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
    package static func indexEntry(in bytes: [UInt8], at i: Int, part: IndexPart) -> (value: UInt64, entity: Int, position: Int, key: Int64) {
        let at = i * part.entrySize
        guard at >= 0, bytes.count - at >= part.entrySize else { return (0, 0, 0, 0) }
        return bytes.withUnsafeBytes { raw in
            guard let widths = part.widths else {
                func u64(_ offset: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at + offset, as: UInt64.self)) }
                func u32(_ offset: Int) -> UInt32 { UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at + offset, as: UInt32.self)) }
                return (u64(0), Int(u32(8)), Int(u32(12)), Int64(bitPattern: u64(16)))
            }
            let value = littleEndian(raw, at, widths.value)
            let middle = Int(littleEndian(raw, at + widths.value, widths.middle))
            let key = Int64(bitPattern: littleEndian(raw, at + widths.value + widths.middle, widths.key))
            guard part.isSchemaIndex else {
                // The top bytes of the hash.
                return (value << UInt64(64 - 8 * widths.value), widths.middle == 0 ? part.owner : middle, 0, key)
            }
            guard widths.value < 8 else { return (value, part.owner, middle, key) }
            // A narrow value: a signed whole number, as its column would hold it.
            let shift = UInt64(64 - 8 * widths.value)
            let number = Int64(bitPattern: value << shift) >> shift
            return (widths.doubles ? Double(number).bitPattern : UInt64(bitPattern: number), part.owner, middle, key)
        }
    }

    /// Every entry of an index, checked against its checksum (for integrity checks).
    package func indexEntries(_ part: IndexPart, fd: Int32, path: String) throws -> [(hash: UInt64, entity: Int, position: Int, key: Int64)] {
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
    package struct Bound {
        package var bits: UInt64
        package var inclusive: Bool
    }

    /// The (directory position, key) of the rows a schema index lists between two bounds
    /// (values compared as `kind` orders them), in index order: a binary search of the
    /// entries in the file, then one read of the range. The entries are not checksummed
    /// here (``indexEntries(_:fd:path:)`` is, for integrity checks); each position is
    /// checked against the row's directory entry by the caller.
    package func range(_ part: IndexPart, kind: Column.Kind, from lower: Bound?, to upper: Bound?, fd: Int32, path: String) throws -> [(position: Int, key: Int64)] {
        try entries(part, try span(part, kind: kind, from: lower, to: upper, fd: fd, path: path), fd: fd, path: path)
    }

    /// The (directory position, key) of a span of an index's entries (from ``span(_:kind:from:to:fd:path:)``).
    package func entries(_ part: IndexPart, _ span: Range<Int>, fd: Int32, path: String) throws -> [(position: Int, key: Int64)] {
        guard !span.isEmpty else { return [] }
        let bytes = try readEntries(part, span, fd: fd, path: path)
        return (0..<span.count).map { i in
            let entry = Self.indexEntry(in: bytes, at: i, part: part)
            return (entry.position, entry.key)
        }
    }

    /// The value (as its column stores it) of entry `i` of an index, in index order.
    package func entryValue(_ part: IndexPart, at i: Int, fd: Int32, path: String) throws -> UInt64 {
        guard (0..<part.count).contains(i) else { throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): an index is truncated") }
        return Self.indexEntry(in: try readEntries(part, i..<i + 1, fd: fd, path: path), at: 0, part: part).value
    }

    package func readEntries(_ part: IndexPart, _ range: Range<Int>, fd: Int32, path: String) throws -> [UInt8] {
        let bytes = try FileIO.read(fd, count: range.count * part.entrySize, at: base + part.offset + range.lowerBound * part.entrySize, path: path)
        guard bytes.count == range.count * part.entrySize else { throw StoreError.corrupt(path: path, reason: "snapshot at byte \(base): an index is truncated") }
        return bytes
    }

    /// The entries between two bounds: a binary search that reads one entry per step until
    /// at most ``searchBlock`` entries remain, then reads those at once and ends in memory.
    /// Both bounds are searched from the whole index, so their steps read the same entries
    /// (kept in ``probes`` for the snapshot's later searches too) and, for a value's
    /// entries, usually end in the same block, read once: a lookup reads only the steps no
    /// search of the snapshot took before, and a value looked up again one block (each
    /// step was a read of its own, and the upper bound's steps were read again).
    package func span(_ part: IndexPart, kind: Column.Kind, from lower: Bound?, to upper: Bound?, fd: Int32, path: String) throws -> Range<Int> {
        let less = kind.less
        var lastBlock: (range: Range<Int>, bytes: [UInt8])?
        // The first entry for which `before` is false (entries are sorted so it is monotone).
        func partition(_ before: (UInt64) -> Bool) throws -> Int {
            var low = 0, high = part.count
            while high - low > Self.searchBlock {
                let mid = (low + high) / 2
                if before(try indexValue(part, at: mid, fd: fd, path: path)) { low = mid + 1 } else { high = mid }
            }
            guard low < high else { return low }
            let block: [UInt8]
            if let lastBlock, lastBlock.range == low..<high {
                block = lastBlock.bytes
            } else {
                block = try readEntries(part, low..<high, fd: fd, path: path)
                lastBlock = (low..<high, block)
            }
            var first = 0, last = high - low
            while first < last {
                let mid = (first + last) / 2
                if before(Self.indexEntry(in: block, at: mid, part: part).value) { first = mid + 1 } else { last = mid }
            }
            return low + first
        }
        let start = try lower.map { bound in try partition { bound.inclusive ? less($0, bound.bits) : !less(bound.bits, $0) } } ?? 0
        let end = try upper.map { bound in try partition { bound.inclusive ? !less(bound.bits, $0) : less($0, bound.bits) } } ?? part.count
        return start < end ? start..<end : start..<start
    }

    /// The most entries' values ``probes`` keeps (a binary search's steps from the whole
    /// index are the same few hundred positions whatever it looks for; a bound keeps the
    /// memory of an index searched from elsewhere small).
    static let probeLimit = 4_096

    /// The value of entry `i` of an index, read once per snapshot (``probes``).
    func indexValue(_ part: IndexPart, at i: Int, fd: Int32, path: String) throws -> UInt64 {
        let place = part.offset + i * part.entrySize
        if let known = probes.withLock({ $0[place] }) { return known }
        let value = Self.indexEntry(in: try readEntries(part, i..<i + 1, fd: fd, path: path), at: 0, part: part).value
        probes.withLock { if $0.count < Self.probeLimit { $0[place] = value } }
        return value
    }

    /// Entries a binary search of an index reads in one piece once its range is this narrow
    /// (4 KiB of narrow schema index entries).
    package static let searchBlock = 256

    /// One row at a directory position, without reading the entity: its entry and encoded
    /// slots, checked against the row's checksum. Nil when the position is past the directory.
    package func row(at position: Int, entity index: Int, fd: Int32, path: String) throws -> (entry: Entry, bytes: [UInt8])? {
        let part = entities[index]
        guard position >= 0, position < part.rowCount else { return nil }
        let (run, first) = try directoryRun(part, position..<position + 1, fd: fd, path: path)
        let entry = Self.entry(in: run, at: position, first: first, part: part)
        return (entry, try readRow(entry, of: part, fd: fd, path: path))
    }
}

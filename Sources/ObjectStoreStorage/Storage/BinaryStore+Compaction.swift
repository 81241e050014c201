import Dispatch
import Foundation
import ObjectStoreModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Compaction: the live rows written as a new snapshot (typed rows, a dictionary, columns
// and indexes) and an empty log, replacing the file atomically.
extension BinaryStore {
    /// Upgrades a file of a pre-release format (1 to 7) to store format 1.0, under the
    /// file's exclusive lock: the legacy reader reads it with `model` when the file was
    /// written with that model's entities (its indexes are then the ones built), else with
    /// the model stored in the file; a compaction writes its rows (keys, versions, metadata and history of keys unchanged)
    /// as a new 1.0 file, the original keeps the name `backup(version)` (a second name of the
    /// untouched file) and the new file is renamed into place. A failure or a kill leaves
    /// the original as it was. Nil, and nothing done, for a file in store format 1.0.
    package static func upgradeLegacyFile(at url: URL, model preferred: ManagedObjectModel? = nil, backup: (Int) -> URL) throws -> (version: Int, backupURL: URL)? {
        try FileLock(storePath: url.path).withLock { fd, realPath in
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw StoreError.io(path: url.path, reason: "cannot read: \(FileIO.errorText())") }
            let header = try parseHeader(try FileIO.read(fd, count: headerSize, at: 0, path: url.path), path: url.path, fileSize: Int(info.st_size))
            guard legacyVersions.contains(header.version) else { return nil }
            let model: ManagedObjectModel
            do {
                let stored = try metadata(fd, path: url.path)
                if let preferred, stored.incompatibleEntities(with: preferred).isEmpty {
                    model = preferred
                } else {
                    model = try stored.storedModel()
                }
            } catch {
                throw StoreError.corrupt(path: url.path, reason: "the model stored in the file does not load: \(error)")
            }
            let core = Core(path: realPath, model: model, durability: .full)
            core.allowsLegacy = true
            defer { if let held = core.held { close(held.fd) } }
            try core.reload(fd)
            let backupURL = backup(header.version)
            try core.compactLocked(path: realPath, backup: backupURL.path)
            return (header.version, backupURL)
        }
    }

    /// Rewrites the file as a snapshot of the live rows (with an index per uniqueness
    /// constraint) and an empty log, reclaiming the space of superseded and deleted rows.
    /// Atomic: a crash leaves the old file or the new one.
    package func compact() throws {
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        try fileLock.withLock { fd, realPath in
            try core.withLock { core in
                try core.refresh(fd)
                try core.compactLocked(path: realPath)
            }
        }
    }
}

extension BinaryStore.Core {
    /// What a save does after committing, under the file's exclusive lock: compacts the
    /// file, or cuts its log, when the log has grown enough. A compaction costs what the
    /// store holds, so it waits until the log is also an eighth of the snapshot. A cut costs
    /// what the log says, so a log that mostly repeats rows written again since is cut once
    /// it passes the threshold (opening then reads at most that much log, whatever the
    /// store's size); whether it does is asked again each time the log grows by a quarter.
    /// The save is durable already: a compaction that fails leaves a warning
    /// (``BinaryStore/housekeepingWarning``).
    func housekeepLocked(fd: Int32, path realPath: String) {
        let log = state.log.committedLength - state.header.logStart - state.history.bytes
        let compacting = log > state.header.snapshotPlace.length / 8
        guard log > housekeeping.threshold && (compacting || log >= housekeeping.nextCutCheck) else { return }
        let repeats = liveLogBytes * 4 <= log
        if !repeats { housekeeping.nextCutCheck = log + log / 4 }
        do {
            if repeats, try cutLogLocked(fd: fd) {
                housekeeping.lastWarning = nil
            } else if compacting {
                try compactLocked(path: realPath)
                housekeeping.lastWarning = nil
            }
        } catch {
            housekeeping.lastWarning = "the store was saved, but compacting it failed: \(error)"
        }
    }

    /// Writes the live rows as a new file in store format 1.0 (from a file of any format the
    /// state was read from) and reads it; `backup`, when given, becomes a second name of the
    /// file replaced.
    package func compactLocked(path realPath: String, backup: String? = nil) throws {
        guard let metadata = state.metadata, let codec = state.codec else { return }
        try requireWritable()
        // Every row is read and written again, typed with a dictionary of the strings the
        // rows repeat (sparse where a value is not of its slot's type). Each entity's rows
        // listed once, for the dictionary and for writing them.
        let sources = try codec.entityNames.map { try encodedRows(ofEntity: $0) }
        let (strings, origin) = try dictionary(codec: codec, rows: sources)
        let target = codec.with(strings: strings, dateOrigin: origin)
        let codes = codec.codes(in: target)
        // The metadata (and the dictionary) in a commit of its own, so reading it never
        // reads the rows.
        var metadataPayload = ByteWriter()
        BinaryStore.writeMetadata(metadata, entityNames: codec.entityNames, into: &metadataPayload)
        if !strings.isEmpty || origin != 0 { BinaryStore.writeDictionary(strings, dateOrigin: origin, into: &metadataPayload) }
        let metadataFrame = BinaryStore.frame(metadataPayload.bytes)
        var rows: [[Snapshot.Row]] = []
        // Each row is read once: written again, and its columns' and indexes' slots decoded.
        // A table of `parallelRows` or more is written in parts, one per core (the cores are
        // asked only then); nothing is reserved here for such a table (its first part's room
        // is kept).
        let large = sources.map { $0.count >= max(2, housekeeping.parallelRows) }
        let parts = !large.contains(true) ? 1 : housekeeping.parallelParts > 0 ? housekeeping.parallelParts : BinaryStore.cores
        var derived = DerivedParts(model: model, codec: target, rowCounts: sources.indices.map { large[$0] && parts > 1 ? 1 : sources[$0].count })
        for index in codec.entityNames.indices {
            let rewrite = Rewrite(rows: sources[index], table: index, codec: codec, target: target, codes: codes, model: model, path: path)
            let count = sources[index].count
            guard large[index], parts > 1 else {
                rows.append(try rewrite.rows(0..<count, into: &derived))
                continue
            }
            rows.append(try rewrite.rowsInParts(parts, into: &derived))
        }
        let (columns, indexes) = derived.finish(rows: rows)
        let snapshotPieces = Snapshot.pieces(rows: rows, indexes: indexes, columns: columns)
        let snapshotLength = snapshotPieces.reduce(0) { $0 + $1.count }
        let snapshotOffset = BinaryStore.headerSize + metadataFrame.count
        // The history the retention bound keeps, in a region between the snapshot and the
        // (empty) log: read only when history is asked for.
        let history = try historyRegion(now: Date())
        let snapshotEnd = snapshotOffset + snapshotLength
        let regionLength = history?.bytes.count ?? 0
        let header = BinaryStore.header(BinaryStore.Header(version: BinaryStore.formatVersion, committedLength: snapshotEnd + regionLength,
                                        commitCount: state.header.commitCount + 1,
                                        snapshotOffset: snapshotOffset, snapshotLength: snapshotLength,
                                        logOffset: history == nil ? 0 : snapshotEnd + regionLength,
                                        readFeatures: state.header.readFeatures, writeFeatures: state.header.writeFeatures,
                                        historyOffset: history == nil ? 0 : snapshotEnd, historyLength: regionLength,
                                        historyStart: history?.start ?? 0, historyLast: history?.last ?? 0))
        // Beside the real file, so a symbolic link to the store stays one.
        let fd = try FileIO.replace(realPath, with: [header, metadataFrame] + snapshotPieces + (history.map { [$0.bytes] } ?? []), backup: backup)
        defer { close(fd) }
        try reload(fd)
    }

    /// The dictionary a compaction writes (format 6): the strings the typed rows' string
    /// slots hold at least ``dictionaryUses`` times (of 2 to 64 bytes), most used first (the
    /// first 64 take a byte in a row), at most ``RowCodec/maxStrings``; and the median of
    /// the whole seconds their date slots hold (0 without dates) as the date origin.
    /// `rows[i]`: entity i's rows, as ``encodedRows(ofEntity:)`` lists them.
    package func dictionary(codec: RowCodec, rows: [[(key: Int64, version: Int64, bytes: [UInt8], start: Int)]]) throws -> (strings: [String], dateOrigin: Int64) {
        // Strings counted by a hash of their bytes (two strings of one hash count as one:
        // the choice of a dictionary, never what a row reads, is all that may change);
        // those of the present dictionary by their number, without hashing them.
        var uses = BinaryStore.UseCounts()
        var texts: [UInt64: ArraySlice<UInt8>] = [:]
        var codeUses = [Int](repeating: 0, count: codec.stringBytes.count)
        func use(_ text: ArraySlice<UInt8>) {
            guard (2...64).contains(text.count) else { return }
            let hash = text.withUnsafeBytes { RowCodec.hash($0) }
            if uses.add(hash) == BinaryStore.dictionaryUses { texts[hash] = text }
        }
        var dates: [Int64] = []
        for index in codec.entityNames.indices {
            let shape = codec.shape(entity: index)
            let slots = shape.kinds.indices.filter { shape.kinds[$0] == .string || shape.kinds[$0] == .date }
            guard shape.isTyped, !slots.isEmpty, index < rows.count else { continue }
            for row in rows[index] {
                let id = { codec.objectID(entity: index, key: row.key) }
                do {
                    if try codec.forEachTypedValue(row.bytes, from: row.start, shape: shape, string: use, code: { codeUses[$0] += 1 },
                                                   date: { dates.append($0) }) { continue }
                } catch {
                    throw StoreError.corrupt(path: path, reason: "unreadable row \(id())")
                }
                // A row of an older format.
                for value in try decode(id(), row.bytes, from: row.start, slots: slots, codec: codec) {
                    switch value {
                    case .value(.string(let text)): use(Array(text.utf8)[...])
                    case .value(.date(let date)):
                        if let whole = date.timeIntervalSinceReferenceDate.exactWholeNumber, whole.magnitude < 1 << 48 { dates.append(whole) }
                    default: break
                    }
                }
            }
        }
        for (code, count) in codeUses.enumerated() where count > 0 {
            let text = codec.stringBytes[code][...]
            let hash = text.withUnsafeBytes { RowCodec.hash($0) }
            if uses.add(hash, count) >= BinaryStore.dictionaryUses && texts[hash] == nil { texts[hash] = text }
        }
        let strings = texts.map { (count: uses.count(of: $0.key), text: $0.value) }
            .sorted { $0.count != $1.count ? $0.count > $1.count : $0.text.lexicographicallyPrecedes($1.text) }
            .prefix(RowCodec.maxStrings).map { String(decoding: $0.text, as: UTF8.self) }
        guard !dates.isEmpty else { return (strings, 0) }
        return (strings, BinaryStore.median(&dates))
    }

    /// Calls `body` with each row's key and its slots, those of `slots` decoded (null when
    /// the row has fewer), the others left null, in one array used again for every row.
    package func forEachRow(_ rows: [Snapshot.Row], entity index: Int, slots: [Int], codec: RowCodec,
                            _ body: (Int64, [SlotValue]) throws -> Void) throws {
        let shape = codec.shape(entity: index)
        let width = (slots.max() ?? -1) + 1
        var wanted = [Bool](repeating: false, count: width)
        for slot in slots { wanted[slot] = true }
        var decoded = [SlotValue](repeating: .value(.null), count: width)
        for row in rows {
            for slot in slots { decoded[slot] = .value(.null) }
            var reader = ByteReader(row.source, from: row.start)
            do {
                try codec.decode(into: &decoded, wanted: wanted, from: &reader, shape: shape, end: width)
            } catch {
                throw StoreError.corrupt(path: path, reason: "unreadable row \(codec.objectID(entity: index, key: row.key))")
            }
            try body(row.key, decoded)
        }
    }
}

extension BinaryStore {
    /// Counts by 64-bit hash in an open-addressed table (the dictionary's count of a
    /// compaction's strings, most of them seen once: a Swift Dictionary hashed each key
    /// again and was a quarter of a compaction).
    package struct UseCounts {
        package var keys = [UInt64](repeating: 0, count: 1 << 12)
        package var counts = [Int](repeating: 0, count: 1 << 12)
        package var filled = 0

        /// Adds `count` uses of `hash`; returns its uses now.
        package mutating func add(_ hash: UInt64, _ count: Int = 1) -> Int {
            if filled * 2 >= keys.count { grow() }
            let key = hash == 0 ? 1 : hash
            let slot = place(of: key)
            if keys[slot] == 0 {
                keys[slot] = key
                filled += 1
            }
            counts[slot] += count
            return counts[slot]
        }

        package func count(of hash: UInt64) -> Int {
            let slot = place(of: hash == 0 ? 1 : hash)
            return keys[slot] == 0 ? 0 : counts[slot]
        }

        /// Where `key` is, or the empty slot it would take.
        package func place(of key: UInt64) -> Int {
            let mask = keys.count - 1
            var slot = Int(truncatingIfNeeded: key >> 7) & mask
            while keys[slot] != 0 && keys[slot] != key { slot = (slot + 1) & mask }
            return slot
        }

        private mutating func grow() {
            let (oldKeys, oldCounts) = (keys, counts)
            keys = [UInt64](repeating: 0, count: oldKeys.count * 2)
            counts = [Int](repeating: 0, count: oldKeys.count * 2)
            for (i, key) in oldKeys.enumerated() where key != 0 {
                let slot = place(of: key)
                keys[slot] = key
                counts[slot] = oldCounts[i]
            }
        }
    }

    /// The median of some values (the upper one of an even count), found by selection
    /// rather than a sort; reorders them.
    package static func median(_ values: inout [Int64]) -> Int64 {
        let target = values.count / 2
        var low = 0, high = values.count - 1
        while low < high {
            // Hoare's partition around the middle element's value.
            let pivot = values[low + (high - low) / 2]
            var i = low, j = high
            while i <= j {
                while values[i] < pivot { i += 1 }
                while values[j] > pivot { j -= 1 }
                if i <= j {
                    values.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if target <= j { high = j } else if target >= i { low = i } else { break }
        }
        return values[target]
    }
}

extension BinaryStore {
    /// The cores a compaction shares a large table's rows among (at most 8).
    static let cores = max(1, min(8, ProcessInfo.processInfo.activeProcessorCount))
}

extension BinaryStore.Core {
    /// One table's rows written again for a compaction: read-only, so the cores may each
    /// write a part of them.
    struct Rewrite: @unchecked Sendable {
        let rows: [(key: Int64, version: Int64, bytes: [UInt8], start: Int)]
        let table: Int
        let codec: RowCodec
        let target: RowCodec
        /// The dictionary's numbers in `target`'s (``RowCodec/codes(in:)``).
        let codes: [Int]
        let model: ManagedObjectModel
        let path: String
        /// How many entity tables the store has.
        var tables: Int { codec.entityNames.count }

        /// Every row written again as ``rows(_:into:)`` writes them, in `parts` parts of
        /// the rows in key order, one per core: each into a buffer of its own, with what they
        /// give the columns and indexes merged into `derived` in order (the same bytes as one
        /// core writes: `aCompactionOnAllCoresWritesWhatOneCoreDoes`). The first part's
        /// columns and entries are kept for the whole table (room for every row), the others
        /// are appended to them and let go one by one. Throws the error of the first part
        /// that failed: the row the serial loop would have met first.
        func rowsInParts(_ parts: Int, into derived: inout DerivedParts) throws -> [Snapshot.Row] {
            let count = rows.count, table = self.table
            var results = [Result<(rows: [Snapshot.Row], derived: DerivedParts), any Error>?](repeating: nil, count: parts)
            results.withUnsafeMutableBufferPointer { buffer in
                let out = Parts(buffer: buffer)
                DispatchQueue.concurrentPerform(iterations: parts) { part in
                    let counts = (0..<tables).map { $0 == table ? (part == 0 ? count : count / parts + 1) : 0 }
                    var own = DerivedParts(model: model, codec: target, rowCounts: counts)
                    out.buffer[part] = Result { (try self.rows(count * part / parts ..< count * (part + 1) / parts, into: &own), own) }
                }
            }
            var written: [Snapshot.Row] = []
            written.reserveCapacity(count)
            for part in results.indices {
                guard let (partRows, partDerived) = try results[part]?.get() else { continue }
                results[part] = nil
                written += partRows
                derived.merge(partDerived, table: table)
            }
            return written
        }

        /// `rows[range]` written again with `target`'s dictionary into one buffer (a typed
        /// row in place, another decoded and encoded), each one's wanted slots handed to
        /// `derived` (at its position in the table).
        func rows(_ range: Range<Int>, into derived: inout DerivedParts) throws -> [Snapshot.Row] {
            let shape = codec.shape(entity: table)
            var written = ByteWriter()
            var places: [(key: Int64, version: Int64, start: Int, length: Int)] = []
            places.reserveCapacity(range.count)
            let wanted = derived.wanted[table], slots = derived.slots(ofTable: table)
            var decoded = [SlotValue](repeating: .value(.null), count: wanted.count)
            for position in range {
                // Room for all the rows at the size of the first ones (a buffer doubled as it
                // grows leaves the blocks it outgrew behind: with a part on each core, in the
                // other threads' malloc arenas).
                if position == range.lowerBound + 256 {
                    written.bytes.reserveCapacity(written.bytes.count / 256 * range.count * 9 / 8)
                }
                let row = rows[position]
                let start = written.bytes.count
                for slot in slots { decoded[slot] = .value(.null) }
                do {
                    if try !codec.recode(row.bytes, from: row.start, shape: shape, to: target, codes: codes, into: &written, wanted: wanted, decoded: &decoded) {
                        var reader = ByteReader(row.bytes, from: row.start)
                        let values = try codec.decode(from: &reader, shape: shape)
                        try target.encodeRow(values, shape: shape, into: &written)
                        for slot in slots where slot < values.count { decoded[slot] = values[slot] }
                    }
                } catch {
                    throw StoreError.corrupt(path: path, reason: "unreadable row \(codec.objectID(entity: table, key: row.key))")
                }
                places.append((row.key, row.version, start, written.bytes.count - start))
                if !slots.isEmpty { derived.add(table: table, position: position, key: row.key, decoded: decoded) }
            }
            let source = written.bytes
            return places.map { Snapshot.Row(key: $0.key, version: $0.version, source: source, start: $0.start, length: $0.length) }
        }
    }

    /// Where each part's result goes; each part writes only its own entry.
    struct Parts: @unchecked Sendable {
        let buffer: UnsafeMutableBufferPointer<Result<(rows: [Snapshot.Row], derived: DerivedParts), any Error>?>
    }
}

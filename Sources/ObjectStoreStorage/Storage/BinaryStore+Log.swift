import Foundation
import ObjectStoreModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The log: replaying its commits at open and refresh, appending a commit, and cutting the
// log in place (docs/store-format.md, "Commits" and "Compaction").
extension BinaryStore {
    /// Parses the commits in `bytes`, which start at file offset `base`. The first `claimed`
    /// bytes are commits the header vouches for: damage there is reported. After them come
    /// commits no header has claimed yet (a save that synced its commit but was stopped
    /// before it moved the header, or a `.normal` save): each counts when it is complete
    /// and its checksum is right, and the first that is not ends the log (a torn tail,
    /// which the next save overwrites).
    ///
    /// - Returns: how many commits counted, and how many of them past the claimed bytes.
    @discardableResult
    static func parse(_ bytes: [UInt8], path: String, into state: inout State, base: Int, claimed: Int? = nil) throws -> (commits: UInt64, unclaimed: UInt64) {
        var position = 0
        let claimed = min(claimed ?? bytes.count, bytes.count)
        let chunk = state.log.chunks.count
        state.log.chunks.append(bytes)
        var commits: UInt64 = 0, unclaimed: UInt64 = 0
        while position < bytes.count {
            let vouched = position < claimed
            // A vouched commit must end where the header says; an unclaimed one by the file's end.
            let end = vouched ? claimed : bytes.count
            var reader = ByteReader(bytes, from: position, to: end)
            let length: Int, crc: UInt32
            do {
                length = Int(try reader.u32())
                crc = try reader.u32()
            } catch {
                guard vouched else { break }
                throw StoreError.corrupt(path: path, reason: "commit at byte \(base + position) is truncated")
            }
            let payloadStart = position + 8
            guard length <= end - payloadStart else {
                guard vouched else { break }
                throw StoreError.corrupt(path: path, reason: "commit at byte \(base + position) claims \(length) bytes past the committed end")
            }
            // Every commit has a record; zeros (a file extended but not written) are no commit.
            guard CRC32.checksum(bytes[payloadStart..<payloadStart + length]) == crc, vouched || length > 0 else {
                guard vouched else { break }
                throw StoreError.corrupt(path: path, reason: "checksum mismatch in the commit at byte \(base + position)")
            }
            commits += 1
            if !vouched { unclaimed += 1 }
            do {
                try parseRecords(bytes, from: payloadStart, to: payloadStart + length, chunk: chunk, state: &state, path: path)
            } catch let error as StoreError {
                throw error
            } catch {
                throw StoreError.corrupt(path: path, reason: "unreadable record in the commit at byte \(base + position)")
            }
            position = payloadStart + length
        }
        if state.metadata == nil { throw StoreError.corrupt(path: path, reason: "no metadata record") }
        // A torn tail alone is not kept (a reader may meet it at every refresh).
        if commits == 0 { state.log.chunks.removeLast() }
        state.log.committedLength = base + position
        return (commits, unclaimed)
    }

    static func parseRecords(_ bytes: [UInt8], from start: Int, to end: Int, chunk: Int, state: inout State, path: String) throws {
        var reader = ByteReader(bytes, from: start, to: end)
        // The codec read from here (not copied out of the state for each record: a copy
        // retained and released each of its arrays, a fifth of replaying a log).
        var codec = state.codec
        defer { state.codec = codec }
        while !reader.isAtEnd {
            let byte = try reader.u8()
            if byte >= RecordTag.firstSkippable {
                // A record this reader may pass over (a transaction of the history): its
                // length, then its bytes, which the commit's checksum vouches for.
                let length = try reader.count()
                guard length <= reader.end - reader.position else { throw ByteReader.Truncated() }
                if byte == RecordTag.transaction || byte == RecordTag.historyStart {
                    try noteHistoryRecord(byte, bytes, from: reader.position, length: length, chunk: chunk, state: &state)
                }
                reader.position += length
                continue
            }
            guard let tag = RecordTag(rawValue: byte) else { throw ByteReader.Truncated() }
            switch tag {
            case .metadata:
                let identifier = try reader.string()
                let versionName = try reader.string()
                let schema = try reader.string()
                let count = try reader.count()
                var names: [String] = []
                var hashes: [String: VersionHash] = [:]
                var nextKeys: [String: Int64] = [:]
                for _ in 0..<count {
                    let name = try reader.string()
                    var hash: [UInt8] = []
                    for _ in 0..<32 { hash.append(try reader.u8()) }
                    names.append(name)
                    hashes[name] = VersionHash(bytes: hash)
                    let next = try reader.signed()
                    guard (1...StoreMetadata.maxKey + 1).contains(next) else { throw ByteReader.Truncated() }
                    nextKeys[name] = next
                }
                state.metadata = StoreMetadata(storeIdentifier: identifier, modelVersionName: versionName.isEmpty ? nil : versionName, entityVersionHashes: hashes, schemaText: schema, nextKeys: nextKeys)
                codec = RowCodec(entityNames: names, storeIdentifier: identifier, model: state.model)
            case .dictionary:
                guard let present = codec else { throw ByteReader.Truncated() }
                let count = try reader.count()
                guard count <= RowCodec.maxStrings else { throw ByteReader.Truncated() }
                var strings: [String] = []
                strings.reserveCapacity(count)
                for _ in 0..<count { strings.append(try reader.string()) }
                let origin = try reader.signed()
                guard origin.magnitude < 1 << 48 else { throw ByteReader.Truncated() }
                codec = present.with(strings: strings, dateOrigin: origin)
            case .put:
                guard let id = try codec?.reference(from: &reader) else { throw ByteReader.Truncated() }
                let version = try reader.signed()
                // Keys and versions past the limit would overflow the next save's counting.
                guard let key = id.primaryKey, (1...StoreMetadata.maxKey).contains(key), (1...StoreMetadata.maxKey).contains(version) else { throw ByteReader.Truncated() }
                // The slots are skipped by their length and decoded when first read; the
                // commit's checksum already vouches for their bytes.
                let length = try reader.count()
                let slotsStart = reader.position
                guard length <= reader.end - reader.position else { throw ByteReader.Truncated() }
                reader.position += length
                state.log.put(id, key: key, entry: Entry(version: version, chunk: chunk, offset: slotsStart, length: length))
            case .delete:
                guard let id = try codec?.reference(from: &reader), let key = id.primaryKey else { throw ByteReader.Truncated() }
                state.log.delete(id, key: key)
            case .nextKey:
                let index = try reader.count()
                guard let names = codec?.entityNames, index < names.count else { throw ByteReader.Truncated() }
                let name = names[index]
                let next = try reader.signed()
                guard (1...StoreMetadata.maxKey + 1).contains(next) else { throw ByteReader.Truncated() }
                let current = state.metadata?.nextKey(for: name) ?? 1
                state.metadata?.nextKeys[name] = max(current, next)
            }
        }
    }
}

extension BinaryStore.Core {
    /// Reads the file again, from a descriptor of the locked file: the header, the metadata,
    /// the snapshot's tables and the log, not the snapshot's rows.
    func reload(_ fd: Int32) throws {
        housekeeping.nextCutCheck = 0
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw StoreError.io(path: path, reason: "cannot read: \(FileIO.errorText())") }
        let size = Int(info.st_size)
        let header = try BinaryStore.parseHeader(try FileIO.read(fd, count: BinaryStore.headerSize, at: 0, path: path), path: path, fileSize: size)
        // A pre-release file is read only to upgrade it (an older layout's reading stays
        // in this one place, never behind a save or a query).
        guard allowsLegacy || !BinaryStore.legacyVersions.contains(header.version) else {
            throw StoreError.legacyFormat(path: path, version: header.version)
        }
        let start = header.size
        var fresh = BinaryStore.State()
        fresh.model = model
        fresh.header.version = header.version
        fresh.header.readFeatures = header.readFeatures
        fresh.header.writeFeatures = header.writeFeatures
        // The history region is read when history is asked for; its numbers count now.
        fresh.history.region = (header.historyOffset, header.historyLength, header.historyStart, header.historyLast)
        fresh.history.start = max(1, header.historyStart)
        fresh.history.last = header.historyLast
        let unclaimed: UInt64
        if header.snapshotLength > 0 {
            // The metadata commit, the snapshot, then the log, up to the file's end.
            let head = try FileIO.read(fd, count: header.snapshotOffset - start, at: start, path: path)
            try BinaryStore.parse(head, path: path, into: &fresh, base: start)
            guard let codec = fresh.codec else { throw StoreError.corrupt(path: path, reason: "no metadata record") }
            fresh.cache.snapshot = try Snapshot.open(fd, base: header.snapshotOffset, length: header.snapshotLength, entityCount: codec.entityNames.count, path: path)
            fresh.header.snapshotPlace = (header.snapshotOffset, header.snapshotLength)
            fresh.header.logStart = header.logStart
            let log = try FileIO.read(fd, count: size - fresh.header.logStart, at: fresh.header.logStart, path: path)
            guard log.count >= header.committedLength - fresh.header.logStart else { throw StoreError.corrupt(path: path, reason: "the file is truncated") }
            unclaimed = try BinaryStore.parse(log, path: path, into: &fresh, base: fresh.header.logStart, claimed: header.committedLength - fresh.header.logStart).unclaimed
        } else {
            let bytes = try FileIO.read(fd, count: size - start, at: start, path: path)
            guard bytes.count >= header.committedLength - start else { throw StoreError.corrupt(path: path, reason: "the file is truncated") }
            unclaimed = try BinaryStore.parse(bytes, path: path, into: &fresh, base: start, claimed: header.committedLength - start).unclaimed
            // The log of a file without snapshot is everything after its metadata commit.
            var reader = ByteReader(bytes)
            fresh.header.logStart = start + 8 + Int((try? reader.u32()) ?? 0)
        }
        fresh.header.claimedLength = header.committedLength
        fresh.header.logGeneration = header.logGeneration
        fresh.header.commitCount = header.commitCount + unclaimed
        state = fresh
        try hold(fd)
    }

    /// Keeps a descriptor of the file the state came from.
    func hold(_ fd: Int32) throws {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw StoreError.io(path: path, reason: "cannot read: \(FileIO.errorText())") }
        let copy = dup(fd)
        guard copy >= 0 else { throw StoreError.io(path: path, reason: "cannot keep the file open: \(FileIO.errorText())") }
        if let held { close(held.fd) }
        held = (copy, FileIdentity(info))
    }

    /// Picks up commits another process appended, or reads the file anew when it was
    /// replaced (a compaction, a migration). `fd` is the locked file. The header is read
    /// under the lock and the file's size after it, so a healthy store never looks truncated.
    func refresh(_ fd: Int32) throws {
        // Inside committingTogether the state is ahead of the file, and nothing else may
        // have changed the file: there is nothing to read, only that to check.
        if batch != nil { return try requireBatchFileUnchanged(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw StoreError.io(path: path, reason: "cannot read: \(FileIO.errorText())") }
        fileSize = nil
        guard let held, held.identity == FileIdentity(info) else { return try reload(fd) }
        let head = try FileIO.read(fd, count: BinaryStore.headerSize, at: 0, path: path)
        guard fstat(fd, &info) == 0 else { throw StoreError.io(path: path, reason: "cannot read: \(FileIO.errorText())") }
        let size = Int(info.st_size)
        fileSize = size
        let header = try BinaryStore.parseHeader(head, path: path, fileSize: size)
        // In one file the header only moves forward and commits are only appended; anything
        // else is a file changed in place, read anew.
        guard header.committedLength >= state.header.claimedLength, size >= state.log.committedLength,
              header.snapshotOffset == state.header.snapshotPlace.offset, header.snapshotLength == state.header.snapshotPlace.length,
              header.logGeneration == state.header.logGeneration, header.version == state.header.version,
              header.readFeatures == state.header.readFeatures, header.writeFeatures == state.header.writeFeatures,
              header.historyOffset == state.history.region.offset, header.historyLength == state.history.region.length
        else { return try reload(fd) }
        state.header.claimedLength = header.committedLength
        // Commits appended since, whether the header claims them yet or not.
        guard size > state.log.committedLength else { return }
        let tail = try FileIO.read(fd, count: size - state.log.committedLength, at: state.log.committedLength, path: path)
        guard tail.count == size - state.log.committedLength else { throw StoreError.corrupt(path: path, reason: "the file is truncated") }
        let before = state.log.committedLength
        let parsed = try BinaryStore.parse(tail, path: path, into: &state, base: before, claimed: max(0, header.committedLength - before))
        state.header.commitCount = header.committedLength > before ? header.commitCount + parsed.unclaimed : state.header.commitCount + parsed.commits
    }

    /// The header as the state says, for a commit count and committed length.
    func currentHeader(committedLength: Int, commitCount: UInt64) -> [UInt8] {
        let snapshotEnd = state.header.snapshotPlace.offset + state.header.snapshotPlace.length
        return BinaryStore.header(BinaryStore.Header(version: BinaryStore.formatVersion, committedLength: committedLength, commitCount: commitCount,
                                  snapshotOffset: state.header.snapshotPlace.offset, snapshotLength: state.header.snapshotPlace.length,
                                  logOffset: state.header.snapshotPlace.length > 0 && state.header.logStart != snapshotEnd ? state.header.logStart : 0,
                                  logGeneration: state.header.logGeneration, readFeatures: state.header.readFeatures, writeFeatures: state.header.writeFeatures,
                                  historyOffset: state.history.region.offset, historyLength: state.history.region.length,
                                  historyStart: state.history.region.start, historyLast: state.history.region.last))
    }

    /// Throws unless this code may change the file: one whose write features it knows, and
    /// `inPlace` (an append, a log cut) one in store format 1.0 (a pre-release file is only
    /// read and compacted into a new 1.0 file: its upgrade).
    func requireWritable(inPlace: Bool = false) throws {
        let unknown = state.header.writeFeatures & ~BinaryStore.Feature.writable
        guard unknown == 0 else { throw StoreError.newerFeatures(path: path, features: unknown, writing: true) }
        guard !inPlace || !BinaryStore.legacyVersions.contains(state.header.version) else {
            throw StoreError.legacyFormat(path: path, version: state.header.version)
        }
    }

    /// Appends one commit. `.full`: flushed (one `fdatasync`), then the header moved past
    /// it without a flush of its own: the header never claims bytes that are not on disk,
    /// and a header write lost in a crash only leaves the commit unclaimed, which readers
    /// recognise by its checksum. `.normal`: not flushed; the header moves (after a flush)
    /// once the unclaimed commits pass ``Core/checkpointBytes``. Caller holds both locks.
    func append(_ payload: [UInt8], fd: Int32, features: UInt64? = nil) throws {
        try append(parts: [payload], fd: fd, features: features)
    }

    /// Appends one commit whose payload is `parts` one after another (the saves of
    /// ``BinaryStore/committingTogether(_:)``), written without joining them in memory.
    func append(parts: [[UInt8]], fd: Int32, features: UInt64? = nil) throws {
        try requireWritable(inPlace: true)
        // A commit that starts using a write feature moves the header with it at once, so
        // a program that does not know the feature sees it before it could write.
        let newFeature = features.map { $0 != state.header.writeFeatures } ?? false
        let length = parts.reduce(0) { $0 + $1.count }
        guard length <= Int(UInt32.max) else {
            throw StoreError.invalidRequest(path: path, reason: "a commit of \(length) bytes is larger than a commit can be (4 GiB)")
        }
        if let features { state.header.writeFeatures = features }
        var head = ByteWriter()
        head.u32(UInt32(length))
        head.u32(parts.reduce(UInt32(0)) { CRC32.checksum($1, continuing: $0) })
        let end = state.log.committedLength + head.bytes.count + length
        // The commit goes where the last one ended. Bytes past that (a torn tail, or what
        // a log cut stopped before cutting away) are cut first: written over, their rest
        // could follow the commit and pass for more commits.
        if fileSize != state.log.committedLength {
            try FileIO.truncate(fd, to: state.log.committedLength, path: path)
        }
        fileSize = nil
        var offset = state.log.committedLength
        for part in [head.bytes] + parts {
            try FileIO.write(fd, part, at: offset, path: path)
            offset += part.count
        }
        fileSize = end
        state.log.committedLength = end
        state.header.commitCount += 1
        if durability == .full || newFeature || end - state.header.claimedLength > Self.checkpointBytes {
            try FileIO.syncData(fd, path: path)
            let header = currentHeader(committedLength: end, commitCount: state.header.commitCount)
            try FileIO.write(fd, Array(header[8...]), at: 8, path: path)
            state.header.claimedLength = end
        }
    }


    /// About the bytes the log's records would take if each object's row were written once:
    /// its last version of each row, a deletion's reference, a next key.
    var liveLogBytes: Int {
        state.log.entries.values.reduce(0) { $0 + $1.length + 16 } + state.log.removed.values.reduce(0) { $0 + $1.count * 12 }
            + (state.metadata?.nextKeys.count ?? 0) * 12
    }

    /// Cuts the log to one commit of what it says: each logged object's last row, the
    /// deletions and the next keys. A log most of whose rows were written again since (one
    /// object edited save after save) is cut this way: a compaction reads and writes every
    /// row, which at 100,000 tasks costs a save loop a millisecond a save. The file is not
    /// replaced: the cut log is written where no header points (the space before the log,
    /// left by an earlier cut, when it fits there, else after the log), ended by a mark no
    /// commit passes for and flushed; only then does the header (format 7) point at it, and
    /// once that is flushed the file is cut after it. A crash leaves the old log or the cut
    /// one. Other openings read the file anew when the header's count of cuts moved. False,
    /// with nothing done, for a file without a snapshot. Caller holds both locks; `fd` is
    /// the locked file.
    func cutLogLocked(fd: Int32) throws -> Bool {
        try requireWritable(inPlace: true)
        guard let codec = state.codec, state.header.snapshotPlace.length > 0, state.header.logStart > BinaryStore.headerSize(ofVersion: state.header.version) else { return false }
        var payload = ByteWriter()
        for (index, name) in codec.entityNames.enumerated() {
            for key in (state.log.removed[name] ?? []).sorted() {
                payload.u8(BinaryStore.RecordTag.delete.rawValue)
                try writeReference(codec.objectID(entity: index, key: key), codec: codec, into: &payload)
            }
            for key in (state.log.keysByEntity[name] ?? []).sorted() {
                let id = codec.objectID(entity: index, key: key)
                guard let entry = state.log.entries[id] else { continue }
                payload.u8(BinaryStore.RecordTag.put.rawValue)
                try writeReference(id, codec: codec, into: &payload)
                payload.signed(entry.version)
                payload.varint(UInt64(entry.length))
                payload.bytes.append(contentsOf: state.log.chunks[entry.chunk][entry.offset..<entry.offset + entry.length])
            }
        }
        for (name, key) in (state.metadata?.nextKeys ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let index = codec.entityIndex[name] else { continue }
            payload.u8(BinaryStore.RecordTag.nextKey.rawValue)
            payload.varint(UInt64(index))
            payload.signed(key)
        }
        // The history. While the log's transactions are few (up to the compaction threshold),
        // the region stays where it is and they go to the new log's first commit, with the
        // history's start; past that, a new region of the transactions the retention bound
        // keeps goes before the new log (rewriting the region at every cut cost a save loop
        // a fifth more).
        let keepsHistory = state.header.writeFeatures & BinaryStore.Feature.history != 0
        let logHistory = state.history.transactions.filter { $0.number >= state.history.start }
        let carried = keepsHistory && state.history.bytes <= housekeeping.threshold
        var region: [UInt8] = []
        var regionEntries: [BinaryStore.HistoryEntry]?
        var regionFields = state.history.region
        var commit: [UInt8] = []
        var commits: UInt64 = 0
        if carried {
            var history = ByteWriter()
            BinaryStore.writeHistoryStart(state.history.start, into: &history)
            for entry in logHistory {
                history.u8(BinaryStore.RecordTag.transaction)
                history.varint(UInt64(entry.length))
                history.bytes.append(contentsOf: state.log.chunks[entry.chunk][entry.offset..<entry.offset + entry.length])
            }
            commit = BinaryStore.frame(history.bytes)
            commits += 1
        } else if keepsHistory, let made = try historyRegion(now: Date()) {
            region = made.bytes
            regionEntries = made.entries
            regionFields = (0, made.bytes.count, made.start, made.last)
        }
        if !payload.bytes.isEmpty {
            commit += BinaryStore.frame(payload.bytes)
            commits += 1
        }
        // Where nothing live is: the space before the log (left by an earlier cut) when the
        // cut log and its end mark fit there, else after the log. A history region the header
        // points at is live until the header moves; one that stays must come before the log.
        let snapshotEnd = state.header.snapshotPlace.offset + state.header.snapshotPlace.length
        let old = state.history.region
        var gaps: [Range<Int>] = []
        if old.length == 0 {
            gaps = [snapshotEnd..<max(snapshotEnd, state.header.logStart)]
        } else {
            if !carried { gaps.append(snapshotEnd..<max(snapshotEnd, old.offset)) }
            gaps.append(min(old.offset + old.length, state.header.logStart)..<state.header.logStart)
        }
        // A frame longer than any file: readers looking for commits past the header's
        // length stop here. What an older log left after it is history up to the log the
        // header pointed at, which would give the same rows, only read for nothing.
        var end = ByteWriter()
        end.u32(UInt32.max)
        end.u32(0)
        let needed = region.count + commit.count + end.bytes.count
        var place = gaps.first { $0.count >= needed }?.lowerBound ?? state.log.committedLength
        fileSize = nil
        var written = region + commit + end.bytes
        if place == state.log.committedLength {
            // After the log, the header still points at the old log until it moves, and a
            // reader takes what follows the old log's last claimed commit for more commits
            // (a save synced but not yet claimed): the cut's frames would pass, and their
            // history would be read twice. An end mark first stops such a reader at the old
            // log's end; the file is cut there first, so nothing older (an earlier stopped
            // cut) lies under bytes a crash did not write.
            try FileIO.truncate(fd, to: state.log.committedLength, path: path)
            written = end.bytes + written
            place += end.bytes.count
        }
        if !region.isEmpty { regionFields.offset = place }
        try FileIO.write(fd, written, at: place - (written.count - needed), path: path)
        // The header never points at a log not on disk, and the log it pointed at is not
        // written over until the header pointing elsewhere is.
        try FileIO.syncData(fd, path: path)
        #if DEBUG
        if housekeeping.cutStop == .afterWritingTheLog { throw StoreError.io(path: path, reason: "the log cut stopped where a test asked") }
        #endif
        let logPlace = place + region.count
        let fields = BinaryStore.Header(version: BinaryStore.formatVersion, committedLength: logPlace + commit.count, commitCount: state.header.commitCount + max(1, commits),
                                        snapshotOffset: state.header.snapshotPlace.offset, snapshotLength: state.header.snapshotPlace.length,
                                        logOffset: logPlace == snapshotEnd ? 0 : logPlace, logGeneration: state.header.logGeneration &+ 1,
                                        readFeatures: state.header.readFeatures, writeFeatures: state.header.writeFeatures,
                                        historyOffset: regionFields.offset, historyLength: regionFields.length,
                                        historyStart: regionFields.start, historyLast: regionFields.last)
        try FileIO.write(fd, Array(BinaryStore.header(fields)[8...]), at: 8, path: path)
        try FileIO.syncData(fd, path: path)
        #if DEBUG
        if housekeeping.cutStop == .afterMovingTheHeader { throw StoreError.io(path: path, reason: "the log cut stopped where a test asked") }
        #endif
        try FileIO.truncate(fd, to: logPlace + commit.count, path: path)
        // The region as read (a region that stayed) or as just written is kept: reading
        // it back from the file at the next cut cost a save loop a few percent.
        let kept = regionEntries.map { ($0, region) } ?? state.history.regionEntries.map { ($0, state.history.regionBytes) }
        try reload(fd)
        if let (entries, bytes) = kept, state.history.region.offset == regionFields.offset, state.history.region.length == bytes.count {
            state.history.regionEntries = entries
            state.history.regionBytes = bytes
        }
        return true
    }
}

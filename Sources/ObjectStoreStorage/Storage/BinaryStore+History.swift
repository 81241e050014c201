import Foundation
import ObjectStoreModel

// The store's history: a transaction record in the commit of every save, read back by
// number or time, kept through compactions and log cuts as the retention bound says
// (docs/store-format.md, "History").
extension BinaryStore {
    /// A transaction in the log: its number and time, and where its record's body is.
    struct HistoryEntry {
        var number: Int64
        var timestamp: Date
        var chunk: Int
        var offset: Int
        var length: Int
    }

    enum ChangeKind: UInt8 {
        case insert = 1, update = 2, delete = 3
        /// Insertions of consecutive keys of one entity (an import): entity, first key, count.
        case insertRun = 4
    }

    /// The fields of a transaction record before its changes.
    struct TransactionHead {
        var number: Int64
        var timestamp: Date
        var author: String?
        var contextName: String?
        var processID: Int32
    }

    /// Writes a transaction record (tag 16): its number, time, author, context name,
    /// process and changes, each value a tagged slot. Each change is encoded as it is
    /// visited (nothing of it is kept); ``finish(_:into:)`` writes the record.
    struct TransactionWriter: RecordedChangeVisitor {
        let codec: RowCodec
        let path: String
        var body = ByteWriter()
        var count = 0
        /// Insertions of consecutive keys of one entity, written as one run.
        var run: (entity: Int, first: Int64, count: Int64)?
        /// The entity index of the last change's object (a save's objects come entity by entity).
        var lastEntity: (scope: ObjectIdentifier, index: Int)?

        init(codec: RowCodec, path: String) {
            self.codec = codec
            self.path = path
        }

        mutating func flushRun() {
            guard let pending = run else { return }
            count += 1
            if pending.count == 1 {
                body.u8(ChangeKind.insert.rawValue)
                body.varint(UInt64(pending.entity))
                body.signed(pending.first)
                body.varint(0)
            } else {
                body.u8(ChangeKind.insertRun.rawValue)
                body.varint(UInt64(pending.entity))
                body.signed(pending.first)
                body.varint(UInt64(pending.count))
            }
            run = nil
        }

        mutating func entityIndex(of id: ObjectID) -> Int? {
            let scope = ObjectIdentifier(id.scope)
            if let lastEntity, lastEntity.scope == scope { return lastEntity.index }
            guard let index = codec.entityIndex(of: id) else { return nil }
            lastEntity = (scope, index)
            return index
        }

        mutating func visit(_ change: RecordedChange) throws {
            if change.kind == .insert, change.values.isEmpty, let index = entityIndex(of: change.objectID), let key = change.objectID.primaryKey {
                if let pending = run, pending.entity == index, pending.first &+ pending.count == key {
                    run = (index, pending.first, pending.count + 1)
                } else {
                    flushRun()
                    run = (index, key, 1)
                }
                return
            }
            flushRun()
            count += 1
            switch change.kind {
            case .insert: body.u8(ChangeKind.insert.rawValue)
            case .update: body.u8(ChangeKind.update.rawValue)
            case .delete: body.u8(ChangeKind.delete.rawValue)
            }
            guard let index = entityIndex(of: change.objectID), let key = change.objectID.primaryKey else {
                throw StoreError.invalidRequest(path: path, reason: "cannot record \(change.objectID) in the history: unknown entity or temporary ID")
            }
            body.varint(UInt64(index))
            body.signed(key)
            body.varint(UInt64(change.values.count))
            for value in change.values {
                body.varint(UInt64(value.slot))
                do {
                    try codec.encode(value.old, into: &body)
                    try codec.encode(value.new, into: &body)
                } catch {
                    throw StoreError.invalidRequest(path: path, reason: "cannot record \(change.objectID) in the history: it refers to an object of an entity this store does not have")
                }
            }
        }

        /// The record, after its changes, appended to `payload`.
        mutating func finish(_ transactionHead: TransactionHead, into payload: inout ByteWriter) {
            flushRun()
            var head = ByteWriter()
            head.signed(transactionHead.number)
            head.u64(transactionHead.timestamp.timeIntervalSinceReferenceDate.bitPattern)
            head.string(transactionHead.author ?? "")
            head.string(transactionHead.contextName ?? "")
            head.varint(UInt64(UInt32(bitPattern: transactionHead.processID)))
            head.varint(UInt64(count))
            payload.u8(RecordTag.transaction)
            payload.varint(UInt64(head.bytes.count + body.bytes.count))
            payload.bytes.append(contentsOf: head.bytes)
            payload.bytes.append(contentsOf: body.bytes)
        }
    }

    /// Writes a history start record (tag 17): transactions numbered below `start` were
    /// deleted, and the next one is numbered `start` at least.
    static func writeHistoryStart(_ start: Int64, into payload: inout ByteWriter) {
        var body = ByteWriter()
        body.signed(start)
        payload.u8(RecordTag.historyStart)
        payload.varint(UInt64(body.bytes.count))
        payload.bytes.append(contentsOf: body.bytes)
    }

    /// Reads a transaction record's body.
    /// `nextKeys` bounds what a run of inserts may claim: keys the store has given out
    /// (a 50-byte record claiming 10^8 inserts made `log --limit 1` build 10^8 changes, 6.6
    /// GB, and an undo of it delete tasks it never inserted).
    static func readTransaction(_ bytes: [UInt8], from start: Int, length: Int, codec: RowCodec, model: ManagedObjectModel, nextKeys: [String: Int64]) throws -> HistoryTransaction {
        var reader = ByteReader(bytes, from: start, to: start + length)
        let number = try reader.signed()
        let seconds = Double(bitPattern: try reader.u64())
        guard seconds.isFinite else { throw ByteReader.Truncated() }
        let author = try reader.string()
        let context = try reader.string()
        let process = try reader.varint()
        guard process <= UInt64(UInt32.max) else { throw ByteReader.Truncated() }
        let count = try reader.count()
        var changes: [HistoryChange] = []
        changes.reserveCapacity(min(count, 4096))
        for _ in 0..<count {
            guard let kind = ChangeKind(rawValue: try reader.u8()) else { throw ByteReader.Truncated() }
            if kind == .insertRun {
                let entity = try reader.count()
                let first = try reader.signed()
                let length = try reader.varint()
                // Keys from 1 on, none past the largest a store gives; runs of two or more.
                guard entity < codec.entityNames.count, first >= 1, length >= 2, length <= UInt64(StoreMetadata.maxKey),
                      first <= StoreMetadata.maxKey - Int64(length) + 1,
                      first + Int64(length) <= nextKeys[codec.entityNames[entity]] ?? 1 else { throw ByteReader.Truncated() }
                for key in first..<first + Int64(length) {
                    changes.append(HistoryChange(kind: .insert, objectID: codec.objectID(entity: entity, key: key), values: []))
                }
                continue
            }
            let id = try codec.reference(from: &reader)
            guard let key = id.primaryKey, key >= 1, let entity = model.entity(named: id.entityName) else { throw ByteReader.Truncated() }
            let valueCount = try reader.count()
            var values: [PropertyChange] = []
            values.reserveCapacity(min(valueCount, entity.properties.count))
            for _ in 0..<valueCount {
                let slot = try reader.count()
                guard slot < entity.properties.count else { throw ByteReader.Truncated() }
                let old = try codec.slot(from: &reader)
                let new = try codec.slot(from: &reader)
                values.append(PropertyChange(name: entity.properties[slot].name, slot: slot, oldValue: old, newValue: new))
            }
            let publicKind: HistoryChange.Kind = kind == .insert ? .insert : kind == .update ? .update : .delete
            if kind == .insert && !values.isEmpty { throw ByteReader.Truncated() }
            changes.append(HistoryChange(kind: publicKind, objectID: id, values: values))
        }
        guard reader.isAtEnd else { throw ByteReader.Truncated() }
        return HistoryTransaction(number: number, storeIdentifier: codec.storeIdentifier, timestamp: Date(timeIntervalSinceReferenceDate: seconds),
                                  author: author.isEmpty ? nil : author, contextName: context.isEmpty ? nil : context,
                                  processID: Int32(bitPattern: UInt32(process)), changes: changes)
    }

    /// Notes a history record met in the log (a transaction's number and time and where
    /// it is; a start's deletion of the transactions before it).
    static func noteHistoryRecord(_ tag: UInt8, _ bytes: [UInt8], from start: Int, length: Int, chunk: Int, state: inout State) throws {
        var reader = ByteReader(bytes, from: start, to: start + length)
        if tag == RecordTag.transaction {
            let number = try reader.signed()
            let seconds = Double(bitPattern: try reader.u64())
            // Numbers rise from one commit to the next; anything else is damage.
            guard number > state.history.last, number < Int64(openCounterLimit), seconds.isFinite else { throw ByteReader.Truncated() }
            state.history.transactions.append(HistoryEntry(number: number, timestamp: Date(timeIntervalSinceReferenceDate: seconds), chunk: chunk, offset: start, length: length))
            state.history.bytes += length + 4
            state.history.last = number
        } else if tag == RecordTag.historyStart {
            let first = try reader.signed()
            guard first >= 1, first < Int64(openCounterLimit), first >= state.history.start else { throw ByteReader.Truncated() }
            state.history.start = first
            state.history.last = max(state.history.last, first - 1)
            let kept = state.history.transactions.firstIndex { $0.number >= first } ?? state.history.transactions.count
            state.history.bytes -= state.history.transactions[..<kept].reduce(0) { $0 + $1.length + 4 }
            state.history.transactions.removeFirst(kept)
        }
    }

    // MARK: PersistentStore

    package var keepsHistory: Bool {
        core.withLock { $0.retention != nil || $0.state.header.writeFeatures & Feature.history != 0 }
    }

    package var lastSavedTransaction: Int64? { core.withLock { $0.lastSavedTransaction } }

    package func trackHistory(_ retention: HistoryRetention) throws {
        core.withLock { $0.retention = retention }
    }

    package func historyBounds() throws -> (first: Int64, last: Int64) {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try core.withLock { core in
                try core.refresh(fd)
                try core.requireHistory()
                return (core.state.history.start, core.state.history.last)
            }
        }
    }

    package func history(after number: Int64?, since date: Date?) throws -> [HistoryTransaction] {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try core.withLock { core in
                try core.refresh(fd)
                try core.requireHistory()
                guard let codec = core.state.codec else { return [] }
                if let number {
                    try checkAvailable(after: number, first: core.state.history.start, last: core.state.history.last, storeIdentifier: codec.storeIdentifier)
                }
                return try core.historyEntries().filter { entry in
                    entry.number > (number ?? 0) && date.map { entry.timestamp > $0 } ?? true
                }.map { entry in
                    do {
                        return try BinaryStore.readTransaction(core.bytes(of: entry), from: entry.offset, length: entry.length, codec: codec, model: model,
                                                               nextKeys: core.state.metadata?.nextKeys ?? [:])
                    } catch {
                        throw StoreError.corrupt(path: path, reason: "unreadable transaction \(entry.number) of the history")
                    }
                }
            }
        }
    }

    package func lastUndecodableTransaction() throws -> Int64? {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try core.withLock { core in
                try core.refresh(fd)
                guard core.state.header.writeFeatures & Feature.history != 0, let codec = core.state.codec else { return nil }
                let nextKeys = core.state.metadata?.nextKeys ?? [:]
                return try core.historyEntries().last { entry in
                    (try? BinaryStore.readTransaction(core.bytes(of: entry), from: entry.offset, length: entry.length, codec: codec, model: model, nextKeys: nextKeys)) == nil
                }?.number
            }
        }
    }

    package func continueHistory(after number: Int64) throws {
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        try fileLock.withLock { fd, _ in
            try core.withLock { core in
                try core.refresh(fd)
                let first = max(1, number + 1)
                guard first > core.state.history.start || core.state.header.writeFeatures & Feature.history == 0 else { return }
                var payload = ByteWriter()
                BinaryStore.writeHistoryStart(max(first, core.state.history.start), into: &payload)
                try core.append(payload.bytes, fd: fd, features: core.state.header.writeFeatures | Feature.history)
                core.state.log.chunks.append(payload.bytes)
                try BinaryStore.noteHistoryRecord(RecordTag.historyStart, payload.bytes, from: 2, length: payload.bytes.count - 2, chunk: core.state.log.chunks.count - 1, state: &core.state)
            }
        }
    }

    package func deleteHistory(through number: Int64) throws {
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        try fileLock.withLock { fd, _ in
            try core.withLock { core in
                try core.refresh(fd)
                try core.requireHistory()
                let first = min(number, core.state.history.last) + 1
                guard first > core.state.history.start else { return }
                var payload = ByteWriter()
                BinaryStore.writeHistoryStart(first, into: &payload)
                try core.append(payload.bytes, fd: fd, features: core.state.header.writeFeatures | Feature.history)
                core.state.log.chunks.append(payload.bytes)
                try BinaryStore.noteHistoryRecord(RecordTag.historyStart, payload.bytes, from: 2, length: payload.bytes.count - 2, chunk: core.state.log.chunks.count - 1, state: &core.state)
            }
        }
    }
}

extension BinaryStore.Core {
    /// Throws unless saves of this opening record transactions.
    func requireHistory() throws {
        guard retention != nil || state.header.writeFeatures & BinaryStore.Feature.history != 0 else { throw HistoryError.notTracked }
    }

    /// Whether saves record transactions.
    var recordsHistory: Bool { retention != nil || state.header.writeFeatures & BinaryStore.Feature.history != 0 }

    /// The transactions of the history region and the log that are still kept, oldest
    /// first (the region read from the file the first time).
    func historyEntries() throws -> [BinaryStore.HistoryEntry] {
        if state.history.regionEntries == nil {
            var entries: [BinaryStore.HistoryEntry] = []
            let region = state.history.region
            if region.length > 0 {
                guard let fd = held?.fd else { throw StoreError.io(path: path, reason: "the store file is not open") }
                let bytes = try FileIO.read(fd, count: region.length, at: region.offset, path: path)
                var reader = ByteReader(bytes)
                guard bytes.count == region.length, let length = try? Int(reader.u32()), let crc = try? reader.u32(), length == bytes.count - 8,
                      CRC32.checksum(bytes[8...]) == crc
                else { throw StoreError.corrupt(path: path, reason: "the history region at byte \(region.offset) is damaged") }
                var scratch = BinaryStore.State()
                scratch.history.last = region.start - 1
                do {
                    while !reader.isAtEnd {
                        guard try reader.u8() == BinaryStore.RecordTag.transaction else { throw ByteReader.Truncated() }
                        let recordLength = try reader.count()
                        guard recordLength <= reader.end - reader.position else { throw ByteReader.Truncated() }
                        try BinaryStore.noteHistoryRecord(BinaryStore.RecordTag.transaction, bytes, from: reader.position, length: recordLength, chunk: -1, state: &scratch)
                        reader.position += recordLength
                    }
                } catch {
                    throw StoreError.corrupt(path: path, reason: "the history region at byte \(region.offset) is damaged")
                }
                guard scratch.history.last <= region.last else { throw StoreError.corrupt(path: path, reason: "the history region at byte \(region.offset) is damaged") }
                entries = scratch.history.transactions
                state.history.regionBytes = bytes
            }
            state.history.regionEntries = entries
        }
        let start = state.history.start
        return (state.history.regionEntries ?? []).filter { $0.number >= start } + state.history.transactions.filter { $0.number >= start }
    }

    /// The bytes an entry's record is in.
    func bytes(of entry: BinaryStore.HistoryEntry) -> [UInt8] {
        entry.chunk < 0 ? state.history.regionBytes : state.log.chunks[entry.chunk]
    }

    /// The history region a new log starts after (a compaction's, a log cut's): the
    /// transactions the retention bound keeps, as they were written, in a frame of their
    /// own; with the number of the first one kept and of the last one written. Nil for a
    /// file without history.
    func historyRegion(now: Date) throws -> (bytes: [UInt8], start: Int64, last: Int64, entries: [BinaryStore.HistoryEntry])? {
        guard state.header.writeFeatures & BinaryStore.Feature.history != 0 else { return nil }
        let last = state.history.last
        let retention = self.retention ?? .all
        let kept = try historyEntries().drop { !retention.keeps(number: $0.number, timestamp: $0.timestamp, last: last, now: now) }
        // The frame's length and checksum first, filled in after.
        var payload = ByteWriter()
        payload.u32(0)
        payload.u32(0)
        var entries: [BinaryStore.HistoryEntry] = []
        entries.reserveCapacity(kept.count)
        for entry in kept {
            payload.u8(BinaryStore.RecordTag.transaction)
            payload.varint(UInt64(entry.length))
            entries.append(BinaryStore.HistoryEntry(number: entry.number, timestamp: entry.timestamp, chunk: -1, offset: payload.bytes.count, length: entry.length))
            payload.bytes.append(contentsOf: bytes(of: entry)[entry.offset..<entry.offset + entry.length])
        }
        var bytes = payload.bytes
        let length = UInt32(bytes.count - 8), crc = CRC32.checksum(bytes[8...])
        for i in 0..<4 {
            bytes[i] = UInt8(truncatingIfNeeded: length >> (8 * UInt32(i)))
            bytes[4 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i)))
        }
        return (bytes, kept.first?.number ?? last + 1, last, entries)
    }
}

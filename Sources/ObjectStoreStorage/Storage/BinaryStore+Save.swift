import Foundation
import ObjectStoreModel

extension BinaryStore {
    /// Saves `changes` as one commit: checked against the file as it is now (read again
    /// under its lock), encoded, then appended (or staged, inside ``committingTogether(_:)``),
    /// then applied to the state the store reads from.
    package func save(_ changes: StoreChanges) throws -> [ObjectID: ObjectID] {
        guard !changes.isEmpty else { return [:] }
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        return try fileLock.withLock { fd, realPath in
            try core.withLock { core in
                try core.refresh(fd)
                try core.check(changes)
                var save = try core.encode(changes)
                if core.batch != nil {
                    try core.stage(save, changes: changes)
                } else {
                    try core.commit(&save, changes: changes, fd: fd)
                    if core.housekeeping.deferred == 0 { core.housekeepLocked(fd: fd, path: realPath) }
                }
                return save.mapping
            }
        }
    }

    /// A save's records, encoded for the log, and what they wrote.
    struct EncodedSave {
        /// The records: puts, deletes and next keys.
        var payload: [UInt8]
        /// Where each written row's slots are in `payload`.
        var written: [WrittenRow]
        /// The permanent IDs given to the inserted objects.
        var mapping: [ObjectID: ObjectID]
        /// The entities' next keys after the save.
        var nextKeys: [String: Int64]
        /// The updated rows, their references given permanent IDs.
        var updated: [(row: StoredRow, expectedVersion: Int64)]
    }
}

extension BinaryStore.Core {
    /// Refuses a save that conflicts with the file: a row changed since it was loaded, a
    /// value a uniqueness constraint already has (checked at the commit for saves committed
    /// together), a reference to an object that is not there.
    func check(_ changes: StoreChanges) throws {
        try checkVersions(changes, current: { try encodedRow($0)?.version })
        if batch == nil {
            let check = UniquenessCheck(model: model)
            let violations = try check.failures(changes, saved: { id, slots in
                guard let (_, bytes, start) = try encodedRow(id) else { return nil }
                return try? decode(id, bytes, from: start, slots: slots)
            }, holders: holders(for: changes, check: check))
            if !violations.isEmpty { throw ValidationError(failures: violations) }
        }
        let destinations = DestinationCheck(model: model)
        let dangling = try destinations.failures(changes, exists: { try encodedRow($0) != nil })
            + destinations.deletionFailures(changes, rows: { name, slot in try slotValuesLocked(ofEntity: name, slots: [slot]).map { ($0.0, $0.1[0]) } })
        if !dangling.isEmpty { throw ValidationError(failures: dangling) }
    }

    /// The save's records. Each row is given its permanent IDs as it is written, and let go:
    /// an import's rows are not held a second time (with their new IDs) for the whole save.
    func encode(_ changes: StoreChanges) throws -> BinaryStore.EncodedSave {
        guard let codec = state.codec else { throw StoreError.corrupt(path: path, reason: "no metadata record") }
        let (mapping, nextKeys) = changes.keyAssignment(from: state.metadata?.nextKeys ?? [:])
        let updated = mapping.isEmpty ? changes.updated : changes.updated.map { ($0.row.remapped(mapping), $0.expectedVersion) }
        var payload = ByteWriter()
        var written: [BinaryStore.WrittenRow] = []
        written.reserveCapacity(changes.inserted.count + updated.count)
        var encoded = ByteWriter()  // each row's slots, before their length is known
        for index in 0..<(changes.inserted.count + updated.count) {
            let row = index < changes.inserted.count ? changes.inserted[index].remapped(mapping) : updated[index - changes.inserted.count].row
            payload.u8(BinaryStore.RecordTag.put.rawValue)
            try writeReference(row.objectID, codec: codec, into: &payload)
            payload.signed(row.version)
            encoded.bytes.removeAll(keepingCapacity: true)
            do {
                try codec.encodeRow(row.slots, shape: codec.entityIndex(of: row.objectID).map { codec.shape(entity: $0) } ?? RowCodec.Shape(), into: &encoded)
            } catch {
                throw StoreError.invalidRequest(path: path, reason: "cannot write \(row.objectID): it refers to an object of an entity this store does not have")
            }
            payload.varint(UInt64(encoded.bytes.count))
            let slotsOffset = payload.bytes.count
            payload.bytes.append(contentsOf: encoded.bytes)
            written.append((row.objectID, row.version, slotsOffset, encoded.bytes.count))
        }
        for (id, _) in changes.deleted {
            payload.u8(BinaryStore.RecordTag.delete.rawValue)
            try writeReference(id, codec: codec, into: &payload)
        }
        for (name, key) in nextKeys.sorted(by: { $0.key < $1.key }) where key != state.metadata?.nextKeys[name] {
            guard let index = codec.entityIndex[name] else { continue }
            payload.u8(BinaryStore.RecordTag.nextKey.rawValue)
            payload.varint(UInt64(index))
            payload.signed(key)
        }
        return BinaryStore.EncodedSave(payload: payload.bytes, written: written, mapping: mapping, nextKeys: nextKeys, updated: updated)
    }

    /// Appends the save as one commit, with its transaction when the store keeps history,
    /// then reads its rows from the log from now on. The payload moves into the log (one
    /// copy of an import's bytes, not two).
    func commit(_ save: inout BinaryStore.EncodedSave, changes: StoreChanges, fd: Int32) throws {
        guard let codec = state.codec else { throw StoreError.corrupt(path: path, reason: "no metadata record") }
        var payload = ByteWriter()
        swap(&payload.bytes, &save.payload)
        // The transaction, in the same commit as its rows.
        var transactionRecord: Int?
        if recordsHistory {
            let head = BinaryStore.TransactionHead(number: state.history.last + 1, timestamp: changes.transaction?.timestamp ?? Date(),
                                       author: changes.transaction?.author, contextName: changes.transaction?.contextName, processID: currentProcessID)
            transactionRecord = payload.bytes.count
            var writer = BinaryStore.TransactionWriter(codec: codec, path: path)
            // An insert is recorded by its ID alone (forEachRecordedChange), so the inserted
            // rows are handed over without their values.
            var keyed = changes
            if !save.mapping.isEmpty {
                keyed.inserted = changes.inserted.map { StoredRow(objectID: save.mapping[$0.objectID] ?? $0.objectID, version: $0.version, slots: []) }
                keyed.updated = save.updated
            }
            try forEachRecordedChange(keyed, draft: changes.transaction, model: model, stored: { id in try storedRow(id) }, into: &writer)
            writer.finish(head, into: &payload)
        }
        try append(payload.bytes, fd: fd, features: transactionRecord == nil ? nil : state.header.writeFeatures | BinaryStore.Feature.history)
        state.metadata?.nextKeys = save.nextKeys
        // The commit's bytes are where its rows are read from from now on.
        let chunk = state.log.chunks.count
        state.log.append(payload.bytes, writing: save.written, deleting: changes.deleted.map(\.id), inserted: changes.inserted.count)
        if let transactionRecord {
            var reader = ByteReader(payload.bytes, from: transactionRecord + 1)
            let length = try reader.count()
            try BinaryStore.noteHistoryRecord(BinaryStore.RecordTag.transaction, payload.bytes, from: reader.position, length: length, chunk: chunk, state: &state)
            lastSavedTransaction = state.history.last
        }
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ObjectStoreModel

// Several saves committed as one: the saves inside `committingTogether` change the store's
// state in memory (so the process reads what they saved) and keep their records; the end
// of the body writes them as one commit with one transaction. Nothing of them is in the
// file before that commit, so another process, a crash or an error in the body sees all of
// them or none. The file format is unchanged: the commit is an ordinary one, only larger.
extension BinaryStore {
    /// What the saves of one ``committingTogether(_:)`` have staged.
    struct Batch {
        /// Each save's records (rows, deletions, next keys), in order.
        var payloads: [[UInt8]] = []
        /// The next key of each entity when the batch began: an object with a key at or past
        /// it was inserted by the batch (or given its ID during it).
        var firstNewKeys: [String: Int64] = [:]
        /// Objects the batch inserted, in the order of their saves.
        var inserted: [ObjectID] = []
        /// Objects saved before the batch that it changed or deleted, with their rows as they
        /// were (nil: the store had no such row), in the order first met.
        var before: [ObjectID: StoredRow?] = [:]
        var changed: [ObjectID] = []
        /// Rows saved before the batch whose constrained values some save of it may have
        /// changed (an update not marked `constrainedValuesKept`): only these are checked
        /// against the others at the commit.
        var constraintsTouched: Set<ObjectID> = []
        /// Who saved, and when: the last save's.
        var draft: TransactionDraft?
        /// The file as the batch began: its identity, size and modification time. Nothing
        /// but the batch's commit may change it (see ``BinaryStore/Core/requireBatchFileUnchanged(_:)``).
        var file: (identity: FileIdentity, size: Int, modified: timespec)?

        func isNew(_ id: ObjectID) -> Bool {
            guard let key = id.primaryKey else { return true }
            return isNew(key: key, entityName: id.entityName)
        }

        func isNew(key: Int64, entityName: String) -> Bool {
            key >= max(1, firstNewKeys[entityName] ?? 1)
        }
    }

    /// Runs `body`, in which saves to this store are committed together when it returns:
    /// one commit of the file and one transaction of its history. The store's file lock is
    /// held throughout, so no other process saves (or reads) in between. When `body` throws,
    /// or the commit fails, nothing it saved is in the file, and the store reads its state
    /// from the file again. Not nested.
    package func committingTogether<T>(_ body: () throws -> T) throws -> T {
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        return try fileLock.withLock { fd, realPath in
            try core.withLock { core in
                guard core.batch == nil else { throw StoreError.invalidRequest(path: path, reason: "saves are already being committed together") }
                try core.refresh(fd)
                var batch = Batch(firstNewKeys: core.state.metadata?.nextKeys ?? [:])
                batch.file = try core.fileState(fd)
                core.batch = batch
            }
            do {
                let result = try body()
                try core.withLock { core in try core.commitBatch(fd: fd, path: realPath) }
                return result
            } catch {
                core.withLock { core in core.discardBatch(fd: fd) }
                throw error
            }
        }
    }
}

extension BinaryStore.Core {
    /// The locked file's identity, size and modification time, and whether its path still
    /// names it.
    func fileState(_ fd: Int32) throws -> (identity: FileIdentity, size: Int, modified: timespec) {
        var info = stat(), named = stat()
        guard fstat(fd, &info) == 0 else { throw StoreError.io(path: path, reason: "cannot read: \(FileIO.errorText())") }
        guard stat(path, &named) == 0, FileIdentity(named) == FileIdentity(info) else {
            return (FileIdentity(named), -1, timespec())
        }
        return (FileIdentity(info), Int(info.st_size), info.st_mtim)
    }

    /// Throws unless the file is as the batch found it. The file's lock keeps other
    /// processes and threads out, but another opening of the store on the batch's own thread
    /// (the lock is the thread's) could save, compact or cut the log inside the body: the
    /// batch's commit would then write over that or into a replaced file, so it is refused
    /// instead, with nothing of the batch written and the other opening's change kept.
    func requireBatchFileUnchanged(_ fd: Int32) throws {
        guard let expected = batch?.file else { return }
        let now = try fileState(fd)
        guard now.identity == expected.identity, now.size == expected.size,
              now.modified.tv_sec == expected.modified.tv_sec, now.modified.tv_nsec == expected.modified.tv_nsec
        else {
            throw StoreError.invalidRequest(path: path, reason: "another opening of the store changed it inside committingTogether; nothing of the batch was saved")
        }
    }

    /// The saved row of an object, decoded (nil: the store has none).
    func storedRow(_ id: ObjectID) throws -> StoredRow? {
        guard let (version, bytes, start) = try encodedRow(id) else { return nil }
        return StoredRow(objectID: id, version: version, slots: try decode(id, bytes, from: start))
    }

    /// A save inside ``BinaryStore/committingTogether(_:)``: its records are kept for the
    /// commit, and the state reads its rows from now on; the rows it changes or deletes are
    /// noted as they were before the batch, for the transaction.
    func stage(_ save: BinaryStore.EncodedSave, changes: StoreChanges) throws {
        guard var batch else { return }
        self.batch = nil
        defer { self.batch = batch }
        // The rows as they were are read for the transaction, and for the uniqueness check
        // of a row whose constrained values changed; without history, a row kept otherwise
        // (or deleted) needs neither (a batch update of a million rows kept a million).
        let recorded = recordsHistory
        for row in save.updated where !changes.constrainedValuesKept.contains(row.row.objectID) {
            batch.constraintsTouched.insert(row.row.objectID)
        }
        for id in save.updated.map(\.row.objectID) + changes.deleted.map(\.id) where !batch.isNew(id) && batch.before[id] == nil {
            // A row a later save changes the constrained values of is noted then, as it is
            // then: its constrained values are still the ones it had before the batch.
            guard recorded || batch.constraintsTouched.contains(id) else { continue }
            batch.before[id] = .some(try storedRow(id))
            batch.changed.append(id)
        }
        batch.inserted.reserveCapacity(batch.inserted.count + changes.inserted.count)
        for row in changes.inserted { batch.inserted.append(save.mapping[row.objectID] ?? row.objectID) }
        batch.payloads.append(save.payload)
        if let draft = changes.transaction { batch.draft = draft }
        state.metadata?.nextKeys = save.nextKeys
        state.log.append(save.payload, writing: save.written, deleting: changes.deleted.map(\.id), inserted: changes.inserted.count)
    }

    /// Writes the batch's saves as one commit, with one transaction of what they changed
    /// together (an object inserted and deleted inside is not in it; one changed twice is
    /// recorded once, against its values before the batch), then does the housekeeping a
    /// save does.
    func commitBatch(fd: Int32, path realPath: String) throws {
        try requireBatchFileUnchanged(fd)
        guard let batch else { return }
        self.batch = nil
        guard !batch.payloads.isEmpty, let codec = state.codec else { return }
        try checkUniqueness(of: batch)
        var record = ByteWriter()
        if recordsHistory {
            var changes = StoreChanges()
            changes.inserted = batch.inserted.filter { state.log.entries[$0] != nil }.map { StoredRow(objectID: $0, version: 1, slots: []) }
            for id in batch.changed {
                guard let before = batch.before[id] ?? nil else { continue }
                if let current = try storedRow(id) {
                    changes.updated.append((current, before.version))
                } else {
                    changes.deleted.append((id, before.version))
                }
            }
            let draft = batch.draft.map { TransactionDraft(author: $0.author, contextName: $0.contextName, timestamp: $0.timestamp) }
            let head = BinaryStore.TransactionHead(number: state.history.last + 1, timestamp: draft?.timestamp ?? Date(), author: draft?.author,
                                                   contextName: draft?.contextName, processID: currentProcessID)
            var writer = BinaryStore.TransactionWriter(codec: codec, path: path)
            try forEachRecordedChange(changes, draft: draft, model: model, stored: { batch.before[$0] ?? nil }, into: &writer)
            writer.finish(head, into: &record)
        }
        try append(parts: batch.payloads + (record.bytes.isEmpty ? [] : [record.bytes]), fd: fd,
                   features: record.bytes.isEmpty ? nil : state.header.writeFeatures | BinaryStore.Feature.history)
        if !record.bytes.isEmpty {
            let chunk = state.log.chunks.count
            state.log.chunks.append(record.bytes)
            var reader = ByteReader(record.bytes, from: 1)
            let length = try reader.count()
            try BinaryStore.noteHistoryRecord(BinaryStore.RecordTag.transaction, record.bytes, from: reader.position, length: length, chunk: chunk, state: &state)
            lastSavedTransaction = state.history.last
        }
        if housekeeping.deferred == 0 { housekeepLocked(fd: fd, path: realPath) }
    }

    /// The uniqueness check of the batch's saves, as one save of all their rows would have
    /// it: the rows it inserted, and those it changed whose constrained values are not what
    /// they were, against each other and every other row. Each row's constrained values are
    /// read as it is checked (not every row at once). Throws `ValidationError`.
    func checkUniqueness(of batch: BinaryStore.Batch) throws {
        // Per entity (by its scope), its constrained slots in ascending order.
        var constrained: [ObjectIdentifier: [Int]] = [:]
        func slots(of id: ObjectID) -> [Int] {
            let scope = ObjectIdentifier(id.scope)
            if let known = constrained[scope] { return known }
            let slots = Array(Set(model.entity(named: id.entityName)?.constrainedSlots ?? [])).sorted()
            constrained[scope] = slots
            return slots
        }
        /// The row with its constrained slots read (the others null), nil when it is gone or
        /// keeps no constraint.
        func row(_ id: ObjectID) throws -> StoredRow? {
            let ascending = slots(of: id)
            guard !ascending.isEmpty, let (version, bytes, start) = try encodedRow(id) else { return nil }
            let decoded = try decode(id, bytes, from: start, slots: ascending)
            var values = [SlotValue](repeating: .value(.null), count: (ascending.last ?? 0) + 1)
            for (index, slot) in ascending.enumerated() where index < decoded.count { values[slot] = decoded[index] }
            return StoredRow(objectID: id, version: version, slots: values)
        }
        let changed = try batch.changed.filter { id in
            guard batch.constraintsTouched.contains(id), let current = try row(id) else { return false }
            guard let before = batch.before[id] ?? nil else { return true }
            return slots(of: id).contains { $0 >= before.slots.count || $0 >= current.slots.count || before.slots[$0] != current.slots[$0] }
        }
        let count = batch.inserted.count + changed.count
        guard count > 0 else { return }
        var unreadable: (any Error)?
        let rows = (batch.inserted + changed).lazy.compactMap { id -> StoredRow? in
            do {
                return try row(id)
            } catch {
                unreadable = unreadable ?? error
                return nil
            }
        }
        // The rows the batch inserted are checked against each other as they come; the
        // holders are looked for among the other rows only (in an import into an empty
        // store, none: no table of a million values is made to find each row itself).
        let check = UniquenessCheck(model: model)
        let holders = check.scanning { [unowned self] name, slots in
            try slotValuesLocked(ofEntity: name, slots: slots, keeping: { !batch.isNew(key: $0, entityName: name) })
        }
        // A row the batch changed whose constrained values stayed is a holder like any other.
        let failures = try check.failures(of: rows, changing: { Set(batch.inserted).union(changed) }, holders: holders)
        if let unreadable { throw unreadable }
        if !failures.isEmpty { throw ValidationError(failures: failures) }
    }

    /// Forgets a batch that is not committed: the state is read from the file again (which
    /// holds nothing of it). A file that cannot be read now is read at the next access.
    func discardBatch(fd: Int32) {
        batch = nil
        do {
            try reload(fd)
        } catch {
            if let held { close(held.fd) }
            held = nil
        }
    }
}

import Foundation
import ObjectStoreModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension BinaryStore {
    /// Everything of a binary store that changes, and the code that reads and writes it. The
    /// store reaches it only through its `Locked<Core>`, after taking the file's lock, so one
    /// thread at a time: the one place that promise is made by hand (`@unchecked`), for this
    /// class, not for every value a `Locked` may hold.
    package final class Core: @unchecked Sendable {
        let path: String
        let model: ManagedObjectModel
        var state = BinaryStore.State()
        /// The file the state was read from, kept open: while it is, its inode cannot be reused,
        /// so "the path names the same file" reliably means "no compaction or migration replaced
        /// it" (a closed file's inode number can come back for its replacement).
        var held: (fd: Int32, identity: FileIdentity)?
        /// When this opening compacts or cuts the log, and what came of the last attempt.
        var housekeeping = Housekeeping()
        /// The saves being committed together (``BinaryStore/committingTogether(_:)``).
        var batch: BinaryStore.Batch?
        /// Set when this opening tracks history: every save records a transaction, and
        /// compactions and log cuts keep the transactions it covers.
        var retention: HistoryRetention?
        /// The number of the transaction this opening's last save recorded.
        var lastSavedTransaction: Int64?
        /// The locked file's size as the last ``refresh(_:)`` under this lock found it and
        /// appends since left it (nil: not known). A commit appended where the file ends needs
        /// no truncation first: nothing lies past the last commit.
        var fileSize: Int?
        /// Whether a pre-release file may be read (only to upgrade it).
        var allowsLegacy = false
        let durability: BinaryStore.Durability
        /// Under `.normal`, unclaimed bytes past which a save flushes and moves the header (what
        /// a crash of the machine may lose, and where a damaged commit would pass for a torn tail).
        static let checkpointBytes = 64 << 10

        init(path: String, model: ManagedObjectModel, durability: BinaryStore.Durability) {
            self.path = path
            self.model = model
            self.durability = durability
            #if DEBUG
            if let threshold = KillPoints.compactionThreshold { housekeeping.threshold = threshold }
            #endif
        }

        // MARK: Rows

        /// Where a row's encoded slots are: in the log, in a loaded snapshot entity, or read
        /// from the snapshot for this call. The store holds the lock.
        func encodedRow(_ id: ObjectID) throws -> (version: Int64, bytes: [UInt8], start: Int)? {
            if let entry = state.log.entries[id] { return (entry.version, state.log.chunks[entry.chunk], entry.offset) }
            guard let key = id.primaryKey, state.log.removed[id.entityName]?.contains(key) != true, let snapshot = state.cache.snapshot,
                  id.storeIdentifier == state.metadata?.storeIdentifier, let index = state.codec?.entityIndex[id.entityName]
            else { return nil }
            // Faults fired one after another (a bulk delete, a walk of a relationship) search the
            // file a row at a time until they have read as many rows as a query reads singly
            // (one in 32, at least 256); then the entity is read whole, once.
            let singleReads = state.cache.singleReads[index, default: 0]
            if index < snapshot.entities.count, singleReads >= max(256, snapshot.entities[index].rowCount / 32) { _ = try loadedEntity(index) }
            if let loaded = state.cache.loaded[index] {
                guard let position = loaded.find(key) else { return nil }
                let (entry, start) = try loaded.row(at: position, path: path)
                return (entry.version, loaded.bytes, start)
            }
            if let row = state.cache.rowsRead[index]?[key] { return (row.version, row.bytes, 0) }
            state.cache.singleReads[index] = singleReads + 1
            guard let held, let found = try snapshot.find(key: key, entity: index, fd: held.fd, path: path) else { return nil }
            try remember(found.bytes, key: key, version: found.entry.version, table: index)
            return (found.entry.version, found.bytes, 0)
        }

        /// Reads the entity's snapshot rows whole now when `count` single reads of them are
        /// coming that would end up doing it anyway (as many as a query reads singly): a bulk
        /// delete of 1,000 of 10,000 tasks otherwise searched the file 312 times first. A
        /// failure is left to the reads that follow, which report it.
        func willReadRows(_ count: Int, ofEntity name: String) {
            guard let snapshot = state.cache.snapshot, let index = state.codec?.entityIndex[name], index < snapshot.entities.count,
                  state.cache.loaded[index] == nil, count >= max(256, snapshot.entities[index].rowCount / 32) else { return }
            _ = try? loadedEntity(index)
        }

        /// Keeps a row read by itself for the next time it is asked for; once as many are kept
        /// as a query reads singly (one in 32, at least 256), the entity is read whole instead.
        func remember(_ bytes: [UInt8], key: Int64, version: Int64, table: Int) throws {
            state.cache.rowsRead[table, default: [:]][key] = (version, bytes)
            if let snapshot = state.cache.snapshot, table < snapshot.entities.count,
               state.cache.rowsRead[table]?.count ?? 0 > max(256, snapshot.entities[table].rowCount / 32) {
                _ = try loadedEntity(table)
            }
        }

        /// The slots of a row (those of `slots`, or all) as `codec` reads them (the state's by
        /// default; a compaction's rows are read with the codec of their new dictionary).
        func decode(_ id: ObjectID, _ bytes: [UInt8], from start: Int, slots: [Int]? = nil, codec: RowCodec? = nil) throws -> [SlotValue] {
            guard let codec = codec ?? state.codec else { throw StoreError.corrupt(path: path, reason: "no metadata record") }
            var reader = ByteReader(bytes, from: start)
            do {
                let shape = codec.entityIndex(of: id).map { codec.shape(entity: $0) } ?? RowCodec.Shape()
                return try slots.map { try codec.decode(slots: $0, from: &reader, shape: shape) } ?? codec.decode(from: &reader, shape: shape)
            } catch {
                throw StoreError.corrupt(path: path, reason: "unreadable row \(id)")
            }
        }


        func slotValuesLocked(ofEntity entityName: String, slots: [Int], keeping keep: ((Int64) -> Bool)? = nil) throws -> [(ObjectID, [SlotValue])] {
            let identifier = state.metadata?.storeIdentifier ?? ""
            // The codec reads slots in ascending order; the caller's order is restored after.
            let ascending = Array(Set(slots)).sorted()
            let position = Dictionary(uniqueKeysWithValues: ascending.enumerated().map { ($0.element, $0.offset) })
            let scope = ObjectID.Scope.of(entityName: entityName, storeIdentifier: identifier)
            let rows = try encodedRows(ofEntity: entityName)
            return try (keep.map { keep in rows.filter { keep($0.key) } } ?? rows).map { row in
                let id = ObjectID(scope, key: .permanent(row.key))
                let values = try decode(id, row.bytes, from: row.start, slots: ascending)
                return (id, slots.map { position[$0].map { values[$0] } ?? .value(.null) })
            }
        }


        /// Who holds a constrained value, for the uniqueness check of one save. With a snapshot
        /// index, the snapshot is searched by the values' hash and only the log is scanned, so
        /// a small save costs the same in any size of store; a large one (an import) reads the
        /// constrained slots of every row once. The store holds the lock.
        func holders(for changes: StoreChanges, check: UniquenessCheck) -> UniquenessCheck.Holders {
            let everything = check.scanning { [unowned self] name, slots in try slotValuesLocked(ofEntity: name, slots: slots) }
            guard let snapshot = state.cache.snapshot, let codec = state.codec, let held,
                  changes.inserted.count + changes.updated.count <= 1000 else { return everything }
            let logOnly = check.scanning { [unowned self] name, slots in
                let identifier = state.metadata?.storeIdentifier ?? ""
                return try (state.log.keysByEntity[name] ?? []).compactMap { key in
                    let id = ObjectID(entityName: name, storeIdentifier: identifier, key: .permanent(key))
                    guard let entry = state.log.entries[id] else { return nil }
                    return (id, try decode(id, state.log.chunks[entry.chunk], from: entry.offset, slots: slots))
                }
            }
            return { [unowned self] owner, number, key in
                guard let ownerIndex = codec.entityIndex[owner.name],
                      let candidates = try snapshot.candidates(owner: ownerIndex, constraint: number, signature: BinaryStore.signature(of: owner.uniquenessConstraints[number], in: owner),
                                                               hash: BinaryStore.indexHash(key, codec: codec), fd: held.fd, path: path)
                else { return try everything(owner, number, key) }
                var result = try logOnly(owner, number, key)
                let constraint = owner.uniquenessConstraints[number]
                let slots = constraint.compactMap { owner.slot(of: $0) }
                for (entity, candidate) in candidates where entity < codec.entityNames.count {
                    let name = codec.entityNames[entity]
                    // A row written in the log since is the log's to answer for.
                    if state.log.keysByEntity[name]?.contains(candidate) == true || state.log.removed[name]?.contains(candidate) == true { continue }
                    let id = codec.objectID(entity: entity, key: candidate)
                    guard let (_, bytes, start) = try encodedRow(id) else { continue }
                    let ascending = Array(Set(slots)).sorted()
                    let decoded = try decode(id, bytes, from: start, slots: ascending)
                    let values = slots.map { slot in ascending.firstIndex(of: slot).map { decoded[$0] } ?? .value(.null) }
                    if UniquenessCheck.comparable(values, constraint: constraint, in: owner) == key { result.append(id) }
                }
                return result
            }
        }


        func writeReference(_ id: ObjectID, codec: RowCodec, into writer: inout ByteWriter) throws {
            guard let index = codec.entityIndex(of: id), let key = id.primaryKey else {
                throw StoreError.invalidRequest(path: path, reason: "cannot write \(id): unknown entity or temporary ID")
            }
            writer.varint(UInt64(index))
            writer.signed(key)
        }
    }
}

import Foundation
import ObjectStoreModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The fast store: a snapshot of the rows followed by an append-only log of checksummed
/// commits (docs/store-format.md).
///
/// A save appends one commit holding only the rows it changed, flushes it, then flips the
/// header's committed length, so its cost follows the size of the change and a crash at any
/// point leaves either all of the save or none of it. Opening reads the header, a small
/// table of the snapshot and the log since it, not the rows: a row is read (and its checksum
/// checked) when it is asked for. ``compact()`` writes the live rows as a new snapshot, with
/// an index per uniqueness constraint, and empties the log; a save does it on its own once
/// the log outgrows ``compactionThreshold`` and an eighth of the snapshot. A log that mostly
/// repeats rows written again since is instead cut in place to one commit of what it says
/// (the snapshot not read) as soon as it outgrows ``compactionThreshold``.
///
/// ```swift
/// let store = try BinaryStore(url: URL(fileURLWithPath: "tasks.store"), model: model)
/// let coordinator = PersistentStoreCoordinator(model: model, store: store)
/// ```
///
/// Thread safety: everything that changes lives in a `Core` reached only through a
/// `Locked`, always taken after the file's lock.
package final class BinaryStore: PersistentStore, Sendable {
    /// The header's format version of store format 1.0, the only one this code writes: 8.
    /// Every 1.x program reads every 1.0 file; what a later 1.x adds is stamped in the
    /// header's feature bits (``Feature``), only in files that use it.
    package static let formatVersion = 8
    /// The pre-release formats (1 to 7), read only to upgrade them to 1.0
    /// (``upgradeLegacyFile(at:model:backup:)``); opening one otherwise is refused with
    /// ``StoreError/legacyFormat(path:version:)``.
    package static let legacyVersions = 1...7
    static let magic: [UInt8] = [0x89, 0x4F, 0x53, 0x54, 0x4F, 0x52, 0x45, 0x0A]  // \x89 O S T O R E \n
    /// The header's size in store format 1.0.
    static let headerSize = 128
    /// The header's size in the pre-release formats.
    static let legacyHeaderSize = 64

    enum RecordTag: UInt8 {
        case metadata = 1, put = 2, delete = 3, nextKey = 4
        /// The dictionary: strings and the date origin, right after the metadata record.
        case dictionary = 5
        /// The first tag of records a reader may skip: the tag, a varint length, then that
        /// many bytes. A reader skips such a record it does not know; one whose meaning a
        /// reader must not miss comes with a read feature.
        static let firstSkippable: UInt8 = 16
        /// A transaction of the store's history (docs/store-format.md, "History"; written
        /// only in a file with the history feature).
        static let transaction: UInt8 = 16
        /// The history's start: transactions numbered below it were deleted (skippable;
        /// written only in a file with the history feature).
        static let historyStart: UInt8 = 17
    }

    /// The store file.
    package let url: URL
    /// The model the store was opened with.
    package let model: ManagedObjectModel
    /// Whether saves are refused.
    package let isReadOnly: Bool
    /// When a save's commit reaches the disk.
    package let durability: Durability

    /// When a save's commit reaches the disk (``StoreDurability``).
    package typealias Durability = StoreDurability
    /// The file's path (URL.path decodes the URL each time it is asked).
    let path: String
    let fileLock: FileLock

    /// A row written in the log: where its encoded slots are.
    struct Entry {
        var version: Int64
        var chunk: Int
        var offset: Int
        var length: Int
    }

    /// What changes, and the code that reads and writes it; one thread at a time.
    let core: Locked<Core>
    /// Why the last automatic compaction failed, if it did. The save that ran it had
    /// committed; compaction is housekeeping, so its failure does not fail the save.
    package var housekeepingWarning: String? { core.withLock { $0.housekeeping.lastWarning } }

    #if DEBUG
    /// A step of a log cut after which it stops, as a crash there would (tests check what
    /// the file then holds). A test hook: debug builds only, never in a release.
    enum CutStop: Sendable {
        case afterWritingTheLog, afterMovingTheHeader
    }

    /// Where this opening's log cuts stop, for tests; nil (the default) for none.
    var cutStop: CutStop? {
        get { core.withLock { $0.housekeeping.cutStop } }
        set { core.withLock { $0.housekeeping.cutStop = newValue } }
    }
    #endif

    /// Log bytes above which a save cuts a log that mostly repeats rows written again, and
    /// compacts the file when the log is also more than an eighth of the snapshot (so
    /// compacting costs a fraction of what was appended).
    /// Only the engine's own code (a migration step) and tests (`@testable`) set it.
    package internal(set) var compactionThreshold: Int {
        get { core.withLock { $0.housekeeping.threshold } }
        set { core.withLock { $0.housekeeping.threshold = newValue } }
    }

    /// The fewest rows of one entity a compaction writes on all the cores (8,192), and in
    /// how many parts (0: one per core); tests set them to compare the two ways.
    package var parallelCompaction: (rows: Int, parts: Int) {
        get { core.withLock { ($0.housekeeping.parallelRows, $0.housekeeping.parallelParts) } }
        set { core.withLock { $0.housekeeping.parallelRows = newValue.rows; $0.housekeeping.parallelParts = newValue.parts } }
    }

    /// Opens the store at `url`, creating it when absent (unless read-only).
    ///
    /// - Throws: ``StoreError`` for a foreign, corrupt or newer file, or one written with a
    ///   different model (naming the entities that differ). The file is never modified then.
    package convenience init(url: URL, model: ManagedObjectModel, readOnly: Bool = false, durability: Durability = .full) throws {
        try self.init(url: url, model: model, readOnly: readOnly, durability: durability, identifier: nil)
    }

    /// Opens or creates a store; a new store takes `identifier` as its UUID when given (a
    /// migration keeps the store's identity).
    /// `readingLegacy`: a pre-release file is read rather than refused (a migration's
    /// source, read-only, whose result is written in store format 1.0).
    package init(url: URL, model: ManagedObjectModel, readOnly: Bool, durability: Durability = .full, identifier: String?, readingLegacy: Bool = false) throws {
        self.url = url
        self.path = url.path
        self.model = model
        self.isReadOnly = readOnly
        self.fileLock = FileLock(storePath: url.path)
        self.durability = durability
        let state = Core(path: url.path, model: model, durability: durability)
        state.allowsLegacy = readingLegacy && readOnly
        self.core = Locked(state)
        try fileLock.createIfMissing(readOnly: readOnly) { create(identifier: identifier ?? UUID().uuidString) }
        try fileLock.withLock(exclusive: false) { fd, _ in try core.withLock { try $0.reload(fd) } }
        try core.withLock { $0.state.metadata }?.requireCompatible(with: model, path: url.path)
    }

    deinit {
        core.withLock { core in
            if let held = core.held { close(held.fd) }
        }
    }

    /// Reads a store file's metadata without opening it for a model (to pick a migration).
    package static func metadata(at url: URL) throws -> StoreMetadata {
        try metadataAndVersion(at: url).metadata
    }

    /// A store file's metadata and the format version in its header, in one read.
    package static func metadataAndVersion(at url: URL) throws -> (metadata: StoreMetadata, version: Int) {
        try FileLock(storePath: url.path).withLock(exclusive: false) { fd, _ in try metadataAndVersion(fd, path: url.path) }
    }

    static func metadata(_ fd: Int32, path: String) throws -> StoreMetadata {
        try metadataAndVersion(fd, path: path).metadata
    }

    static func metadataAndVersion(_ fd: Int32, path: String) throws -> (metadata: StoreMetadata, version: Int) {
        var info = stat()
        let size = fstat(fd, &info) == 0 ? Int(info.st_size) : 0
        // Only the header and the first commit, which holds the metadata record.
        let head = try FileIO.read(fd, count: headerSize + 8, at: 0, path: path)
        let header = try parseHeader(Array(head.prefix(headerSize)), path: path, fileSize: size)
        let start = header.size
        guard head.count >= start + 8, header.committedLength > start else { throw StoreError.corrupt(path: path, reason: "no metadata record") }
        var reader = ByteReader(head, from: start)
        let length = Int((try? reader.u32()) ?? 0)
        let first = try FileIO.read(fd, count: min(8 + length, header.committedLength - start), at: start, path: path)
        var state = State()
        try parse(first, path: path, into: &state, base: start)
        guard let metadata = state.metadata else { throw StoreError.corrupt(path: path, reason: "no metadata record") }
        return (metadata, header.version)
    }

    package var identifier: String { core.withLock { $0.state.metadata?.storeIdentifier ?? "" } }

    /// The store's dictionary of strings (format 6; empty before its first compaction) as
    /// of the last read.
    var dictionary: [String] { core.withLock { $0.state.codec?.strings ?? [] } }
    /// The second typed rows write dates from (format 6; 0 before the first compaction).
    var dateOrigin: Int64 { core.withLock { $0.state.codec?.dateOrigin ?? 0 } }

    /// The store's metadata as of the last read.
    package var metadata: StoreMetadata? { core.withLock { $0.state.metadata } }

    /// Bytes in the file (committed), and how many of them are the log since the last
    /// compaction (what opening reads besides the header and the snapshot's tables).
    package var sizes: (total: Int, log: Int) { core.withLock { ($0.state.log.committedLength, $0.state.log.committedLength - $0.state.header.logStart) } }


    // MARK: PersistentStore

    package func row(for id: ObjectID) throws -> StoredRow? {
        try core.withLock { core in
            guard let (version, bytes, start) = try core.encodedRow(id) else { return nil }
            // Rows are not kept decoded: the objects made from them hold the values, and the
            // encoded bytes stay for the next read (memory follows the file, not twice it).
            return StoredRow(objectID: id, version: version, slots: try core.decode(id, bytes, from: start))
        }
    }

    package func catchUp() throws {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try core.withLock { try $0.refresh(fd) }
        }
    }

    package var hasEncodedRows: Bool { true }

    package func suspendAutomaticCompaction() {
        compactionThreshold = .max
    }

    package func encodedRow(for id: ObjectID, of entity: EntityDescription, layouts: RowLayouts) throws -> (slots: Slots, version: Int64)? {
        try core.withLock { core in
            guard let (version, bytes, start) = try core.encodedRow(id), let codec = core.state.codec else { return nil }
            do {
                return (try Slots.inPlace(bytes, start: start, layout: layouts.layout(entity, codec: codec)), version)
            } catch {
                throw StoreError.corrupt(path: path, reason: "unreadable row \(id)")
            }
        }
    }

    package func willReadRows(_ count: Int, ofEntity name: String) {
        core.withLock { core in core.willReadRows(count, ofEntity: name) }
    }

    package func slotValues(ofEntity entityName: String, slots: [Int]) throws -> [(ObjectID, [SlotValue])] {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try core.withLock { core in
                try core.refresh(fd)
                return try core.slotValuesLocked(ofEntity: entityName, slots: slots)
            }
        }
    }

    package func objectIDs(ofEntity entityName: String) throws -> [ObjectID] {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try core.withLock { core in
                try core.refresh(fd)
                let identifier = core.state.metadata?.storeIdentifier ?? ""
                var keys = Array(core.state.log.keysByEntity[entityName] ?? [])
                if let index = core.state.codec?.entityIndex[entityName], let loaded = try core.loadedEntity(index) {
                    let removed = core.state.log.removed[entityName] ?? []
                    let logKeys = core.state.log.keysByEntity[entityName] ?? []
                    keys.reserveCapacity(keys.count + loaded.part.rowCount)
                    let skipping = !removed.isEmpty || !logKeys.isEmpty
                    loaded.keys.forEachKey { _, key in
                        if !skipping || (!removed.contains(key) && !logKeys.contains(key)) { keys.append(key) }
                    }
                }
                keys.sort()
                let scope = ObjectID.Scope.of(entityName: entityName, storeIdentifier: identifier)
                return keys.map { ObjectID(scope, key: .permanent($0)) }
            }
        }
    }

    /// The log's rows of the entity, and the snapshot's less those the log replaced or
    /// deleted (looked up in the snapshot's directory): no ID is made.
    package func objectCount(ofEntity entityName: String) throws -> Int {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try core.withLock { core in
                try core.refresh(fd)
                let logKeys = core.state.log.keysByEntity[entityName] ?? []
                guard let index = core.state.codec?.entityIndex[entityName], let snapshot = core.state.cache.snapshot,
                      index < snapshot.entities.count, let held = core.held else { return logKeys.count }
                let part = snapshot.entities[index]
                let removed = (core.state.log.removed[entityName] ?? []).subtracting(logKeys)
                guard !logKeys.isEmpty || !removed.isEmpty else { return part.rowCount }
                // Whether the snapshot has a key: its directory read whole when it is read
                // already or many keys are asked, else searched in the file.
                var loaded = core.state.cache.loaded[index]
                if loaded == nil, logKeys.count + removed.count > 64 { loaded = try core.loadedEntity(index) }
                func inSnapshot(_ key: Int64) throws -> Bool {
                    if let first = part.firstKey { return key >= first && key - first < Int64(part.rowCount) }
                    if let loaded { return loaded.find(key) != nil }
                    return try snapshot.find(key: key, entity: index, fd: held.fd, path: path) != nil
                }
                var shadowed = 0
                for key in logKeys where try inSnapshot(key) { shadowed += 1 }
                for key in removed where try inSnapshot(key) { shadowed += 1 }
                return logKeys.count + part.rowCount - shadowed
            }
        }
    }

    package func allocateKeys(count: Int, entityName: String) throws -> [Int64] {
        guard count > 0 else { return [] }
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        return try fileLock.withLock { fd, _ in
            try core.withLock { core in
                try core.refresh(fd)
                guard let index = core.state.codec?.entityIndex[entityName] else {
                    throw StoreError.invalidRequest(path: path, reason: "entity \(entityName) is not in this store")
                }
                let first = core.state.metadata?.nextKey(for: entityName) ?? 1
                var payload = ByteWriter()
                payload.u8(RecordTag.nextKey.rawValue)
                payload.varint(UInt64(index))
                payload.signed(first + Int64(count))
                try core.append(payload.bytes, fd: fd)
                core.state.metadata?.nextKeys[entityName] = first + Int64(count)
                return (0..<Int64(count)).map { first + $0 }
            }
        }
    }

    package func objectIDs(matching values: [SlotValue], uniquenessConstraint constraint: Int, of owner: String) throws -> [ObjectID] {
        guard let ownerEntity = model.entity(named: owner), ownerEntity.uniquenessConstraints.indices.contains(constraint) else { return [] }
        return try fileLock.withLock(exclusive: false) { fd, _ in
            try core.withLock { core in
                try core.refresh(fd)
                let check = UniquenessCheck(model: model)
                return try core.holders(for: StoreChanges(), check: check)(ownerEntity, constraint, values)
            }
        }
    }

    package func deferHousekeeping(_ deferred: Bool) {
        core.withLock { $0.housekeeping.deferred += deferred ? 1 : -1 }
    }

    package func housekeep() {
        guard !isReadOnly else { return }
        do {
            try fileLock.withLock { fd, realPath in
                try core.withLock { core in
                    guard core.housekeeping.deferred == 0 else { return }  // an outer hold's end does it
                    try core.refresh(fd)
                    core.housekeepLocked(fd: fd, path: realPath)
                }
            }
        } catch {
            core.withLock { $0.housekeeping.lastWarning = "the store was saved, but compacting it failed: \(error)" }
        }
    }

    package func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        return try fileLock.withLock { fd, _ in
            try core.withLock { core in try core.refresh(fd) }
            return try body()
        }
    }
}

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
package final class BinaryStore: PersistentStore, RowScanning, EncodedRowReading, OrderedIndexReading, Sendable {
    /// The format version this code writes and the newest it reads. Formats 1 (a log
    /// without snapshot), 2 (commits only up to the header's committed length) and 3
    /// (snapshots with wide entries only), 4 (narrow entries) and 5 (packed entries, sparse
    /// rows) and 6 (typed rows, a string dictionary) are read too; every header this code
    /// writes says 7 (a header that may place the log apart from the snapshot's end), so an
    /// older reader, which would read the log from the wrong place, misread typed rows or
    /// overwrite commits past the header's length, refuses the file.
    package static let formatVersion = 7
    static let magic: [UInt8] = [0x89, 0x4F, 0x53, 0x54, 0x4F, 0x52, 0x45, 0x0A]  // \x89 O S T O R E \n
    static let headerSize = 64

    enum RecordTag: UInt8 {
        case metadata = 1, put = 2, delete = 3, nextKey = 4
        /// The dictionary (format 6): strings and the date origin, right after the metadata record.
        case dictionary = 5
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
    private let path: String
    private let fileLock: FileLock

    /// A row written in the log: where its encoded slots are.
    fileprivate struct Entry {
        var version: Int64
        var chunk: Int
        var offset: Int
        var length: Int
    }

    /// What changes, and the code that reads and writes it; one thread at a time.
    private let core: Locked<Core>
    /// Why the last automatic compaction failed, if it did. The save that ran it had
    /// committed; compaction is housekeeping, so its failure does not fail the save.
    package var housekeepingWarning: String? { core.withLock { $0.lastHousekeepingWarning } }

    #if DEBUG
    /// A step of a log cut after which it stops, as a crash there would (tests check what
    /// the file then holds). A test hook: debug builds only, never in a release.
    enum CutStop: Sendable {
        case afterWritingTheLog, afterMovingTheHeader
    }

    /// Where this opening's log cuts stop, for tests; nil (the default) for none.
    var cutStop: CutStop? {
        get { core.withLock { $0.cutStop } }
        set { core.withLock { $0.cutStop = newValue } }
    }
    #endif

    fileprivate struct State {
        /// The model the store was opened with (its slots' blanks go to the codec).
        var model: ManagedObjectModel?
        var metadata: StoreMetadata?
        var codec: RowCodec?
        /// The rows as of the last compaction (nil in a format-1 file).
        var snapshot: Snapshot?
        /// Entities whose snapshot directory and rows were read whole, by entity index.
        var loaded: [Int: Snapshot.Loaded] = [:]
        /// Rows found one by one in the file (a binary search each), by entity index: past
        /// as many as a query would read singly, the entity is read whole instead.
        var singleReads: [Int: Int] = [:]
        /// Those rows, by entity index and key, until the entity is read whole: the snapshot
        /// does not change, so a row asked for again (an object a context holds, which every
        /// indexed query lists) is not searched for again.
        var rowsRead: [Int: [Int64: (version: Int64, bytes: [UInt8])]] = [:]
        /// Snapshot columns read, by entity index and slot.
        var columns: [Int: [Int: Column]] = [:]
        /// Rows written in the log, which supersede the snapshot's.
        var entries: [ObjectID: Entry] = [:]
        /// Keys of rows written in the log and not deleted since, per entity.
        var keysByEntity: [String: Set<Int64>] = [:]
        /// Keys deleted in the log, per entity (they may be in the snapshot).
        var removed: [String: Set<Int64>] = [:]
        /// The log's bytes, as read or written, commit by commit.
        var chunks: [[UInt8]] = []
        /// The end of the last complete commit, claimed by the header or not.
        var committedLength = 0
        /// The committed length the header says, as last read or written.
        var claimedLength = 0
        var commitCount: UInt64 = 0
        /// Where the snapshot is (offset, length; 0 without one) and where the log starts.
        var snapshotPlace = (offset: 0, length: 0)
        var logStart = BinaryStore.headerSize
        /// The header's count of log cuts (format 7).
        var logGeneration: UInt64 = 0
    }

    /// Log bytes above which a save cuts a log that mostly repeats rows written again, and
    /// compacts the file when the log is also more than an eighth of the snapshot (so
    /// compacting costs a fraction of what was appended).
    /// Only the engine's own code (a migration step) and tests (`@testable`) set it.
    package internal(set) var compactionThreshold: Int {
        get { core.withLock { $0.threshold } }
        set { core.withLock { $0.threshold = newValue } }
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
    init(url: URL, model: ManagedObjectModel, readOnly: Bool, durability: Durability = .full, identifier: String?) throws {
        self.url = url
        self.path = url.path
        self.model = model
        self.isReadOnly = readOnly
        self.fileLock = FileLock(storePath: url.path)
        self.durability = durability
        self.core = Locked(Core(path: url.path, model: model, durability: durability))
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
        try FileLock(storePath: url.path).withLock(exclusive: false) { fd, _ in try metadata(fd, path: url.path) }
    }

    private static func metadata(_ fd: Int32, path: String) throws -> StoreMetadata {
        var info = stat()
        let size = fstat(fd, &info) == 0 ? Int(info.st_size) : 0
        // Only the header and the first commit, which holds the metadata record.
        let header = try FileIO.read(fd, count: headerSize + 8, at: 0, path: path)
        let committed = try parseHeader(Array(header.prefix(headerSize)), path: path, fileSize: size).committedLength
        guard header.count == headerSize + 8, committed > headerSize else { throw StoreError.corrupt(path: path, reason: "no metadata record") }
        var reader = ByteReader(header, from: headerSize)
        let length = Int((try? reader.u32()) ?? 0)
        let first = try FileIO.read(fd, count: min(8 + length, committed - headerSize), at: headerSize, path: path)
        var state = State()
        try parse(first, path: path, into: &state, base: headerSize)
        guard let metadata = state.metadata else { throw StoreError.corrupt(path: path, reason: "no metadata record") }
        return metadata
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
    package var sizes: (total: Int, log: Int) { core.withLock { ($0.state.committedLength, $0.state.committedLength - $0.state.logStart) } }

    // MARK: Creating and reading

    private func create(identifier: String) -> [UInt8] {
        let metadata = StoreMetadata(storeIdentifier: identifier, model: model)
        var payload = ByteWriter()
        Self.writeMetadata(metadata, entityNames: model.entities.map(\.name), into: &payload)
        let frame = Self.frame(payload.bytes)
        let header = Self.header(Header(version: Self.formatVersion, committedLength: Self.headerSize + frame.count, commitCount: 1))
        return header + frame
    }

    /// A dictionary record (format 6): the strings typed rows write as their numbers, and
    /// the second they write dates from.
    static func writeDictionary(_ strings: [String], dateOrigin: Int64, into writer: inout ByteWriter) {
        writer.u8(RecordTag.dictionary.rawValue)
        writer.varint(UInt64(strings.count))
        for string in strings { writer.string(string) }
        writer.signed(dateOrigin)
    }

    /// How many rows must hold a string for a compaction to put it in the dictionary.
    static let dictionaryUses = 3

    static func writeMetadata(_ metadata: StoreMetadata, entityNames: [String], into writer: inout ByteWriter) {
        writer.u8(RecordTag.metadata.rawValue)
        writer.string(metadata.storeIdentifier)
        writer.string(metadata.modelVersionName ?? "")
        writer.string(metadata.schemaText)
        writer.varint(UInt64(entityNames.count))
        for name in entityNames {
            writer.string(name)
            writer.bytes.append(contentsOf: metadata.entityVersionHashes[name]?.bytes ?? [UInt8](repeating: 0, count: 32))
            writer.signed(metadata.nextKey(for: name))
        }
    }

    /// What the first 64 bytes say.
    struct Header {
        var version: Int
        var committedLength: Int
        var commitCount: UInt64
        /// The snapshot's offset and length (format 2), zeros in format 1.
        var snapshotOffset = 0
        var snapshotLength = 0
        /// Where the log starts when not right after the snapshot (format 7: a cut log is
        /// written apart from the log it replaces); 0 otherwise.
        var logOffset = 0
        /// How many times the log was cut in place (format 7; 0 before): a log can return to
        /// where an older one started, and readers must not take it for that one grown.
        var logGeneration: UInt64 = 0

        /// Where the log starts in a file with a snapshot.
        var logStart: Int { logOffset != 0 ? logOffset : snapshotOffset + snapshotLength }
    }

    static func header(_ fields: Header) -> [UInt8] {
        var tail = ByteWriter()
        tail.u64(UInt64(fields.committedLength))
        tail.u64(fields.commitCount)
        tail.u64(UInt64(fields.snapshotOffset))
        tail.u64(UInt64(fields.snapshotLength))
        tail.u64(UInt64(fields.logOffset))
        tail.u64(fields.logGeneration)
        var header = ByteWriter()
        header.bytes = magic
        header.u32(UInt32(fields.version))
        header.u32(CRC32.checksum(tail.bytes))
        header.bytes.append(contentsOf: tail.bytes)
        return header.bytes
    }

    static func frame(_ payload: [UInt8]) -> [UInt8] {
        var writer = ByteWriter()
        writer.u32(UInt32(payload.count))
        writer.u32(CRC32.checksum(payload))
        writer.bytes.append(contentsOf: payload)
        return writer.bytes
    }

    /// The bound of the header's counters (see ``parseHeader(_:path:fileSize:)``).
    static let maxCounter: UInt64 = 1 << 62

    fileprivate static func parseHeader(_ bytes: [UInt8], path: String, fileSize: Int) throws -> Header {
        if bytes.isEmpty { throw StoreError.foreignFile(path: path, reason: "the file is empty") }
        guard bytes.count >= headerSize, Array(bytes[0..<8]) == magic else {
            if bytes.first == UInt8(ascii: "{") { throw StoreError.foreignFile(path: path, reason: "it looks like JSON; name JSON stores *.json") }
            throw StoreError.foreignFile(path: path, reason: "the file does not start with the ObjectStore signature")
        }
        var reader = ByteReader(bytes, from: 8, to: headerSize)
        do {
            let version = Int(try reader.u32())
            guard version <= formatVersion else { throw StoreError.newerFormat(path: path, version: version, supported: formatVersion) }
            guard version >= 1 else { throw StoreError.corrupt(path: path, reason: "format version \(version) is not valid") }
            let crc = try reader.u32()
            guard CRC32.checksum(bytes[16..<headerSize]) == crc else { throw StoreError.corrupt(path: path, reason: "the header checksum does not match") }
            let committed = try reader.u64()
            let count = try reader.u64()
            let snapshotOffset = try reader.u64()
            let snapshotLength = try reader.u64()
            // Format 7 may place the log elsewhere than the snapshot's end (older formats
            // wrote zeros there).
            let logOffset = version >= 7 ? try reader.u64() : 0
            let logGeneration = version >= 7 ? try reader.u64() : 0
            // Counters a save adds to: a forged or damaged value near 2^64 would trap the
            // next save's addition, so anything past what a store could count to (2^62,
            // a million saves a second for 146,000 years) is refused.
            guard count < maxCounter, logGeneration < maxCounter else {
                throw StoreError.corrupt(path: path, reason: "the header's commit count \(count) or log generation \(logGeneration) is out of range")
            }
            guard committed >= UInt64(headerSize), committed <= UInt64(fileSize) else {
                throw StoreError.corrupt(path: path, reason: "the file is truncated: \(committed) bytes committed, \(fileSize) present")
            }
            // Format 1 has no snapshot; format 2 has one after the metadata commit, inside
            // the committed bytes; formats 3 and 4 have one or none (zeros).
            let none = snapshotOffset == 0 && snapshotLength == 0
            let snapshotFits = snapshotLength >= UInt64(Snapshot.prefixSize) && snapshotOffset > UInt64(headerSize + 8)
                && snapshotOffset <= committed && snapshotLength <= committed - snapshotOffset
            guard version == 1 ? none : version == 2 ? snapshotFits : (none || snapshotFits) else {
                throw StoreError.corrupt(path: path, reason: "the header's snapshot place is not valid")
            }
            guard logOffset == 0 || (!none && logOffset >= snapshotOffset + snapshotLength && logOffset <= committed) else {
                throw StoreError.corrupt(path: path, reason: "the header's log place is not valid")
            }
            return Header(version: version, committedLength: Int(committed), commitCount: count, snapshotOffset: Int(snapshotOffset), snapshotLength: Int(snapshotLength),
                          logOffset: Int(logOffset), logGeneration: logGeneration)
        } catch is ByteReader.Truncated {
            throw StoreError.corrupt(path: path, reason: "the header is truncated")
        }
    }

    /// Parses the commits in `bytes`, which start at file offset `base`. The first `claimed`
    /// bytes are commits the header vouches for: damage there is reported. After them come
    /// commits no header has claimed yet (a save that synced its commit but was stopped
    /// before it moved the header, or a `.normal` save): each counts when it is complete
    /// and its checksum is right, and the first that is not ends the log (a torn tail,
    /// which the next save overwrites).
    ///
    /// - Returns: how many commits counted, and how many of them past the claimed bytes.
    @discardableResult
    fileprivate static func parse(_ bytes: [UInt8], path: String, into state: inout State, base: Int, claimed: Int? = nil) throws -> (commits: UInt64, unclaimed: UInt64) {
        var position = 0
        let claimed = min(claimed ?? bytes.count, bytes.count)
        let chunk = state.chunks.count
        state.chunks.append(bytes)
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
        if commits == 0 { state.chunks.removeLast() }
        state.committedLength = base + position
        return (commits, unclaimed)
    }

    private static func parseRecords(_ bytes: [UInt8], from start: Int, to end: Int, chunk: Int, state: inout State, path: String) throws {
        var reader = ByteReader(bytes, from: start, to: end)
        // The codec read from here (not copied out of the state for each record: a copy
        // retained and released each of its arrays, a fifth of replaying a log).
        var codec = state.codec
        defer { state.codec = codec }
        while !reader.isAtEnd {
            guard let tag = RecordTag(rawValue: try reader.u8()) else { throw ByteReader.Truncated() }
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
                state.entries[id] = Entry(version: version, chunk: chunk, offset: slotsStart, length: length)
                state.keysByEntity[id.entityName, default: []].insert(key)
                if !state.removed.isEmpty { state.removed[id.entityName]?.remove(key) }
            case .delete:
                guard let id = try codec?.reference(from: &reader), let key = id.primaryKey else { throw ByteReader.Truncated() }
                state.entries.removeValue(forKey: id)
                state.keysByEntity[id.entityName]?.remove(key)
                state.removed[id.entityName, default: []].insert(key)
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

    // MARK: PersistentStore

    package func row(for id: ObjectID) throws -> StoredRow? {
        try core.withLock { core in
            guard let (version, bytes, start) = try core.encodedRow(id) else { return nil }
            // Rows are not kept decoded: the objects made from them hold the values, and the
            // encoded bytes stay for the next read (memory follows the file, not twice it).
            return StoredRow(objectID: id, version: version, slots: try core.decode(id, bytes, from: start))
        }
    }

    func orderCutoff(ofEntity entityName: String, attribute: String, descending: Bool, rank: Int) throws -> (value: Value, indexed: Int)? {
        guard let entity = model.entity(named: entityName), let attributeDescription = entity.attribute(named: attribute),
              let kind = Column.Kind(attributeDescription.type), rank >= 0 else { return nil }
        return try fileLock.withLock(exclusive: false) { fd, _ in
            try core.withLock { core -> (value: Value, indexed: Int)? in
                try core.refresh(fd)
                guard let snapshot = core.state.snapshot, let table = core.state.codec?.entityIndex[entityName] else { return nil }
                let signature = BinaryStore.signature(ofIndexOn: attribute, kind: kind)
                for (number, index) in BinaryStore.schemaIndexes(of: entity, in: model).enumerated() where index.propertyNames.first == attribute {
                    guard let part = snapshot.indexes.first(where: {
                        $0.owner == table && $0.constraint == Snapshot.schemaIndexFlag | number && $0.signature == signature
                    }) else { continue }
                    guard rank < part.count else { return nil }
                    let bits = try snapshot.entryValue(part, at: descending ? part.count - 1 - rank : rank, fd: fd, path: path)
                    switch kind {
                    case .integer: return (.integer(Int64(bitPattern: bits)), part.count)
                    case .double: return (.double(Double(bitPattern: bits)), part.count)
                    case .date: return (.date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))), part.count)
                    case .boolean: return (.bool(bits != 0), part.count)
                    }
                }
                return nil
            }
        }
    }

    package func catchUp() throws {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try core.withLock { try $0.refresh(fd) }
        }
    }

    func encodedRow(for id: ObjectID, layout: (RowCodec) -> RowLayout) throws -> (slots: Slots, version: Int64)? {
        try core.withLock { core in
            guard let (version, bytes, start) = try core.encodedRow(id), let codec = core.state.codec else { return nil }
            do {
                return (try Slots.inPlace(bytes, start: start, layout: layout(codec)), version)
            } catch {
                throw StoreError.corrupt(path: path, reason: "unreadable row \(id)")
            }
        }
    }

    package func slotValues(ofEntity entityName: String, slots: [Int]) throws -> [(ObjectID, [SlotValue])] {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try core.withLock { core in
                try core.refresh(fd)
                return try core.slotValuesLocked(ofEntity: entityName, slots: slots)
            }
        }
    }

    func scanRows(ofEntity entityName: String, deciding predicate: SlotPredicate?, alsoListing held: () -> Set<Int64>, holdsAtMost: (Int) -> Bool,
                  leavingUnread: Bool) throws -> RowScan {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try core.withLock { core in
                try core.refresh(fd)
                guard let codec = core.state.codec else { throw StoreError.corrupt(path: path, reason: "no metadata record") }
                // A schema index that finds at most a quarter of the snapshot's rows lists only
                // those (and the rows of the objects the caller holds, which it tests as they
                // are: when those are more than a quarter too, the index does not pay).
                if let predicate, let table = codec.entityIndex[entityName], let entity = model.entity(named: entityName),
                   let snapshot = core.state.snapshot, table < snapshot.entities.count,
                   let (found, whole) = try core.indexedRows(table: table, entity: entity, predicate: predicate, limit: snapshot.entities[table].rowCount / 4),
                   holdsAtMost(snapshot.entities[table].rowCount / 4),
                   let scan = try core.indexedScan(ofEntity: entityName, table: table, found: found, wholePredicate: whole, alsoListing: held(),
                                                   leavingUnread: leavingUnread && whole) {
                    return scan
                }
                var decisions: [UInt8]?
                if let predicate, let index = codec.entityIndex[entityName], let loaded = try core.loadedEntity(index) {
                    decisions = try predicate.decisions(try core.columns(ofEntity: index, slots: predicate.slots), rows: loaded.part.rowCount)
                    // A count with nothing held: the rows the columns accept are counted, not
                    // listed (nor read), those they reject left out; the undecided and the
                    // log's rows are listed to be tested.
                    if leavingUnread, let decisions, held().isEmpty {
                        return try core.countingScan(ofEntity: entityName, loaded: loaded, decisions: decisions, codec: codec)
                    }
                }
                var positions: [Int]? = decisions == nil ? nil : []
                let rows = try core.encodedRows(ofEntity: entityName, positions: &positions, unread: decisions)
                var decided: [UInt8] = []
                if let decisions, let positions {
                    decided = positions.map { $0 < 0 ? 0 : decisions[$0] }
                }
                return RowScan(codec: codec, path: path, rows: rows, verdicts: decided, shape: codec.shape(entity: codec.entityIndex[entityName] ?? -1))
            }
        }
    }

    package func objectIDs(ofEntity entityName: String) throws -> [ObjectID] {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try core.withLock { core in
                try core.refresh(fd)
                let identifier = core.state.metadata?.storeIdentifier ?? ""
                var keys = Array(core.state.keysByEntity[entityName] ?? [])
                if let index = core.state.codec?.entityIndex[entityName], let loaded = try core.loadedEntity(index) {
                    let removed = core.state.removed[entityName] ?? []
                    let logKeys = core.state.keysByEntity[entityName] ?? []
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

    /// The hash an index files a constraint's values under (values as the constraint
    /// compares them, encoded as in rows).
    /// Strings are hashed canonically decomposed: `==` finds canonically equivalent strings
    /// equal ("caf\u{E9}" and "cafe\u{301}"), so they must share a hash.
    static func indexHash(_ comparable: [SlotValue], codec: RowCodec) -> UInt64 {
        let needsMapping = { (slot: SlotValue) -> Bool in
            guard case .value(.string(let text)) = slot else { return false }
            return !text.utf8.allSatisfy { $0 < 0x80 }
        }
        let canonical = !comparable.contains(where: needsMapping) ? comparable : comparable.map { slot -> SlotValue in
            guard case .value(.string(let text)) = slot, needsMapping(slot) else { return slot }
            return .value(.string(text.decomposedStringWithCanonicalMapping))
        }
        var writer = ByteWriter()
        try? codec.encode(canonical, into: &writer)
        return Snapshot.hash(writer.bytes)
    }

    /// What an index was built for: the constraint's attributes and how they compare (and,
    /// for one with a string, that strings are hashed decomposed). An index whose signature
    /// differs (the model changed its constraints) is not used.
    static func signature(of constraint: [String], in entity: EntityDescription) -> UInt32 {
        let hasString = constraint.contains { entity.attribute(named: $0)?.type == .string }
        return legacySignature(of: constraint, in: entity) ^ (hasString ? 0x4E46_4400 : 0)
    }

    /// The signature of a uniqueness index written before strings were hashed decomposed
    /// (ninth session): such an index is not used, and the next compaction replaces it.
    static func legacySignature(of constraint: [String], in entity: EntityDescription) -> UInt32 {
        let text = constraint.map { "\($0):\(entity.attribute(named: $0)?.isCaseInsensitive == true ? "ci" : "")" }.joined(separator: ",")
        return UInt32(truncatingIfNeeded: Snapshot.hash(Array(text.utf8)))
    }

    /// What a schema index was built for: its first attribute and the column kind it
    /// orders. An index whose signature differs (the model changed) is not used.
    static func signature(ofIndexOn attribute: String, kind: Column.Kind) -> UInt32 {
        UInt32(truncatingIfNeeded: Snapshot.hash(Array("index:\(attribute):\(kind.rawValue)".utf8)))
    }

    /// What a hashed index on an attribute was built for: its name and type (`uuid`), or for
    /// a string (a text index) the index keys this platform gives a few strings whose case
    /// or diacritics fold in uncommon ways, so that a file whose keys were folded otherwise
    /// (another Unicode or Foundation version) is not used.
    static func hashedSignature(ofIndexOn attribute: String, type: AttributeType = .string) -> UInt32 {
        guard type == .string else { return UInt32(truncatingIfNeeded: Snapshot.hash(Array("index:\(attribute):uuid".utf8))) }
        return UInt32(truncatingIfNeeded: Snapshot.hash(Array("index:\(attribute):text:".utf8) + foldedProbe))
    }

    /// What a reference index (on a to-one relationship) was built for.
    static func referenceSignature(ofIndexOn relationship: String) -> UInt32 {
        UInt32(truncatingIfNeeded: Snapshot.hash(Array("index:\(relationship):ref".utf8)))
    }

    /// The hash a reference index files a row under: its destination's entity name and key
    /// (nil for a temporary ID, which no saved row refers to).
    static func referenceHash(_ id: ObjectID) -> UInt64? {
        guard let key = id.primaryKey else { return nil }
        return withUnsafeBytes(of: key.littleEndian) { Snapshot.hash(Array(id.entityName.utf8) + [0] + Array($0)) }
    }

    /// Whether a schema index on an attribute of this type files values by hash (a string's
    /// index key, a UUID's 16 bytes) rather than ordering them in a column's terms.
    static func isHashed(_ type: AttributeType) -> Bool { type == .string || type == .uuid }

    /// The hash a hashed index files a value of an attribute of `type` under; nil for a
    /// value of another type (an index never holds one).
    static func indexHash(_ value: Value, type: AttributeType) -> UInt64? {
        switch (value, type) {
        case (.string(let text), .string): return textHash(text)
        case (.uuid(let uuid), .uuid): return withUnsafeBytes(of: uuid.uuid) { Snapshot.hash(Array($0)) }
        default: return nil
        }
    }

    /// The index keys of the strings ``hashedSignature(ofIndexOn:)`` probes (folded once).
    private static let foldedProbe = StringMatching.foldedIndexKey(
        "Aa \u{C1}\u{E9}e\u{301} \u{130}\u{131} \u{3A3}\u{3C2} \u{DF}\u{1E9E} \u{212A} \u{1C5} \u{152}\u{F8}")

    /// The hash a text index files a string under (FNV-1a of its index key).
    static func textHash(_ text: String) -> UInt64 {
        Snapshot.hash(StringMatching.indexKey(text))
    }

    /// The schema's `indexes` that apply to an entity: its ancestors' (from the root) and
    /// its own; a schema index's number is its place in this list.
    static func schemaIndexes(of entity: EntityDescription, in model: ManagedObjectModel) -> [IndexDescription] {
        (entity.ancestorNames.reversed().compactMap { model.entity(named: $0) } + [entity]).flatMap(\.indexes)
    }

    package func save(_ changes: StoreChanges) throws -> [ObjectID: ObjectID] {
        guard !changes.isEmpty else { return [:] }
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        return try fileLock.withLock { fd, realPath in
            try core.withLock { core in
                try core.refresh(fd)
                try checkVersions(changes, current: { try core.encodedRow($0)?.version })
                let check = UniquenessCheck(model: model)
                let violations = try check.failures(changes, saved: { id, slots in
                    guard let (_, bytes, start) = try core.encodedRow(id) else { return nil }
                    return try? core.decode(id, bytes, from: start, slots: slots)
                }, holders: core.holders(for: changes, check: check))
                if !violations.isEmpty { throw ValidationError(failures: violations) }
                guard let codec = core.state.codec else { throw StoreError.corrupt(path: path, reason: "no metadata record") }
                let (keyed, mapping, nextKeys) = changes.assigningKeys(from: core.state.metadata?.nextKeys ?? [:])
                var payload = ByteWriter()
                var written: [(row: StoredRow, slotsOffset: Int, length: Int)] = []
                var encoded = ByteWriter()  // each row's slots, before their length is known
                for row in keyed.inserted + keyed.updated.map(\.row) {
                    payload.u8(RecordTag.put.rawValue)
                    try core.writeReference(row.objectID, codec: codec, into: &payload)
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
                    written.append((row, slotsOffset, encoded.bytes.count))
                }
                for (id, _) in keyed.deleted {
                    payload.u8(RecordTag.delete.rawValue)
                    try core.writeReference(id, codec: codec, into: &payload)
                }
                for (name, key) in nextKeys.sorted(by: { $0.key < $1.key }) where key != core.state.metadata?.nextKeys[name] {
                    guard let index = codec.entityIndex[name] else { continue }
                    payload.u8(RecordTag.nextKey.rawValue)
                    payload.varint(UInt64(index))
                    payload.signed(key)
                }
                try core.append(payload.bytes, fd: fd)
                core.state.metadata?.nextKeys = nextKeys
                // The commit's bytes are where its rows are read from from now on.
                let chunk = core.state.chunks.count
                core.state.chunks.append(payload.bytes)
                for (row, slotsOffset, length) in written {
                    core.state.entries[row.objectID] = Entry(version: row.version, chunk: chunk, offset: slotsOffset, length: length)
                    if let key = row.objectID.primaryKey {
                        core.state.keysByEntity[row.objectID.entityName, default: []].insert(key)
                        core.state.removed[row.objectID.entityName]?.remove(key)
                    }
                }
                for (id, _) in keyed.deleted {
                    core.state.entries.removeValue(forKey: id)
                    if let key = id.primaryKey {
                        core.state.keysByEntity[id.entityName]?.remove(key)
                        core.state.removed[id.entityName, default: []].insert(key)
                    }
                }
                let log = core.state.committedLength - core.state.logStart
                // A compaction costs what the store holds, so it waits until the log is also
                // an eighth of the snapshot. A cut costs what the log says, so a log that
                // mostly repeats rows written again since is cut once it passes the threshold
                // (opening then reads at most that much log, whatever the store's size);
                // whether it does is asked again each time the log grows by a quarter.
                let compacting = log > core.state.snapshotPlace.length / 8
                if log > core.threshold && (compacting || log >= core.nextCutCheck) {
                    let repeats = core.liveLogBytes * 4 <= log
                    if !repeats { core.nextCutCheck = log + log / 4 }
                    // The save is durable already: a compaction that fails leaves a warning.
                    do {
                        if repeats, try core.cutLogLocked(fd: fd) {
                            core.lastHousekeepingWarning = nil
                        } else if compacting {
                            try core.compactLocked(path: realPath)
                            core.lastHousekeepingWarning = nil
                        }
                    } catch {
                        core.lastHousekeepingWarning = "the store was saved, but compacting it failed: \(error)"
                    }
                }
                return mapping
            }
        }
    }

    package func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        return try fileLock.withLock { fd, _ in
            try core.withLock { core in try core.refresh(fd) }
            return try body()
        }
    }

    // MARK: Compaction

    /// Rewrites the file as a snapshot of the live rows (with an index per uniqueness
    /// constraint) and an empty log, reclaiming the space of superseded and deleted rows.
    /// Atomic: a crash leaves the old file or the new one.
    package func compact() throws {
        try compact(format: Self.formatVersion)
    }

    /// Compacts into the layout of format 3 (wide snapshot entries and 8-byte column
    /// values, header version 3), of format 4 (narrow entries) or of this format: tests use
    /// the older ones to make the files older versions wrote.
    package func compact(format: Int) throws {
        guard (3...Self.formatVersion).contains(format) else {
            throw StoreError.invalidRequest(path: path, reason: "cannot write format \(format) (3 to \(Self.formatVersion))")
        }
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        try fileLock.withLock { fd, realPath in
            try core.withLock { core in
                try core.refresh(fd)
                try core.compactLocked(path: realPath, format: format)
            }
        }
    }

    /// Every snapshot index checked against its checksum and against the snapshot's rows
    /// (the rows' own checksums are checked as they are read).
    package func storageProblems() throws -> [String] {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try core.withLock { core in
                try core.refresh(fd)
                guard let snapshot = core.state.snapshot, let codec = core.state.codec, let held = core.held else { return [] }
                let expected = try core.indexes(of: snapshot, codec: codec)
                var problems: [String] = []
                for part in snapshot.indexes {
                    let owner = part.owner < codec.entityNames.count ? codec.entityNames[part.owner] : "entity \(part.owner)"
                    let isSchemaIndex = part.constraint & Snapshot.schemaIndexFlag != 0
                    let what = isSchemaIndex ? "schema index \((part.constraint & ~Snapshot.schemaIndexFlag) + 1)" : "constraint \(part.constraint + 1)"
                    // An index is made from the rows: a damaged one is a problem to report
                    // (compaction rebuilds it), not a store that cannot be read.
                    let stored: [(hash: UInt64, entity: Int, position: Int, key: Int64)]
                    do {
                        stored = try snapshot.indexEntries(part, fd: held.fd, path: path)
                    } catch let error as StoreError {
                        problems.append("the snapshot index of \(owner) (\(what)) is damaged (\(error)); compact the store to rebuild it")
                        continue
                    }
                    guard let built = expected.first(where: { $0.owner == part.owner && $0.constraint == part.constraint && $0.signature == part.signature }) else {
                        // A uniqueness index hashed as before the decomposed strings: not
                        // used (constraint checks scan), rebuilt by the next compaction.
                        if !isSchemaIndex, let entity = model.entity(named: owner), part.constraint < entity.uniquenessConstraints.count,
                           part.signature == BinaryStore.legacySignature(of: entity.uniquenessConstraints[part.constraint], in: entity) {
                            continue
                        }
                        problems.append("the snapshot has an index of \(owner) the model does not define (\(what)); it is not used")
                        continue
                    }
                    let matches: Bool
                    if let positions = built.positions {
                        // A schema index: its entries in their order, with the rows' positions.
                        matches = stored.count == positions.count && zip(stored, zip(built.entries, positions)).allSatisfy { stored, built in
                            stored.hash == built.0.hash && stored.entity == built.0.entity && stored.key == built.0.key && stored.position == built.1
                        }
                    } else {
                        // As much of each hash as the index keeps, in the order it keeps them.
                        let mask = part.hashMask
                        let order = { (a: (hash: UInt64, entity: Int, key: Int64), b: (hash: UInt64, entity: Int, key: Int64)) in (a.hash, a.entity, a.key) < (b.hash, b.entity, b.key) }
                        let expected = built.entries.map { (hash: $0.hash & mask, entity: $0.entity, key: $0.key) }.sorted(by: order)
                        matches = stored.map { ($0.hash, $0.entity, $0.key) }.elementsEqual(expected, by: { $0 == $1 })
                    }
                    if !matches {
                        problems.append("the snapshot index of \(owner) (\(what)) does not match its rows; compact the store to rebuild it")
                    }
                }
                // Every column (its checksum, when read) against its rows' values.
                for part in snapshot.columns {
                    let owner = part.entity < codec.entityNames.count ? codec.entityNames[part.entity] : "entity \(part.entity)"
                    let column = try snapshot.column(part, fd: held.fd, path: path)
                    guard let loaded = try core.loadedEntity(part.entity), let entity = model.entity(named: owner),
                          part.slot < entity.properties.count, let attribute = entity.properties[part.slot].attribute,
                          Column.Kind(attribute.type) == part.kind, attribute.isStored
                    else {
                        problems.append("the snapshot has a column of \(owner) (slot \(part.slot)) the model does not define; it is not used")
                        continue
                    }
                    for position in 0..<loaded.part.rowCount {
                        let (entry, start) = try loaded.row(at: position, path: path)
                        let id = codec.objectID(entity: part.entity, key: entry.key)
                        guard try core.decode(id, loaded.bytes, from: start, slots: [part.slot]) == [.value(column.value(at: position))] else {
                            problems.append("the snapshot column \(owner).\(attribute.name) does not match its rows; compact the store to rebuild it")
                            break
                        }
                    }
                }
                return problems
            }
        }
    }


}


/// Everything of a binary store that changes, and the code that reads and writes it. The
/// store reaches it only through its `Locked<Core>`, after taking the file's lock, so one
/// thread at a time: the one place that promise is made by hand (`@unchecked`), for this
/// class, not for every value a `Locked` may hold.
private final class Core: @unchecked Sendable {
    let path: String
    let model: ManagedObjectModel
    var state = BinaryStore.State()
    /// The file the state was read from, kept open: while it is, its inode cannot be reused,
    /// so "the path names the same file" reliably means "no compaction or migration replaced
    /// it" (a closed file's inode number can come back for its replacement).
    var held: (fd: Int32, identity: FileIdentity)?
    var threshold = 256 << 10
    var lastHousekeepingWarning: String?
    /// The locked file's size as the last ``refresh(_:)`` under this lock found it and
    /// appends since left it (nil: not known). A commit appended where the file ends needs
    /// no truncation first: nothing lies past the last commit.
    var fileSize: Int?
    #if DEBUG
    /// See ``BinaryStore/cutStop``.
    var cutStop: BinaryStore.CutStop?
    #endif
    /// The log length from which a save asks again whether the log mostly repeats rows
    /// (0 after every reading of the file: a new log).
    var nextCutCheck = 0
    let durability: BinaryStore.Durability
    /// Under `.normal`, unclaimed bytes past which a save flushes and moves the header (what
    /// a crash of the machine may lose, and where a damaged commit would pass for a torn tail).
    static let checkpointBytes = 64 << 10

    init(path: String, model: ManagedObjectModel, durability: BinaryStore.Durability) {
        self.path = path
        self.model = model
        self.durability = durability
    }

    /// Reads the file again, from a descriptor of the locked file: the header, the metadata,
    /// the snapshot's tables and the log, not the snapshot's rows.
    func reload(_ fd: Int32) throws {
        nextCutCheck = 0
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw StoreError.io(path: path, reason: "cannot read: \(FileIO.errorText())") }
        let size = Int(info.st_size)
        let header = try BinaryStore.parseHeader(try FileIO.read(fd, count: BinaryStore.headerSize, at: 0, path: path), path: path, fileSize: size)
        var fresh = BinaryStore.State()
        fresh.model = model
        let unclaimed: UInt64
        if header.snapshotLength > 0 {
            // The metadata commit, the snapshot, then the log, up to the file's end.
            let head = try FileIO.read(fd, count: header.snapshotOffset - BinaryStore.headerSize, at: BinaryStore.headerSize, path: path)
            try BinaryStore.parse(head, path: path, into: &fresh, base: BinaryStore.headerSize)
            guard let codec = fresh.codec else { throw StoreError.corrupt(path: path, reason: "no metadata record") }
            fresh.snapshot = try Snapshot.open(fd, base: header.snapshotOffset, length: header.snapshotLength, entityCount: codec.entityNames.count, path: path)
            fresh.snapshotPlace = (header.snapshotOffset, header.snapshotLength)
            fresh.logStart = header.logStart
            let log = try FileIO.read(fd, count: size - fresh.logStart, at: fresh.logStart, path: path)
            guard log.count >= header.committedLength - fresh.logStart else { throw StoreError.corrupt(path: path, reason: "the file is truncated") }
            unclaimed = try BinaryStore.parse(log, path: path, into: &fresh, base: fresh.logStart, claimed: header.committedLength - fresh.logStart).unclaimed
        } else {
            let bytes = try FileIO.read(fd, count: size - BinaryStore.headerSize, at: BinaryStore.headerSize, path: path)
            guard bytes.count >= header.committedLength - BinaryStore.headerSize else { throw StoreError.corrupt(path: path, reason: "the file is truncated") }
            unclaimed = try BinaryStore.parse(bytes, path: path, into: &fresh, base: BinaryStore.headerSize, claimed: header.committedLength - BinaryStore.headerSize).unclaimed
            // The log of a file without snapshot is everything after its metadata commit.
            var reader = ByteReader(bytes)
            fresh.logStart = BinaryStore.headerSize + 8 + Int((try? reader.u32()) ?? 0)
        }
        fresh.claimedLength = header.committedLength
        fresh.logGeneration = header.logGeneration
        fresh.commitCount = header.commitCount + unclaimed
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
        guard header.committedLength >= state.claimedLength, size >= state.committedLength,
              header.snapshotOffset == state.snapshotPlace.offset, header.snapshotLength == state.snapshotPlace.length,
              header.logGeneration == state.logGeneration
        else { return try reload(fd) }
        state.claimedLength = header.committedLength
        // Commits appended since, whether the header claims them yet or not.
        guard size > state.committedLength else { return }
        let tail = try FileIO.read(fd, count: size - state.committedLength, at: state.committedLength, path: path)
        guard tail.count == size - state.committedLength else { throw StoreError.corrupt(path: path, reason: "the file is truncated") }
        let before = state.committedLength
        let parsed = try BinaryStore.parse(tail, path: path, into: &state, base: before, claimed: max(0, header.committedLength - before))
        state.commitCount = header.committedLength > before ? header.commitCount + parsed.unclaimed : state.commitCount + parsed.commits
    }


    // MARK: Rows

    /// Where a row's encoded slots are: in the log, in a loaded snapshot entity, or read
    /// from the snapshot for this call. The store holds the lock.
    func encodedRow(_ id: ObjectID) throws -> (version: Int64, bytes: [UInt8], start: Int)? {
        if let entry = state.entries[id] { return (entry.version, state.chunks[entry.chunk], entry.offset) }
        guard let key = id.primaryKey, state.removed[id.entityName]?.contains(key) != true, let snapshot = state.snapshot,
              id.storeIdentifier == state.metadata?.storeIdentifier, let index = state.codec?.entityIndex[id.entityName]
        else { return nil }
        // Faults fired one after another (a bulk delete, a walk of a relationship) search the
        // file a row at a time until they have read as many rows as a query reads singly
        // (one in 32, at least 256); then the entity is read whole, once.
        let singleReads = state.singleReads[index, default: 0]
        if index < snapshot.entities.count, singleReads >= max(256, snapshot.entities[index].rowCount / 32) { _ = try loadedEntity(index) }
        if let loaded = state.loaded[index] {
            guard let position = loaded.find(key) else { return nil }
            let (entry, start) = try loaded.row(at: position, path: path)
            return (entry.version, loaded.bytes, start)
        }
        if let row = state.rowsRead[index]?[key] { return (row.version, row.bytes, 0) }
        state.singleReads[index] = singleReads + 1
        guard let held, let found = try snapshot.find(key: key, entity: index, fd: held.fd, path: path) else { return nil }
        try remember(found.bytes, key: key, version: found.entry.version, table: index)
        return (found.entry.version, found.bytes, 0)
    }

    /// Keeps a row read by itself for the next time it is asked for; once as many are kept
    /// as a query reads singly (one in 32, at least 256), the entity is read whole instead.
    func remember(_ bytes: [UInt8], key: Int64, version: Int64, table: Int) throws {
        state.rowsRead[table, default: [:]][key] = (version, bytes)
        if let snapshot = state.snapshot, table < snapshot.entities.count,
           state.rowsRead[table]?.count ?? 0 > max(256, snapshot.entities[table].rowCount / 32) {
            _ = try loadedEntity(table)
        }
    }

    /// The scan of a count over an entity's snapshot whose rows `decisions` decided (per
    /// directory position): the accepted rows that the log does not supersede, counted;
    /// the undecided ones and the log's rows listed (verdict 0, in key order). The store
    /// holds the lock.
    func countingScan(ofEntity name: String, loaded: Snapshot.Loaded, decisions: [UInt8], codec: RowCodec) throws -> RowScan {
        let logKeys = state.keysByEntity[name] ?? []
        let removed = state.removed[name] ?? []
        let skipping = !removed.isEmpty || !logKeys.isEmpty
        var counted = 0
        var rows: [(key: Int64, version: Int64, bytes: [UInt8], start: Int)] = []
        let keys = loaded.keys
        if skipping {
            try keys.forEachKey { position, key in
                guard position < decisions.count, !removed.contains(key), !logKeys.contains(key) else { return }
                switch decisions[position] {
                case 1: counted += 1
                case 2: return
                default:
                    let (entry, start) = try loaded.row(at: position, path: path)
                    rows.append((key, entry.version, loaded.bytes, start))
                }
            }
        } else {
            // Nothing in the log: only the undecided rows' keys are read.
            for position in 0..<min(decisions.count, keys.count) {
                switch decisions[position] {
                case 1: counted += 1
                case 2: continue
                default:
                    let (entry, start) = try loaded.row(at: position, path: path)
                    rows.append((entry.key, entry.version, loaded.bytes, start))
                }
            }
        }
        if !logKeys.isEmpty {
            let scope = ObjectID.Scope.of(entityName: name, storeIdentifier: state.metadata?.storeIdentifier ?? "")
            for key in logKeys {
                guard let entry = state.entries[ObjectID(scope, key: .permanent(key))] else { continue }
                rows.append((key, entry.version, state.chunks[entry.chunk], entry.offset))
            }
            rows.sort { $0.key < $1.key }
        }
        var scan = RowScan(codec: codec, path: path, rows: rows, verdicts: [UInt8](repeating: 0, count: rows.count),
                           shape: codec.shape(entity: codec.entityIndex[name] ?? -1))
        scan.counted = counted
        return scan
    }

    /// An entity's snapshot part, read whole once. The store holds the lock.
    func loadedEntity(_ index: Int) throws -> Snapshot.Loaded? {
        if let loaded = state.loaded[index] { return loaded }
        guard let snapshot = state.snapshot, let held, index < snapshot.entities.count else { return nil }
        let loaded = try snapshot.load(entity: index, fd: held.fd, path: path)
        state.loaded[index] = loaded
        state.rowsRead[index] = nil
        return loaded
    }

    /// Every saved row of exactly one entity, in key order. The store holds the lock.
    func encodedRows(ofEntity name: String) throws -> [(key: Int64, version: Int64, bytes: [UInt8], start: Int)] {
        var positions: [Int]?
        return try encodedRows(ofEntity: name, positions: &positions)
    }

    /// An entity's snapshot columns for `slots`, those it has, read once. The store holds the lock.
    func columns(ofEntity index: Int, slots: Set<Int>) throws -> [Int: Column] {
        guard let snapshot = state.snapshot, let held, let codec = state.codec, index < codec.entityNames.count,
              let entity = model.entity(named: codec.entityNames[index]) else { return [:] }
        var result: [Int: Column] = [:]
        for part in snapshot.columns where part.entity == index && slots.contains(part.slot) {
            // Only a column of the kind the model's attribute has (the rows decide otherwise).
            guard part.slot < entity.properties.count, let attribute = entity.properties[part.slot].attribute, attribute.isStored,
                  Column.Kind(attribute.type) == part.kind else { continue }
            if let column = state.columns[index]?[part.slot] {
                result[part.slot] = column
                continue
            }
            let column = try snapshot.column(part, fd: held.fd, path: path)
            state.columns[index, default: [:]][part.slot] = column
            result[part.slot] = column
        }
        return result
    }

    /// ``encodedRows(ofEntity:)``, and when `positions` is not nil, each row's position in
    /// the snapshot's directory (-1 for a row of the log).
    /// `unread[position] == 2` marks a snapshot row the caller will not read: it is listed
    /// without checking its checksum.
    func encodedRows(ofEntity name: String, positions: inout [Int]?, unread: [UInt8]? = nil) throws -> [(key: Int64, version: Int64, bytes: [UInt8], start: Int)] {
        let logKeys = state.keysByEntity[name] ?? []
        let removed = state.removed[name] ?? []
        var result: [(key: Int64, version: Int64, bytes: [UInt8], start: Int)] = []
        let wantsPositions = positions != nil
        var snapshotPositions: [Int] = []
        if let index = state.codec?.entityIndex[name], let loaded = try loadedEntity(index) {
            result.reserveCapacity(loaded.part.rowCount + logKeys.count)
            if wantsPositions { snapshotPositions.reserveCapacity(loaded.part.rowCount) }
            let skipping = !removed.isEmpty || !logKeys.isEmpty
            try loaded.keys.forEachKey { position, key in
                if skipping && (removed.contains(key) || logKeys.contains(key)) { return }
                let (entry, start) = try unread?[position] == 2 ? loaded.place(at: position, path: path) : loaded.row(at: position, path: path)
                result.append((key, entry.version, loaded.bytes, start))
                if wantsPositions { snapshotPositions.append(position) }
            }
        }
        guard !logKeys.isEmpty else {
            if wantsPositions { positions = snapshotPositions }
            return result
        }
        // The log's rows merged in by key (both lists are sorted).
        let scope = ObjectID.Scope.of(entityName: name, storeIdentifier: state.metadata?.storeIdentifier ?? "")
        var logRows: [(key: Int64, version: Int64, bytes: [UInt8], start: Int)] = []
        for key in logKeys.sorted() {
            guard let entry = state.entries[ObjectID(scope, key: .permanent(key))] else { continue }
            logRows.append((key, entry.version, state.chunks[entry.chunk], entry.offset))
        }
        var merged: [(key: Int64, version: Int64, bytes: [UInt8], start: Int)] = []
        var mergedPositions: [Int] = []
        merged.reserveCapacity(result.count + logRows.count)
        var i = 0, j = 0
        while i < result.count || j < logRows.count {
            if j == logRows.count || (i < result.count && result[i].key < logRows[j].key) {
                merged.append(result[i])
                if wantsPositions { mergedPositions.append(snapshotPositions[i]) }
                i += 1
            } else {
                merged.append(logRows[j])
                if wantsPositions { mergedPositions.append(-1) }
                j += 1
            }
        }
        if wantsPositions { positions = mergedPositions }
        return merged
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


    func slotValuesLocked(ofEntity entityName: String, slots: [Int]) throws -> [(ObjectID, [SlotValue])] {
        let identifier = state.metadata?.storeIdentifier ?? ""
        // The codec reads slots in ascending order; the caller's order is restored after.
        let ascending = Array(Set(slots)).sorted()
        let position = Dictionary(uniqueKeysWithValues: ascending.enumerated().map { ($0.element, $0.offset) })
        let scope = ObjectID.Scope.of(entityName: entityName, storeIdentifier: identifier)
        return try encodedRows(ofEntity: entityName).map { row in
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
        guard let snapshot = state.snapshot, let codec = state.codec, let held,
              changes.inserted.count + changes.updated.count <= 1000 else { return everything }
        let logOnly = check.scanning { [unowned self] name, slots in
            let identifier = state.metadata?.storeIdentifier ?? ""
            return try (state.keysByEntity[name] ?? []).compactMap { key in
                let id = ObjectID(entityName: name, storeIdentifier: identifier, key: .permanent(key))
                guard let entry = state.entries[id] else { return nil }
                return (id, try decode(id, state.chunks[entry.chunk], from: entry.offset, slots: slots))
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
                if state.keysByEntity[name]?.contains(candidate) == true || state.removed[name]?.contains(candidate) == true { continue }
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

    /// The header as the state says, for a commit count and committed length.
    func currentHeader(committedLength: Int, commitCount: UInt64) -> [UInt8] {
        let snapshotEnd = state.snapshotPlace.offset + state.snapshotPlace.length
        return BinaryStore.header(BinaryStore.Header(version: BinaryStore.formatVersion, committedLength: committedLength, commitCount: commitCount,
                                  snapshotOffset: state.snapshotPlace.offset, snapshotLength: state.snapshotPlace.length,
                                  logOffset: state.snapshotPlace.length > 0 && state.logStart != snapshotEnd ? state.logStart : 0,
                                  logGeneration: state.logGeneration))
    }

    /// Appends one commit. `.full`: flushed (one `fdatasync`), then the header moved past
    /// it without a flush of its own: the header never claims bytes that are not on disk,
    /// and a header write lost in a crash only leaves the commit unclaimed, which readers
    /// recognise by its checksum. `.normal`: not flushed; the header moves (after a flush)
    /// once the unclaimed commits pass ``Core/checkpointBytes``. Caller holds both locks.
    func append(_ payload: [UInt8], fd: Int32) throws {
        let frame = BinaryStore.frame(payload)
        let end = state.committedLength + frame.count
        // The commit goes where the last one ended. Bytes past that (a torn tail, or what
        // a log cut stopped before cutting away) are cut first: written over, their rest
        // could follow the commit and pass for more commits.
        if fileSize != state.committedLength {
            guard ftruncate(fd, off_t(state.committedLength)) == 0 else { throw StoreError.io(path: path, reason: "cannot set the file size: \(FileIO.errorText())") }
        }
        fileSize = nil
        try FileIO.write(fd, frame, at: state.committedLength, path: path)
        fileSize = end
        state.committedLength = end
        state.commitCount += 1
        if durability == .full || end - state.claimedLength > Core.checkpointBytes {
            try FileIO.syncData(fd, path: path)
            let header = currentHeader(committedLength: end, commitCount: state.commitCount)
            try FileIO.write(fd, Array(header[8...]), at: 8, path: path)
            state.claimedLength = end
        }
    }


    /// About the bytes the log's records would take if each object's row were written once:
    /// its last version of each row, a deletion's reference, a next key.
    var liveLogBytes: Int {
        state.entries.values.reduce(0) { $0 + $1.length + 16 } + state.removed.values.reduce(0) { $0 + $1.count * 12 }
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
        guard let codec = state.codec, state.snapshotPlace.length > 0, state.logStart > BinaryStore.headerSize else { return false }
        var payload = ByteWriter()
        for (index, name) in codec.entityNames.enumerated() {
            for key in (state.removed[name] ?? []).sorted() {
                payload.u8(BinaryStore.RecordTag.delete.rawValue)
                try writeReference(codec.objectID(entity: index, key: key), codec: codec, into: &payload)
            }
            for key in (state.keysByEntity[name] ?? []).sorted() {
                let id = codec.objectID(entity: index, key: key)
                guard let entry = state.entries[id] else { continue }
                payload.u8(BinaryStore.RecordTag.put.rawValue)
                try writeReference(id, codec: codec, into: &payload)
                payload.signed(entry.version)
                payload.varint(UInt64(entry.length))
                payload.bytes.append(contentsOf: state.chunks[entry.chunk][entry.offset..<entry.offset + entry.length])
            }
        }
        for (name, key) in (state.metadata?.nextKeys ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let index = codec.entityIndex[name] else { continue }
            payload.u8(BinaryStore.RecordTag.nextKey.rawValue)
            payload.varint(UInt64(index))
            payload.signed(key)
        }
        let commit = payload.bytes.isEmpty ? [] : BinaryStore.frame(payload.bytes)
        // Where nothing live is: before the log, from the snapshot's end (free after an
        // earlier cut), when the cut log and its end mark fit; else after the log.
        let snapshotEnd = state.snapshotPlace.offset + state.snapshotPlace.length
        let place = commit.count + 8 <= state.logStart - snapshotEnd ? snapshotEnd : state.committedLength
        // A frame longer than any file: readers looking for commits past the header's
        // length stop here. What an older log left after it is history up to the log the
        // header pointed at, which would give the same rows, only read for nothing.
        var end = ByteWriter()
        end.u32(UInt32.max)
        end.u32(0)
        fileSize = nil
        try FileIO.write(fd, commit + end.bytes, at: place, path: path)
        // The header never points at a log not on disk, and the log it pointed at is not
        // written over until the header pointing elsewhere is.
        try FileIO.syncData(fd, path: path)
        #if DEBUG
        if cutStop == .afterWritingTheLog { throw StoreError.io(path: path, reason: "the log cut stopped where a test asked") }
        #endif
        let fields = BinaryStore.Header(version: BinaryStore.formatVersion, committedLength: place + commit.count, commitCount: state.commitCount + 1,
                                        snapshotOffset: state.snapshotPlace.offset, snapshotLength: state.snapshotPlace.length,
                                        logOffset: place == snapshotEnd ? 0 : place, logGeneration: state.logGeneration &+ 1)
        try FileIO.write(fd, Array(BinaryStore.header(fields)[8...]), at: 8, path: path)
        try FileIO.syncData(fd, path: path)
        #if DEBUG
        if cutStop == .afterMovingTheHeader { throw StoreError.io(path: path, reason: "the log cut stopped where a test asked") }
        #endif
        guard ftruncate(fd, off_t(place + commit.count)) == 0 else { throw StoreError.io(path: path, reason: "cannot set the file size: \(FileIO.errorText())") }
        try reload(fd)
        return true
    }

    func compactLocked(path realPath: String, format: Int = BinaryStore.formatVersion) throws {
        guard let metadata = state.metadata, let codec = state.codec else { return }
        // Every row is read and written again: typed with a dictionary of the strings the
        // rows repeat (format 6), sparse (format 5), or every slot tagged (older formats).
        // Each entity's rows listed once, for the dictionary and for writing them.
        let sources = try codec.entityNames.map { try encodedRows(ofEntity: $0) }
        let (strings, origin) = format >= 6 ? try dictionary(codec: codec, rows: sources) : ([], 0)
        let target = codec.with(strings: strings, dateOrigin: origin)
        // The metadata (and the dictionary) in a commit of its own, so reading it never
        // reads the rows.
        var metadataPayload = ByteWriter()
        BinaryStore.writeMetadata(metadata, entityNames: codec.entityNames, into: &metadataPayload)
        if !strings.isEmpty || origin != 0 { BinaryStore.writeDictionary(strings, dateOrigin: origin, into: &metadataPayload) }
        let metadataFrame = BinaryStore.frame(metadataPayload.bytes)
        var rows: [[Snapshot.Row]] = []
        for index in codec.entityNames.indices {
            let shape = codec.shape(entity: index)
            var written = ByteWriter()
            var places: [(key: Int64, version: Int64, start: Int, length: Int)] = []
            for row in sources[index] {
                let start = written.bytes.count
                do {
                    // A typed row is written again in place; another is decoded.
                    if format >= 6, try codec.recode(row.bytes, from: row.start, shape: shape, to: target, into: &written) {
                        places.append((row.key, row.version, start, written.bytes.count - start))
                        continue
                    }
                    var reader = ByteReader(row.bytes, from: row.start)
                    let slots = try codec.decode(from: &reader, shape: shape)
                    switch format {
                    case 6...: try target.encodeRow(slots, shape: shape, into: &written)
                    case 5: try target.encodeRow(slots, shape: shape.sparse, into: &written)
                    default: try target.encode(slots, into: &written)
                    }
                } catch {
                    throw StoreError.corrupt(path: path, reason: "unreadable row \(codec.objectID(entity: index, key: row.key))")
                }
                places.append((row.key, row.version, start, written.bytes.count - start))
            }
            let source = written.bytes
            rows.append(places.map { Snapshot.Row(key: $0.key, version: $0.version, source: source, start: $0.start, length: $0.length) })
        }
        let columns = try columns(of: rows, codec: target)
        let snapshot = Snapshot.bytes(rows: rows, indexes: try indexes(of: rows, codec: target) + schemaIndexes(of: rows, columns: columns, codec: target, format: format),
                                      columns: columns, layout: format >= 6 ? .dense : format == 5 ? .packed : format == 4 ? .narrow : .wide)
        let snapshotOffset = BinaryStore.headerSize + metadataFrame.count
        let header = BinaryStore.header(BinaryStore.Header(version: min(format, BinaryStore.formatVersion), committedLength: snapshotOffset + snapshot.count, commitCount: state.commitCount + 1,
                                        snapshotOffset: snapshotOffset, snapshotLength: snapshot.count))
        // Beside the real file, so a symbolic link to the store stays one.
        let fd = try FileIO.replace(realPath, with: [header, metadataFrame, snapshot])
        defer { close(fd) }
        try reload(fd)
    }

    /// The dictionary a compaction writes (format 6): the strings the typed rows' string
    /// slots hold at least ``dictionaryUses`` times (of 2 to 64 bytes), most used first (the
    /// first 64 take a byte in a row), at most ``RowCodec/maxStrings``; and the median of
    /// the whole seconds their date slots hold (0 without dates) as the date origin.
    /// `rows[i]`: entity i's rows, as ``encodedRows(ofEntity:)`` lists them.
    func dictionary(codec: RowCodec, rows: [[(key: Int64, version: Int64, bytes: [UInt8], start: Int)]]) throws -> (strings: [String], dateOrigin: Int64) {
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

    /// The index entries of the snapshot's rows (the rows of a snapshot part as read).
    func indexes(of snapshot: Snapshot, codec: RowCodec) throws -> [Snapshot.Index] {
        var rows: [[Snapshot.Row]] = []
        for index in codec.entityNames.indices {
            guard let loaded = try loadedEntity(index) else { return [] }
            rows.append(try (0..<loaded.part.rowCount).map { position in
                let (entry, start) = try loaded.row(at: position, path: path)
                return Snapshot.Row(key: entry.key, version: entry.version, source: loaded.bytes, start: start, length: entry.size)
            })
        }
        return try indexes(of: rows, codec: codec) + schemaIndexes(of: rows, columns: try columns(of: rows, codec: codec), codec: codec)
    }

    /// A schema index per entity table and `indexes` entry of the model (the entity's own
    /// and its ancestors') whose first property has a column: the rows with a value, by
    /// value then key, with their directory positions. `columns[i]` are table i's columns
    /// of `rows[i]`.
    /// An entry whose first property is a stored string or UUID attribute, or a to-one
    /// relationship, gets a hashed index instead (format 4): each row with a value under
    /// ``BinaryStore/indexHash(_:type:)`` of it (``BinaryStore/referenceHash(_:)`` of the
    /// object it refers to), then key.
    func schemaIndexes(of rows: [[Snapshot.Row]], columns: [[(slot: Int, column: Column)]], codec: RowCodec,
                       format: Int = BinaryStore.formatVersion) throws -> [Snapshot.Index] {
        var result: [Snapshot.Index] = []
        for (table, name) in codec.entityNames.enumerated() where table < columns.count {
            guard let entity = model.entity(named: name) else { continue }
            for (number, index) in BinaryStore.schemaIndexes(of: entity, in: model).enumerated() {
                guard let first = index.propertyNames.first, let slot = entity.slot(of: first) else { continue }
                if format >= 4, let attribute = entity.properties[slot].attribute, attribute.isStored, BinaryStore.isHashed(attribute.type) {
                    result.append(try hashedIndex(of: rows[table], table: table, slot: slot, number: number,
                                                  signature: BinaryStore.hashedSignature(ofIndexOn: attribute.name, type: attribute.type), codec: codec) {
                        guard case .value(let value) = $0 else { return nil }
                        return BinaryStore.indexHash(value, type: attribute.type)
                    })
                    continue
                }
                if format >= 4, let relationship = entity.properties[slot].relationship, !relationship.isToMany, !relationship.isTransient {
                    result.append(try hashedIndex(of: rows[table], table: table, slot: slot, number: number,
                                                  signature: BinaryStore.referenceSignature(ofIndexOn: relationship.name), codec: codec) {
                        guard case .toOne(let id?) = $0 else { return nil }
                        return BinaryStore.referenceHash(id)
                    })
                    continue
                }
                guard let column = columns[table].first(where: { $0.slot == slot })?.column, column.rows == rows[table].count else { continue }
                let values = column.values, kind = column.kind
                // Positions follow the keys (the directory is sorted by key): ties in key order.
                let order = (0..<column.rows).filter { !column.isNull($0) }.sorted { a, b in
                    kind.less(values[a], values[b]) || (!kind.less(values[b], values[a]) && a < b)
                }
                result.append(Snapshot.Index(
                    owner: table, constraint: Snapshot.schemaIndexFlag | number,
                    signature: BinaryStore.signature(ofIndexOn: first, kind: column.kind),
                    entries: order.map { (values[$0], table, rows[table][$0].key) }, positions: order, kind: kind))
            }
        }
        return result
    }

    /// A hashed index of an entity table's slot: for every row whose value `hash` files (a
    /// string's index key, a UUID, a reference), that hash as the entry's value (compared as
    /// a signed integer), sorted by hash then key (positions follow keys).
    func hashedIndex(of rows: [Snapshot.Row], table: Int, slot: Int, number: Int, signature: UInt32, codec: RowCodec,
                     hash: (SlotValue) -> UInt64?) throws -> Snapshot.Index {
        var hashed: [(hash: Int64, position: Int)] = []
        hashed.reserveCapacity(rows.count)
        for (position, row) in rows.enumerated() {
            let id = codec.objectID(entity: table, key: row.key)
            guard let value = try decode(id, row.source, from: row.start, slots: [slot], codec: codec).first, let hash = hash(value) else { continue }
            hashed.append((Int64(bitPattern: hash), position))
        }
        hashed.sort { ($0.hash, $0.position) < ($1.hash, $1.position) }
        return Snapshot.Index(owner: table, constraint: Snapshot.schemaIndexFlag | number, signature: signature,
                              entries: hashed.map { (UInt64(bitPattern: $0.hash), table, rows[$0.position].key) }, positions: hashed.map(\.position))
    }

    /// The rows of an entity table's snapshot a schema index finds for the range the
    /// predicate's ANDed comparisons of one indexed attribute leave (=, <, <=, >, >= with
    /// constants of its type, none that a nil passes), or for the hashes its equalities of a
    /// hashed attribute or reference leave (the index that finds fewest rows), as (directory
    /// position, key) in key order, and whether the found rows are decided (a range that is
    /// the whole predicate; never hashes). Nil when no index serves the predicate, or when
    /// it would list more than `limit` rows.
    func indexedRows(table: Int, entity: EntityDescription, predicate: SlotPredicate, limit: Int) throws -> (rows: [(position: Int, key: Int64)], wholePredicate: Bool)? {
        guard let snapshot = state.snapshot, let held, !snapshot.indexes.isEmpty else { return nil }
        var conjuncts: [SlotPredicate] = []
        func flatten(_ p: SlotPredicate) {
            if case .and(let a, let b) = p { flatten(a); flatten(b) } else { conjuncts.append(p) }
        }
        flatten(predicate)
        // Per attribute, the range its comparisons leave (`a >= x AND a < y` is one range).
        var ranges: [Int: (name: String, kind: Column.Kind, lower: Snapshot.Bound?, upper: Snapshot.Bound?, conjuncts: Int)] = [:]
        // Per string or UUID attribute and to-one relationship, the hashes its equalities
        // leave (`s == x`, `s IN {x, y}`, strings with any options; ANDed ones intersect).
        var texts: [Int: (name: String, signature: UInt32, hashes: Set<UInt64>)] = [:]
        for conjunct in conjuncts {
            if case .compare(let slot, let op, _, let constant, _, _) = conjunct, slot < entity.properties.count,
               let attribute = entity.properties[slot].attribute, attribute.isStored, BinaryStore.isHashed(attribute.type) {
                guard let hashes = Self.indexHashes(op, constant, type: attribute.type) else { continue }
                texts[slot] = (attribute.name, BinaryStore.hashedSignature(ofIndexOn: attribute.name, type: attribute.type),
                               texts[slot].map { $0.hashes.intersection(hashes) } ?? hashes)
                continue
            }
            // A to-one relationship equal to objects: the rows filed under their keys (an
            // unsaved object has no row that refers to it).
            if case .reference(let slot, let targets) = conjunct, slot < entity.properties.count, let relationship = entity.properties[slot].relationship {
                let hashes = Set(targets.compactMap(BinaryStore.referenceHash))
                texts[slot] = (relationship.name, BinaryStore.referenceSignature(ofIndexOn: relationship.name),
                               texts[slot].map { $0.hashes.intersection(hashes) } ?? hashes)
                continue
            }
            guard case .compare(let slot, let op, let test, .value(let constant), let slotOnLeft, _) = conjunct, !constant.isNull,
                  slot < entity.properties.count, let attribute = entity.properties[slot].attribute, attribute.isStored,
                  let kind = Column.Kind(attribute.type), let bits = Column.bits(constant, kind: kind),
                  // The index lists no nil: only a comparison no nil passes can use it.
                  try !test(.null)
            else { continue }
            // With the constant on the left, `k < x` is `x > k`.
            let bound = Snapshot.Bound(bits: bits, inclusive: true), open = Snapshot.Bound(bits: bits, inclusive: false)
            let range: (lower: Snapshot.Bound?, upper: Snapshot.Bound?)
            switch (op, slotOnLeft) {
            case (.equal, _): range = (bound, bound)
            case (.less, true), (.greater, false): range = (nil, open)
            case (.lessOrEqual, true), (.greaterOrEqual, false): range = (nil, bound)
            case (.greater, true), (.less, false): range = (open, nil)
            case (.greaterOrEqual, true), (.lessOrEqual, false): range = (bound, nil)
            default: continue
            }
            guard let known = ranges[slot] else {
                ranges[slot] = (attribute.name, kind, range.lower, range.upper, 1)
                continue
            }
            // The tighter of two bounds: the higher lower one, the lower upper one; of equal
            // values the one that leaves the value out.
            let less = kind.less
            func tighter(_ a: Snapshot.Bound?, _ b: Snapshot.Bound?, lower: Bool) -> Snapshot.Bound? {
                guard let a else { return b }
                guard let b else { return a }
                if less(a.bits, b.bits) { return lower ? b : a }
                if less(b.bits, a.bits) { return lower ? a : b }
                return a.inclusive ? b : a
            }
            ranges[slot] = (known.name, kind, tighter(known.lower, range.lower, lower: true), tighter(known.upper, range.upper, lower: false), known.conjuncts + 1)
        }
        let indexes = BinaryStore.schemaIndexes(of: entity, in: model)
        func part(on attribute: String, signature: UInt32) -> Snapshot.IndexPart? {
            for (number, index) in indexes.enumerated() where index.propertyNames.first == attribute {
                if let part = snapshot.indexes.first(where: { $0.owner == table && $0.constraint == Snapshot.schemaIndexFlag | number && $0.signature == signature }) {
                    return part
                }
            }
            return nil
        }
        // The index that lists fewest rows: one range of a fixed-width attribute, or a hash
        // per string (whose rows are candidates, never decided: hashes collide, and the
        // comparison may fold less than the key).
        var best: (part: Snapshot.IndexPart, spans: [Range<Int>], count: Int, decides: Bool)?
        for slot in ranges.keys.sorted() {
            guard let range = ranges[slot], let part = part(on: range.name, signature: BinaryStore.signature(ofIndexOn: range.name, kind: range.kind)) else { continue }
            let span = try snapshot.span(part, kind: range.kind, from: range.lower, to: range.upper, fd: held.fd, path: path)
            if best == nil || span.count < best?.count ?? 0 { best = (part, [span], span.count, range.conjuncts == conjuncts.count) }
        }
        for slot in texts.keys.sorted() {
            guard let text = texts[slot], let part = part(on: text.name, signature: text.signature) else { continue }
            let spans = try text.hashes.sorted().map { hash in
                let bound = Snapshot.Bound(bits: hash, inclusive: true)
                return try snapshot.span(part, kind: .integer, from: bound, to: bound, fd: held.fd, path: path)
            }
            let count = spans.reduce(0) { $0 + $1.count }
            if best == nil || count < best?.count ?? 0 { best = (part, spans, count, false) }
        }
        guard let best, best.count <= limit else { return nil }
        var found: [(position: Int, key: Int64)] = []
        for span in best.spans { found += try snapshot.entries(best.part, span, fd: held.fd, path: path) }
        return (found.sorted { $0.key < $1.key }, best.decides)
    }

    /// The hashes a hashed index (on an attribute of `type`) files every value that `op`
    /// with `constant` accepts under (for a string, with any comparison options): one for
    /// `==` a value of the type, one per item of `IN` a list of them. Nil for any other
    /// comparison (`IN` a string tests for a substring; a nil or a value of another type in
    /// the list could match rows the index does not list or files otherwise).
    static func indexHashes(_ op: PredicateComparison.Operator, _ constant: SlotConstant, type: AttributeType) -> Set<UInt64>? {
        switch (op, constant) {
        case (.equal, .value(let value)):
            return BinaryStore.indexHash(value, type: type).map { [$0] }
        case (.in, .list(let items)):
            var hashes = Set<UInt64>()
            for value in items {
                guard let hash = BinaryStore.indexHash(value, type: type) else { return nil }
                hashes.insert(hash)
            }
            return hashes
        default:
            return nil
        }
    }

    /// The scan of an entity's rows a schema index narrowed: the snapshot rows it found, the
    /// rows of `alsoListing` (objects the caller holds, which it tests itself) and every row
    /// of the log, in key order. The index's rows pass the indexed comparison, so they are
    /// decided when it is the whole predicate (verdict 1) and tested otherwise (0).
    /// `leavingUnread`: the caller reads no decided row (a count): those come without bytes.
    func indexedScan(ofEntity name: String, table: Int, found: [(position: Int, key: Int64)], wholePredicate: Bool, alsoListing: Set<Int64>,
                     leavingUnread: Bool) throws -> RowScan? {
        guard let codec = state.codec, let snapshot = state.snapshot, let held else { return nil }
        let logKeys = state.keysByEntity[name] ?? []
        let removed = state.removed[name] ?? []
        var rows: [(key: Int64, version: Int64, bytes: [UInt8], start: Int, verdict: UInt8)] = []
        rows.reserveCapacity(found.count + logKeys.count + alsoListing.count)
        var listed = Set<Int64>()
        // Many rows: read the entity's part whole (once per process); a few (up to 1 in 32):
        // row by row.
        let loaded = leavingUnread || found.count <= max(256, snapshot.entities[table].rowCount / 32) ? state.loaded[table] : try loadedEntity(table)
        for (position, key) in found where !removed.contains(key) && !logKeys.contains(key) {
            if leavingUnread {
                // Decided: listed by key alone (an object the caller holds is tested as it is).
                rows.append((key, 0, [], 0, 1))
            } else if let loaded {
                guard position < loaded.keys.count, loaded.keys[position] == key else {
                    throw StoreError.corrupt(path: path, reason: "a snapshot index of \(name) does not match its rows; compact the store to rebuild it")
                }
                let (entry, start) = try loaded.row(at: position, path: path)
                rows.append((key, entry.version, loaded.bytes, start, wholePredicate ? 1 : 0))
            } else if let row = state.rowsRead[table]?[key] {
                rows.append((key, row.version, row.bytes, 0, wholePredicate ? 1 : 0))
            } else {
                guard let (entry, bytes) = try snapshot.row(at: position, entity: table, fd: held.fd, path: path), entry.key == key else {
                    throw StoreError.corrupt(path: path, reason: "a snapshot index of \(name) does not match its rows; compact the store to rebuild it")
                }
                try remember(bytes, key: key, version: entry.version, table: table)
                rows.append((key, entry.version, bytes, 0, wholePredicate ? 1 : 0))
            }
            listed.insert(key)
        }
        let identifier = state.metadata?.storeIdentifier ?? ""
        let scope = ObjectID.Scope.of(entityName: name, storeIdentifier: identifier)
        let indexedCount = rows.count
        for key in logKeys.union(alsoListing) where !listed.contains(key) {
            guard let (version, bytes, start) = try encodedRow(ObjectID(scope, key: .permanent(key))) else { continue }
            rows.append((key, version, bytes, start, 0))
        }
        // The index's rows are in key order already.
        if rows.count > indexedCount { rows.sort { $0.key < $1.key } }
        return RowScan(codec: codec, path: path, rows: rows.map { ($0.key, $0.version, $0.bytes, $0.start) }, verdicts: rows.map(\.verdict),
                       shape: codec.shape(entity: codec.entityIndex[name] ?? -1))
    }

    /// An index per uniqueness constraint of the model over rows (`rows[i]`: entity i's).
    func indexes(of rows: [[Snapshot.Row]], codec: RowCodec) throws -> [Snapshot.Index] {
        var indexes: [Snapshot.Index] = []
        for (ownerIndex, ownerName) in codec.entityNames.enumerated() {
            guard let owner = model.entity(named: ownerName) else { continue }
            for (number, constraint) in owner.uniquenessConstraints.enumerated() {
                let slots = constraint.compactMap { owner.slot(of: $0) }
                guard slots.count == constraint.count else { continue }
                let folding = UniquenessCheck.folding(constraint, in: owner)
                var entries: [(hash: UInt64, entity: Int, key: Int64)] = []
                for kind in model.entityAndDescendants(of: ownerName) {
                    guard let kindIndex = codec.entityIndex[kind.name] else { continue }
                    entries.reserveCapacity(entries.count + rows[kindIndex].count)
                    try forEachRow(rows[kindIndex], entity: kindIndex, slots: slots, codec: codec) { key, decoded in
                        let values = slots.map { decoded[$0] }
                        guard !values.contains(.value(.null)) else { return }
                        let comparable = UniquenessCheck.comparable(values, folding: folding)
                        entries.append((BinaryStore.indexHash(comparable, codec: codec), kindIndex, key))
                    }
                }
                indexes.append(Snapshot.Index(owner: ownerIndex, constraint: number, signature: BinaryStore.signature(of: constraint, in: owner), entries: entries))
            }
        }
        return indexes
    }

    /// Calls `body` with each row's key and its slots, those of `slots` decoded (null when
    /// the row has fewer), the others left null, in one array used again for every row.
    private func forEachRow(_ rows: [Snapshot.Row], entity index: Int, slots: [Int], codec: RowCodec,
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

    /// The columns of every entity's fixed-width stored attributes (`rows[i]`: entity i's),
    /// except those with a value a column cannot hold.
    func columns(of rows: [[Snapshot.Row]], codec: RowCodec) throws -> [[(slot: Int, column: Column)]] {
        try codec.entityNames.enumerated().map { entityIndex, name in
            guard let entity = model.entity(named: name) else { return [] }
            let slots = entity.properties.indices.filter { slot in
                guard entity.kind(ofSlot: slot) == .attribute, let attribute = entity.properties[slot].attribute else { return false }
                return attribute.isStored && Column.Kind(attribute.type) != nil
            }
            guard !slots.isEmpty, !rows[entityIndex].isEmpty else { return [] }
            var builders = slots.compactMap { slot in
                entity.properties[slot].attribute.flatMap { Column.Kind($0.type) }.map { Column.Builder(kind: $0, capacity: rows[entityIndex].count) }
            }
            guard builders.count == slots.count else { return [] }
            try forEachRow(rows[entityIndex], entity: entityIndex, slots: slots, codec: codec) { _, decoded in
                for i in slots.indices { builders[i].append(decoded[slots[i]]) }
            }
            return slots.indices.compactMap { i in
                guard let column = builders[i].column else { return nil }
                return (slots[i], column)
            }
        }
    }
}

extension BinaryStore {
    /// Counts by 64-bit hash in an open-addressed table (the dictionary's count of a
    /// compaction's strings, most of them seen once: a Swift Dictionary hashed each key
    /// again and was a quarter of a compaction).
    struct UseCounts {
        private var keys = [UInt64](repeating: 0, count: 1 << 12)
        private var counts = [Int](repeating: 0, count: 1 << 12)
        private var filled = 0

        /// Adds `count` uses of `hash`; returns its uses now.
        mutating func add(_ hash: UInt64, _ count: Int = 1) -> Int {
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

        func count(of hash: UInt64) -> Int {
            let slot = place(of: hash == 0 ? 1 : hash)
            return keys[slot] == 0 ? 0 : counts[slot]
        }

        /// Where `key` is, or the empty slot it would take.
        private func place(of key: UInt64) -> Int {
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
    static func median(_ values: inout [Int64]) -> Int64 {
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

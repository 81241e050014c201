import Foundation
import ObjectStoreModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The fast store: an append-only binary file of checksummed commits (docs/store-format.md).
///
/// A save appends one commit holding only the rows it changed, flushes it, then flips the
/// header's committed length, so its cost follows the size of the change and a crash at any
/// point leaves either all of the save or none of it. Opening scans the commits to index the
/// rows; a row decodes when it is first read. Dead space (old versions of rows) is
/// reclaimed by ``compact()``, automatically once it outweighs the live rows.
///
/// ```swift
/// let store = try BinaryStore(url: URL(fileURLWithPath: "tasks.store"), model: model)
/// let coordinator = PersistentStoreCoordinator(model: model, store: store)
/// ```
public final class BinaryStore: PersistentStore, @unchecked Sendable {
    /// The format version this code writes and the newest it reads.
    public static let formatVersion = 1
    static let magic: [UInt8] = [0x89, 0x4F, 0x53, 0x54, 0x4F, 0x52, 0x45, 0x0A]  // \x89 O S T O R E \n
    static let headerSize = 64

    enum RecordTag: UInt8 {
        case metadata = 1, put = 2, delete = 3, nextKey = 4
    }

    /// The store file.
    public let url: URL
    /// The model the store was opened with.
    public let model: ManagedObjectModel
    /// Whether saves are refused.
    public let isReadOnly: Bool
    private var path: String { url.path }
    private let lock = NSLock()
    private let fileLock: FileLock

    private struct Entry {
        var version: Int64
        /// Where the encoded slots start: chunk and offset.
        var chunk: Int
        var offset: Int
        var size: Int
    }

    private var state = State()
    /// The file the state was read from, kept open: while it is, its inode cannot be reused,
    /// so "the path names the same file" reliably means "no compaction or migration replaced
    /// it" (a closed file's inode number can come back for its replacement).
    private var held: (fd: Int32, identity: FileIdentity)?
    /// Why the last automatic compaction failed, if it did. The save that ran it had
    /// committed; compaction is housekeeping, so its failure does not fail the save.
    public var housekeepingWarning: String? { lock.withLock { lastHousekeepingWarning } }
    private var lastHousekeepingWarning: String?

    private struct State {
        var metadata: StoreMetadata?
        var codec: RowCodec?
        var entries: [ObjectID: Entry] = [:]
        var keysByEntity: [String: Set<Int64>] = [:]
        var chunks: [[UInt8]] = []
        var committedLength = 0
        var commitCount: UInt64 = 0
        var liveBytes = 0
        var deadBytes = 0
    }

    /// Dead bytes above which a save compacts the file (when they also outweigh live bytes).
    public var compactionThreshold: Int {
        get { lock.withLock { threshold } }
        set { lock.withLock { threshold = newValue } }
    }
    private var threshold = 1 << 20

    /// Opens the store at `url`, creating it when absent (unless read-only).
    ///
    /// - Throws: ``StoreError`` for a foreign, corrupt or newer file, or one written with a
    ///   different model (naming the entities that differ). The file is never modified then.
    public convenience init(url: URL, model: ManagedObjectModel, readOnly: Bool = false) throws {
        try self.init(url: url, model: model, readOnly: readOnly, identifier: nil)
    }

    /// Opens or creates a store; a new store takes `identifier` as its UUID when given (a
    /// migration keeps the store's identity).
    init(url: URL, model: ManagedObjectModel, readOnly: Bool, identifier: String?) throws {
        self.url = url
        self.model = model
        self.isReadOnly = readOnly
        self.fileLock = FileLock(storePath: url.path)
        try fileLock.createIfMissing(readOnly: readOnly) { create(identifier: identifier ?? UUID().uuidString) }
        try fileLock.withLock(exclusive: false) { fd, _ in try lock.withLock { try reload(fd) } }
        try state.metadata?.requireCompatible(with: model, path: url.path)
    }

    deinit {
        if let held { close(held.fd) }
    }

    /// Reads a store file's metadata without opening it for a model (to pick a migration).
    public static func metadata(at url: URL) throws -> StoreMetadata {
        try FileLock(storePath: url.path).withLock(exclusive: false) { fd, _ in try metadata(fd, path: url.path) }
    }

    private static func metadata(_ fd: Int32, path: String) throws -> StoreMetadata {
        var info = stat()
        let size = fstat(fd, &info) == 0 ? Int(info.st_size) : 0
        // Only the header and the first commit, which holds the metadata record.
        let header = try FileIO.read(fd, count: headerSize + 8, at: 0, path: path)
        let (committed, _) = try parseHeader(Array(header.prefix(headerSize)), path: path, fileSize: size)
        guard header.count == headerSize + 8, committed > headerSize else { throw StoreError.corrupt(path: path, reason: "no metadata record") }
        var reader = ByteReader(header, from: headerSize)
        let length = Int((try? reader.u32()) ?? 0)
        let first = try FileIO.read(fd, count: min(8 + length, committed - headerSize), at: headerSize, path: path)
        var state = State()
        var bytes = [UInt8](repeating: 0, count: headerSize)
        bytes.append(contentsOf: first)
        try parse(bytes, path: path, into: &state, chunk: 0, from: headerSize, upTo: bytes.count)
        guard let metadata = state.metadata else { throw StoreError.corrupt(path: path, reason: "no metadata record") }
        return metadata
    }

    public var identifier: String { lock.withLock { state.metadata?.storeIdentifier ?? "" } }

    /// The store's metadata as of the last read.
    public var metadata: StoreMetadata? { lock.withLock { state.metadata } }

    /// Bytes in the file (committed), and how many of them hold superseded rows.
    public var sizes: (total: Int, dead: Int) { lock.withLock { (state.committedLength, state.deadBytes) } }

    // MARK: Creating and reading

    private func create(identifier: String) -> [UInt8] {
        let metadata = StoreMetadata(storeIdentifier: identifier, model: model)
        var payload = ByteWriter()
        Self.writeMetadata(metadata, entityNames: model.entities.map(\.name), into: &payload)
        let frame = Self.frame(payload.bytes)
        let header = Self.header(committedLength: Self.headerSize + frame.count, commitCount: 1)
        return header + frame
    }

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

    static func header(committedLength: Int, commitCount: UInt64) -> [UInt8] {
        var tail = ByteWriter()
        tail.u64(UInt64(committedLength))
        tail.u64(commitCount)
        tail.bytes.append(contentsOf: [UInt8](repeating: 0, count: headerSize - 16 - 16))
        var header = ByteWriter()
        header.bytes = magic
        header.u32(UInt32(formatVersion))
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

    /// Reads the whole file again, from a descriptor of the locked file.
    private func reload(_ fd: Int32) throws {
        var fresh = State()
        try Self.parse(try FileIO.readAll(fd, path: path, from: 0), path: path, into: &fresh, chunk: 0, from: nil)
        state = fresh
        try hold(fd)
    }

    /// Keeps a descriptor of the file the state came from.
    private func hold(_ fd: Int32) throws {
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
    private func refresh(_ fd: Int32) throws {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw StoreError.io(path: path, reason: "cannot read: \(FileIO.errorText())") }
        guard let held, held.identity == FileIdentity(info) else { return try reload(fd) }
        let head = try FileIO.read(fd, count: Self.headerSize, at: 0, path: path)
        guard fstat(fd, &info) == 0 else { throw StoreError.io(path: path, reason: "cannot read: \(FileIO.errorText())") }
        let (committed, count) = try Self.parseHeader(head, path: path, fileSize: Int(info.st_size))
        if committed == state.committedLength && count == state.commitCount { return }
        guard committed > state.committedLength, count > state.commitCount else { return try reload(fd) }
        let tail = try FileIO.read(fd, count: committed - state.committedLength, at: state.committedLength, path: path)
        try Self.parse(tail, path: path, into: &state, chunk: state.chunks.count, from: 0, upTo: tail.count, base: state.committedLength)
        state.commitCount = count
    }

    private static func parseHeader(_ bytes: [UInt8], path: String, fileSize: Int) throws -> (committedLength: Int, commitCount: UInt64) {
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
            guard committed >= UInt64(headerSize), committed <= UInt64(fileSize) else {
                throw StoreError.corrupt(path: path, reason: "the file is truncated: \(committed) bytes committed, \(fileSize) present")
            }
            return (Int(committed), count)
        } catch is ByteReader.Truncated {
            throw StoreError.corrupt(path: path, reason: "the header is truncated")
        }
    }

    /// Parses commits from `start` (the header when `nil`) up to the committed length.
    /// `base` is the file offset of `bytes[0]`, for messages and the committed length.
    private static func parse(_ bytes: [UInt8], path: String, into state: inout State, chunk: Int, from start: Int?, upTo limit: Int? = nil, base: Int = 0) throws {
        var position: Int
        var end: Int
        if let start {
            position = start
            end = limit ?? bytes.count
            guard end <= bytes.count else { throw StoreError.corrupt(path: path, reason: "the file is truncated") }
        } else {
            let header = try parseHeader(bytes, path: path, fileSize: bytes.count)
            position = headerSize
            end = header.committedLength
            state.commitCount = header.commitCount
        }
        state.chunks.append(bytes)
        var commit = 0
        while position < end {
            commit += 1
            var reader = ByteReader(bytes, from: position, to: end)
            let length: Int, crc: UInt32
            do {
                length = Int(try reader.u32())
                crc = try reader.u32()
            } catch {
                throw StoreError.corrupt(path: path, reason: "commit at byte \(base + position) is truncated")
            }
            let payloadStart = position + 8
            guard length <= end - payloadStart else {
                throw StoreError.corrupt(path: path, reason: "commit at byte \(base + position) claims \(length) bytes past the committed end")
            }
            guard CRC32.checksum(bytes[payloadStart..<payloadStart + length]) == crc else {
                throw StoreError.corrupt(path: path, reason: "checksum mismatch in the commit at byte \(base + position)")
            }
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
        state.committedLength = base + end
    }

    private static func parseRecords(_ bytes: [UInt8], from start: Int, to end: Int, chunk: Int, state: inout State, path: String) throws {
        var reader = ByteReader(bytes, from: start, to: end)
        while !reader.isAtEnd {
            let recordStart = reader.position
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
                state.codec = RowCodec(entityNames: names, storeIdentifier: identifier)
            case .put:
                guard let codec = state.codec else { throw ByteReader.Truncated() }
                let id = try codec.reference(from: &reader)
                let version = try reader.signed()
                // Keys and versions past the limit would overflow the next save's counting.
                guard let key = id.primaryKey, (1...StoreMetadata.maxKey).contains(key), (1...StoreMetadata.maxKey).contains(version) else { throw ByteReader.Truncated() }
                // The slots are skipped by their length and decoded when first read; the
                // commit's checksum already vouches for their bytes.
                let length = try reader.count()
                let slotsStart = reader.position
                guard length <= reader.end - reader.position else { throw ByteReader.Truncated() }
                reader.position += length
                let size = reader.position - recordStart
                if let old = state.entries[id] {
                    state.deadBytes += old.size
                    state.liveBytes -= old.size
                }
                state.entries[id] = Entry(version: version, chunk: chunk, offset: slotsStart, size: size)
                state.liveBytes += size
                if let key = id.primaryKey { state.keysByEntity[id.entityName, default: []].insert(key) }
            case .delete:
                guard let codec = state.codec else { throw ByteReader.Truncated() }
                let id = try codec.reference(from: &reader)
                if let old = state.entries.removeValue(forKey: id) {
                    state.deadBytes += old.size
                    state.liveBytes -= old.size
                }
                state.deadBytes += reader.position - recordStart
                if let key = id.primaryKey { state.keysByEntity[id.entityName]?.remove(key) }
            case .nextKey:
                guard let codec = state.codec else { throw ByteReader.Truncated() }
                let index = try reader.count()
                guard index < codec.entityNames.count else { throw ByteReader.Truncated() }
                let name = codec.entityNames[index]
                let next = try reader.signed()
                guard (1...StoreMetadata.maxKey + 1).contains(next) else { throw ByteReader.Truncated() }
                let current = state.metadata?.nextKey(for: name) ?? 1
                state.metadata?.nextKeys[name] = max(current, next)
                state.deadBytes += reader.position - recordStart
            }
        }
    }

    // MARK: PersistentStore

    public func row(for id: ObjectID) throws -> StoredRow? {
        try lock.withLock {
            guard let entry = state.entries[id] else { return nil }
            guard let codec = state.codec, entry.chunk < state.chunks.count else { return nil }
            var reader = ByteReader(state.chunks[entry.chunk], from: entry.offset)
            let slots: [SlotValue]
            do {
                slots = try codec.decode(from: &reader)
            } catch {
                throw StoreError.corrupt(path: path, reason: "unreadable row \(id)")
            }
            // Rows are not kept decoded: the objects made from them hold the values, and the
            // encoded bytes stay for the next read (memory follows the file, not twice it).
            return StoredRow(objectID: id, version: entry.version, slots: slots)
        }
    }

    public func slotValues(ofEntity entityName: String, slots: [Int]) throws -> [(ObjectID, [SlotValue])] {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try lock.withLock {
                try refresh(fd)
                return try slotValuesLocked(ofEntity: entityName, slots: slots)
            }
        }
    }

    private func slotValuesLocked(ofEntity entityName: String, slots: [Int]) throws -> [(ObjectID, [SlotValue])] {
        do {
            guard let codec = state.codec else { return [] }
            let identifier = state.metadata?.storeIdentifier ?? ""
            var result: [(ObjectID, [SlotValue])] = []
            for key in state.keysByEntity[entityName] ?? [] {
                let id = ObjectID(entityName: entityName, storeIdentifier: identifier, key: .permanent(key))
                guard let entry = state.entries[id] else { continue }
                guard entry.chunk >= 0, entry.chunk < state.chunks.count else { continue }
                var reader = ByteReader(state.chunks[entry.chunk], from: entry.offset)
                do {
                    result.append((id, try codec.decode(slots: slots, from: &reader)))
                } catch {
                    throw StoreError.corrupt(path: path, reason: "unreadable row \(id)")
                }
            }
            return result
        }
    }

    public func objectIDs(ofEntity entityName: String) throws -> [ObjectID] {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try lock.withLock {
                try refresh(fd)
                let identifier = state.metadata?.storeIdentifier ?? ""
                return (state.keysByEntity[entityName] ?? []).sorted().map {
                    ObjectID(entityName: entityName, storeIdentifier: identifier, key: .permanent($0))
                }
            }
        }
    }

    public func allocateKeys(count: Int, entityName: String) throws -> [Int64] {
        guard count > 0 else { return [] }
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        return try fileLock.withLock { fd, _ in
            try lock.withLock {
                try refresh(fd)
                guard let index = state.codec?.entityIndex[entityName] else {
                    throw StoreError.io(path: path, reason: "entity \(entityName) is not in this store")
                }
                let first = state.metadata?.nextKey(for: entityName) ?? 1
                var payload = ByteWriter()
                payload.u8(RecordTag.nextKey.rawValue)
                payload.varint(UInt64(index))
                payload.signed(first + Int64(count))
                try append(payload.bytes, fd: fd)
                state.metadata?.nextKeys[entityName] = first + Int64(count)
                return (0..<Int64(count)).map { first + $0 }
            }
        }
    }

    public func save(_ changes: StoreChanges) throws -> [ObjectID: ObjectID] {
        guard !changes.isEmpty else { return [:] }
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        return try fileLock.withLock { fd, realPath in
            try lock.withLock {
                try refresh(fd)
                try checkVersions(changes, current: { state.entries[$0]?.version })
                let violations = try UniquenessCheck(model: model).failures(changes, existing: { try slotValuesLocked(ofEntity: $0, slots: $1) }) { id, slots in
                    guard let entry = state.entries[id] else { return nil }
                    guard let codec = state.codec, entry.chunk >= 0, entry.chunk < state.chunks.count else { return nil }
                    var reader = ByteReader(state.chunks[entry.chunk], from: entry.offset)
                    return try? codec.decode(slots: slots, from: &reader)
                }
                if !violations.isEmpty { throw ValidationError(failures: violations) }
                guard let codec = state.codec else { throw StoreError.corrupt(path: path, reason: "no metadata record") }
                let (keyed, mapping, nextKeys) = changes.assigningKeys(from: state.metadata?.nextKeys ?? [:])
                var payload = ByteWriter()
                var written: [(row: StoredRow, size: Int, slotsOffset: Int)] = []
                for row in keyed.inserted + keyed.updated.map(\.row) {
                    let start = payload.bytes.count
                    payload.u8(RecordTag.put.rawValue)
                    try writeReference(row.objectID, codec: codec, into: &payload)
                    payload.signed(row.version)
                    var encoded = ByteWriter()
                    do {
                        try codec.encode(row.slots, into: &encoded)
                    } catch {
                        throw StoreError.io(path: path, reason: "cannot write \(row.objectID): it refers to an object of an entity this store does not have")
                    }
                    payload.varint(UInt64(encoded.bytes.count))
                    let slotsOffset = payload.bytes.count
                    payload.bytes.append(contentsOf: encoded.bytes)
                    written.append((row, payload.bytes.count - start, slotsOffset))
                }
                for (id, _) in keyed.deleted {
                    payload.u8(RecordTag.delete.rawValue)
                    try writeReference(id, codec: codec, into: &payload)
                }
                for (name, key) in nextKeys.sorted(by: { $0.key < $1.key }) where key != state.metadata?.nextKeys[name] {
                    guard let index = codec.entityIndex[name] else { continue }
                    payload.u8(RecordTag.nextKey.rawValue)
                    payload.varint(UInt64(index))
                    payload.signed(key)
                }
                try append(payload.bytes, fd: fd)
                state.metadata?.nextKeys = nextKeys
                // The commit's bytes are where its rows are read from from now on.
                let chunk = state.chunks.count
                state.chunks.append(payload.bytes)
                for (row, size, slotsOffset) in written {
                    if let old = state.entries[row.objectID] {
                        state.deadBytes += old.size
                        state.liveBytes -= old.size
                    }
                    state.entries[row.objectID] = Entry(version: row.version, chunk: chunk, offset: slotsOffset, size: size)
                    state.liveBytes += size
                    if let key = row.objectID.primaryKey { state.keysByEntity[row.objectID.entityName, default: []].insert(key) }
                }
                for (id, _) in keyed.deleted {
                    if let old = state.entries.removeValue(forKey: id) {
                        state.deadBytes += old.size
                        state.liveBytes -= old.size
                    }
                    if let key = id.primaryKey { state.keysByEntity[id.entityName]?.remove(key) }
                }
                if state.deadBytes > threshold && state.deadBytes > state.liveBytes {
                    // The save is durable already: a compaction that fails leaves a warning.
                    do {
                        try compactLocked(path: realPath)
                        lastHousekeepingWarning = nil
                    } catch {
                        lastHousekeepingWarning = "the store was saved, but compacting it failed: \(error)"
                    }
                }
                return mapping
            }
        }
    }

    /// Slots with their byte length first, so opening can skip them.
    private static func writeSlots(_ slots: [SlotValue], codec: RowCodec, into payload: inout ByteWriter) throws {
        var encoded = ByteWriter()
        try codec.encode(slots, into: &encoded)
        payload.blob(encoded.bytes)
    }

    private func writeReference(_ id: ObjectID, codec: RowCodec, into writer: inout ByteWriter) throws {
        guard let index = codec.entityIndex[id.entityName], let key = id.primaryKey else {
            throw StoreError.io(path: path, reason: "cannot write \(id): unknown entity or temporary ID")
        }
        writer.varint(UInt64(index))
        writer.signed(key)
    }

    /// Appends one commit and moves the committed length past it. Caller holds both locks.
    private func append(_ payload: [UInt8], fd: Int32) throws {
        let frame = Self.frame(payload)
        let end = state.committedLength + frame.count
        // The commit goes where the last one ended; a torn tail from a crash is overwritten.
        try FileIO.write(fd, frame, at: state.committedLength, path: path)
        guard ftruncate(fd, off_t(end)) == 0 else { throw StoreError.io(path: path, reason: "cannot set the file size: \(FileIO.errorText())") }
        try FileIO.sync(fd, path: path)
        let header = Self.header(committedLength: end, commitCount: state.commitCount + 1)
        try FileIO.write(fd, Array(header[12...]), at: 12, path: path)
        try FileIO.sync(fd, path: path)
        state.committedLength = end
        state.commitCount += 1
    }

    public func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        return try fileLock.withLock { fd, _ in
            try lock.withLock { try refresh(fd) }
            return try body()
        }
    }

    // MARK: Compaction

    /// Rewrites the file with only the live rows, reclaiming the space of superseded and
    /// deleted ones. Atomic: a crash leaves the old file or the new one.
    public func compact() throws {
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        try fileLock.withLock { fd, realPath in
            try lock.withLock {
                try refresh(fd)
                try compactLocked(path: realPath)
            }
        }
    }

    private func compactLocked(path realPath: String) throws {
        guard let metadata = state.metadata, let codec = state.codec else { return }
        // The metadata in a commit of its own, so reading it never reads the rows.
        var metadataPayload = ByteWriter()
        Self.writeMetadata(metadata, entityNames: codec.entityNames, into: &metadataPayload)
        var payload = ByteWriter()
        for id in state.entries.keys.sorted(by: ObjectID.tieBreak) {
            guard let entry = state.entries[id] else { continue }
            var reader = ByteReader(state.chunks[entry.chunk], from: entry.offset)
            let row = StoredRow(objectID: id, version: entry.version, slots: try codec.decode(from: &reader))
            payload.u8(RecordTag.put.rawValue)
            try writeReference(id, codec: codec, into: &payload)
            payload.signed(row.version)
            try Self.writeSlots(row.slots, codec: codec, into: &payload)
        }
        let frames = Self.frame(metadataPayload.bytes) + (payload.bytes.isEmpty ? [] : Self.frame(payload.bytes))
        let header = Self.header(committedLength: Self.headerSize + frames.count, commitCount: state.commitCount + 1)
        // Beside the real file, so a symbolic link to the store stays one.
        let fd = try FileIO.replace(realPath, with: header + frames)
        defer { close(fd) }
        try reload(fd)
    }
}

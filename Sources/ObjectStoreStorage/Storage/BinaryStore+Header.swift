import Foundation
import ObjectStoreModel

// The binary store's header and its first commit: creating a file, and reading the 128
// bytes (64 in a pre-release file) that say where everything is and which features the
// file uses (docs/store-format.md, "Header").
extension BinaryStore {
    func create(identifier: String) -> [UInt8] {
        let metadata = StoreMetadata(storeIdentifier: identifier, model: model)
        var payload = ByteWriter()
        Self.writeMetadata(metadata, entityNames: model.entities.map(\.name), into: &payload)
        let frame = Self.frame(payload.bytes)
        let header = Self.header(Header(version: Self.formatVersion, committedLength: Self.headerSize + frame.count, commitCount: 1))
        return header + frame
    }

    /// A dictionary record: the strings typed rows write as their numbers, and
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

    /// What the header says.
    struct Header {
        /// The header's format version: 8 for store format 1.0, 1 to 7 for the pre-release
        /// formats (``BinaryStore/legacyVersions``).
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

        /// Features a reader must know to read the file (none in 1.0).
        var readFeatures: UInt64 = 0
        /// Features a program must know to change the file (none in 1.0; ``Feature``).
        var writeFeatures: UInt64 = 0
        /// The history region (with the history feature): where the transactions kept by
        /// the last compaction or log cut are, read only when history is asked for; zeros
        /// for none.
        var historyOffset = 0
        var historyLength = 0
        /// The number of the first transaction kept, and of the last one in the region.
        var historyStart: Int64 = 0
        var historyLast: Int64 = 0

        /// Where the log starts in a file with a snapshot.
        var logStart: Int { logOffset != 0 ? logOffset : snapshotOffset + snapshotLength }
        /// The header's size in the file.
        var size: Int { BinaryStore.headerSize(ofVersion: version) }
    }

    /// The header's size in a file of format `version`: 128 bytes in store format 1.0, 64 in
    /// the pre-release formats.
    static func headerSize(ofVersion version: Int) -> Int { version >= 8 ? headerSize : legacyHeaderSize }

    /// The feature bits of the header: what a file uses beyond store format 1.0. A reader
    /// refuses a file with a read feature it does not know; a program that does not know a
    /// write feature reads the file but refuses to change it. A file is stamped only with
    /// the features it uses, so an older 1.x program keeps reading (and, without write
    /// features, writing) what a newer one wrote.
    enum Feature {
        /// Write feature bit 0: the store keeps history, a transaction record in every commit
        /// (docs/store-format.md, "History"). A program that would save without recording
        /// the transaction must not write to such a file.
        static let history: UInt64 = 1 << 0
        /// The read features this code reads.
        static let readable: UInt64 = 0
        /// The write features this code keeps when it writes.
        static let writable: UInt64 = history
    }

    /// The header's bytes, in store format 1.0 (the only one this code writes).
    static func header(_ fields: Header) -> [UInt8] {
        var tail = ByteWriter()
        tail.u64(UInt64(fields.committedLength))
        tail.u64(fields.commitCount)
        tail.u64(UInt64(fields.snapshotOffset))
        tail.u64(UInt64(fields.snapshotLength))
        tail.u64(UInt64(fields.logOffset))
        tail.u64(fields.logGeneration)
        tail.u64(fields.readFeatures)
        tail.u64(fields.writeFeatures)
        // The history region's fields (zeros without the history feature).
        tail.u64(UInt64(fields.historyOffset))
        tail.u64(UInt64(fields.historyLength))
        tail.signed64(fields.historyStart)
        tail.signed64(fields.historyLast)
        // Reserved for fields later features add (each with its feature bit).
        tail.bytes.append(contentsOf: [UInt8](repeating: 0, count: headerSize - 16 - tail.bytes.count))
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
    /// What an opening accepts of a counter (the commit count, the log generation, the
    /// history's transaction numbers): 2^32 below ``maxCounter``, so the saves of an opening
    /// cannot push one past what a reader accepts (a forged count of 2^62 - 1 opened, and the
    /// next `add` wrote a file no command then read).
    static let openCounterLimit: UInt64 = maxCounter - (1 << 32)

    /// The header at the start of `bytes` (the file's first ``headerSize`` bytes, or all of
    /// a shorter file). A pre-release header (format 1 to 7) is parsed too: the legacy
    /// reader reads such a file to upgrade it.
    static func parseHeader(_ bytes: [UInt8], path: String, fileSize: Int) throws -> Header {
        if bytes.isEmpty { throw StoreError.foreignFile(path: path, reason: "the file is empty") }
        guard bytes.count >= legacyHeaderSize, Array(bytes[0..<8]) == magic else {
            if bytes.first == UInt8(ascii: "{") { throw StoreError.foreignFile(path: path, reason: "it looks like JSON; name JSON stores *.json") }
            throw StoreError.foreignFile(path: path, reason: "the file does not start with the ObjectStore signature")
        }
        var reader = ByteReader(bytes, from: 8, to: bytes.count)
        do {
            let version = Int(try reader.u32())
            guard version <= formatVersion else { throw StoreError.newerFormat(path: path, version: version, supported: formatVersion) }
            guard version >= 1 else { throw StoreError.corrupt(path: path, reason: "format version \(version) is not valid") }
            let size = headerSize(ofVersion: version)
            guard bytes.count >= size else { throw ByteReader.Truncated() }
            let crc = try reader.u32()
            guard CRC32.checksum(bytes[16..<size]) == crc else { throw StoreError.corrupt(path: path, reason: "the header checksum does not match") }
            let committed = try reader.u64()
            let count = try reader.u64()
            let snapshotOffset = try reader.u64()
            let snapshotLength = try reader.u64()
            // Format 7 may place the log elsewhere than the snapshot's end (older formats
            // wrote zeros there).
            let logOffset = version >= 7 ? try reader.u64() : 0
            let logGeneration = version >= 7 ? try reader.u64() : 0
            let readFeatures = version >= 8 ? try reader.u64() : 0
            let writeFeatures = version >= 8 ? try reader.u64() : 0
            guard readFeatures & ~Feature.readable == 0 else {
                throw StoreError.newerFeatures(path: path, features: readFeatures & ~Feature.readable, writing: false)
            }
            // Counters a save adds to: a forged or damaged value near 2^64 would trap the
            // next save's addition, so anything past what a store could count to (2^62,
            // a million saves a second for 146,000 years, less room for the saves of this
            // opening) is refused.
            guard count < openCounterLimit, logGeneration < openCounterLimit else {
                throw StoreError.corrupt(path: path, reason: "the header's commit count \(count) or log generation \(logGeneration) is out of range")
            }
            guard committed >= UInt64(size), committed <= UInt64(fileSize) else {
                throw StoreError.corrupt(path: path, reason: "the file is truncated: \(committed) bytes committed, \(fileSize) present")
            }
            // Format 1 has no snapshot; format 2 has one after the metadata commit, inside
            // the committed bytes; formats 3 and 4 have one or none (zeros).
            let none = snapshotOffset == 0 && snapshotLength == 0
            let snapshotFits = snapshotLength >= UInt64(Snapshot.prefixSize) && snapshotOffset > UInt64(size + 8)
                && snapshotOffset <= committed && snapshotLength <= committed - snapshotOffset
            guard version == 1 ? none : version == 2 ? snapshotFits : (none || snapshotFits) else {
                throw StoreError.corrupt(path: path, reason: "the header's snapshot place is not valid")
            }
            guard logOffset == 0 || (!none && logOffset >= snapshotOffset + snapshotLength && logOffset <= committed) else {
                throw StoreError.corrupt(path: path, reason: "the header's log place is not valid")
            }
            var header = Header(version: version, committedLength: Int(committed), commitCount: count, snapshotOffset: Int(snapshotOffset), snapshotLength: Int(snapshotLength),
                                logOffset: Int(logOffset), logGeneration: logGeneration, readFeatures: readFeatures, writeFeatures: writeFeatures)
            if version >= 8 && writeFeatures & Feature.history != 0 {
                let offset = try reader.u64(), length = try reader.u64()
                let first = Int64(bitPattern: try reader.u64()), last = Int64(bitPattern: try reader.u64())
                // The region lies between the snapshot and the log; the numbers are counters.
                guard offset == 0 ? length == 0 : (!none && offset >= snapshotOffset + snapshotLength && length >= 8 && length <= UInt64(header.logStart) && offset <= UInt64(header.logStart) - length),
                      first >= 0, last >= 0, first < Int64(openCounterLimit), last < Int64(openCounterLimit), first <= last + 1
                else { throw StoreError.corrupt(path: path, reason: "the header's history place is not valid") }
                header.historyOffset = Int(offset)
                header.historyLength = Int(length)
                header.historyStart = first
                header.historyLast = last
            }
            return header
        } catch is ByteReader.Truncated {
            throw StoreError.corrupt(path: path, reason: "the header is truncated")
        }
    }
}

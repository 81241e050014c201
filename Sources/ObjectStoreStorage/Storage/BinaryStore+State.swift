import Foundation
import ObjectStoreModel

extension BinaryStore {
    /// What a binary store knows of its file, as last read or written: one owner for each
    /// part, so each part's fields change together.
    struct State {
        /// The model the store was opened with (its slots' blanks go to the codec).
        var model: ManagedObjectModel?
        var metadata: StoreMetadata?
        var codec: RowCodec?
        var header = HeaderState()
        var log = LogIndex()
        var cache = SnapshotCache()
        var history = HistoryIndex()
    }

    /// The header's fields as last read or written: where the parts of the file are.
    struct HeaderState {
        /// The committed length the header says, as last read or written.
        var claimedLength = 0
        var commitCount: UInt64 = 0
        /// Where the snapshot is (offset, length; 0 without one) and where the log starts.
        var snapshotPlace = (offset: 0, length: 0)
        var logStart = BinaryStore.headerSize
        /// The header's count of log cuts (format 7).
        var logGeneration: UInt64 = 0
        /// The file's format version (a pre-release one only while it is upgraded).
        var version = BinaryStore.formatVersion
        /// The header's feature bits (``BinaryStore/Feature``).
        var readFeatures: UInt64 = 0
        var writeFeatures: UInt64 = 0
    }

    /// The log's rows: every row written since the snapshot, by ID, over the log's bytes.
    /// A key is in at most one of `keysByEntity` (written) and `removed` (deleted) of its
    /// entity, and every entry points into `chunks`.
    struct LogIndex {
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

        /// A row written in the log: it supersedes the snapshot's, and its key is live again.
        @inline(__always)
        mutating func put(_ id: ObjectID, key: Int64, entry: Entry) {
            entries[id] = entry
            keysByEntity[id.entityName, default: []].insert(key)
            if !removed.isEmpty { removed[id.entityName]?.remove(key) }
        }

        /// A row deleted in the log (it may still be in the snapshot).
        @inline(__always)
        mutating func delete(_ id: ObjectID, key: Int64) {
            entries.removeValue(forKey: id)
            keysByEntity[id.entityName]?.remove(key)
            removed[id.entityName, default: []].insert(key)
        }

        /// A commit's bytes (written, or staged for a commit of several saves) become the
        /// next chunk, and the rows it wrote and deleted are read from the log from now on.
        mutating func append(_ payload: [UInt8], writing written: [WrittenRow], deleting deleted: [ObjectID], inserted: Int) {
            let chunk = chunks.count
            chunks.append(payload)
            entries.reserveCapacity(entries.count + inserted)
            for row in written {
                let entry = Entry(version: row.version, chunk: chunk, offset: row.slotsOffset, length: row.length)
                if let key = row.id.primaryKey { put(row.id, key: key, entry: entry) } else { entries[row.id] = entry }
            }
            for id in deleted {
                if let key = id.primaryKey { delete(id, key: key) } else { entries.removeValue(forKey: id) }
            }
        }
    }

    /// A row a save encoded: where its slots are in the commit's bytes.
    typealias WrittenRow = (id: ObjectID, version: Int64, slotsOffset: Int, length: Int)

    /// The snapshot (the rows as of the last compaction; nil in a format-1 file) and what has
    /// been read of it. The snapshot does not change while it is the file's, so nothing read
    /// of it goes stale; a new snapshot starts a new cache.
    struct SnapshotCache {
        var snapshot: Snapshot?
        /// Entities whose snapshot directory and rows were read whole, by entity index.
        var loaded: [Int: Snapshot.Loaded] = [:]
        /// Rows found one by one in the file (a binary search each), by entity index: past
        /// as many as a query would read singly, the entity is read whole instead.
        var singleReads: [Int: Int] = [:]
        /// Those rows, by entity index and key, until the entity is read whole: a row asked
        /// for again (an object a context holds, which every indexed query lists) is not
        /// searched for again.
        var rowsRead: [Int: [Int64: (version: Int64, bytes: [UInt8])]] = [:]
        /// Snapshot columns read, by entity index and slot.
        var columns: [Int: [Int: Column]] = [:]
    }

    /// The history: the transactions in the log, and the region of older ones the header
    /// points at. Numbers run from `start` to `last` without a gap.
    struct HistoryIndex {
        /// The transactions of the history in the log, oldest first.
        var transactions: [HistoryEntry] = []
        /// Their records' bytes (which compaction and log-cut thresholds leave out).
        var bytes = 0
        /// The number of the first transaction that may still be kept, and of the last one
        /// written (0: none).
        var start: Int64 = 1
        var last: Int64 = 0
        /// The history region the header points at (offset, length, the first and last
        /// numbers it holds; zeros: none), and its transactions once read.
        var region = (offset: 0, length: 0, start: Int64(0), last: Int64(0))
        var regionEntries: [HistoryEntry]?
        var regionBytes: [UInt8] = []
    }

    /// An opening's compaction and log-cut policy and state.
    struct Housekeeping {
        /// Log bytes past which a save considers compacting or cutting the log.
        var threshold = 256 << 10
        /// What the last failed compaction or cut said (the save itself had succeeded).
        var lastWarning: String?
        /// While above 0, saves leave compaction and log cuts to ``Core/housekeepLocked(fd:path:)``
        /// called later (``BinaryStore/deferHousekeeping(_:)``).
        var deferred = 0
        /// The log length from which a save asks again whether the log mostly repeats rows
        /// (0 after every reading of the file: a new log).
        var nextCutCheck = 0
        /// The fewest rows of one table a compaction shares among the cores, and in how many
        /// parts (0: one per core, asked only then); below it, and on a machine with one
        /// core, it asks for no thread.
        var parallelRows = 8192
        var parallelParts = 0
        #if DEBUG
        /// See ``BinaryStore/cutStop``.
        var cutStop: BinaryStore.CutStop?
        #endif
    }
}

import Foundation
import ObjectStoreModel

/// The access methods of a store whose rows are encoded (the binary store), read under one
/// shared lock of its file (``PersistentStore/readRows(_:)``): what a planner above the store
/// asks before it chooses how to read an entity's rows (``ScanPlanner``), and the reads it
/// chooses. A reader is valid only inside the call that handed it over.
package protocol RowReader {
    /// The entity's rows in the snapshot: what its indexes and columns cover (0 without a
    /// snapshot, or when the entity has no rows there).
    func snapshotRowCount(ofEntity entityName: String) -> Int
    /// The snapshot rows a schema index finds for the predicate's ANDed comparisons of one
    /// indexed attribute (a range) or equalities of a hashed one (the index that finds
    /// fewest), as spans of its entries (read by ``indexedScan(_:alsoListing:leavingUnread:)``);
    /// nil when no index serves the predicate or the best finds more than `limit` rows.
    func indexCandidates(ofEntity entityName: String, predicate: SlotPredicate, limit: Int) throws -> IndexCandidates?
    /// The rows of an index's candidates, the log's rows and the rows of `alsoListing` (keys
    /// of objects the caller holds and tests as they are), in key order; the candidates
    /// decided (verdict 1) when their range is the whole predicate. `leavingUnread`: those
    /// come without their bytes (a count), and when `alsoListing` is empty they are counted
    /// (``RowScan/counted``), not listed: with nothing in the log for the entity, from the
    /// spans' sizes alone, no entry read. Nil when the candidates no longer apply.
    func indexedScan(_ candidates: IndexCandidates, alsoListing: Set<Int64>, leavingUnread: Bool) throws -> RowScan?
    /// What the snapshot's columns decide of each of its rows (1 match, 2 no match, 0 test
    /// it); nil when they decide nothing (no columns for its comparisons, no snapshot).
    func columnDecisions(ofEntity entityName: String, predicate: SlotPredicate) throws -> [UInt8]?
    /// Every row of the entity (the snapshot's merged with the log's, in key order), with
    /// `decisions` as verdicts (rows they reject left out). `counting`: the rows they accept
    /// are counted (``RowScan/counted``), not listed.
    func scan(ofEntity entityName: String, decisions: [UInt8]?, counting: Bool) throws -> RowScan
    /// The rows of an entity whose snapshot rows ``columnDecisions(ofEntity:predicate:)``
    /// rejected, every one: the log's rows and those of `alsoListing` (keys of objects the
    /// caller holds and tests as they are), in key order, to be tested; the snapshot's part
    /// is not read.
    func rejectedScan(ofEntity entityName: String, alsoListing: Set<Int64>) throws -> RowScan
    /// The value of an entity's attribute that `rank` rows precede in the order of a schema
    /// index on it (from the greatest when `descending`): rows with no value are not in
    /// that order. Nil when no index serves the attribute or it holds no more than `rank`
    /// rows. Rows saved since the index was written are not counted: the value is only a
    /// place to cut the order at, not an answer. With it, how many rows the index holds.
    func orderCutoff(ofEntity entityName: String, attribute: String, descending: Bool, rank: Int) throws -> (value: Value, indexed: Int)?
}

/// The snapshot rows a schema index found for a predicate (``RowReader/indexCandidates(ofEntity:predicate:limit:)``).
package struct IndexCandidates {
    let entityName: String
    /// The entity's place in the store's entity table.
    let table: Int
    /// The index whose entries found them.
    let part: Snapshot.IndexPart
    /// The spans of its entries found (one range, or one per hash).
    let spans: [Range<Int>]
    /// How many entries the spans hold.
    let count: Int
    /// Whether every row found matches the whole predicate (a range that is all of it).
    let wholePredicate: Bool
}

/// The encoded rows of one entity, in key order.
package struct RowScan {
    package let codec: RowCodec
    /// The layout of `entity`'s rows in this scan, from `layouts`.
    package func layout(of entity: EntityDescription, in layouts: RowLayouts) -> RowLayout {
        layouts.layout(entity, codec: codec)
    }
    package let path: String
    package let rows: [(key: Int64, version: Int64, bytes: [UInt8], start: Int)]
    /// Empty, or per row what the predicate given to the scan says of it: 1 match, 2 no
    /// match, 0 undecided (a row of the log, or no columns): test it.
    package var verdicts: [UInt8] = []
    /// Matches the store counted and did not list (a scan `leavingUnread` when the caller
    /// holds no object of the entity): rows the columns accept for the whole predicate.
    package var counted = 0
    /// The entity's row shape (the slot blanks sparse rows leave out, the kinds typed rows
    /// write).
    var shape = RowCodec.Shape()

    /// Every slot of a row.
    package func slots(at index: Int) throws -> [SlotValue] {
        let row = rows[index]
        var reader = ByteReader(row.bytes, from: row.start)
        do {
            return try codec.decode(from: &reader, shape: shape)
        } catch {
            throw StoreError.corrupt(path: path, reason: "unreadable row of key \(row.key)")
        }
    }

    /// Where a run of decodes over a scan's rows reads: rows that share their bytes (a
    /// snapshot part's) are read through one reader, so no row's bytes are retained and
    /// released per row, which cost a scan a tenth of its time and, with threads decoding
    /// parts of one scan side by side, had them contend for the one reference count.
    package struct Cursor {
        fileprivate var reader = ByteReader([], from: 0)
        fileprivate var base: UnsafePointer<UInt8>?
        package init() {}

        /// Puts the reader at the start of row `index` of `rows`. The row is looked at
        /// where it is (passed on as a value, its bytes would be retained and released per
        /// row again); the reader holds the bytes it reads, so the address cannot be
        /// another array's.
        fileprivate mutating func place(in rows: UnsafeBufferPointer<(key: Int64, version: Int64, bytes: [UInt8], start: Int)>, at index: Int) {
            let address = rows[index].bytes.withUnsafeBufferPointer { $0.baseAddress }
            if address != base || address == nil {
                reader = ByteReader(rows[index].bytes, from: 0)
                base = address
            }
            reader.position = rows[index].start
        }
    }

    /// The slots `wanted` marks of row `index`, decoded into `slots` through `cursor`;
    /// returns the row's number of slots.
    @discardableResult
    package func decode(_ index: Int, into slots: inout [SlotValue], wanted: [Bool], present: [Bool]? = nil, cursor: inout Cursor) throws -> Int {
        rows.withUnsafeBufferPointer { cursor.place(in: $0, at: index) }
        do {
            return try codec.decode(into: &slots, wanted: wanted, present: present, from: &cursor.reader, shape: shape)
        } catch {
            throw StoreError.corrupt(path: path, reason: "unreadable row of key \(rows[index].key)")
        }
    }

    /// For each row in `range` that `includes` accepts, in order: its `wanted` slots decoded
    /// into `slots` through one cursor, then `body` with the row's index and number of
    /// slots (nil when the row could not be decoded). The rows are read through their
    /// array's storage, whose reference count is then not touched per row either: threads
    /// running this over parts of one scan side by side share nothing they write.
    package func decodeEach(in range: Range<Int>, where includes: (Int) -> Bool, into slots: inout [SlotValue], wanted: [Bool],
                            _ body: (Int, Int?, inout [SlotValue]) -> Void) {
        rows.withUnsafeBufferPointer { rows in
            var cursor = Cursor()
            for index in range where includes(index) {
                cursor.place(in: rows, at: index)
                let count = try? codec.decode(into: &slots, wanted: wanted, from: &cursor.reader, shape: shape)
                body(index, count, &slots)
            }
        }
    }
}

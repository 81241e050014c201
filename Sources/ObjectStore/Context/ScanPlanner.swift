import ObjectStoreModel
import ObjectStoreStorage

/// How a fetch reads an entity's rows from a store with encoded rows: the choice between a
/// schema index and a scan of every row, made above the store from what its access methods
/// report (``RowReader``), under one read of the file.
enum ScanPlanner {
    /// The rows a fetch tests for `predicate` (the part of its predicate the store can
    /// decide, or nil).
    ///
    /// A schema index is used when it finds at most a quarter of the snapshot's rows and
    /// the caller holds at most a quarter of them too: the caller tests the objects it holds
    /// as they are, so their rows are listed whatever the index says, and past a quarter
    /// listing them costs more than the scan. Otherwise every row is listed, with the
    /// columns' verdicts; a count (`leavingUnread`) whose caller holds none of the entity's
    /// objects has the rows the columns accept counted, not listed. When the columns (or a
    /// `CONTAINS` whose needle the snapshot's rows do not hold) reject every row and the
    /// caller holds at most 64 of the entity's objects, only the log's rows and those
    /// objects' rows are listed.
    ///
    /// - Parameters:
    ///   - alsoListing: the keys of the objects the caller holds (asked for only when rows
    ///     are left out).
    ///   - holdsAtMost: whether the caller holds at most that many of the entity's objects,
    ///     without making the set.
    ///   - leavingUnread: the predicate is the caller's whole test and it reads no row the
    ///     store says matches.
    static func scan(_ reader: any RowReader, entity: String, predicate: SlotPredicate?, alsoListing: () -> Set<Int64>,
                     holdsAtMost: (Int) -> Bool, leavingUnread: Bool) throws -> RowScan {
        guard let predicate else { return try reader.scan(ofEntity: entity, decisions: nil, counting: false) }
        let quarter = reader.snapshotRowCount(ofEntity: entity) / 4
        if let candidates = try reader.indexCandidates(ofEntity: entity, predicate: predicate, limit: quarter), holdsAtMost(quarter),
           let scan = try reader.indexedScan(candidates, alsoListing: alsoListing(), leavingUnread: leavingUnread) {
            return scan
        }
        let decisions = try reader.columnDecisions(ofEntity: entity, predicate: predicate)
        // Every snapshot row rejected (a CONTAINS whose needle no row holds): the log's rows
        // and those of the few objects the caller holds, which it tests as they are.
        if let decisions, !decisions.contains(where: { $0 != 2 }), holdsAtMost(64) {
            return try reader.rejectedScan(ofEntity: entity, alsoListing: alsoListing())
        }
        return try reader.scan(ofEntity: entity, decisions: decisions, counting: leavingUnread && decisions != nil && alsoListing().isEmpty)
    }
}

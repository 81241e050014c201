import Dispatch
import Foundation
import ObjectStoreStorage

/// A large scan's slot-predicate tests, shared among the cores: the rows are cut into
/// parts in key order, each part's rows are decoded (as far as the predicate reads them)
/// and tested on a thread of its own into one verdict per row, and the fetch then goes
/// through the rows in order on its own thread, taking each verdict instead of decoding
/// and testing the row itself. What is merged is the verdicts, not the matches, so the
/// matches come in the order and the number the serial scan gives them
/// (`aParallelScanFindsWhatTheSerialOneDoes`).
///
/// Only the slot predicate's tests move: they read nothing but the scan's encoded rows and
/// the predicate's constants, which no one changes while the fetch runs. Objects the
/// context holds, and predicates that need the context (key paths through relationships,
/// derived attributes, MATCHES with its clock), are tested on the fetch's thread as before.
/// Below ``ManagedObjectContext/parallelScanMinimumRows`` rows to test, or on a machine
/// with one core, nothing is shared and no thread is asked for.
enum ParallelScan {
    /// The verdict of a row the predicate matches.
    static let matched: UInt8 = 1
    /// The verdict of a row it does not match.
    static let rejected: UInt8 = 2
    /// The verdict of a row that could not be read or tested: the fetch's own test reads
    /// it again and throws what the serial scan throws.
    static let unreadable: UInt8 = 3

    /// The cores a scan is shared among (at most 8).
    static let cores = max(1, min(8, ProcessInfo.processInfo.activeProcessorCount))

    /// Per row of `scan`, the verdict of `predicate` on its `wanted` slots (the others
    /// holding `initial`), 0 where the store's verdict already decides the row; empty when
    /// fewer than `minimumRows` rows need testing or there is one core.
    static func verdicts(of scan: RowScan, predicate: SlotPredicate, initial: [SlotValue], wanted: [Bool], minimumRows: Int) -> [UInt8] {
        // The rows first: a small scan asks nothing of the system.
        guard scan.rows.count >= max(2, minimumRows) else { return [] }
        let decided = scan.verdicts
        let toTest = decided.isEmpty ? scan.rows.count : decided.reduce(0) { $0 + ($1 == 0 ? 1 : 0) }
        guard toTest >= max(2, minimumRows), cores > 1 else { return [] }
        var verdicts = [UInt8](repeating: 0, count: scan.rows.count)
        // More parts than cores, so a core that finishes early takes another part.
        let parts = min(cores * 4, toTest)
        let count = scan.rows.count
        let work = Work(scan: scan, predicate: predicate, initial: initial, wanted: wanted, decided: decided)
        verdicts.withUnsafeMutableBufferPointer { buffer in
            let out = Output(buffer: buffer)
            DispatchQueue.concurrentPerform(iterations: parts) { part in
                work.test(rows: count * part / parts ..< count * (part + 1) / parts, into: out)
            }
        }
        return verdicts
    }

    /// What every part reads: the rows, the predicate, the slots' initial values. Nothing
    /// in it is changed while the parts run.
    private struct Work: @unchecked Sendable {
        let scan: RowScan
        let predicate: SlotPredicate
        let initial: [SlotValue]
        let wanted: [Bool]
        let decided: [UInt8]

        func test(rows: Range<Int>, into out: Output) {
            var slots = initial
            scan.decodeEach(in: rows, where: { decided.isEmpty || decided[$0] == 0 }, into: &slots, wanted: wanted) { index, count, slots in
                guard let count else {
                    out.buffer[index] = ParallelScan.unreadable
                    slots = initial
                    return
                }
                // A row of another length reads as the initial values (as its saved state does).
                if count != initial.count { slots = initial }
                let matches = try? predicate.matches(slots)
                out.buffer[index] = matches.map { $0 ? ParallelScan.matched : ParallelScan.rejected } ?? ParallelScan.unreadable
            }
        }
    }

    /// The verdicts' storage; each part writes only its own rows' entries.
    private struct Output: @unchecked Sendable {
        let buffer: UnsafeMutableBufferPointer<UInt8>
    }
}

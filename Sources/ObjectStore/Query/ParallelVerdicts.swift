import Dispatch
import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// The verdicts of a slot predicate on a scan's rows, decoded and tested on several threads
/// at once: the rows are cut into one consecutive part per thread, each part decoded into
/// an array of its own and tested, and the verdicts written to the rows' places, so the
/// fetch that reads them after goes through the rows in their order as a serial scan does.
/// Only a slot predicate's test runs on the threads (values compared with constants, no
/// object, context or clock); what a match becomes stays on the caller's thread.
enum ParallelVerdicts {
    /// The threads a scan may use: the active processors, at most 8.
    static let threads = Swift.max(1, Swift.min(8, ProcessInfo.processInfo.activeProcessorCount))

    /// Per row of `scan`, 1 when `predicate` accepts it and 2 when it rejects it; a verdict
    /// the scan already holds (the columns') is kept. Nil when one thread is all there is.
    /// `wanted` marks the slots the predicate reads; `initial` is a row's slots before decoding.
    static func verdicts(_ scan: RowScan, _ predicate: SlotPredicate, wanted: [Bool], initial: [SlotValue]) throws -> [UInt8]? {
        let parts = threads
        guard parts > 1, !scan.rows.isEmpty else { return nil }
        let count = scan.rows.count
        let known = scan.verdicts
        let result = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: count)
        defer { result.deallocate() }
        result.initialize(repeating: 0)
        let failures = UnsafeMutableBufferPointer<Failure>.allocate(capacity: parts)
        defer { failures.deallocate() }
        failures.initialize(repeating: Failure())
        let box = Shared(scan: scan, predicate: predicate, wanted: wanted, initial: initial, known: known, result: result, failures: failures, parts: parts)
        DispatchQueue.concurrentPerform(iterations: parts) { part in box.run(part) }
        for part in 0..<parts { if let error = failures[part].error { throw error } }
        return Array(result)
    }

    /// An error a thread met (the first of its part).
    struct Failure {
        var error: (any Error)?
    }

    /// What the threads read, and the buffers each writes its own part of.
    private final class Shared: @unchecked Sendable {
        // Read by every thread, written by none; each thread writes only its own part of
        // `result` and its own element of `failures`.
        let scan: RowScan
        let predicate: SlotPredicate
        let wanted: [Bool]
        let initial: [SlotValue]
        let known: [UInt8]
        let result: UnsafeMutableBufferPointer<UInt8>
        let failures: UnsafeMutableBufferPointer<Failure>
        let parts: Int

        init(scan: RowScan, predicate: SlotPredicate, wanted: [Bool], initial: [SlotValue], known: [UInt8],
             result: UnsafeMutableBufferPointer<UInt8>, failures: UnsafeMutableBufferPointer<Failure>, parts: Int) {
            self.scan = scan
            self.predicate = predicate
            self.wanted = wanted
            self.initial = initial
            self.known = known
            self.result = result
            self.failures = failures
            self.parts = parts
        }

        func run(_ part: Int) {
            let count = scan.rows.count
            let start = count * part / parts, end = count * (part + 1) / parts
            var slots = initial
            do {
                for index in start..<end {
                    if index < known.count, known[index] != 0 {
                        result[index] = known[index]
                        continue
                    }
                    try scan.decode(index, into: &slots, wanted: wanted)
                    result[index] = try predicate.matches(slots) ? 1 : 2
                }
            } catch {
                failures[part] = Failure(error: error)
            }
        }
    }
}

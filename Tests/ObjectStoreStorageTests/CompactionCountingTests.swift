import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage

/// The counting a compaction does to choose its dictionary (format 6): the date origin is
/// the median of the rows' dates, the strings those used often enough. Both are found
/// without sorting every value or hashing every string twice; they must give what the
/// plain way gives.
@Suite struct CompactionCountingTests {
    /// The median found by selection is the middle of the sorted values (the upper middle
    /// for an even count), with repeats, runs already sorted or reversed, and extremes.
    @Test func theMedianIsTheMiddleOfTheSortedValues() {
        var random = SeededRandom(seed: 13)
        var cases: [[Int64]] = [[7], [2, 1], [Int64.min, Int64.max, 0], Array(0..<101), Array((0..<100).reversed()), [Int64](repeating: 5, count: 64)]
        for count in 1...60 {
            cases.append((0..<count).map { _ in Int64.random(in: -5...5, using: &random) })
            cases.append((0..<count).map { _ in Int64.random(in: .min ... .max, using: &random) })
        }
        cases.append((0..<20_000).map { _ in Int64.random(in: 0..<1_000, using: &random) })
        for values in cases {
            var scratch = values
            #expect(BinaryStore.median(&scratch) == values.sorted()[values.count / 2], "\(values.prefix(12))")
            #expect(scratch.sorted() == values.sorted(), "the values are only reordered")
        }
    }

    /// Counts by hash agree with a dictionary's, across the table's growth, for hashes that
    /// share their low bits or all the bits the table places by, and for hash 0.
    @Test func useCountsAgreeWithADictionary() {
        var random = SeededRandom(seed: 29)
        var counts = BinaryStore.UseCounts()
        var expected: [UInt64: Int] = [:]
        let pool: [UInt64] = (0..<3_000).map { _ in random.next() } + (0..<200).map { UInt64($0) << 40 } + (0..<200).map { UInt64($0) } + [0, 1]
        for _ in 0..<40_000 {
            let hash = pool[Int.random(in: 0..<pool.count, using: &random)]
            let by = Int.random(in: 1...3, using: &random)
            // Hash 0 is filed as 1 (a merged count changes a dictionary's choice, never a row).
            let key = hash == 0 ? 1 : hash
            expected[key, default: 0] += by
            #expect(counts.add(hash, by) == expected[key])
        }
        for hash in pool { #expect(counts.count(of: hash) == expected[hash == 0 ? 1 : hash]) }
        #expect(counts.count(of: 0xDEAD_BEEF_0000_0001) == 0)
    }
}

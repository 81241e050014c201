/// The tests' one random generator (SplitMix64): deterministic, so a failing case is
/// replayed from its seed (`OBJECTSTORE_FUZZ_SEED`, docs/reliability.md).
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// One of `items` (not empty).
    mutating func pick<T>(_ items: [T]) -> T { items[Int(next() % UInt64(items.count))] }

    /// `count` bytes.
    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }

    /// True `percent` times in a hundred.
    mutating func chance(_ percent: UInt64) -> Bool { next() % 100 < percent }
}

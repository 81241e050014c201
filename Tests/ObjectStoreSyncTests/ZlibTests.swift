import Foundation
import Testing
@testable import ObjectStoreSync

@Suite struct ZlibTests {
    /// Inputs that exercise literals, long and overlapping matches and the window's edge.
    static func samples() -> [[UInt8]] {
        var random = SeededRandom(seed: 3)
        let json = Array(#"{"uuid": {"description": "Buy milk", "status": "pending", "entry": "1795348800", "tag_shop": ""}}"#.utf8)
        var repeated: [UInt8] = []
        for i in 0..<2000 { repeated += Array("task \(i % 37) pending;".utf8) }
        return [[], [0], Array("a".utf8), [UInt8](repeating: 7, count: 1000), json, repeated,
                random.bytes(5000), random.bytes(70_000).map { $0 & 0x0F }, Array(repeating: json, count: 500).flatMap { $0 }]
    }

    @Test func ourStreamsReadBackAndCompress() throws {
        let samples = Self.samples()
        for sample in samples {
            #expect(try Zlib.decompress(Zlib.compress(sample)) == sample)
        }
        // Repeated text shrinks (fixed Huffman codes: random bytes do not).
        for sample in [samples[3], samples[5], samples[8]] {
            let stream = Zlib.compress(sample)
            #expect(stream.count < sample.count / 4, "\(sample.count) -> \(stream.count)")
        }
    }

    /// zlib's own streams (stored, fixed and dynamic blocks, levels 0 to 9) read back, and
    /// ours read in zlib.
    @Test(.enabled(if: PythonCheck.available, PythonCheck.skipReason))
    func streamsAgreeWithPythonsZlib() throws {
        let samples = Self.samples()
        let script = """
            import sys, zlib
            for line in sys.stdin.read().split("\\n"):
                data, ours = [bytes.fromhex(p) for p in line.split(" ")]
                assert zlib.decompress(ours) == data
                print(" ".join(zlib.compress(data, level).hex() for level in (0, 1, 6, 9)))
            """
        let input = samples.map { hexText($0) + " " + hexText(Zlib.compress($0)) }.joined(separator: "\n")
        let output = try PythonCheck.run(script, input: input).split(separator: "\n", omittingEmptySubsequences: false)
        for (sample, line) in zip(samples, output) {
            for stream in line.split(separator: " ") {
                #expect(try Zlib.decompress(hex(String(stream))) == sample)
            }
        }
    }

    /// A damaged or truncated stream is refused with a reason, never a trap; a bound stops
    /// a stream built to expand.
    @Test func damagedStreamsAreRefused() throws {
        let sample = Self.samples()[5]
        let stream = Zlib.compress(sample)
        var refused = 0
        for offset in stride(from: 0, to: stream.count, by: 7) {
            var damaged = stream
            damaged[offset] ^= 0x24
            do {
                if try Zlib.decompress(damaged) != sample { Issue.record("a flip at \(offset) read as other data") }
            } catch is Zlib.DataError {
                refused += 1
            }
        }
        #expect(refused > 0)
        for length in stride(from: 0, to: stream.count, by: 11) {
            #expect(throws: Zlib.DataError.self) { try Zlib.decompress(Array(stream.prefix(length))) }
        }
        #expect(throws: Zlib.DataError.self) { try Zlib.decompress(Zlib.compress([UInt8](repeating: 0, count: 100_000)), limit: 1000) }
        var random = SeededRandom(seed: 5)
        for _ in 0..<2000 {
            _ = try? Zlib.decompress([0x78, 0x9C] + random.bytes(Int(random.next() % 64)))
        }
    }
}

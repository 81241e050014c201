import Foundation
import Testing
@testable import ObjectStore
@testable import ObjectStoreStorage

@Suite struct CRC32Tests {
    /// The same checksums as the one-table version (and zlib): stores written before keep
    /// opening. Lengths around the 8-byte steps and continued checksums included.
    @Test func checksumsAreZlibsAtEveryLengthAndWhenContinued() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
        var generator = SeededRandom(seed: 32)
        for length in 0..<40 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var reference: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                reference ^= UInt32(byte)
                for _ in 0..<8 { reference = reference & 1 != 0 ? 0xEDB8_8320 ^ (reference >> 1) : reference >> 1 }
            }
            reference ^= 0xFFFF_FFFF
            #expect(CRC32.checksum(bytes) == reference, "length \(length)")
            #expect(CRC32.checksum(bytes.lazy.map { $0 }) == reference, "not contiguous, length \(length)")
            let cut = length / 3
            #expect(CRC32.checksum(bytes[cut...], continuing: CRC32.checksum(bytes[..<cut])) == reference, "continued, length \(length)")
        }
    }
}

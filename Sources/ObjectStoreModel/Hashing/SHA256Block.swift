/// SHA-256 (FIPS 180-4) by whole 64-byte blocks, for ``SHA256`` and for HMAC and PBKDF2 (a
/// key derivation of 600,000 iterations compresses 1.2 million blocks): the state lives in
/// a fixed tuple and nothing is allocated per block.
package struct SHA256Block: Sendable {
    /// The eight words of the hash state.
    package var h: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19)

    package init() {}

    static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    /// Compresses one block of 16 big-endian words.
    package mutating func compress(_ block: UnsafeBufferPointer<UInt32>) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            for i in 0..<16 { w[i] = block[i] }
            for i in 16..<64 {
                let s0 = w[i - 15].rotatedRight(7) ^ w[i - 15].rotatedRight(18) ^ (w[i - 15] >> 3)
                let s1 = w[i - 2].rotatedRight(17) ^ w[i - 2].rotatedRight(19) ^ (w[i - 2] >> 10)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, hh) = h
            Self.k.withUnsafeBufferPointer { k in
                for i in 0..<64 {
                    let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                    let choice = (e & f) ^ (~e & g)
                    let t1 = hh &+ s1 &+ choice &+ k[i] &+ w[i]
                    let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                    let majority = (a & b) ^ (a & c) ^ (b & c)
                    let t2 = s0 &+ majority
                    hh = g; g = f; f = e; e = d &+ t1
                    d = c; c = b; b = a; a = t1 &+ t2
                }
            }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e, h.5 &+ f, h.6 &+ g, h.7 &+ hh)
        }
    }

    /// Compresses one block of 64 bytes.
    package mutating func compress(bytes: UnsafeRawBufferPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 16) { words in
            for i in 0..<16 {
                words[i] = UInt32(bytes[i * 4]) << 24 | UInt32(bytes[i * 4 + 1]) << 16 | UInt32(bytes[i * 4 + 2]) << 8 | UInt32(bytes[i * 4 + 3])
            }
            compress(UnsafeBufferPointer(words))
        }
    }

    /// The state as 32 big-endian bytes.
    package var digest: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { bytes, count in
            for (index, word) in [h.0, h.1, h.2, h.3, h.4, h.5, h.6, h.7].enumerated() {
                bytes[index * 4] = UInt8(word >> 24)
                bytes[index * 4 + 1] = UInt8(word >> 16 & 0xFF)
                bytes[index * 4 + 2] = UInt8(word >> 8 & 0xFF)
                bytes[index * 4 + 3] = UInt8(word & 0xFF)
            }
            count = 32
        }
    }

    /// The digest of a whole message.
    package static func hash(_ message: [UInt8]) -> [UInt8] {
        var state = SHA256Block()
        state.absorb(message, totalLength: message.count)
        return state.digest
    }

    /// Absorbs the final part of a message (`totalLength` bytes in all, counting blocks
    /// already compressed) with its padding.
    package mutating func absorb(_ tail: [UInt8], totalLength: Int) {
        var bytes = tail
        bytes.append(0x80)
        while bytes.count % 64 != 56 { bytes.append(0) }
        let bits = UInt64(totalLength) &* 8
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(bits >> UInt64(shift) & 0xFF)) }
        bytes.withUnsafeBytes { raw in
            for offset in stride(from: 0, to: raw.count, by: 64) {
                compress(bytes: UnsafeRawBufferPointer(rebasing: raw[offset..<offset + 64]))
            }
        }
    }
}

extension UInt32 {
    @inline(__always) package func rotatedRight(_ n: UInt32) -> UInt32 { (self >> n) | (self << (32 - n)) }
    @inline(__always) package func rotatedLeft(_ n: UInt32) -> UInt32 { (self << n) | (self >> (32 - n)) }
}

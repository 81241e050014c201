import ObjectStoreModel

/// ChaCha20 and Poly1305 and their AEAD (RFC 8439), as TaskChampion seals its versions
/// and snapshots: a 32-byte key, a 12-byte nonce, additional data authenticated with the
/// ciphertext, a 16-byte tag.
package enum ChaCha20Poly1305 {
    /// A ciphertext whose tag does not match: tampered data, or another key.
    package struct AuthenticationFailure: Error, Sendable {}

    /// Encrypts `plaintext`, returning the ciphertext and its tag.
    package static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], authenticating aad: [UInt8]) -> (ciphertext: [UInt8], tag: [UInt8]) {
        precondition(key.count == 32 && nonce.count == 12, "ChaCha20-Poly1305 takes a 32-byte key and a 12-byte nonce")
        let ciphertext = ChaCha20.xor(plaintext, key: key, nonce: nonce, counter: 1)
        return (ciphertext, tag(aad: aad, ciphertext: ciphertext, key: key, nonce: nonce))
    }

    /// Decrypts `ciphertext` after checking its tag.
    ///
    /// - Throws: ``AuthenticationFailure`` when the tag does not match (nothing is decrypted).
    package static func open(_ ciphertext: [UInt8], tag: [UInt8], key: [UInt8], nonce: [UInt8], authenticating aad: [UInt8]) throws -> [UInt8] {
        guard key.count == 32, nonce.count == 12, tag.count == 16 else { throw AuthenticationFailure() }
        let expected = Self.tag(aad: aad, ciphertext: ciphertext, key: key, nonce: nonce)
        // Compared in constant time.
        guard zip(expected, tag).reduce(UInt8(0), { $0 | ($1.0 ^ $1.1) }) == 0 else { throw AuthenticationFailure() }
        return ChaCha20.xor(ciphertext, key: key, nonce: nonce, counter: 1)
    }

    static func tag(aad: [UInt8], ciphertext: [UInt8], key: [UInt8], nonce: [UInt8]) -> [UInt8] {
        let oneTimeKey = Array(ChaCha20.block(key: key, nonce: nonce, counter: 0).prefix(32))
        var data = aad
        data += [UInt8](repeating: 0, count: (16 - aad.count % 16) % 16)
        data += ciphertext
        data += [UInt8](repeating: 0, count: (16 - ciphertext.count % 16) % 16)
        for length in [UInt64(aad.count), UInt64(ciphertext.count)] {
            for shift in stride(from: 0, to: 64, by: 8) { data.append(UInt8(length >> UInt64(shift) & 0xFF)) }
        }
        return Poly1305.code(for: data, key: oneTimeKey)
    }
}

/// The ChaCha20 stream cipher (RFC 8439, section 2.4).
package enum ChaCha20 {
    /// One 64-byte block of key stream.
    package static func block(key: [UInt8], nonce: [UInt8], counter: UInt32) -> [UInt8] {
        func word(_ bytes: [UInt8], _ i: Int) -> UInt32 {
            UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
        }
        var initial: [UInt32] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]
        for i in 0..<8 { initial.append(word(key, i * 4)) }
        initial.append(counter)
        for i in 0..<3 { initial.append(word(nonce, i * 4)) }
        var x = initial
        func quarter(_ a: Int, _ b: Int, _ c: Int, _ d: Int) {
            x[a] = x[a] &+ x[b]; x[d] = (x[d] ^ x[a]).rotatedLeft(16)
            x[c] = x[c] &+ x[d]; x[b] = (x[b] ^ x[c]).rotatedLeft(12)
            x[a] = x[a] &+ x[b]; x[d] = (x[d] ^ x[a]).rotatedLeft(8)
            x[c] = x[c] &+ x[d]; x[b] = (x[b] ^ x[c]).rotatedLeft(7)
        }
        for _ in 0..<10 {
            quarter(0, 4, 8, 12); quarter(1, 5, 9, 13); quarter(2, 6, 10, 14); quarter(3, 7, 11, 15)
            quarter(0, 5, 10, 15); quarter(1, 6, 11, 12); quarter(2, 7, 8, 13); quarter(3, 4, 9, 14)
        }
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for i in 0..<16 {
            let v = x[i] &+ initial[i]
            out += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
        }
        return out
    }

    /// `data` XORed with the key stream from block `counter` on (encryption and decryption).
    package static func xor(_ data: [UInt8], key: [UInt8], nonce: [UInt8], counter: UInt32) -> [UInt8] {
        var out = data
        var blockCounter = counter
        var offset = 0
        while offset < out.count {
            let stream = block(key: key, nonce: nonce, counter: blockCounter)
            for i in 0..<min(64, out.count - offset) { out[offset + i] ^= stream[i] }
            offset += 64
            blockCounter &+= 1
        }
        return out
    }
}

/// The Poly1305 one-time authenticator (RFC 8439, section 2.5), in five 26-bit limbs.
package enum Poly1305 {
    /// The 16-byte tag of `message` under a 32-byte one-time key.
    package static func code(for message: [UInt8], key: [UInt8]) -> [UInt8] {
        func word(_ i: Int) -> UInt32 {
            UInt32(key[i]) | UInt32(key[i + 1]) << 8 | UInt32(key[i + 2]) << 16 | UInt32(key[i + 3]) << 24
        }
        // r, clamped, in 26-bit limbs.
        let r0 = UInt64(word(0) & 0x3ff_ffff)
        let r1 = UInt64((word(3) >> 2) & 0x3ff_ff03)
        let r2 = UInt64((word(6) >> 4) & 0x3ff_c0ff)
        let r3 = UInt64((word(9) >> 6) & 0x3f0_3fff)
        let r4 = UInt64((word(12) >> 8) & 0x00f_ffff)
        let s1 = r1 * 5, s2 = r2 * 5, s3 = r3 * 5, s4 = r4 * 5
        var h0: UInt64 = 0, h1: UInt64 = 0, h2: UInt64 = 0, h3: UInt64 = 0, h4: UInt64 = 0
        var offset = 0
        while offset < message.count {
            var block = [UInt8](repeating: 0, count: 17)
            let n = min(16, message.count - offset)
            for i in 0..<n { block[i] = message[offset + i] }
            block[n] = 1
            func le32(_ i: Int) -> UInt64 {
                UInt64(block[i]) | UInt64(block[i + 1]) << 8 | UInt64(block[i + 2]) << 16 | UInt64(block[i + 3]) << 24
            }
            h0 += le32(0) & 0x3ff_ffff
            h1 += (le32(3) >> 2) & 0x3ff_ffff
            h2 += (le32(6) >> 4) & 0x3ff_ffff
            h3 += (le32(9) >> 6) & 0x3ff_ffff
            h4 += (le32(12) >> 8) | UInt64(block[16]) << 24
            // h *= r (mod 2^130 - 5)
            let d0 = h0 * r0 + h1 * s4 + h2 * s3 + h3 * s2 + h4 * s1
            var d1 = h0 * r1 + h1 * r0 + h2 * s4 + h3 * s3 + h4 * s2
            var d2 = h0 * r2 + h1 * r1 + h2 * r0 + h3 * s4 + h4 * s3
            var d3 = h0 * r3 + h1 * r2 + h2 * r1 + h3 * r0 + h4 * s4
            var d4 = h0 * r4 + h1 * r3 + h2 * r2 + h3 * r1 + h4 * r0
            var c = d0 >> 26; h0 = d0 & 0x3ff_ffff
            d1 += c; c = d1 >> 26; h1 = d1 & 0x3ff_ffff
            d2 += c; c = d2 >> 26; h2 = d2 & 0x3ff_ffff
            d3 += c; c = d3 >> 26; h3 = d3 & 0x3ff_ffff
            d4 += c; c = d4 >> 26; h4 = d4 & 0x3ff_ffff
            h0 += c * 5; c = h0 >> 26; h0 &= 0x3ff_ffff
            h1 += c
            offset += 16
        }
        // Full carry, then h - p if h >= p.
        var c = h1 >> 26; h1 &= 0x3ff_ffff
        h2 += c; c = h2 >> 26; h2 &= 0x3ff_ffff
        h3 += c; c = h3 >> 26; h3 &= 0x3ff_ffff
        h4 += c; c = h4 >> 26; h4 &= 0x3ff_ffff
        h0 += c * 5; c = h0 >> 26; h0 &= 0x3ff_ffff
        h1 += c
        var g0 = h0 + 5; c = g0 >> 26; g0 &= 0x3ff_ffff
        var g1 = h1 + c; c = g1 >> 26; g1 &= 0x3ff_ffff
        var g2 = h2 + c; c = g2 >> 26; g2 &= 0x3ff_ffff
        var g3 = h3 + c; c = g3 >> 26; g3 &= 0x3ff_ffff
        let g4 = h4 &+ c &- (1 << 26)
        // g4's top bit set: h < p, keep h.
        let keepH = (g4 >> 63) == 1
        if !keepH { h0 = g0; h1 = g1; h2 = g2; h3 = g3; h4 = g4 & 0x3ff_ffff }
        // h as 128 bits, plus s.
        let hLow = h0 | h1 << 26 | h2 << 52
        let hHigh = (h2 >> 12) | h3 << 14 | h4 << 40
        func le64(_ i: Int) -> UInt64 {
            (0..<8).reduce(UInt64(0)) { $0 | UInt64(key[i + $1]) << UInt64($1 * 8) }
        }
        let (low, overflow) = hLow.addingReportingOverflow(le64(16))
        let high = hHigh &+ le64(24) &+ (overflow ? 1 : 0)
        var tag: [UInt8] = []
        for shift in stride(from: 0, to: 64, by: 8) { tag.append(UInt8(low >> UInt64(shift) & 0xFF)) }
        for shift in stride(from: 0, to: 64, by: 8) { tag.append(UInt8(high >> UInt64(shift) & 0xFF)) }
        return tag
    }
}

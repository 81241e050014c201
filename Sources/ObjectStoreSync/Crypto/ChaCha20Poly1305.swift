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

/// The ChaCha20 stream cipher (RFC 8439, section 2.4). The state lives in sixteen local
/// words and the key stream goes straight into the output: with an array per block (and a
/// rotation from another module, not inlined) it was most of the time of sealing a version.
package enum ChaCha20 {
    /// One 64-byte block of key stream.
    package static func block(key: [UInt8], nonce: [UInt8], counter: UInt32) -> [UInt8] {
        xor([UInt8](repeating: 0, count: 64), key: key, nonce: nonce, counter: counter)
    }

    @inline(__always)
    static func word(_ bytes: [UInt8], _ i: Int) -> UInt32 {
        UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
    }

    @inline(__always)
    static func quarter(_ a: inout UInt32, _ b: inout UInt32, _ c: inout UInt32, _ d: inout UInt32) {
        a = a &+ b; d ^= a; d = d << 16 | d >> 16
        c = c &+ d; b ^= c; b = b << 12 | b >> 20
        a = a &+ b; d ^= a; d = d << 8 | d >> 24
        c = c &+ d; b ^= c; b = b << 7 | b >> 25
    }

    /// `data` XORed with the key stream from block `counter` on (encryption and decryption).
    package static func xor(_ data: [UInt8], key: [UInt8], nonce: [UInt8], counter: UInt32) -> [UInt8] {
        let j0: UInt32 = 0x6170_7865, j1: UInt32 = 0x3320_646e, j2: UInt32 = 0x7962_2d32, j3: UInt32 = 0x6b20_6574
        let j4 = word(key, 0), j5 = word(key, 4), j6 = word(key, 8), j7 = word(key, 12)
        let j8 = word(key, 16), j9 = word(key, 20), j10 = word(key, 24), j11 = word(key, 28)
        let j13 = word(nonce, 0), j14 = word(nonce, 4), j15 = word(nonce, 8)
        var out = data
        out.withUnsafeMutableBufferPointer { buffer in
            guard let start = buffer.baseAddress else { return }
            var j12 = counter
            var offset = 0
            while offset < buffer.count {
                var x0 = j0, x1 = j1, x2 = j2, x3 = j3, x4 = j4, x5 = j5, x6 = j6, x7 = j7
                var x8 = j8, x9 = j9, x10 = j10, x11 = j11, x12 = j12, x13 = j13, x14 = j14, x15 = j15
                for _ in 0..<10 {
                    quarter(&x0, &x4, &x8, &x12); quarter(&x1, &x5, &x9, &x13); quarter(&x2, &x6, &x10, &x14); quarter(&x3, &x7, &x11, &x15)
                    quarter(&x0, &x5, &x10, &x15); quarter(&x1, &x6, &x11, &x12); quarter(&x2, &x7, &x8, &x13); quarter(&x3, &x4, &x9, &x14)
                }
                let count = min(64, buffer.count - offset)
                if count == 64 {
                    // Whole blocks: each key-stream word XORed into four bytes at once.
                    let base = UnsafeMutableRawPointer(start + offset)
                    @inline(__always) func mix(_ i: Int, _ value: UInt32) {
                        let at = i * 4
                        let current = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt32.self))
                        base.storeBytes(of: (current ^ value).littleEndian, toByteOffset: at, as: UInt32.self)
                    }
                    mix(0, x0 &+ j0); mix(1, x1 &+ j1); mix(2, x2 &+ j2); mix(3, x3 &+ j3)
                    mix(4, x4 &+ j4); mix(5, x5 &+ j5); mix(6, x6 &+ j6); mix(7, x7 &+ j7)
                    mix(8, x8 &+ j8); mix(9, x9 &+ j9); mix(10, x10 &+ j10); mix(11, x11 &+ j11)
                    mix(12, x12 &+ j12); mix(13, x13 &+ j13); mix(14, x14 &+ j14); mix(15, x15 &+ j15)
                } else {
                    let words = [x0 &+ j0, x1 &+ j1, x2 &+ j2, x3 &+ j3, x4 &+ j4, x5 &+ j5, x6 &+ j6, x7 &+ j7,
                                 x8 &+ j8, x9 &+ j9, x10 &+ j10, x11 &+ j11, x12 &+ j12, x13 &+ j13, x14 &+ j14, x15 &+ j15]
                    for i in 0..<count { buffer[offset + i] ^= UInt8(truncatingIfNeeded: words[i / 4] >> (UInt32(i % 4) * 8)) }
                }
                offset += 64
                j12 &+= 1
            }
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
        // h += block (with its high bit); h *= r (mod 2^130 - 5). Limbs stay below 2^27 and
        // products below 2^59, so the wrapping operators never wrap.
        func absorb(_ m0: UInt64, _ m1: UInt64, _ m2: UInt64, _ m3: UInt64, _ high: UInt64) {
            h0 &+= m0 & 0x3ff_ffff
            h1 &+= ((m0 >> 26) | (m1 << 6)) & 0x3ff_ffff
            h2 &+= ((m1 >> 20) | (m2 << 12)) & 0x3ff_ffff
            h3 &+= ((m2 >> 14) | (m3 << 18)) & 0x3ff_ffff
            h4 &+= (m3 >> 8) | high << 24
            let d0 = h0 &* r0 &+ h1 &* s4 &+ h2 &* s3 &+ h3 &* s2 &+ h4 &* s1
            var d1 = h0 &* r1 &+ h1 &* r0 &+ h2 &* s4 &+ h3 &* s3 &+ h4 &* s2
            var d2 = h0 &* r2 &+ h1 &* r1 &+ h2 &* r0 &+ h3 &* s4 &+ h4 &* s3
            var d3 = h0 &* r3 &+ h1 &* r2 &+ h2 &* r1 &+ h3 &* r0 &+ h4 &* s4
            var d4 = h0 &* r4 &+ h1 &* r3 &+ h2 &* r2 &+ h3 &* r1 &+ h4 &* r0
            var c = d0 >> 26; h0 = d0 & 0x3ff_ffff
            d1 &+= c; c = d1 >> 26; h1 = d1 & 0x3ff_ffff
            d2 &+= c; c = d2 >> 26; h2 = d2 & 0x3ff_ffff
            d3 &+= c; c = d3 >> 26; h3 = d3 & 0x3ff_ffff
            d4 &+= c; c = d4 >> 26; h4 = d4 & 0x3ff_ffff
            h0 &+= c &* 5; c = h0 >> 26; h0 &= 0x3ff_ffff
            h1 &+= c
        }
        message.withUnsafeBytes { bytes in
            // Whole blocks straight from the message (32-bit words, little-endian).
            var offset = 0
            while offset + 16 <= bytes.count {
                let w0 = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                let w1 = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)))
                let w2 = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)))
                let w3 = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
                absorb(w0, w1, w2, w3, 1)
                offset += 16
            }
            // The last, short block: its bytes, then a 1, then zeros (no high bit).
            if offset < bytes.count {
                var block = [UInt8](repeating: 0, count: 16)
                for i in offset..<bytes.count { block[i - offset] = bytes[i] }
                block[bytes.count - offset] = 1
                func word(_ i: Int) -> UInt64 {
                    UInt64(block[i]) | UInt64(block[i + 1]) << 8 | UInt64(block[i + 2]) << 16 | UInt64(block[i + 3]) << 24
                }
                absorb(word(0), word(4), word(8), word(12), 0)
            }
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

import ObjectStoreModel

/// HMAC-SHA256 (RFC 2104) and PBKDF2-HMAC-SHA256 (RFC 8018), as TaskChampion derives its
/// encryption key: PBKDF2 of the secret and a salt, 600,000 iterations, 32 bytes.
package enum HMACSHA256 {
    /// The 32-byte authentication code of `message` under `key`.
    package static func code(for message: [UInt8], key: [UInt8]) -> [UInt8] {
        let keyed = Keyed(key: key)
        var inner = keyed.inner
        inner.absorb(message, totalLength: 64 + message.count)
        var outer = keyed.outer
        outer.absorb(inner.digest, totalLength: 64 + 32)
        return outer.digest
    }

    /// The hash states after the key's inner and outer pads (computed once per key).
    struct Keyed {
        var inner = SHA256Block()
        var outer = SHA256Block()

        init(key: [UInt8]) {
            var block = key.count > 64 ? SHA256Block.hash(key) : key
            block += [UInt8](repeating: 0, count: 64 - block.count)
            let innerPad = block.map { $0 ^ 0x36 }, outerPad = block.map { $0 ^ 0x5C }
            innerPad.withUnsafeBytes { inner.compress(bytes: $0) }
            outerPad.withUnsafeBytes { outer.compress(bytes: $0) }
        }
    }
}

/// PBKDF2 with HMAC-SHA256.
package enum PBKDF2 {
    /// `length` bytes derived from `password` and `salt` in `iterations` rounds.
    package static func sha256(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) -> [UInt8] {
        let keyed = HMACSHA256.Keyed(key: password)
        var result: [UInt8] = []
        var blockIndex: UInt32 = 1
        // One block of a 32-byte message after the 64-byte pad: the message, 0x80, zeros
        // and the length in bits (96 * 8 = 768), as sixteen big-endian words.
        var words = [UInt32](repeating: 0, count: 16)
        words[8] = 0x8000_0000
        words[15] = 768
        while result.count < length {
            var first = salt
            first += [UInt8(blockIndex >> 24), UInt8(blockIndex >> 16 & 0xFF), UInt8(blockIndex >> 8 & 0xFF), UInt8(blockIndex & 0xFF)]
            var inner = keyed.inner
            inner.absorb(first, totalLength: 64 + first.count)
            var outer = keyed.outer
            outer.absorb(inner.digest, totalLength: 96)
            var u = outer.h
            var t = u
            if iterations > 1 {
                words.withUnsafeMutableBufferPointer { block in
                    for _ in 1..<iterations {
                        (block[0], block[1], block[2], block[3], block[4], block[5], block[6], block[7]) = u
                        var i = keyed.inner
                        i.compress(UnsafeBufferPointer(block))
                        (block[0], block[1], block[2], block[3], block[4], block[5], block[6], block[7]) = i.h
                        var o = keyed.outer
                        o.compress(UnsafeBufferPointer(block))
                        u = o.h
                        t = (t.0 ^ u.0, t.1 ^ u.1, t.2 ^ u.2, t.3 ^ u.3, t.4 ^ u.4, t.5 ^ u.5, t.6 ^ u.6, t.7 ^ u.7)
                    }
                }
            }
            var last = SHA256Block()
            last.h = t
            result += last.digest
            blockIndex += 1
        }
        return Array(result.prefix(length))
    }
}

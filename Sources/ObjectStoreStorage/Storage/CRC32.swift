/// CRC-32 (IEEE 802.3, as zlib), checksumming every commit and snapshot row of the binary
/// store. Eight bytes a step with eight tables ("slicing by 8"): checking a snapshot entity's
/// rows when it is first read was a fifth of a filtered `taskctl list` with one table.
package enum CRC32 {
    /// `tables[k][n]`: the CRC of byte n followed by k zero bytes.
    private static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for n in 0..<256 {
            var c = UInt32(n)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            tables[0][n] = c
        }
        for n in 0..<256 {
            var c = tables[0][n]
            for k in 1..<8 {
                c = tables[0][Int(c & 0xFF)] ^ (c >> 8)
                tables[k][n] = c
            }
        }
        return tables
    }()

    /// The checksum of `bytes`, or of `previous`'s bytes followed by these.
    package static func checksum<Bytes: Sequence>(_ bytes: Bytes, continuing previous: UInt32 = 0) -> UInt32 where Bytes.Element == UInt8 {
        var crc: UInt32 = previous ^ 0xFFFF_FFFF
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            crc = update(crc, buffer)
        }
        if done == nil {
            let table = tables[0]
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
        return crc ^ 0xFFFF_FFFF
    }

    /// The eight tables one after another, `flat[256 * k + n] == tables[k][n]`, read through
    /// a pointer: each lookup through an array checked its index (the masks keep every
    /// index below 256), twice the instructions of a step.
    private static let flat: [UInt32] = tables.flatMap { $0 }

    private static func update(_ start: UInt32, _ buffer: UnsafeBufferPointer<UInt8>) -> UInt32 {
        flat.withUnsafeBufferPointer { table in
            guard let t = table.baseAddress, let bytes = buffer.baseAddress else { return start }
            var crc = start
            var index = 0
            let count = buffer.count
            while count - index >= 8 {
                let low = crc ^ UInt32(littleEndian: UnsafeRawPointer(bytes + index).loadUnaligned(as: UInt32.self))
                let high = UInt32(littleEndian: UnsafeRawPointer(bytes + index + 4).loadUnaligned(as: UInt32.self))
                crc = t[1792 + Int(low & 0xFF)] ^ t[1536 + Int((low >> 8) & 0xFF)] ^ t[1280 + Int((low >> 16) & 0xFF)] ^ t[1024 + Int(low >> 24)]
                    ^ t[768 + Int(high & 0xFF)] ^ t[512 + Int((high >> 8) & 0xFF)] ^ t[256 + Int((high >> 16) & 0xFF)] ^ t[Int(high >> 24)]
                index += 8
            }
            while index < count {
                crc = t[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
            return crc
        }
    }
}

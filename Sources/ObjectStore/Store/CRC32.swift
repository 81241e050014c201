/// CRC-32 (IEEE 802.3, as zlib), checksumming every commit of the binary store.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    /// The checksum of `bytes`, or of `previous`'s bytes followed by these.
    static func checksum<Bytes: Sequence>(_ bytes: Bytes, continuing previous: UInt32 = 0) -> UInt32 where Bytes.Element == UInt8 {
        var crc: UInt32 = previous ^ 0xFFFF_FFFF
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            table.withUnsafeBufferPointer { table in
                for byte in buffer { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
            }
        }
        if done == nil {
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
        return crc ^ 0xFFFF_FFFF
    }
}

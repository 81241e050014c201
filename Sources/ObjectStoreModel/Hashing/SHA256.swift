/// SHA-256 (FIPS 180-4), written here so that version hashes need nothing beyond the
/// standard library and come out the same on every platform.
package struct SHA256: Sendable {
    private var state = SHA256Block()
    private var buffer: [UInt8] = []
    private var length: UInt64 = 0

    public init() {}

    /// The digest of `bytes` in one call.
    public static func hash<Bytes: Sequence>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Adds bytes to the message.
    public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        // Bytes in one piece are compressed where they lie, 64 at a time (appended one by
        // one, with a uniqueness check each, they were nearly half of a model's hashing).
        if bytes.withContiguousStorageIfAvailable({ update(contiguous: $0) }) != nil { return }
        for byte in bytes {
            buffer.append(byte)
            length &+= 1
            if buffer.count == 64 {
                buffer.withUnsafeBytes { state.compress(bytes: $0) }
                buffer.removeAll(keepingCapacity: true)
            }
        }
    }

    private mutating func update(contiguous bytes: UnsafeBufferPointer<UInt8>) {
        length &+= UInt64(bytes.count)
        var start = 0
        if !buffer.isEmpty {
            let taken = Swift.min(64 - buffer.count, bytes.count)
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[0..<taken]))
            start = taken
            guard buffer.count == 64 else { return }
            buffer.withUnsafeBytes { state.compress(bytes: $0) }
            buffer.removeAll(keepingCapacity: true)
        }
        while bytes.count - start >= 64 {
            state.compress(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start..<start + 64])))
            start += 64
        }
        if start < bytes.count { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...])) }
    }

    /// Pads the message and returns the 32-byte digest.
    public mutating func finalize() -> [UInt8] {
        state.absorb(buffer, totalLength: Int(length))
        buffer.removeAll()
        return state.digest
    }
}

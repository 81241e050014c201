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
        for byte in bytes {
            buffer.append(byte)
            length &+= 1
            if buffer.count == 64 {
                buffer.withUnsafeBytes { state.compress(bytes: $0) }
                buffer.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Pads the message and returns the 32-byte digest.
    public mutating func finalize() -> [UInt8] {
        state.absorb(buffer, totalLength: Int(length))
        buffer.removeAll()
        return state.digest
    }
}

import Foundation

extension Double {
    /// The whole number this Double holds when it reads back as the very same bits (not
    /// -0.0, not 2.5, not NaN): what a narrow column value or a whole-second date stores.
    var exactWholeNumber: Int64? {
        guard let whole = Int64(exactly: self), Double(whole).bitPattern == bitPattern else { return nil }
        return whole
    }
}

/// Appends little-endian integers, LEB128 varints and length-prefixed bytes.
package struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ v: UInt8) { bytes.append(v) }

    mutating func u16(_ v: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
    }

    // Whole words appended at once (a byte at a time cost ~400 instructions per u64).
    mutating func u32(_ v: UInt32) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func u64(_ v: UInt64) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// The low `width` bytes (1 to 8) of `v`, little-endian.
    mutating func littleEndian(_ v: UInt64, _ width: Int) {
        // A buffer, not a slice of one: appending a slice went a byte at a time.
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[..<min(max(width, 0), 8)])) }
    }

    mutating func signed64(_ v: Int64) { u64(UInt64(bitPattern: v)) }

    mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Zig-zag signed varint: small negative numbers stay small.
    mutating func signed(_ v: Int64) {
        varint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
    }

    mutating func blob(_ data: some Collection<UInt8>) {
        varint(UInt64(data.count))
        bytes.append(contentsOf: data)
    }

    mutating func string(_ s: String) {
        // The UTF-8 bytes copied at once (appending the view went byte by byte).
        var s = s
        s.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }
}

/// Reads what ``ByteWriter`` writes, checking every bound: a damaged or hostile file gives
/// an error, never a trap.
package struct ByteReader {
    /// Bytes that end too soon or hold a value out of range. Its description is a
    /// sentence: should it ever reach a message, no type name does.
    struct Truncated: Error, CustomStringConvertible {
        var description: String { "a record ends too soon or holds a value out of range" }
    }

    let bytes: [UInt8]
    var position: Int
    let end: Int

    init(_ bytes: [UInt8], from start: Int = 0, to end: Int? = nil) {
        self.bytes = bytes
        self.position = start
        self.end = min(end ?? bytes.count, bytes.count)
    }

    var isAtEnd: Bool { position >= end }

    mutating func u8() throws -> UInt8 {
        guard position < end else { throw Truncated() }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func u32() throws -> UInt32 {
        guard end - position >= 4 else { throw Truncated() }
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[position + i]) << UInt32(8 * i) }
        position += 4
        return v
    }

    mutating func u64() throws -> UInt64 {
        guard end - position >= 8 else { throw Truncated() }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[position + i]) << UInt64(8 * i) }
        position += 8
        return v
    }

    mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try u8()
            guard shift < 64 else { throw Truncated() }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    mutating func signed() throws -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    /// A varint that must fit a non-negative Int (counts, lengths, indexes).
    mutating func count() throws -> Int {
        let raw = try varint()
        guard raw <= UInt64(end - position) + 1_000_000, let n = Int(exactly: raw) else { throw Truncated() }
        return n
    }

    mutating func blob() throws -> ArraySlice<UInt8> {
        let n = try count()
        guard end - position >= n else { throw Truncated() }
        defer { position += n }
        return bytes[position..<position + n]
    }

    /// Moves past a string, checking it as ``string()`` does without making it (ASCII is
    /// checked in place).
    mutating func skipString() throws {
        try skipString(length: try count())
    }

    /// ``skipString()`` of a string of `n` bytes whose length was read already.
    mutating func skipString(length n: Int) throws {
        guard n >= 0, end - position >= n else { throw Truncated() }
        defer { position += n }
        let start = position
        try bytes.withUnsafeBufferPointer { buffer in
            let run = UnsafeBufferPointer(rebasing: buffer[start..<(start + n)])
            if !run.allSatisfy({ $0 < 0x80 }), String(validating: run, as: UTF8.self) == nil { throw Truncated() }
        }
    }

    mutating func string() throws -> String {
        try string(length: try count())
    }

    /// ``string()`` of a string of `n` bytes whose length was read already.
    mutating func string(length n: Int) throws -> String {
        guard n >= 0, end - position >= n else { throw Truncated() }
        defer { position += n }
        let start = position
        return try bytes.withUnsafeBufferPointer { buffer in
            let run = UnsafeBufferPointer(rebasing: buffer[start..<(start + n)])
            // ASCII is UTF-8 as it is: copied without the generic validation, which went
            // byte by byte and was a sixth of decoding a row. Other text is validated.
            if run.allSatisfy({ $0 < 0x80 }) { return String(decoding: run, as: UTF8.self) }
            guard let s = String(validating: run, as: UTF8.self) else { throw Truncated() }
            return s
        }
    }
}

/// A 32-byte SHA-256 digest identifying the stored shape of an entity or a model.
///
/// Two entities with the same version hash store their objects the same way, so a store
/// written with one opens with the other without migration. The recipe is in ObjectStore's Schema guide
/// ("Version hashes"); it covers names, types, optionality, transience, derivation,
/// relationships' destination, inverse and cardinality, inheritance and version hash
/// modifiers, and not defaults, validation rules, user info or renaming identifiers.
public struct VersionHash: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 32 digest bytes.
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Lowercase hex, 64 characters.
    public var hex: String {
        let digits = Array("0123456789abcdef")
        var text = ""
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }

    /// Parses 64 hex digits.
    public init?(hex: String) {
        let scalars = Array(hex.unicodeScalars)
        guard scalars.count == 64 else { return nil }
        var bytes: [UInt8] = []
        for i in stride(from: 0, to: 64, by: 2) {
            guard let byte = UInt8(String(scalars[i]) + String(scalars[i + 1]), radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.bytes = bytes
    }

    public var description: String { hex }

    public static func < (lhs: VersionHash, rhs: VersionHash) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}

/// The canonical encoding that version hashes digest: a sequence of fields, each a 4-byte
/// big-endian length followed by that many bytes.
struct CanonicalEncoder {
    private(set) var bytes: [UInt8] = []

    mutating func field(_ text: String) {
        field(Array(text.utf8))
    }

    mutating func field(_ flag: Bool) {
        field(flag ? "1" : "0")
    }

    mutating func field(_ raw: [UInt8]) {
        let count = UInt32(truncatingIfNeeded: raw.count)
        bytes.append(contentsOf: [UInt8(count >> 24), UInt8(truncatingIfNeeded: count >> 16), UInt8(truncatingIfNeeded: count >> 8), UInt8(truncatingIfNeeded: count)])
        bytes.append(contentsOf: raw)
    }

    var digest: VersionHash { VersionHash(bytes: SHA256.hash(bytes)) }
}

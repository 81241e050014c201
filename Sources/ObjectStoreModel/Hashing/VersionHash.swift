/// A 32-byte SHA-256 digest identifying the stored shape of an entity or a model.
///
/// Two entities with the same version hash store their objects the same way, so a store
/// written with one opens with the other without migration. The recipe is in docs/schema.md
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

extension AttributeDescription {
    /// The attribute's version hash (see docs/schema.md).
    public var versionHash: VersionHash {
        var encoder = CanonicalEncoder()
        encoder.field("attribute")
        encoder.field(name)
        encoder.field(type.rawValue)
        encoder.field(isOptional)
        encoder.field(isTransient)
        encoder.field(isDerived)
        encoder.field(versionHashModifier ?? "")
        // Only when set, so the hashes of models that never use it stay what they were: the
        // stored bytes mean another thing under another transformer.
        if let valueTransformerName { encoder.field("transformer:" + valueTransformerName) }
        return encoder.digest
    }
}

extension RelationshipDescription {
    /// The relationship's version hash (see docs/schema.md).
    public var versionHash: VersionHash {
        var encoder = CanonicalEncoder()
        encoder.field("relationship")
        encoder.field(name)
        encoder.field(destinationEntityName)
        encoder.field(inverseName ?? "")
        encoder.field(isToMany)
        encoder.field(isOrdered)
        encoder.field(isOptional)
        encoder.field(isTransient)
        encoder.field(versionHashModifier ?? "")
        // Only when set, so the hashes of models that never use it stay what they were.
        if isDerivedFromInverse { encoder.field("derivedFromInverse") }
        return encoder.digest
    }
}

extension PropertyDescription {
    /// The property's version hash.
    public var versionHash: VersionHash {
        switch self {
        case .attribute(let a): return a.versionHash
        case .relationship(let r): return r.versionHash
        }
    }
}

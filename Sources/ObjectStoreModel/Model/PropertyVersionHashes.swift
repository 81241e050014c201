import Foundation

// The version hashes of properties: their fields in the canonical encoding (Hashing/).

extension AttributeDescription {
    /// The attribute's version hash (see ObjectStore's Schema guide).
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
    /// The relationship's version hash (see ObjectStore's Schema guide).
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

import ObjectStoreModel

/// Computes derived attributes from their expressions.
enum DerivedAttributes {
    static func evaluate(_ derivation: String, of object: ManagedObject, attribute: AttributeDescription) throws -> Value {
        throw ObjectStoreError.readOnly(entity: object.entity.name, key: attribute.name)
    }
}

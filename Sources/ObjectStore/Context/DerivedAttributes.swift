import ObjectStoreModel

/// Computes derived attributes from their expressions, compiled once per context and
/// entity.
enum DerivedAttributes {
    /// Which compiled derivation: an entity description's slot (hashing two names per read
    /// cost a fifth of reading a derived value).
    struct Key: Hashable {
        var entity: ObjectIdentifier
        var slot: Int
    }

    static func evaluate(_ derivation: String, of object: ManagedObject, attribute: AttributeDescription, slot: Int) throws -> Value {
        guard let context = object.managedObjectContext else { throw ObjectStoreError.objectNotFound(object.objectID) }
        let key = Key(entity: object.entity.identity, slot: slot)
        let closure: ExpressionClosure
        if let cached = context.compiledDerivations[key] {
            closure = cached
        } else {
            switch try Derivation(derivation) {
            case .predicate(let predicate):
                let test = context.compiler.compile(predicate, entity: object.entity)
                closure = { object, scope in .value(.bool(try test(object, scope))) }
            case .expression(let expression):
                closure = context.compiler.compile(expression, entity: object.entity)
            }
            context.compiledDerivations[key] = closure
        }
        try object.fireFault()
        let value = try closure(object, context.evaluationScope()).sortValue
        return (try? ManagedObject.coerce(value, to: attribute, entity: object.entity.name)) ?? value
    }
}

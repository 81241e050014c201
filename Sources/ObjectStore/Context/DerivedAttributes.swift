import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// Computes derived attributes from their expressions, compiled once per context and
/// entity.
enum DerivedAttributes {
    /// Which compiled derivation: an entity description's slot (hashing two names per read
    /// cost a fifth of reading a derived value).
    struct Key: Hashable {
        var entity: ObjectIdentifier
        var slot: Int
    }

    /// A derivation compiled for one entity: its closure, and for a predicate of stored
    /// attributes compared with constants (and `now()`) the same test on the slots directly.
    final class Compiled {
        let closure: ExpressionClosure
        /// The derivation when it is a predicate.
        let predicate: ObjectPredicate?
        /// The slot test, with the `now()` it was made for (nil when the predicate does not
        /// read the clock).
        private var slotTest: (now: Date?, test: SlotPredicate)?
        private var hasNoSlotTest = false

        init(closure: @escaping ExpressionClosure, predicate: ObjectPredicate?) {
            self.closure = closure
            self.predicate = predicate
        }

        /// The predicate as a slot test at `now`, or nil when it has another shape (reading
        /// `status == 'pending' AND dueDate < now()` through the closures cost ten times more).
        func slotTest(at now: Date, entity: EntityDescription) -> SlotPredicate? {
            guard let predicate, !hasNoSlotTest else { return nil }
            if let made = slotTest, made.now == nil || made.now == now { return made.test }
            var readsNow = false
            guard let test = SlotPredicate(Self.substituting(now, in: predicate, readsNow: &readsNow), entity: entity) else {
                hasNoSlotTest = true
                return nil
            }
            slotTest = (readsNow ? now : nil, test)
            return test
        }

        /// The predicate with `now()` replaced by the date.
        static func substituting(_ now: Date, in predicate: ObjectPredicate, readsNow: inout Bool) -> ObjectPredicate {
            switch predicate {
            case .constant: return predicate
            case .not(let p): return .not(substituting(now, in: p, readsNow: &readsNow))
            case .and(let a, let b): return .and(substituting(now, in: a, readsNow: &readsNow), substituting(now, in: b, readsNow: &readsNow))
            case .or(let a, let b): return .or(substituting(now, in: a, readsNow: &readsNow), substituting(now, in: b, readsNow: &readsNow))
            case .comparison(var c):
                for side in [\PredicateComparison.lhs, \PredicateComparison.rhs] {
                    if case .function("now", let arguments) = c[keyPath: side], arguments.isEmpty {
                        c[keyPath: side] = .constant(.date(now))
                        readsNow = true
                    }
                }
                return .comparison(c)
            }
        }
    }

    /// The value of the derived attribute in `slot` (its description is read only to compile
    /// it, and to convert a result of another type).
    static func evaluate(of object: ManagedObject, slot: Int) throws -> Value {
        guard let context = object.managedObjectContext else { throw ObjectStoreError.objectNotFound(object.objectID) }
        guard let compiled = try compiled(in: context, entity: object.entity, slot: slot) else { return .null }
        try object.fireFault()
        let scope = context.evaluationScope(perQuery: false)  // one object's value
        let value: Value
        if let test = compiled.slotTest(at: scope.now, entity: object.entity) {
            value = .bool(try test.matches(object.slots))
        } else {
            value = try compiled.closure(object, scope).sortValue
        }
        return converted(value, entity: object.entity, slot: slot)
    }

    /// The derivation of an entity's slot, compiled once per context.
    static func compiled(in context: ManagedObjectContext, entity: EntityDescription, slot: Int) throws -> Compiled? {
        let key = Key(entity: entity.identity, slot: slot)
        if let cached = context.compiledDerivations[key] { return cached }
        guard let derivation = entity.properties[slot].attribute?.derivation else { return nil }
        let compiled: Compiled
        switch try Derivation(derivation) {
        case .predicate(let predicate):
            let test = context.compiler.compile(predicate, entity: entity)
            compiled = Compiled(closure: { object, scope in .value(.bool(try test(object, scope))) }, predicate: predicate)
        case .expression(let expression):
            compiled = Compiled(closure: context.compiler.compile(expression, entity: entity), predicate: nil)
        }
        context.compiledDerivations[key] = compiled
        return compiled
    }

    /// A value of the attribute's type: as it is, or converted by its description.
    static func converted(_ value: Value, entity: EntityDescription, slot: Int) -> Value {
        if let type = entity.attributeType(ofSlot: slot), value.fits(type) { return value }
        guard let attribute = entity.properties[slot].attribute else { return value }
        return (try? ManagedObject.coerce(value, to: attribute, entity: entity.name)) ?? value
    }

    /// The derived attribute of `slot` computed straight from rows' slots, at one reading of
    /// the clock (a fetch reading many rows), when its derivation is a slot test; nil when
    /// it needs an object.
    static func rowEvaluator(in context: ManagedObjectContext, entity: EntityDescription, slot: Int, now: Date) throws -> (([SlotValue]) throws -> Value)? {
        guard let compiled = try compiled(in: context, entity: entity, slot: slot),
            let test = compiled.slotTest(at: now, entity: entity)
        else { return nil }
        return { slots in converted(.bool(try test.matches(slots)), entity: entity, slot: slot) }
    }
}

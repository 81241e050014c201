import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// Slot predicates made from object predicates: the comparisons of stored attributes with
/// constants, with the general comparison's test bound to each (so the store's verdicts and
/// the compiled closures agree).
extension SlotPredicate {
    /// The predicate in this form for objects of `entity`, or nil when it has another shape.
    init?(_ predicate: ObjectPredicate, entity: EntityDescription) {
        switch predicate {
        case .constant(let value): self = .constant(value)
        case .not(let inner):
            guard let inner = SlotPredicate(inner, entity: entity) else { return nil }
            self = .not(inner)
        case .and(let a, let b):
            guard let a = SlotPredicate(a, entity: entity), let b = SlotPredicate(b, entity: entity) else { return nil }
            self = .and(a, b)
        case .or(let a, let b):
            guard let a = SlotPredicate(a, entity: entity), let b = SlotPredicate(b, entity: entity) else { return nil }
            self = .or(a, b)
        case .comparison(let c):
            guard c.quantifier == .direct else { return nil }
            if let reference = Self.reference(c, entity: entity) {
                self = reference
                return
            }
            func slot(_ expression: ObjectExpression) -> Int? {
                guard case .keyPath(.evaluatedObject, let path) = expression, path.count == 1, let index = entity.slot(of: path[0]),
                      entity.kind(ofSlot: index) == .attribute, entity.properties[index].attribute?.isTransient == false else { return nil }
                return index
            }
            func constant(_ expression: ObjectExpression) -> SlotConstant? {
                switch expression {
                case .constant(let value): return .value(value)
                case .array(let items):
                    var values: [Value] = []
                    for item in items {
                        guard case .constant(let value) = item else { return nil }
                        values.append(value)
                    }
                    return .list(values)
                default: return nil
                }
            }
            // MATCHES needs the query's clock, which only the closures' scope carries.
            guard c.op != .matches else { return nil }
            let rightConstant: Value? = { if case .constant(let v) = c.rhs { return v } else { return nil } }()
            let test = PredicateCompiler.test(for: c.op, options: c.options, constantRight: rightConstant)
            if let index = slot(c.lhs), let value = constant(c.rhs) {
                // A to-many value on the left would mean ANY; an attribute is never one.
                let direct = c.options.isEmpty ? DirectTest(c.op, value) : nil
                let operand = value.operand
                self = .compare(slot: index, op: c.op, test: { try test(.value($0), operand) }, constant: value, slotOnLeft: true, direct: direct)
            } else if let value = constant(c.lhs), let index = slot(c.rhs), c.op != .contains, c.op != .in {
                let operand = value.operand
                self = .compare(slot: index, op: c.op, test: { try test(operand, .value($0)) }, constant: value, slotOnLeft: false, direct: nil)
            } else {
                return nil
            }
        }
    }

    /// The comparison as a ``reference(slot:targets:)``, when it compares a to-one
    /// relationship of the object with object URIs (`==` either way round, `IN` a list).
    private static func reference(_ c: PredicateComparison, entity: EntityDescription) -> SlotPredicate? {
        func toOne(_ expression: ObjectExpression) -> Int? {
            guard case .keyPath(.evaluatedObject, let path) = expression, path.count == 1, let index = entity.slot(of: path[0]),
                  let relationship = entity.properties[index].relationship, !relationship.isToMany, !relationship.isTransient else { return nil }
            return index
        }
        func target(_ expression: ObjectExpression) -> Set<ObjectID>? {
            guard case .constant(.uri(let uri)) = expression else { return nil }
            guard let id = ObjectID(uri: uri), id.uriRepresentation == uri else { return [] }
            return [id]
        }
        switch c.op {
        case .equal:
            if let slot = toOne(c.lhs), let targets = target(c.rhs) { return .reference(slot: slot, targets: targets) }
            if let slot = toOne(c.rhs), let targets = target(c.lhs) { return .reference(slot: slot, targets: targets) }
            return nil
        case .in:
            guard let slot = toOne(c.lhs), case .array(let items) = c.rhs else { return nil }
            var targets = Set<ObjectID>()
            for item in items {
                guard let found = target(item) else { return nil }
                targets.formUnion(found)
            }
            return .reference(slot: slot, targets: targets)
        default:
            return nil
        }
    }

    /// The conjuncts of `predicate` (its top-level ANDs) that have this shape, joined: a test
    /// every match passes, so a row failing it needs no other test. Nil when none has.
    static func prefilter(_ predicate: ObjectPredicate, entity: EntityDescription) -> SlotPredicate? {
        func conjuncts(_ p: ObjectPredicate) -> [ObjectPredicate] {
            if case .and(let a, let b) = p { return conjuncts(a) + conjuncts(b) }
            return [p]
        }
        let usable = conjuncts(predicate).compactMap { SlotPredicate($0, entity: entity) }
        guard let first = usable.first else { return nil }
        return usable.dropFirst().reduce(first) { .and($0, $1) }
    }
}

extension SlotConstant {
    /// The constant as the general comparison takes it.
    var operand: Operand {
        switch self {
        case .value(let value): return .value(value)
        case .list(let values): return .collection(values.map { .value($0) })
        }
    }
}

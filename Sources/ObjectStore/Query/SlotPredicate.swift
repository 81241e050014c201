import Foundation
import ObjectStoreModel

/// A predicate tested on an object's slots directly, without the key-path machinery: AND,
/// OR and NOT of comparisons between one stored attribute of the object and a constant (or a
/// list of constants, for IN). A fetch over a store's rows uses it when the predicate is of
/// that shape; anything else (relationships, derived attributes, functions, variables,
/// quantifiers) goes through the compiled closures. Both use the same comparison functions,
/// so they agree on every value (nil, numbers across types, string options).
indirect enum SlotPredicate {
    case constant(Bool)
    case not(SlotPredicate)
    case and(SlotPredicate, SlotPredicate)
    case or(SlotPredicate, SlotPredicate)
    /// `slot op constant`, or `constant op slot` when `slotOnLeft` is false.
    case compare(slot: Int, test: (Operand, Operand) throws -> Bool, constant: Operand, slotOnLeft: Bool)

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
            func slot(_ expression: ObjectExpression) -> Int? {
                guard case .keyPath(.evaluatedObject, let path) = expression, path.count == 1, let index = entity.slot(of: path[0]),
                      entity.kind(ofSlot: index) == .attribute, entity.properties[index].attribute?.isTransient == false else { return nil }
                return index
            }
            func constant(_ expression: ObjectExpression) -> Operand? {
                switch expression {
                case .constant(let value): return .value(value)
                case .array(let items):
                    var values: [Operand] = []
                    for item in items {
                        guard case .constant(let value) = item else { return nil }
                        values.append(.value(value))
                    }
                    return .collection(values)
                default: return nil
                }
            }
            let rightConstant: Value? = { if case .constant(let v) = c.rhs { return v } else { return nil } }()
            let test = PredicateCompiler.test(for: c.op, options: c.options, constantRight: rightConstant)
            if let index = slot(c.lhs), let value = constant(c.rhs) {
                // A to-many value on the left would mean ANY; an attribute is never one.
                self = .compare(slot: index, test: test, constant: value, slotOnLeft: true)
            } else if let value = constant(c.lhs), let index = slot(c.rhs), c.op != .contains, c.op != .in {
                self = .compare(slot: index, test: test, constant: value, slotOnLeft: false)
            } else {
                return nil
            }
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

    /// Whether an object with these slots matches.
    func matches(_ slots: [SlotValue]) throws -> Bool {
        switch self {
        case .constant(let value): return value
        case .not(let inner): return try !inner.matches(slots)
        case .and(let a, let b): return try a.matches(slots) && b.matches(slots)
        case .or(let a, let b): return try a.matches(slots) || b.matches(slots)
        case .compare(let slot, let test, let constant, let slotOnLeft):
            guard slot < slots.count, case .value(let value) = slots[slot] else { return false }
            return slotOnLeft ? try test(.value(value), constant) : try test(constant, .value(value))
        }
    }
}

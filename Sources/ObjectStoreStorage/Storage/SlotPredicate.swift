import Foundation
import ObjectStoreModel

/// A predicate tested on an object's slots directly, without the key-path machinery: AND,
/// OR and NOT of comparisons between one stored attribute of the object and a constant (or a
/// list of constants, for IN). A fetch over a store's rows uses it when the predicate is of
/// that shape; anything else (relationships, derived attributes, functions, variables,
/// quantifiers) goes through the compiled closures. Both use the same comparison functions,
/// so they agree on every value (nil, numbers across types, string options). Made from an
/// ``ObjectPredicate`` above the store (`SlotPredicate(_:entity:)`); the store decides it on
/// its columns and indexes and tests it on rows.
@usableFromInline package indirect enum SlotPredicate {
    case constant(Bool)
    case not(SlotPredicate)
    case and(SlotPredicate, SlotPredicate)
    case or(SlotPredicate, SlotPredicate)
    /// `slot op constant`, or `constant op slot` when `slotOnLeft` is false. `test` is the
    /// comparison with the constant bound: its verdict for a slot's value. `direct`, when
    /// set, decides the common cases inline (no closure called).
    case compare(slot: Int, op: PredicateComparison.Operator, test: (Value) throws -> Bool, constant: SlotConstant, slotOnLeft: Bool,
                 direct: DirectTest?)
    /// A to-one relationship `== object` (an object's URI) or `IN` a list of them, either
    /// way round for `==`: the slot refers to one of `targets`. A URI that is not an object
    /// ID's own (``ObjectID/uriRepresentation``) names no object, so it adds no target.
    case reference(slot: Int, targets: Set<ObjectID>)

    /// Whether an object with these slots matches.
    package func matches(_ slots: [SlotValue]) throws -> Bool {
        try matches(reading: slots)
    }

    /// Whether an object with these slots matches (decoded, or read from the row in place).
    package func matches(_ slots: Slots) throws -> Bool {
        try slots.satisfy(self)
    }

    @usableFromInline package func matches<S: RandomAccessCollection<SlotValue>>(reading slots: S) throws -> Bool where S.Index == Int {
        switch self {
        case .constant(let value): return value
        case .not(let inner): return try !inner.matches(reading: slots)
        case .and(let a, let b): return try a.matches(reading: slots) && b.matches(reading: slots)
        case .or(let a, let b): return try a.matches(reading: slots) || b.matches(reading: slots)
        case .compare(let slot, _, _, _, _, let direct):
            // The closure and the constant are bound only when the direct test cannot
            // decide (binding them copied them for every value tested).
            guard slot < slots.count, case .value(let value) = slots[slot] else { return false }
            if let direct, let verdict = direct.test(value) { return verdict }
            guard case .compare(_, _, let test, _, _, _) = self else { return false }
            return try test(value)
        case .reference(let slot, let targets):
            guard slot < slots.count, case .toOne(let id?) = slots[slot] else { return false }
            return targets.contains(id)
        }
    }
}

extension SlotPredicate {
    /// The strings its ANDed `CONTAINS` comparisons without options ask a slot's string to
    /// contain: an object matches only when each of those slots holds a string containing
    /// its needle.
    package var requiredSubstrings: [(slot: Int, needle: String)] {
        switch self {
        case .and(let a, let b): return a.requiredSubstrings + b.requiredSubstrings
        case .compare(let slot, _, _, _, true, .contains(let needle)?): return [(slot, needle)]
        default: return []
        }
    }

    /// Whether the predicate is false for every object with no value in `slot`: one of its
    /// ANDed comparisons of that slot rejects nil.
    package func rejectsNil(inSlot slot: Int) throws -> Bool {
        switch self {
        case .and(let a, let b): return try a.rejectsNil(inSlot: slot) || b.rejectsNil(inSlot: slot)
        case .constant(let value): return !value
        case .compare(let compared, _, let test, _, _, _):
            guard compared == slot else { return false }
            return try !test(.null)
        case .reference(let compared, _): return compared == slot
        case .not, .or: return false
        }
    }

    /// The slots the predicate compares.
    package var slots: Set<Int> {
        switch self {
        case .constant: return []
        case .not(let inner): return inner.slots
        case .and(let a, let b), .or(let a, let b): return a.slots.union(b.slots)
        case .compare(let slot, _, _, _, _, _), .reference(let slot, _): return [slot]
        }
    }

    /// What the columns decide of every row: 1 matches, 2 does not, 0 undecided (a part of
    /// the predicate the columns cannot decide, which ``verdicts(_:rows:)`` names, leaves the
    /// rows it matters for undecided: `a AND b` with only `a` decided is 2 where `a` fails).
    /// Nil when nothing is decided.
    package func decisions(_ columns: [Int: Column], rows: Int) throws -> [UInt8]? {
        switch self {
        case .constant, .compare:
            return try verdicts(columns, rows: rows).map { $0.map { $0 ? 1 : 2 } }
        case .reference:
            return nil
        case .not(let inner):
            return try inner.decisions(columns, rows: rows).map { $0.map { $0 == 0 ? 0 : 3 - $0 } }
        case .and(let a, let b), .or(let a, let b):
            let isAnd: Bool
            if case .and = self { isAnd = true } else { isAnd = false }
            // The value that decides alone: a failing part of an AND, a matching one of an OR.
            let decisive: UInt8 = isAnd ? 2 : 1
            let left = try a.decisions(columns, rows: rows), right = try b.decisions(columns, rows: rows)
            switch (left, right) {
            case (nil, nil): return nil
            case (let one?, nil), (nil, let one?): return one.map { $0 == decisive ? decisive : 0 }
            case (let x?, let y?):
                return zip(x, y).map { p, q in
                    if p == decisive || q == decisive { return decisive }
                    return p != 0 && p == q ? p : 0
                }
            }
        }
    }

    /// The predicate's verdict for every row of a snapshot's columns (`columns[slot]`), or nil
    /// when a comparison cannot be decided on them: a slot without a column, a constant of
    /// another type than the column's, or an operator other than =, !=, <, <=, >, >= and IN.
    /// Rows with nil are decided by the same test as ``matches(_:)``; for the others the
    /// typed comparison agrees with it (columns hold no NaN; a NaN date constant is refused).
    package func verdicts(_ columns: [Int: Column], rows: Int) throws -> [Bool]? {
        switch self {
        case .constant(let value): return [Bool](repeating: value, count: rows)
        case .not(let inner):
            guard var result = try inner.verdicts(columns, rows: rows) else { return nil }
            for i in result.indices { result[i].toggle() }
            return result
        case .and(let a, let b), .or(let a, let b):
            guard var left = try a.verdicts(columns, rows: rows), let right = try b.verdicts(columns, rows: rows) else { return nil }
            if case .and = self {
                for i in left.indices { left[i] = left[i] && right[i] }
            } else {
                for i in left.indices { left[i] = left[i] || right[i] }
            }
            return left
        case .compare(let slot, let op, let test, let constant, let slotOnLeft, _):
            guard let column = columns[slot], column.rows == rows else { return nil }
            let null = try test(.null)
            var result: [Bool]
            switch constant {
            case .value(let value):
                if value.isNull {
                    // Any value against nil: the same answer whatever the value.
                    let dummy: Value = column.kind == .integer ? .integer(0) : column.kind == .boolean ? .bool(false) : column.kind == .date ? .date(Date()) : .double(0)
                    let other = try test(dummy)
                    result = [Bool](repeating: other, count: rows)
                } else {
                    guard let bits = Column.bits(value, kind: column.kind), let compare = Self.comparison(op, slotOnLeft: slotOnLeft) else { return nil }
                    result = compare(column, bits)
                }
            case .list(let items):
                guard op == .in, slotOnLeft else { return nil }
                // -0.0 and 0.0 are equal numbers with different bits.
                let floating = column.kind == .double || column.kind == .date
                var wanted = Set<UInt64>()
                for value in items {
                    if value.isNull { continue }  // decides the nil rows, through `null`
                    guard let bits = Column.bits(value, kind: column.kind) else { return nil }
                    wanted.insert(floating && Double(bitPattern: bits) == 0 ? 0 : bits)
                }
                result = column.values.map { bits in wanted.contains(floating && Double(bitPattern: bits) == 0 ? 0 : bits) }
            }
            for i in 0..<rows where column.isNull(i) { result[i] = null }
            return result
        case .reference:
            return nil
        }
    }

    /// `column[i] op constant` (or `constant op column[i]`) for every row, typed by the column's kind.
    private static func comparison(_ op: PredicateComparison.Operator, slotOnLeft: Bool) -> ((Column, UInt64) -> [Bool])? {
        // With the constant on the left, `k < x` is `x > k`.
        let flipped: PredicateComparison.Operator
        switch op {
        case .equal, .notEqual: flipped = op
        case .less: flipped = slotOnLeft ? .less : .greater
        case .lessOrEqual: flipped = slotOnLeft ? .lessOrEqual : .greaterOrEqual
        case .greater: flipped = slotOnLeft ? .greater : .less
        case .greaterOrEqual: flipped = slotOnLeft ? .greaterOrEqual : .lessOrEqual
        default: return nil
        }
        func apply<T: Comparable>(_ values: [UInt64], _ k: T, _ convert: (UInt64) -> T) -> [Bool] {
            switch flipped {
            case .equal: return values.map { convert($0) == k }
            case .notEqual: return values.map { convert($0) != k }
            case .less: return values.map { convert($0) < k }
            case .lessOrEqual: return values.map { convert($0) <= k }
            case .greater: return values.map { convert($0) > k }
            default: return values.map { convert($0) >= k }
            }
        }
        return { column, k in
            switch column.kind {
            case .integer, .boolean: return apply(column.values, Int64(bitPattern: k)) { Int64(bitPattern: $0) }
            case .double, .date: return apply(column.values, Double(bitPattern: k)) { Double(bitPattern: $0) }
            }
        }
    }
}

/// The constant a slot is compared with: one value, or the list of an `IN`.
@usableFromInline package enum SlotConstant {
    case value(Value)
    case list([Value])
}

/// A slot predicate ready to test many objects: when it is an AND of comparisons the direct
/// tests decide (the common shape: `priority >= 2 AND dueDate < $now`), they are tested as
/// a flat list, without walking the predicate's tree per object.
@usableFromInline package struct SlotTest {
    @usableFromInline package let predicate: SlotPredicate
    /// The ANDed direct comparisons, in the predicate's order; empty when it has another
    /// shape.
    @usableFromInline package let conjuncts: [(slot: Int, test: DirectTest)]
    /// Whether the predicate is made only of ANDed direct comparisons (it then has one at least).
    @inlinable package var isFlat: Bool { !conjuncts.isEmpty }

    package init(_ predicate: SlotPredicate) {
        func flattened(_ p: SlotPredicate) -> [(slot: Int, test: DirectTest)]? {
            switch p {
            case .and(let a, let b):
                guard let x = flattened(a), let y = flattened(b) else { return nil }
                return x + y
            case .compare(let slot, _, _, _, true, let direct?): return [(slot, direct)]
            default: return nil
            }
        }
        self.predicate = predicate
        self.conjuncts = flattened(predicate) ?? []
    }

    /// Whether `values` pass: the flat list's verdict, or the predicate's when a comparison
    /// meets a value its direct test does not decide (as ``SlotPredicate`` decides it: an
    /// earlier comparison that fails decides the AND).
    @inlinable package func matches(_ values: [SlotValue]) throws -> Bool {
        guard isFlat else { return try predicate.matches(reading: values) }
        for (slot, test) in conjuncts {
            guard slot < values.count, case .value(let value) = values[slot] else { return false }
            guard let verdict = test.test(value) else { return try predicate.matches(reading: values) }
            if !verdict { return false }
        }
        return true
    }
}

/// A comparison of a value with a constant that needs none of the general comparison's
/// work: nil or not, a string equal or not, a string containing a constant (CONTAINS
/// without options), a date or an integer against a constant, and `IN` a list of UUIDs,
/// of strings or of integers (a set's lookup, not a comparison with each listed value: a
/// list of 12,000 dependencies tested against 120,000 tasks took minutes).
@usableFromInline package enum DirectTest {
    case null(equal: Bool)
    case string(String, equal: Bool)
    case contains(String)
    case date(Date, PredicateComparison.Operator)
    case integer(Int64, PredicateComparison.Operator)
    case uuids(Set<UUID>)
    case strings(Set<String>)
    case integers(Set<Int64>)

    /// The direct test of `op` with `constant` on the right, when there is one.
    package init?(_ op: PredicateComparison.Operator, _ constant: SlotConstant) {
        if op == .in, case .list(let items) = constant, let first = items.first {
            // One kind of value listed, which equals a value of that kind exactly when it is
            // the same (strings without options: Swift's equality, canonical equivalence).
            switch first {
            case .uuid:
                let uuids = items.compactMap { if case .uuid(let u) = $0 { u } else { nil } }
                guard uuids.count == items.count else { return nil }
                self = .uuids(Set(uuids))
            case .string:
                let strings = items.compactMap { if case .string(let t) = $0 { t } else { nil } }
                guard strings.count == items.count else { return nil }
                self = .strings(Set(strings))
            case .integer:
                let numbers = items.compactMap { if case .integer(let n) = $0 { n } else { nil } }
                guard numbers.count == items.count else { return nil }
                self = .integers(Set(numbers))
            default: return nil
            }
            return
        }
        guard case .value(let right) = constant else { return nil }
        switch (op, right) {
        case (.equal, .null), (.notEqual, .null): self = .null(equal: op == .equal)
        case (.equal, .string(let text)), (.notEqual, .string(let text)): self = .string(text, equal: op == .equal)
        case (.contains, .string(let text)): self = .contains(text)
        case (.less, .date(let date)), (.lessOrEqual, .date(let date)), (.greater, .date(let date)), (.greaterOrEqual, .date(let date)):
            self = .date(date, op)
        case (.less, .integer(let number)), (.lessOrEqual, .integer(let number)), (.greater, .integer(let number)),
             (.greaterOrEqual, .integer(let number)), (.equal, .integer(let number)), (.notEqual, .integer(let number)):
            self = .integer(number, op)
        default: return nil
        }
    }

    /// The verdict for `value`, or nil when it is of a kind this test does not decide (the
    /// general comparison does). Nil against a date or an integer has no order and equals
    /// nothing: only `!=` holds.
    @inlinable @inline(__always)
    package func test(_ value: Value) -> Bool? {
        switch self {
        case .null(let equal):
            return value.isNull == equal
        case .string(let text, let equal):
            guard case .string(let string) = value else { return nil }
            return (string == text) == equal
        case .contains(let needle):
            guard case .string(let string) = value else { return nil }
            return StringMatching.contains(string, needle, [])
        case .date(let date, let op):
            guard case .date(let value) = value else { return value.isNull ? false : nil }
            switch op {
            case .less: return value < date
            case .lessOrEqual: return !(value > date)
            case .greater: return value > date
            default: return !(value < date)
            }
        case .integer(let number, let op):
            guard case .integer(let value) = value else { return value.isNull ? op == .notEqual : nil }
            switch op {
            case .less: return value < number
            case .lessOrEqual: return value <= number
            case .greater: return value > number
            case .greaterOrEqual: return value >= number
            case .equal: return value == number
            default: return value != number
            }
        case .uuids(let members):
            guard case .uuid(let value) = value else { return value.isNull ? false : nil }
            return members.contains(value)
        case .strings(let members):
            guard case .string(let value) = value else { return value.isNull ? false : nil }
            return members.contains(value)
        case .integers(let members):
            guard case .integer(let value) = value else { return value.isNull ? false : nil }
            return members.contains(value)
        }
    }
}

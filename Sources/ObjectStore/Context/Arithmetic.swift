import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// Arithmetic on values: integers stay integers while they fit (overflow falls back to
/// double), decimals stay decimal, dates move by seconds, and a date minus a date is seconds.
/// Nil in, nil out.
enum Arithmetic {
    static func apply(_ op: ObjectExpression.ArithmeticOperator, _ a: Value, _ b: Value) throws -> Value {
        if a.isNull || b.isNull { return .null }
        func bad() -> PredicateEvaluationError {
            PredicateEvaluationError(message: "cannot compute \(a) \(op.rawValue) \(b)")
        }
        switch (a, b) {
        case (.date(let d), _) where b.isNumber:
            guard let seconds = b.doubleValue else { throw bad() }
            switch op {
            case .add: return .date(d.addingTimeInterval(seconds))
            case .subtract: return .date(d.addingTimeInterval(-seconds))
            default: throw bad()
            }
        case (_, .date(let d)) where a.isNumber && op == .add:
            return .date(d.addingTimeInterval(a.doubleValue ?? 0))
        case (.date(let x), .date(let y)) where op == .subtract:
            return .double(x.timeIntervalSince(y))
        case (.bool(let x), _):
            return try apply(op, .integer(x ? 1 : 0), b)
        case (_, .bool(let y)):
            return try apply(op, a, .integer(y ? 1 : 0))
        default:
            break
        }
        guard a.isNumber, b.isNumber else { throw bad() }
        if case .integer(let x) = a, case .integer(let y) = b {
            switch op {
            case .add:
                let (r, o) = x.addingReportingOverflow(y)
                if !o { return .integer(r) }
            case .subtract:
                let (r, o) = x.subtractingReportingOverflow(y)
                if !o { return .integer(r) }
            case .multiply:
                let (r, o) = x.multipliedReportingOverflow(by: y)
                if !o { return .integer(r) }
            case .divide:
                if y == 0 { return .null }
                if x % y == 0, !(x == .min && y == -1) { return .integer(x / y) }
            case .power:
                break
            }
        }
        if case .decimal = a, op != .power, let x = a.decimalValue, let y = b.decimalValue {
            return try decimal(op, x, y)
        }
        if case .decimal = b, op != .power, let x = a.decimalValue, let y = b.decimalValue {
            return try decimal(op, x, y)
        }
        guard let x = a.doubleValue, let y = b.doubleValue else { throw bad() }
        switch op {
        case .add: return .double(x + y)
        case .subtract: return .double(x - y)
        case .multiply: return .double(x * y)
        case .divide: return y == 0 ? .null : .double(x / y)
        case .power: return .double(pow(x, y))
        }
    }

    private static func decimal(_ op: ObjectExpression.ArithmeticOperator, _ x: Decimal, _ y: Decimal) throws -> Value {
        switch op {
        case .add: return .decimal(x + y)
        case .subtract: return .decimal(x - y)
        case .multiply: return .decimal(x * y)
        case .divide: return y == 0 ? .null : .decimal(x / y)
        case .power: return .null
        }
    }
}

/// The `@count @sum @avg @min @max @distinctUnionOfObjects` collection operators.
enum CollectionOperators {
    static func apply(_ name: String, _ items: [Operand], _ tail: (Operand) throws -> Operand) throws -> Operand {
        if name == "@count" { return .value(.integer(Int64(items.count))) }
        let function: Fold.Function?
        switch name {
        case "@sum": function = .sum
        case "@avg": function = .average
        case "@min": function = .min
        case "@max": function = .max
        default: function = nil
        }
        if let function {
            var fold = Fold(function)
            for item in items { try fold.add(try tail(item)) }
            return .value(fold.result)
        }
        var results: [Operand] = []
        for item in items {
            let value = try tail(item)
            if case .collection(let inner) = value { results.append(contentsOf: inner) } else { results.append(value) }
        }
        switch name {
        case "@distinctUnionOfObjects":
            var seenValues = Set<Value>()
            var seenObjects = Set<ObjectID>()
            return .collection(results.filter { operand in
                switch operand {
                case .value(let v): return seenValues.insert(v).inserted
                case .object(let o?): return seenObjects.insert(o.objectID).inserted
                default: return false
                }
            })
        default:
            throw PredicateEvaluationError(message: "unknown collection operator \(name); known: @count, @sum, @avg, @min, @max, @distinctUnionOfObjects")
        }
    }
}

/// The functions of ObjectStore's Predicates guide.
enum PredicateFunctionEvaluator {
    static func call(_ name: String, _ args: [Operand], now: Date) throws -> Operand {
        func number(_ i: Int) throws -> Double? {
            let v = args[i].sortValue
            if v.isNull { return nil }
            guard let d = v.doubleValue else { throw PredicateEvaluationError(message: "\(name)() needs a number, got \(v)") }
            return d
        }
        func string(_ i: Int) throws -> String? {
            let v = args[i].sortValue
            if v.isNull { return nil }
            guard case .string(let s) = v else { throw PredicateEvaluationError(message: "\(name)() needs a string, got \(v)") }
            return s
        }
        func unary(_ f: (Double) -> Double) throws -> Operand {
            guard let x = try number(0) else { return .null }
            return .value(.double(f(x)))
        }
        /// The values of a list of arguments, or of one collection argument.
        var listed: [Value] {
            let items = args.count == 1 ? args[0].elementsOrSelf : args
            return items.map(\.sortValue).filter { !$0.isNull }
        }
        switch name {
        case "now": return .value(.date(now))
        case "uuid": return .value(.uuid(UUID()))
        case "coalesce": return args.first { !$0.isNull } ?? .null
        case "abs":
            if case .value(.integer(let i)) = args[0], i != .min { return .value(.integer(abs(i))) }
            if case .value(.decimal(let d)) = args[0] { return .value(.decimal(abs(d))) }
            return try unary { Swift.abs($0) }
        case "sqrt": return try unary { $0.squareRoot() }
        case "floor": return try unary { $0.rounded(.down) }
        case "ceiling": return try unary { $0.rounded(.up) }
        case "round": return try unary { $0.rounded() }
        case "trunc": return try unary { $0.rounded(.towardZero) }
        case "ln": return try unary { Foundation.log($0) }
        case "log": return try unary { Foundation.log10($0) }
        case "exp": return try unary { Foundation.exp($0) }
        case "min", "max":
            return try CollectionOperators.apply("@" + name, listed.map { .value($0) }) { $0 }
        case "sum":
            return try CollectionOperators.apply("@sum", listed.map { .value($0) }) { $0 }
        case "average":
            return try CollectionOperators.apply("@avg", listed.map { .value($0) }) { $0 }
        case "count":
            return .value(.integer(Int64(args[0].elementsOrSelf.count)))
        case "lowercase": return try string(0).map { .value(.string($0.lowercased())) } ?? .null
        case "uppercase": return try string(0).map { .value(.string($0.uppercased())) } ?? .null
        case "trim": return try string(0).map { .value(.string($0.trimmingCharacters(in: .whitespacesAndNewlines))) } ?? .null
        case "length": return try string(0).map { .value(.integer(Int64($0.count))) } ?? .null
        case "concat":
            var text = ""
            for i in args.indices {
                let v = args[i].sortValue
                if case .string(let s) = v { text += s } else if !v.isNull { text += v.description }
            }
            return .value(.string(text))
        case "daysFromNow":
            guard let days = try number(0) else { return .null }
            return .value(.date(now.addingTimeInterval(days * 86_400)))
        case "startOfDay":
            guard case .value(.date(let date)) = args[0] else { return .null }
            return .value(.date(Calendar.current.startOfDay(for: date)))
        default:
            throw PredicateEvaluationError(message: "unknown function \(name)()")
        }
    }
}

extension CollectionOperators {
    /// `@sum`, `@avg`, `@min` or `@max` of values met one at a time: the running total or the smallest or largest so far, so the values need
    /// not be kept (``ManagedObjectContext/fetchGroups(_:groupBy:aggregates:)`` folds each
    /// group's this way). Nil values, objects and nested collections are passed over.
    struct Fold {
        enum Function {
            case sum, average, min, max
        }

        let function: Function
        private var count = 0
        private var total: Value = .integer(0)
        private var best: Value?

        init(_ function: Function) {
            self.function = function
        }

        /// Adds a value (a collection's members one by one, one level deep).
        mutating func add(_ operand: Operand) throws {
            if case .collection(let members) = operand {
                for member in members { try add(scalar: member) }
            } else {
                try add(scalar: operand)
            }
        }

        private mutating func add(scalar operand: Operand) throws {
            guard let value = operand.scalar, !value.isNull else { return }
            count += 1
            switch function {
            case .sum, .average: total = try Arithmetic.apply(.add, total, value)
            case .min, .max:
                guard let current = best else {
                    best = value
                    return
                }
                guard let order = value.compare(to: current) else {
                    throw PredicateEvaluationError(message: "@\(function) cannot compare \(value.typeName) with \(current.typeName)")
                }
                if (function == .min && order == .orderedAscending) || (function == .max && order == .orderedDescending) { best = value }
            }
        }

        var result: Value {
            switch function {
            case .sum: return total
            case .average:
                guard count > 0 else { return .null }
                if case .decimal(let d) = total { return .decimal(d / Decimal(count)) }
                return .double((total.doubleValue ?? 0) / Double(count))
            case .min, .max: return best ?? .null
            }
        }
    }
}

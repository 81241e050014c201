import Foundation
import ObjectStoreModel
import ObjectStoreStorage

typealias ExpressionClosure = (ManagedObject?, EvaluationScope) throws -> Operand
typealias PredicateClosure = (ManagedObject?, EvaluationScope) throws -> Bool

/// Compiles predicates into closures over slot indices, once per (predicate, entity): key
/// paths are resolved to slots when compiling, so evaluating an object does no name lookups.
struct PredicateCompiler {
    let model: ManagedObjectModel

    /// Static entities of variables (SUBQUERY's, `$FETCH_SOURCE`), for slot resolution.
    var variableEntities: [String: EntityDescription] = [:]

    // MARK: Predicates

    func compile(_ predicate: ObjectPredicate, entity: EntityDescription?) -> PredicateClosure {
        switch predicate {
        case .constant(let b):
            return { _, _ in b }
        case .not(let p):
            let inner = compile(p, entity: entity)
            return { object, scope in try !inner(object, scope) }
        case .and(let a, let b):
            let l = compile(a, entity: entity), r = compile(b, entity: entity)
            return { object, scope in try l(object, scope) && r(object, scope) }
        case .or(let a, let b):
            let l = compile(a, entity: entity), r = compile(b, entity: entity)
            return { object, scope in try l(object, scope) || r(object, scope) }
        case .comparison(let c):
            return compile(c, entity: entity)
        }
    }

    private func compile(_ c: PredicateComparison, entity: EntityDescription?) -> PredicateClosure {
        let lhs = compile(c.lhs, entity: entity)
        let rhs = compile(c.rhs, entity: entity)
        let constantRight: Value? = { if case .constant(let v) = c.rhs { return v } else { return nil } }()
        // MATCHES reads the query's clock from the scope; every other test needs no scope.
        let test: (Operand, Operand, EvaluationScope) throws -> Bool
        if c.op == .matches {
            test = Self.matches(options: c.options, constantRight: constantRight)
        } else {
            let plain = Self.test(for: c.op, options: c.options, constantRight: constantRight)
            test = { l, r, _ in try plain(l, r) }
        }
        switch c.quantifier {
        case .direct:
            if let targets = Self.referenceTargets(c, entity: entity) {
                // A to-one relationship against object URIs: a set of IDs, not a URI made
                // and compared per listed object (the planner writes such lists, of any length).
                return { object, scope in
                    let l = try lhs(object, scope)
                    if case .object(let reached) = l { return reached.map { targets.contains($0.objectID) } ?? false }
                    return try test(l, try rhs(object, scope), scope)
                }
            }
            if c.op == .in, c.options.isEmpty, case .array(let items) = c.rhs,
               case let values = items.compactMap({ item -> Value? in if case .constant(let v) = item { v } else { nil } }),
               values.count == items.count, let direct = DirectTest(.in, .list(values)) {
                // `IN` a list of UUIDs, strings or integers: a set's lookup (SlotPredicate's),
                // not the list walked for every object.
                return { object, scope in
                    let l = try lhs(object, scope)
                    if case .value(let value) = l, let verdict = direct.test(value) { return verdict }
                    return try test(l, try rhs(object, scope), scope)
                }
            }
            let membership = c.op == .contains || c.op == .in
            return { object, scope in
                let l = try lhs(object, scope), r = try rhs(object, scope)
                // A to-many key path compared directly means "any of its values".
                if !membership, case .collection(let items) = l {
                    return try items.contains { try test($0, r, scope) }
                }
                return try test(l, r, scope)
            }
        case .any:
            return { object, scope in
                let r = try rhs(object, scope)
                return try (try lhs(object, scope)).elementsOrSelf.contains { try test($0, r, scope) }
            }
        case .all:
            return { object, scope in
                let r = try rhs(object, scope)
                return try (try lhs(object, scope)).elementsOrSelf.allSatisfy { try test($0, r, scope) }
            }
        case .none:
            return { object, scope in
                let r = try rhs(object, scope)
                return try !(try lhs(object, scope)).elementsOrSelf.contains { try test($0, r, scope) }
            }
        }
    }

    /// The IDs a comparison of a to-one relationship with object URIs (`==` one, `IN` a list)
    /// accepts, or nil when it has another shape. A URI that is not an object ID's as written
    /// equals no object, so it is left out.
    static func referenceTargets(_ c: PredicateComparison, entity: EntityDescription?) -> Set<ObjectID>? {
        guard let entity, c.quantifier == .direct, c.op == .in || c.op == .equal, case .keyPath(.evaluatedObject, let path) = c.lhs, path.count == 1,
              let relationship = entity.relationship(named: path[0]), !relationship.isToMany else { return nil }
        let items: [ObjectExpression]
        switch (c.op, c.rhs) {
        case (.in, .array(let listed)): items = listed
        case (.equal, .constant(.uri)): items = [c.rhs]
        default: return nil
        }
        var targets = Set<ObjectID>()
        for item in items {
            guard case .constant(.uri(let uri)) = item else { return nil }
            if let id = ObjectID(uri: uri), id.uriRepresentation == uri { targets.insert(id) }
        }
        return targets
    }

    /// MATCHES: a whole-string ICU regular expression, within the query's time (a value may
    /// take 100 ms, the query 1 s and 1 ms a value in all: ``MatchClock``).
    static func matches(options: PredicateComparison.Options, constantRight: Value?) -> (Operand, Operand, EvaluationScope) throws -> Bool {
        let caseInsensitive = options.contains(.caseInsensitive)
        let cache = RegexCache()
        if case .string(let pattern)? = constantRight { cache.prepare(pattern, caseInsensitive: caseInsensitive) }
        return { l, r, scope in
            guard case .value(.string(let text)) = l, case .value(.string(let pattern)) = r else { return false }
            let subject = options.contains(.diacriticInsensitive) ? StringMatching.fold(text, [.diacriticInsensitive]) : text
            guard let regex = cache.regex(pattern, caseInsensitive: caseInsensitive) else {
                throw PredicateEvaluationError(message: "MATCHES: '\(pattern)' is not a valid regular expression")
            }
            let clock = scope.matchClock ?? MatchClock()
            switch clock.wholeMatch(regex, subject) {
            case .matched(let matched): return matched
            case .valueTooSlow:
                throw PredicateEvaluationError(message: "MATCHES '\(pattern)' took more than \(Int(clock.perValue * 1000)) ms on one value (\(subject.count) characters); a pattern with nested repetition such as (a+)+ backtracks without end")
            case .totalTooSlow:
                throw PredicateEvaluationError(message: "MATCHES '\(pattern)' took \(clock.spent / 1_000_000) ms in this query for \(clock.values) values, more than 1 s and 1 ms a value; a pattern with nested repetition such as (a+)+ backtracks without end")
            }
        }
    }

    static func test(for op: PredicateComparison.Operator, options: PredicateComparison.Options, constantRight: Value?) -> (Operand, Operand) throws -> Bool {
        switch op {
        case .equal: return { l, r in equal(l, r, options) }
        case .notEqual: return { l, r in !equal(l, r, options) }
        case .less: return { l, r in compare(l, r, options) == .orderedAscending }
        case .lessOrEqual: return { l, r in let o = compare(l, r, options); return o == .orderedAscending || o == .orderedSame }
        case .greater: return { l, r in compare(l, r, options) == .orderedDescending }
        case .greaterOrEqual: return { l, r in let o = compare(l, r, options); return o == .orderedDescending || o == .orderedSame }
        case .between:
            return { l, r in
                guard let bounds = r.elements, bounds.count == 2 else { return false }
                let low = compare(l, bounds[0], options), high = compare(l, bounds[1], options)
                return (low == .orderedDescending || low == .orderedSame) && (high == .orderedAscending || high == .orderedSame)
            }
        case .in:
            return { l, r in
                switch r {
                case .collection(let items): return items.contains { equal(l, $0, options) }
                case .value(.string(let haystack)):
                    guard case .value(.string(let needle)) = l else { return false }
                    return StringMatching.contains(haystack, needle, options)
                default: return false
                }
            }
        case .contains:
            return { l, r in
                switch l {
                case .collection(let items): return items.contains { equal($0, r, options) }
                case .value(.string(let haystack)):
                    guard case .value(.string(let needle)) = r else { return false }
                    return StringMatching.contains(haystack, needle, options)
                default: return false
                }
            }
        case .beginsWith, .endsWith, .like:
            return { l, r in
                guard case .value(.string(let a)) = l, case .value(.string(let b)) = r else { return false }
                let x = StringMatching.fold(a, options), y = StringMatching.fold(b, options)
                switch op {
                case .beginsWith: return x.hasPrefix(y)
                case .endsWith: return x.hasSuffix(y)
                default: return StringMatching.like(x, y)
                }
            }
        case .matches:
            // Only through ``matches(options:constantRight:)``, with the query's clock; a
            // clock of its own here would bound one value, not the query.
            let matcher = matches(options: options, constantRight: constantRight)
            return { l, r in try matcher(l, r, EvaluationScope(now: Date())) }
        }
    }

    /// Equality: nil equals only nil; numbers by value across integer, double and decimal;
    /// objects by ID; strings with the options.
    static func equal(_ l: Operand, _ r: Operand, _ options: PredicateComparison.Options) -> Bool {
        switch (l, r) {
        case (.object(let a), .object(let b)): return a?.objectID == b?.objectID
        case (.object(let a), .value(let v)), (.value(let v), .object(let a)):
            if v.isNull { return a == nil }
            if case .uri(let uri) = v, let a { return a.objectID.uriRepresentation == uri }
            return false
        case (.value(let a), .value(let b)):
            if a.isNull || b.isNull { return a.isNull && b.isNull }
            if case .string(let x) = a, case .string(let y) = b { return StringMatching.fold(x, options) == StringMatching.fold(y, options) }
            if let order = a.compare(to: b) { return order == .orderedSame }
            return a == b
        case (.collection(let a), .collection(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { equal($0, $1, options) }
        default:
            return false
        }
    }

    /// Ordering; `nil` when the operands have no common order (nil included).
    static func compare(_ l: Operand, _ r: Operand, _ options: PredicateComparison.Options) -> ComparisonResult? {
        guard case .value(let a) = l, case .value(let b) = r else { return nil }
        if case .string(let x) = a, case .string(let y) = b, !options.isEmpty {
            return Value.string(StringMatching.fold(x, options)).compare(to: .string(StringMatching.fold(y, options)))
        }
        return a.compare(to: b)
    }

    // MARK: Expressions

    func compile(_ expression: ObjectExpression, entity: EntityDescription?) -> ExpressionClosure {
        switch expression {
        case .constant(let v):
            let operand = Operand.value(v)
            return { _, _ in operand }
        case .array(let items):
            let compiled = items.map { compile($0, entity: entity) }
            return { object, scope in .collection(try compiled.map { try $0(object, scope) }) }
        case .evaluatedObject:
            return { object, _ in .object(object) }
        case .variable(let name):
            return { _, scope in
                guard let value = scope.variables[name] else {
                    throw PredicateEvaluationError(message: "no value for the variable $\(name)")
                }
                return value
            }
        case .keyPath(let base, let path):
            let baseEntity: EntityDescription?
            switch base {
            case .evaluatedObject: baseEntity = entity
            case .variable(let name): baseEntity = variableEntities[name]
            default: baseEntity = nil
            }
            let start = compile(base, entity: entity)
            let follow = compileKeyPath(path[...], entity: baseEntity)
            return { object, scope in try follow(try start(object, scope), scope) }
        case .arithmetic(let op, let a, let b):
            let l = compile(a, entity: entity), r = compile(b, entity: entity)
            return { object, scope in
                .value(try Arithmetic.apply(op, try l(object, scope).sortValueForMath, try r(object, scope).sortValueForMath))
            }
        case .negate(let e):
            let inner = compile(e, entity: entity)
            return { object, scope in
                .value(try Arithmetic.apply(.subtract, .integer(0), try inner(object, scope).sortValueForMath))
            }
        case .function(let name, let args):
            let compiled = args.map { compile($0, entity: entity) }
            return { object, scope in
                try PredicateFunctionEvaluator.call(name, try compiled.map { try $0(object, scope) }, now: scope.now)
            }
        case .index(let e, let index):
            let collection = compile(e, entity: entity)
            let position: ExpressionClosure? = { if case .expression(let ix) = index { return compile(ix, entity: entity) } else { return nil } }()
            return { object, scope in
                let items = (try collection(object, scope)).elementsOrSelf
                switch index {
                case .first: return items.first ?? .null
                case .last: return items.last ?? .null
                case .size: return .value(.integer(Int64(items.count)))
                case .expression:
                    guard let position, case .value(.integer(let i)) = try position(object, scope) else {
                        throw PredicateEvaluationError(message: "an index must be an integer")
                    }
                    return i >= 0 && i < Int64(items.count) ? items[Int(i)] : .null
                }
            }
        case .subquery(let collectionExpression, let variable, let predicate):
            let collection = compile(collectionExpression, entity: entity)
            var inner = self
            inner.variableEntities[variable] = elementEntity(of: collectionExpression, entity: entity)
            let test = inner.compile(predicate, entity: entity)
            return { object, scope in
                var matches: [Operand] = []
                var innerScope = scope
                for item in (try collection(object, scope)).elementsOrSelf {
                    innerScope.variables[variable] = item
                    if try test(object, innerScope) { matches.append(item) }
                }
                return .collection(matches)
            }
        case .cast(let e, let type):
            let inner = compile(e, entity: entity)
            return { object, scope in
                let value = try inner(object, scope).sortValueForMath
                guard let converted = PredicateFunctions.cast(value, to: type) else {
                    throw PredicateEvaluationError(message: "cannot CAST \(value) to \(type)")
                }
                return .value(converted)
            }
        }
    }

    /// The entity of the elements a collection expression yields, when it is known.
    private func elementEntity(of expression: ObjectExpression, entity: EntityDescription?) -> EntityDescription? {
        guard case .keyPath(let base, let path) = expression else { return nil }
        var current: EntityDescription?
        switch base {
        case .evaluatedObject: current = entity
        case .variable(let name): current = variableEntities[name]
        default: return nil
        }
        for key in path {
            guard let relationship = current?.relationship(named: key) else { return nil }
            current = model.entity(named: relationship.destinationEntityName)
        }
        return current
    }

    /// A closure following key path components from an operand.
    private func compileKeyPath(_ path: ArraySlice<String>, entity: EntityDescription?) -> (Operand, EvaluationScope) throws -> Operand {
        guard let key = path.first else { return { operand, _ in operand } }
        let rest = path.dropFirst()
        if key.hasPrefix("@") {
            let tail = compileKeyPath(rest, entity: entity)
            return { operand, scope in
                let items = operand.elementsOrSelf
                return try CollectionOperators.apply(key, items) { try tail($0, scope) }
            }
        }
        let slot = entity?.slot(of: key)
        let property = slot.flatMap { entity?.properties[$0] }
        let nextEntity = property?.relationship.flatMap { model.entity(named: $0.destinationEntityName) }
        let next = compileKeyPath(rest, entity: nextEntity)
        // What a step needs, taken out of the descriptions once (copying a property or an
        // entity description per object was most of a count's time).
        let entityName = entity?.name ?? ""
        let derivedName = property?.attribute.flatMap { $0.isDerived ? $0.name : nil }
        // The slot, when the key names a property (not the property itself: testing a captured
        // description for nil copied it per object).
        let knownSlot = property == nil ? nil : slot
        let step: (ManagedObject) throws -> Operand = { object in
            // Objects of a sub-entity share the parent's slots; other objects are looked up
            // by name (a variable of unknown entity).
            if let slot = knownSlot, object.entity.name == entityName || object.entity.isKind(of: entityName) {
                return try Self.read(object, slot: slot, derivedName: derivedName)
            }
            guard let dynamicSlot = object.entity.slot(of: key) else {
                let context: (any FetchedPropertyReading)? = object.managedObjectContext
                if let fetched = object.entity.fetchedProperty(named: key), let reader = context {
                    return .collection(try reader.fetchedPropertyObjects(fetched, of: object).map { .object($0) })
                }
                throw ObjectStoreError.unknownKey(entity: object.entity.name, key: key, suggestion: NameSuggestion.closest(to: key, in: object.entity.properties.map(\.name)))
            }
            let dynamic = object.entity.properties[dynamicSlot].attribute
            return try Self.read(object, slot: dynamicSlot, derivedName: dynamic.flatMap { $0.isDerived ? $0.name : nil })
        }
        return { operand, scope in
            let stepped: Operand
            switch operand {
            case .object(let object?):
                stepped = try step(object)
            case .object(nil), .value(.null):
                stepped = .null
            case .collection(let items):
                // Objects reached through to-many relationships form a set, as in Core Data:
                // each object once, so `tags.tasks.tags.tasks...` stays as large as the objects
                // it reaches instead of doubling per step. Attribute values are all kept
                // (`items.price.@sum` adds every item's price).
                var results: [Operand] = []
                var seen: Set<ObjectIdentifier> = []
                for item in items {
                    guard case .object(let object?) = item else { continue }
                    let value = try step(object)
                    for element in (value.isCollection ? value.elementsOrSelf : [value]) {
                        if case .object(let reached?) = element, !seen.insert(ObjectIdentifier(reached)).inserted { continue }
                        results.append(element)
                    }
                    if results.count > Self.maximumCollection {
                        throw PredicateEvaluationError(message: "the key path '\(path.joined(separator: "."))' reaches more than \(Self.maximumCollection) values")
                    }
                }
                stepped = .collection(results)
            case .value:
                throw PredicateEvaluationError(message: "'\(key)' follows a value, not an object; only relationships can be followed")
            }
            return try next(stepped, scope)
        }
    }

    /// The most values a key path may gather from one object.
    static let maximumCollection = 1_000_000

    /// A slot's value as an operand; `derivedName` names a derived attribute, computed.
    static func read(_ object: ManagedObject, slot: Int, derivedName: String?) throws -> Operand {
        if let derivedName {
            return .value(try object.value(forKey: derivedName))
        }
        do {
            try object.fireFault()
        } catch {
            return .null  // a dangling reference (deleted elsewhere) reads as nil
        }
        switch object.slots[slot] {
        case .value(let v): return .value(v)
        case .toOne(let id):
            guard let id, let context = object.managedObjectContext else { return .object(nil) }
            return .object(try? context.object(with: id))
        case .toMany(let stored):
            guard let context = object.managedObjectContext else { return .collection([]) }
            let ids = object.entity.isDerivedToMany(slot: slot) ? try context.referencedIDs(of: object, at: slot) : stored
            return .collection(ids.compactMap { try? context.object(with: $0) }.map { .object($0) })
        }
    }
}

extension Operand {
    var isCollection: Bool {
        if case .collection = self { return true }
        return false
    }

    /// A collection's elements, or the operand alone (nil makes an empty collection).
    var elementsOrSelf: [Operand] {
        switch self {
        case .collection(let items): return items
        case .object(nil), .value(.null): return []
        default: return [self]
        }
    }

    /// The value arithmetic sees: a value, or the count of a collection.
    var sortValueForMath: Value { sortValue }
}

/// Compiled `NSRegularExpression`s for MATCHES, prepared once for a constant pattern.
final class RegexCache {
    private var cached: [String: NSRegularExpression] = [:]

    func prepare(_ pattern: String, caseInsensitive: Bool) {
        _ = regex(pattern, caseInsensitive: caseInsensitive)
    }

    func regex(_ pattern: String, caseInsensitive: Bool) -> NSRegularExpression? {
        if let regex = cached[pattern] { return regex }
        guard let regex = try? NSRegularExpression(pattern: pattern, options: caseInsensitive ? [.caseInsensitive] : []) else { return nil }
        if cached.count > 64 { cached.removeAll() }
        cached[pattern] = regex
        return regex
    }
}

/// The cache key of a compiled predicate.
struct CompiledKey: Hashable {
    var predicate: ObjectPredicate
    var entity: String
}

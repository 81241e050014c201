/// The static type of a predicate expression, as far as it can be known before evaluation.
public indirect enum PredicateType: Sendable, Hashable, CustomStringConvertible {
    /// Not known until evaluation (a variable, a function of unknown result).
    case unknown
    /// Nil, a boolean, a number, a string, a date, bytes, a UUID or a URI.
    case null, bool, number, string, date, data, uuid, uri
    /// An object of an entity (or of a sub-entity).
    case object(String)
    /// A collection of that type (a to-many relationship, a list).
    case collection(PredicateType)

    init(_ type: AttributeType) {
        switch type {
        case .int16, .int32, .int64, .double, .float, .decimal: self = .number
        case .string: self = .string
        case .boolean: self = .bool
        case .date: self = .date
        case .binary: self = .data
        case .uuid: self = .uuid
        case .uri: self = .uri
        }
    }

    init(_ value: Value) {
        switch value {
        case .null: self = .null
        case .bool: self = .bool
        case .integer, .double, .decimal: self = .number
        case .string: self = .string
        case .date: self = .date
        case .data: self = .data
        case .uuid: self = .uuid
        case .uri: self = .uri
        }
    }

    /// The element type of a collection, or the type itself.
    package var element: PredicateType {
        if case .collection(let e) = self { return e }
        return self
    }

    /// Whether values of this type are collections (a to-many key path).
    public var isCollection: Bool {
        if case .collection = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .unknown: return "a value"
        case .null: return "nil"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .date: return "a date"
        case .data: return "binary data"
        case .uuid: return "a UUID"
        case .uri: return "a URI"
        case .object(let e): return "a \(e)"
        case .collection(let e): return "a collection of \(e)"
        }
    }
}

/// A predicate that parses but does not fit its entity: an unknown key (with the closest
/// property suggested) or a comparison of incompatible types.
public struct PredicateTypeError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    /// The key at fault, when there is one, so a caller can point at it in the text.
    public var key: String?

    public var description: String { message }

    package init(message: String, key: String? = nil) {
        self.message = message
        self.key = key
    }

    /// The 1-based column of ``key`` in `text`, when it occurs there.
    public func column(in text: String) -> Int? {
        guard let key, let range = text.range(of: key) else { return nil }
        return text.distance(from: text.startIndex, to: range.lowerBound) + 1
    }
}

/// Checks a predicate against an entity: every key path must exist, and compared values
/// must have compatible types (numbers with numbers, dates with dates, ...).
///
/// ```swift
/// let checker = PredicateTypeChecker(model: model)
/// try checker.check(try ObjectPredicate("prioriti > 2"), on: "Task")
/// // Task has no property 'prioriti' (did you mean 'priority'?)
/// ```
public struct PredicateTypeChecker: Sendable {
    public let model: ManagedObjectModel
    /// Types of `$VARIABLES`; unknown variables are typed `.unknown`.
    public var variables: [String: PredicateType] = [:]

    public init(model: ManagedObjectModel, variables: [String: PredicateType] = [:]) {
        self.model = model
        self.variables = variables
    }

    /// Checks `predicate` evaluated against objects of `entityName`.
    public func check(_ predicate: ObjectPredicate, on entityName: String) throws(PredicateTypeError) {
        guard model.entity(named: entityName) != nil else {
            throw PredicateTypeError(message: "unknown entity '\(entityName)'", key: nil)
        }
        try check(predicate, self: .object(entityName), variables: variables)
    }

    /// The type of `expression` evaluated against objects of `entityName`.
    public func type(of expression: ObjectExpression, on entityName: String) throws(PredicateTypeError) -> PredicateType {
        try type(of: expression, self: .object(entityName), variables: variables)
    }

    private func check(_ predicate: ObjectPredicate, self selfType: PredicateType, variables: [String: PredicateType]) throws(PredicateTypeError) {
        switch predicate {
        case .constant: return
        case .not(let p): try check(p, self: selfType, variables: variables)
        case .and(let a, let b), .or(let a, let b):
            try check(a, self: selfType, variables: variables)
            try check(b, self: selfType, variables: variables)
        case .comparison(let c):
            let lhs = try type(of: c.lhs, self: selfType, variables: variables)
            let rhs = try type(of: c.rhs, self: selfType, variables: variables)
            try checkComparison(c, lhs, rhs)
        }
    }

    private func checkComparison(_ c: PredicateComparison, _ lhs: PredicateType, _ rhs: PredicateType) throws(PredicateTypeError) {
        if c.quantifier != .direct && !lhs.isCollection && lhs != .unknown {
            throw PredicateTypeError(message: "\(c.quantifier.rawValue) needs a to-many key path on its left, but \(c.lhs) is \(lhs)", key: nil)
        }
        let left = lhs.element
        func mismatch(_ a: PredicateType, _ b: PredicateType) -> PredicateTypeError {
            var hint = ""
            if (a == .date && b == .number) || (a == .number && b == .date) { hint = "; write a date as CAST(seconds, 'NSDate') or use a $VARIABLE" }
            return PredicateTypeError(message: "cannot compare \(c.lhs) (\(a)) with \(c.rhs) (\(b)) using \(c.op.rawValue)\(hint)", key: nil)
        }
        switch c.op {
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
            if !compatible(left, rhs.element) { throw mismatch(left, rhs.element) }
            if [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(c.op), case .object = left {
                throw PredicateTypeError(message: "objects have no order: \(c.lhs) \(c.op.rawValue) \(c.rhs)", key: nil)
            }
        case .between:
            if !compatible(left, rhs.element) { throw mismatch(left, rhs.element) }
        case .in:
            if rhs == .string || rhs == .unknown {
                if !compatible(left, .string) && rhs == .string { throw mismatch(left, rhs) }
            } else if !compatible(left, rhs.element) {
                throw mismatch(left, rhs.element)
            }
        case .contains:
            if lhs.isCollection {
                if !compatible(lhs.element, rhs) { throw mismatch(lhs.element, rhs) }
            } else if !compatible(left, .string) || !compatible(rhs, .string) {
                throw mismatch(left, rhs)
            }
        case .beginsWith, .endsWith, .like, .matches:
            for (expression, type) in [(c.lhs, left), (c.rhs, rhs)] where !compatible(type, .string) {
                throw PredicateTypeError(message: "\(c.op.rawValue) compares strings, but \(expression) is \(type)", key: nil)
            }
        }
    }

    private func compatible(_ a: PredicateType, _ b: PredicateType) -> Bool {
        switch (a, b) {
        case (.unknown, _), (_, .unknown), (.null, _), (_, .null): return true
        case (.number, .bool), (.bool, .number): return true
        // An object compares with its ID's URI (how objects are passed as arguments).
        case (.object, .uri), (.uri, .object): return true
        case (.object(let x), .object(let y)):
            guard let ex = model.entity(named: x), let ey = model.entity(named: y) else { return true }
            return ex.isKind(of: y) || ey.isKind(of: x)
        case (.collection(let x), _): return compatible(x, b)
        case (_, .collection(let y)): return compatible(a, y)
        default: return a == b
        }
    }

    private func type(of expression: ObjectExpression, self selfType: PredicateType, variables: [String: PredicateType]) throws(PredicateTypeError) -> PredicateType {
        switch expression {
        case .constant(let value): return PredicateType(value)
        case .array(let items):
            var element = PredicateType.unknown
            for item in items {
                let t = try type(of: item, self: selfType, variables: variables)
                if element == .unknown || element == .null { element = t }
            }
            return .collection(element)
        case .evaluatedObject: return selfType
        case .variable(let name): return variables[name] ?? .unknown
        case .keyPath(let base, let path):
            return try follow(path[...], from: try type(of: base, self: selfType, variables: variables), fullPath: path)
        case .arithmetic(let op, let a, let b):
            let ta = try type(of: a, self: selfType, variables: variables).element
            let tb = try type(of: b, self: selfType, variables: variables).element
            for (e, t) in [(a, ta), (b, tb)] where ![.number, .date, .unknown, .null, .bool].contains(t) {
                throw PredicateTypeError(message: "arithmetic needs numbers or dates, but \(e) is \(t)", key: nil)
            }
            if ta == .date && tb == .date { return op == .subtract ? .number : .date }
            if ta == .date || tb == .date { return .date }
            return ta == .unknown || tb == .unknown ? .unknown : .number
        case .negate(let e):
            let t = try type(of: e, self: selfType, variables: variables)
            if ![.number, .unknown, .null].contains(t) { throw PredicateTypeError(message: "unary minus needs a number, but \(e) is \(t)", key: nil) }
            return .number
        case .function(let name, let args):
            for arg in args { _ = try type(of: arg, self: selfType, variables: variables) }
            switch name {
            case "now", "daysFromNow", "startOfDay": return .date
            case "lowercase", "uppercase", "trim", "concat": return .string
            case "uuid": return .uuid
            case "coalesce":
                for arg in args {
                    let t = try type(of: arg, self: selfType, variables: variables)
                    if t != .null && t != .unknown { return t }
                }
                return .unknown
            case "min", "max":
                let t = try type(of: args[0], self: selfType, variables: variables)
                return args.count == 1 ? t.element : t
            default: return .number
            }
        case .index(let e, let index):
            let t = try type(of: e, self: selfType, variables: variables)
            if case .size = index { return .number }
            return t.element
        case .subquery(let collection, let variable, let predicate):
            let t = try type(of: collection, self: selfType, variables: variables)
            guard t.isCollection || t == .unknown else {
                throw PredicateTypeError(message: "SUBQUERY needs a to-many collection, but \(collection) is \(t)", key: nil)
            }
            var inner = variables
            inner[variable] = t.element
            try check(predicate, self: selfType, variables: inner)
            return .collection(t.element)
        case .cast(let e, let target):
            _ = try type(of: e, self: selfType, variables: variables)
            switch target {
            case "NSDate": return .date
            case "NSNumber", "NSDecimalNumber": return .number
            case "NSString": return .string
            case "NSUUID": return .uuid
            case "NSURL": return .uri
            default: return .data
            }
        }
    }

    private func follow(_ path: ArraySlice<String>, from base: PredicateType, fullPath: [String]) throws(PredicateTypeError) -> PredicateType {
        guard let key = path.first else { return base }
        let rest = path.dropFirst()
        if key.hasPrefix("@") {
            switch key {
            case "@count": return .number
            case "@sum", "@avg":
                // Numbers only: `@avg.name` of strings failed at evaluation ("cannot compute 0 + ...").
                let folded = try follow(rest, from: base, fullPath: fullPath).element
                switch folded {
                case .number, .unknown, .null: break
                default:
                    throw PredicateTypeError(message: "\(key) in \(fullPath.joined(separator: ".")) adds up numbers, and \(rest.joined(separator: ".")) is \(folded)", key: rest.last ?? key)
                }
                return .number
            case "@min", "@max": return try follow(rest, from: base, fullPath: fullPath).element
            case "@distinctUnionOfObjects":
                let t = try follow(rest, from: base, fullPath: fullPath)
                return t.isCollection ? t : .collection(t)
            default:
                throw PredicateTypeError(message: "unknown collection operator \(key) in \(fullPath.joined(separator: ".")); known: @count, @sum, @avg, @min, @max, @distinctUnionOfObjects", key: key)
            }
        }
        let isCollection = base.isCollection
        switch base.element {
        case .unknown:
            return .unknown
        case .object(let entityName):
            guard let entity = model.entity(named: entityName) else { return .unknown }
            guard let property = entity.property(named: key) else {
                // A sub-entity's property is fine on a parent-typed path only at run time.
                let descendants = model.entityAndDescendants(of: entityName)
                if let sub = descendants.first(where: { $0.property(named: key) != nil }), let p = sub.property(named: key) {
                    return try continueFollowing(p, rest, isCollection: isCollection, fullPath: fullPath)
                }
                let candidates = entity.properties.map(\.name) + entity.fetchedProperties.map(\.name)
                if entity.fetchedProperty(named: key) != nil { return .collection(.unknown) }
                throw PredicateTypeError(
                    message: "\(entity.name) has no property '\(key)'\(NameSuggestion.hint(for: key, in: candidates))", key: key)
            }
            return try continueFollowing(property, rest, isCollection: isCollection, fullPath: fullPath)
        default:
            throw PredicateTypeError(message: "'\(key)' in \(fullPath.joined(separator: ".")) follows \(base.element), which has no keys; only relationships can be followed", key: key)
        }
    }

    private func continueFollowing(_ property: PropertyDescription, _ rest: ArraySlice<String>, isCollection: Bool, fullPath: [String]) throws(PredicateTypeError) -> PredicateType {
        let next: PredicateType
        switch property {
        case .attribute(let a): next = PredicateType(a.type)
        case .relationship(let r): next = r.isToMany ? .collection(.object(r.destinationEntityName)) : .object(r.destinationEntityName)
        }
        let wrapped = isCollection && !next.isCollection ? .collection(next) : next
        return try follow(rest, from: wrapped, fullPath: fullPath)
    }
}

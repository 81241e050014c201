/// The formula of a derived attribute: a predicate (for a boolean, such as
/// `dueDate != nil AND dueDate < now()`) or an expression (such as `priority * 2`).
public enum Derivation: Sendable, Hashable {
    /// A boolean derived from a predicate (`dueDate < now()`).
    case predicate(ObjectPredicate)
    /// A value computed by an expression (`priority * 2`).
    case expression(ObjectExpression)

    /// Parses derivation text: as a predicate when it is one, else as an expression. When
    /// neither parses, the error is the one that got further into the text.
    public init(_ text: String) throws(PredicateSyntaxError) {
        let asPredicate: PredicateSyntaxError
        do {
            self = .predicate(try ObjectPredicate(text))
            return
        } catch {
            asPredicate = error
        }
        do {
            self = .expression(try ObjectExpression(text))
        } catch {
            throw error.column >= asPredicate.column ? error : asPredicate
        }
    }
}

extension Derivation {
    /// The key paths the formula reads from the object it is evaluated on (`dueDate`,
    /// `location.name`), to find derived attributes that depend on each other in a cycle.
    var keyPathsFromObject: [[String]] {
        var paths: [[String]] = []
        switch self {
        case .predicate(let predicate): Self.collect(predicate, into: &paths)
        case .expression(let expression): Self.collect(expression, into: &paths)
        }
        return paths
    }

    private static func collect(_ predicate: ObjectPredicate, into paths: inout [[String]]) {
        switch predicate {
        case .constant: break
        case .not(let inner): collect(inner, into: &paths)
        case .and(let a, let b), .or(let a, let b):
            collect(a, into: &paths)
            collect(b, into: &paths)
        case .comparison(let comparison):
            collect(comparison.lhs, into: &paths)
            collect(comparison.rhs, into: &paths)
        }
    }

    private static func collect(_ expression: ObjectExpression, into paths: inout [[String]]) {
        switch expression {
        case .constant, .evaluatedObject, .variable: break
        case .array(let items): for item in items { collect(item, into: &paths) }
        case .keyPath(.evaluatedObject, let path): paths.append(path)
        case .keyPath(let base, _): collect(base, into: &paths)
        case .arithmetic(_, let a, let b):
            collect(a, into: &paths)
            collect(b, into: &paths)
        case .negate(let inner), .cast(let inner, _): collect(inner, into: &paths)
        case .function(_, let arguments): for argument in arguments { collect(argument, into: &paths) }
        case .index(let base, let index):
            collect(base, into: &paths)
            if case .expression(let inner) = index { collect(inner, into: &paths) }
        case .subquery(let collection, _, _): collect(collection, into: &paths)
        }
    }
}

extension ObjectPredicate {
    /// The first keys of the key paths the predicate reads from the object it is evaluated
    /// on (`location` for `location.name == 'Home'`), or `nil` when it hands the object
    /// itself to something (`SELF`) that may read any of its values. Stores use it to
    /// decode only those values of rows they test.
    package var keysReadFromObject: Set<String>? {
        var keys: Set<String> = []
        return Self.collectKeys(self, into: &keys) ? keys : nil
    }

    private static func collectKeys(_ predicate: ObjectPredicate, into keys: inout Set<String>) -> Bool {
        switch predicate {
        case .constant: return true
        case .not(let inner): return collectKeys(inner, into: &keys)
        case .and(let a, let b), .or(let a, let b): return collectKeys(a, into: &keys) && collectKeys(b, into: &keys)
        case .comparison(let comparison): return collectKeys(comparison.lhs, into: &keys) && collectKeys(comparison.rhs, into: &keys)
        }
    }

    private static func collectKeys(_ expression: ObjectExpression, into keys: inout Set<String>) -> Bool {
        switch expression {
        case .constant, .variable: return true
        case .evaluatedObject: return false
        case .array(let items): return items.allSatisfy { collectKeys($0, into: &keys) }
        case .keyPath(.evaluatedObject, let path):
            if let first = path.first { keys.insert(first) }
            return true
        case .keyPath(let base, _), .negate(let base), .cast(let base, _): return collectKeys(base, into: &keys)
        case .arithmetic(_, let a, let b): return collectKeys(a, into: &keys) && collectKeys(b, into: &keys)
        case .function(_, let arguments): return arguments.allSatisfy { collectKeys($0, into: &keys) }
        case .index(let base, let index):
            if case .expression(let inner) = index, !collectKeys(inner, into: &keys) { return false }
            return collectKeys(base, into: &keys)
        case .subquery(let collection, _, let predicate): return collectKeys(collection, into: &keys) && collectKeys(predicate, into: &keys)
        }
    }
}

/// The formula of a derived attribute: a predicate (for a boolean, such as
/// `dueDate != nil AND dueDate < now()`) or an expression (such as `priority * 2`).
public enum Derivation: Sendable, Hashable {
    case predicate(ObjectPredicate)
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

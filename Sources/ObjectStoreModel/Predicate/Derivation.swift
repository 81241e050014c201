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

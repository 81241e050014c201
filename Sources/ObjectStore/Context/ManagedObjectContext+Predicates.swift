import Foundation
import ObjectStoreModel
import ObjectStoreStorage

extension ManagedObjectContext {
    /// The compiler for this context's model.
    var compiler: PredicateCompiler { PredicateCompiler(model: model) }

    /// Variables and clock for evaluating predicates now.
    /// A scope for one query (with its own MATCHES clock), or for one object's value.
    func evaluationScope(variables: [String: Operand] = [:], perQuery: Bool = true) -> EvaluationScope {
        EvaluationScope(now: coordinator.clock(), variables: variables, matchClock: perQuery ? MatchClock() : nil)
    }

    /// A compiled predicate, cached per (predicate, entity).
    /// The predicate compiled for an entity, once it type-checks against it: a misspelt key
    /// throws ``PredicateTypeError`` on an empty store too, not only once rows exist.
    func compiled(_ predicate: ObjectPredicate, entity: EntityDescription) throws -> PredicateClosure {
        let key = CompiledKey(predicate: predicate, entity: entity.name)
        if let closure = compiledPredicates[key] { return closure }
        try PredicateTypeChecker(model: model).check(predicate, on: entity.name)
        let closure = compiler.compile(predicate, entity: entity)
        if compiledPredicates.count > 256 { compiledPredicates.removeAll() }
        compiledPredicates[key] = closure
        return closure
    }
}

/// What a key naming a fetched property reads: the objects its fetch finds. A fetch runs
/// above this folder (Query/), so the compiler asks the object's context through this
/// protocol, which the context adopts there.
protocol FetchedPropertyReading: AnyObject {
    /// The objects of `property` of `object`, as a fetch finds them now.
    func fetchedPropertyObjects(_ property: FetchedPropertyDescription, of object: ManagedObject) throws -> [ManagedObject]
}

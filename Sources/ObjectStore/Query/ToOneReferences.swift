import Foundation
import ObjectStoreModel
import ObjectStoreStorage

extension FetchExecutor {
    /// The executor of `request` in `context`, its predicate planned: each comparison of a
    /// key path through a to-one relationship with constants (`project.name ==[c] 'home'`)
    /// becomes a test of the relationship itself against the destinations that match
    /// (``ToOneReferences``). Every fetch, count and value fetch of a context starts here.
    static func planned(_ request: FetchRequest, in context: ManagedObjectContext) throws -> FetchExecutor {
        let executor = FetchExecutor(context: context, request: request)
        // Without pending changes, a held object is tested by its saved values but its key
        // paths still reach objects as they are now; that mix is left to the key path.
        guard let predicate = request.predicate, ToOneReferences.mayRewrite(predicate),
              request.includesPendingChanges || !context.hasChanges else { return executor }
        let entity = try executor.entity()
        // The predicate as written is checked first: a misspelt key is named as the
        // caller wrote it (Task.project.nmae), not as the destination's fetch would.
        try PredicateTypeChecker(model: context.model).check(predicate, on: entity.name)
        var references = ToOneReferences(context: context, request: request, entity: entity)
        let rewritten = try references.rewritten(predicate)
        guard rewritten != predicate else { return executor }
        var planned = request
        planned.predicate = rewritten
        return FetchExecutor(context: context, request: planned)
    }
}

/// A comparison through a to-one relationship with constants, answered from the other side:
/// `project.name ==[c] 'home'` reads every task's project to compare its name; the same
/// question asked of the projects first (`name ==[c] 'home'`, a fetch of their IDs) leaves a
/// test of each task's reference (`project IN {the matches}`), which a store answers from the
/// rows (and a schema index on `project`) without reading a project per task.
///
/// The two agree on every object, so any AND, OR and NOT around the comparison keeps its
/// meaning:
/// - The destinations are fetched through the same context: unsaved names, new destinations
///   and a child context's parent's changes count as they do for the key path; a destination
///   deleted and not saved yet is still reached through the relationship, so it is tested too.
///   A request without pending changes, in a context that has some, is left as written.
/// - A nil relationship (or one to an object deleted elsewhere) makes the key path's value
///   nil; the comparison is rewritten only when it is false for nil (`project.name == nil`
///   and `project.name != 'home'` are true for a task without a project, and stay as written).
/// - Only single values are compared: each step after the first is a to-one relationship or,
///   last, an attribute that is not transient; the comparison is direct (no ANY, ALL, NONE),
///   and its right side a constant or a list of constants.
/// - It is done only when the destination entity has at most as many objects as the fetched
///   one, so asking the other side never reads more than the key path would.
struct ToOneReferences {
    let context: ManagedObjectContext
    let request: FetchRequest
    let entity: EntityDescription
    /// How many objects the fetch's entity has, once asked.
    private var candidates: Int?

    init(context: ManagedObjectContext, request: FetchRequest, entity: EntityDescription) {
        self.context = context
        self.request = request
        self.entity = entity
    }

    /// Whether the predicate has a comparison whose left side is a key path of two steps or
    /// more from the evaluated object (a cheap look before anything is checked or fetched).
    static func mayRewrite(_ predicate: ObjectPredicate) -> Bool {
        switch predicate {
        case .constant: return false
        case .not(let inner): return mayRewrite(inner)
        case .and(let a, let b), .or(let a, let b): return mayRewrite(a) || mayRewrite(b)
        case .comparison(let c):
            guard c.quantifier == .direct, case .keyPath(.evaluatedObject, let path) = c.lhs else { return false }
            return path.count >= 2
        }
    }

    /// The predicate with each comparison it can answer from the other side rewritten.
    mutating func rewritten(_ predicate: ObjectPredicate) throws -> ObjectPredicate {
        switch predicate {
        case .constant: return predicate
        case .not(let inner): return .not(try rewritten(inner))
        case .and(let a, let b): return .and(try rewritten(a), try rewritten(b))
        case .or(let a, let b): return .or(try rewritten(a), try rewritten(b))
        case .comparison(let c):
            guard let plan = Self.plan(c, entity: entity, model: context.model) else { return predicate }
            guard try worthAsking(plan.destination) else { return predicate }
            let destinations = FetchRequest(entityName: plan.destination.name, predicate: .comparison(plan.comparison))
            var ids = try context.fetchObjectIDs(destinations)
            // An object deleted in this context and not saved yet is still reached through
            // the relationship (delete rules run at the save), though no fetch finds it.
            ids += try deletedMatches(plan)
            let targets = ObjectExpression.array(ids.map { .constant(.uri($0.uriRepresentation)) })
            return .comparison(PredicateComparison(.keyPath(.evaluatedObject, [plan.relationship]), .in, targets))
        }
    }

    /// A comparison this rewrites: the to-one relationship it goes through, its destination
    /// entity, and the comparison to ask of the destinations (the key path's first step taken
    /// off). Nil when the comparison does not have that shape or is true for a nil value.
    static func plan(_ c: PredicateComparison, entity: EntityDescription, model: ManagedObjectModel)
        -> (relationship: String, destination: EntityDescription, comparison: PredicateComparison)? {
        guard c.quantifier == .direct, case .keyPath(.evaluatedObject, let path) = c.lhs, path.count >= 2,
              let first = entity.relationship(named: path[0]), !first.isToMany, !first.isTransient,
              let destination = model.entity(named: first.destinationEntityName) else { return nil }
        // Each later step a single value: to-one relationships, then an attribute or a to-one.
        var current = destination
        for (index, step) in path.dropFirst().enumerated() {
            let isLast = index == path.count - 2
            if let relationship = current.relationship(named: step) {
                guard !relationship.isToMany, !relationship.isTransient else { return nil }
                if isLast { break }
                guard let next = model.entity(named: relationship.destinationEntityName) else { return nil }
                current = next
            } else if isLast, let attribute = current.attribute(named: step), !attribute.isTransient {
                break
            } else {
                return nil
            }
        }
        // The right side: constants only.
        let right: Operand
        switch c.rhs {
        case .constant(let value): right = .value(value)
        case .array(let items):
            var values: [Operand] = []
            for item in items {
                guard case .constant(let value) = item else { return nil }
                values.append(.value(value))
            }
            right = .collection(values)
        default: return nil
        }
        // True for nil: the objects without the relationship match, and a reference test
        // would leave them out.
        if c.op != .matches {
            let constant: Value? = { if case .constant(let v) = c.rhs { return v } else { return nil } }()
            guard let nilMatches = try? PredicateCompiler.test(for: c.op, options: c.options, constantRight: constant)(.null, right),
                  !nilMatches else { return nil }
        }
        var asked = c
        asked.lhs = .keyPath(.evaluatedObject, Array(path.dropFirst()))
        return (path[0], destination, asked)
    }

    /// The destinations this context deleted (unsaved) that the comparison accepts.
    private func deletedMatches(_ plan: (relationship: String, destination: EntityDescription, comparison: PredicateComparison)) throws -> [ObjectID] {
        guard !context.deletedSet.isEmpty else { return [] }
        let names = Set(context.model.entityAndDescendants(of: plan.destination.name).map(\.name))
        let scope = context.evaluationScope()
        var found: [ObjectID] = []
        for id in context.deletedSet where names.contains(id.entityName) {
            guard let object = context.registeredObject(for: id), let entity = context.model.entity(named: id.entityName) else { continue }
            if try context.compiled(.comparison(plan.comparison), entity: entity)(object, scope) { found.append(id) }
        }
        return found
    }

    /// Whether the destination entity has at most as many objects as the fetched one.
    private mutating func worthAsking(_ destination: EntityDescription) throws -> Bool {
        let fetched: Int
        if let candidates {
            fetched = candidates
        } else {
            fetched = try FetchExecutor(context: context, request: FetchRequest(entityName: request.entityName)).candidateCount()
            candidates = fetched
        }
        let other = try FetchExecutor(context: context, request: FetchRequest(entityName: destination.name)).candidateCount()
        return other <= fetched
    }
}

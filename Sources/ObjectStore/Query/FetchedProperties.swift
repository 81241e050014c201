import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// Fetched properties are fetches: the compiler (below this folder) reaches them through
/// ``FetchedPropertyReading``, which the context adopts here.
extension ManagedObjectContext: FetchedPropertyReading {
    /// The objects of a fetched property of `object`: evaluated lazily, cached until the
    /// object is refreshed.
    public func fetchedPropertyObjects(_ property: FetchedPropertyDescription, of object: ManagedObject) throws -> [ManagedObject] {
        if let cached = object.fetchedPropertyCache[property.name] {
            return cached.compactMap { try? self.object(with: $0) }
        }
        guard let destination = model.entity(named: property.destinationEntityName) else { return [] }
        let predicate = try ObjectPredicate(property.predicate)
        if let bound = Self.bindingSource(predicate, to: object.objectID.uriRepresentation) {
            // A fetch like any other: rows tested on their slots, narrowed by an index on the
            // relationship, and only matches made objects.
            let matches = try fetch(FetchRequest(entityName: destination.name, predicate: bound)).sorted { ObjectID.tieBreak($0.objectID, $1.objectID) }
            object.fetchedPropertyCache[property.name] = matches.map(\.objectID)
            return matches
        }
        var compiler = self.compiler
        compiler.variableEntities["FETCH_SOURCE"] = object.entity
        let test = compiler.compile(predicate, entity: destination)
        let scope = evaluationScope(variables: ["FETCH_SOURCE": .object(object)])
        let candidates = try FetchExecutor(context: self, request: FetchRequest(entityName: destination.name)).candidateIDs().map { try self.object(with: $0) }
        let matches = try candidates.filter { candidate in
            guard try candidate.fireFaultUnlessDeleted() else { return false }
            return try test(candidate, scope)
        }.sorted { ObjectID.tieBreak($0.objectID, $1.objectID) }
        object.fetchedPropertyCache[property.name] = matches.map(\.objectID)
        return matches
    }

    /// A fetched property's predicate with `$FETCH_SOURCE` replaced by the source object's
    /// URI where it is a whole operand (`location == $FETCH_SOURCE`, an item of a list):
    /// object operands compare by ID and a URI names exactly one ID, so every comparison
    /// answers the same. Nil when the predicate uses it otherwise (`$FETCH_SOURCE.name`):
    /// then the property is evaluated against the object itself.
    static func bindingSource(_ predicate: ObjectPredicate, to uri: URL) -> ObjectPredicate? {
        func operand(_ expression: ObjectExpression) -> ObjectExpression {
            switch expression {
            case .variable("FETCH_SOURCE"): return .constant(.uri(uri))
            case .array(let items): return .array(items.map(operand))
            default: return expression
            }
        }
        func bind(_ predicate: ObjectPredicate) -> ObjectPredicate {
            switch predicate {
            case .constant: return predicate
            case .not(let inner): return .not(bind(inner))
            case .and(let a, let b): return .and(bind(a), bind(b))
            case .or(let a, let b): return .or(bind(a), bind(b))
            case .comparison(var comparison):
                comparison.lhs = operand(comparison.lhs)
                comparison.rhs = operand(comparison.rhs)
                return .comparison(comparison)
            }
        }
        let bound = bind(predicate)
        return bound.variableNames.contains("FETCH_SOURCE") ? nil : bound
    }
}

import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// What a batch request returns: Core Data's result types.
public enum BatchResultType: Sendable, Hashable {
    /// Whether the request ran (``BatchResult/status(_:)``).
    case statusOnly
    /// How many objects it changed (``BatchResult/count``).
    case count
    /// The IDs of the objects it changed (``BatchResult/objectIDs``), in key order.
    case objectIDs
}

/// The result of a batch request, of the type the request asked for.
public enum BatchResult: Sendable, Hashable {
    /// The request ran (a request that fails throws instead).
    case status(Bool)
    /// How many objects it inserted, updated or deleted.
    case count(Int)
    /// The objects it inserted, updated or deleted.
    case objectIDs([ObjectID])

    /// The number of objects, for a ``count(_:)`` or ``objectIDs(_:)`` result.
    public var count: Int? {
        switch self {
        case .status: return nil
        case .count(let count): return count
        case .objectIDs(let ids): return ids.count
        }
    }

    /// The objects, for an ``objectIDs(_:)`` result.
    public var objectIDs: [ObjectID]? {
        if case .objectIDs(let ids) = self { return ids }
        return nil
    }

    static func of(_ type: BatchResultType, _ ids: [ObjectID]) -> BatchResult {
        switch type {
        case .statusOnly: return .status(true)
        case .count: return .count(ids.count)
        case .objectIDs: return .objectIDs(ids.sorted(by: ObjectID.tieBreak))
        }
    }
}

/// Core Data's `NSBatchUpdateRequest`: sets attributes of every object a predicate matches,
/// in the store, without making objects.
///
/// ```swift
/// var request = BatchUpdateRequest(entityName: "Employee", predicate: try ObjectPredicate(format: "age < %@", .integer(30)),
///                                  propertiesToUpdate: ["grade": .integer(1)])
/// request.resultType = .count
/// let changed = try context.execute(request).count
/// ```
///
/// A new value is a constant or an expression of the predicate language evaluated on each
/// object's saved values (`try ObjectExpression("salary * 1.1")`). Unlike Core Data, the new
/// values are validated as a save validates them (the attribute's type, required, its rules,
/// uniqueness constraints); a request that breaks one throws `ValidationError` and changes
/// nothing. The objects' own Swift hooks (`validateForSave()`) are not called: no object is
/// made. Only stored attributes can be set (a relationship is refused). Objects that already
/// hold the new values are not written, and are not in the result.
public struct BatchUpdateRequest: Sendable {
    /// The entity whose objects change.
    public var entityName: String
    /// Which objects change; nil: all of them.
    public var predicate: ObjectPredicate?
    /// The new values by attribute name: a constant (`.constant(value)`) or an expression
    /// evaluated on each object's saved values.
    public var propertiesToUpdate: [String: ObjectExpression]
    /// Whether objects of sub-entities change too (default true).
    public var includesSubentities = true
    /// What the request returns (default ``BatchResultType/statusOnly``).
    public var resultType: BatchResultType = .statusOnly

    /// A request setting attributes to constants.
    public init(entityName: String, predicate: ObjectPredicate? = nil, propertiesToUpdate: [String: Value]) {
        self.entityName = entityName
        self.predicate = predicate
        self.propertiesToUpdate = propertiesToUpdate.mapValues { .constant($0) }
    }

    /// A request setting attributes to expressions (constants are `.constant(value)`).
    public init(entityName: String, predicate: ObjectPredicate? = nil, expressionsToUpdate: [String: ObjectExpression]) {
        self.entityName = entityName
        self.predicate = predicate
        self.propertiesToUpdate = expressionsToUpdate
    }
}

/// Core Data's `NSBatchDeleteRequest`: deletes every object a predicate matches, in the
/// store, without making objects.
///
/// ```swift
/// var request = BatchDeleteRequest(entityName: "Task", predicate: try ObjectPredicate("status == 'done'"))
/// request.resultType = .objectIDs
/// let gone = try context.execute(request).objectIDs ?? []
/// ```
///
/// Unlike Core Data's, the request applies the delete rules of the deleted objects'
/// relationships, as a save would: `cascade` deletes the destinations too (their own rules
/// applied in turn), `nullify` removes the deleted objects from the destinations' inverse,
/// `deny` refuses the request (`ValidationError`, nothing deleted) while a destination is
/// left, and `noAction` leaves the destinations as they are. The result counts every object
/// deleted, cascaded ones included; objects changed by `nullify` are reported to the
/// coordinator's save observers as updated.
public struct BatchDeleteRequest: Sendable {
    /// The entity whose objects are deleted.
    public var entityName: String
    /// Which objects are deleted; nil: all of them.
    public var predicate: ObjectPredicate?
    /// Whether objects of sub-entities are deleted too (default true).
    public var includesSubentities = true
    /// What the request returns (default ``BatchResultType/statusOnly``).
    public var resultType: BatchResultType = .statusOnly

    /// A request deleting the objects of `entityName` that `predicate` matches.
    public init(entityName: String, predicate: ObjectPredicate? = nil) {
        self.entityName = entityName
        self.predicate = predicate
    }

    /// A request deleting these objects (as Core Data's `NSBatchDeleteRequest(objectIDs:)`);
    /// all of one entity or its sub-entities.
    public init(objectIDs: [ObjectID]) {
        self.entityName = objectIDs.first?.entityName ?? ""
        self.objectIDs = objectIDs
    }

    /// The objects given by ID, when the request was made with them.
    var objectIDs: [ObjectID]?
}

/// Core Data's `NSBatchInsertRequest`: inserts objects from dictionaries of attribute
/// values, in the store, without making objects.
///
/// ```swift
/// let rows: [[String: Value]] = (1...3).map { ["text": .string("Task \($0)"), "priority": .integer(1)] }
/// let inserted = try context.execute(BatchInsertRequest(entityName: "Task", objects: rows))
/// ```
///
/// Each object starts from the model's defaults; its dictionary sets attributes (not
/// relationships). The values are validated as a save validates them, uniqueness
/// constraints included: a clash throws `ValidationError` and inserts nothing (Core Data
/// would merge the new object into the existing one). A `dictionaryHandler` fills one
/// dictionary per call and returns true when there are no more, so a large import never
/// holds every dictionary at once.
public struct BatchInsertRequest: Sendable {
    /// The entity of the new objects (not abstract).
    public var entityName: String
    /// The new objects' values, when given as a list.
    public var objects: [[String: Value]]
    /// What the request returns (default ``BatchResultType/statusOnly``).
    public var resultType: BatchResultType = .statusOnly
    /// Fills the next object's values and returns false, or returns true when done (the
    /// dictionary is then not inserted).
    public var dictionaryHandler: (@Sendable (inout [String: Value]) throws -> Bool)?

    /// A request inserting one object per dictionary.
    public init(entityName: String, objects: [[String: Value]]) {
        self.entityName = entityName
        self.objects = objects
    }

    /// A request inserting objects from `dictionaryHandler` until it returns true.
    public init(entityName: String, dictionaryHandler: @escaping @Sendable (inout [String: Value]) throws -> Bool) {
        self.entityName = entityName
        self.objects = []
        self.dictionaryHandler = dictionaryHandler
    }
}

import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// An aggregate column of a grouped fetch: `count`, `sum`, `average`, `min` or `max` of a
/// key path, named as the result key.
public struct PropertyAggregate: Sendable, Hashable {
    /// The aggregate functions.
    public enum Function: String, Sendable, Hashable {
        /// How many objects have a value.
        case count
        /// The values added up.
        case sum
        /// The mean of the values.
        case average
        /// The smallest value.
        case min
        /// The largest value.
        case max
    }

    /// The key of the result in each group row.
    public var name: String
    /// What is computed.
    public var function: Function
    /// The key path aggregated.
    public var keyPath: String

    /// An aggregate column: `PropertyAggregate("n", .count, of: "title")`.
    public init(_ name: String, _ function: Function, of keyPath: String) {
        self.name = name
        self.function = function
        self.keyPath = keyPath
    }
}

extension ManagedObjectContext {
    /// The matching objects as dictionaries of chosen key paths (to-one destinations as
    /// their ID URIs), optionally without duplicate rows.
    ///
    /// ```swift
    /// let rows = try context.fetchDictionaries(request, properties: ["text", "location.name"], distinct: true)
    /// ```
    public func fetchDictionaries(_ request: FetchRequest, properties: [String], distinct: Bool = false) throws -> [[String: Value]] {
        let executor = try FetchExecutor.planned(request, in: self)
        let entity = try executor.entity()
        var rows: [[String: Value]] = []
        var seen = Set<[Value]>()
        func add(_ values: [Value]) {
            if distinct && !seen.insert(values).inserted { return }
            rows.append(Dictionary(zip(properties, values), uniquingKeysWith: { first, _ in first }))
        }
        if let attributes = Self.attributeNames(properties, in: entity) {
            // Attributes only: read from the rows, without making an object per row.
            let positions = properties.map { attributes.firstIndex(of: $0) ?? 0 }
            for row in try fetchValues(executor.request, properties: attributes) { add(positions.map { row.values[$0].value }) }
            return rows
        }
        let readers = try properties.map { compiler.compile(try ObjectExpression($0), entity: entity) }
        let scope = evaluationScope()
        for object in try executor.objects() {
            add(try readers.map { try $0(object, scope).sortValue })
        }
        return rows
    }

    /// The distinct names, in order, when every key path is an attribute of the entity (its
    /// own or inherited, stored, transient or derived): such values are read from the rows.
    static func attributeNames(_ keyPaths: [String], in entity: EntityDescription) -> [String]? {
        guard keyPaths.allSatisfy({ entity.attribute(named: $0) != nil }) else { return nil }
        var names: [String] = []
        for name in keyPaths where !names.contains(name) { names.append(name) }
        return names
    }

    /// Groups the matching objects by key paths and computes aggregates per group, like
    /// SQL's GROUP BY. Groups come in order of their first object in the request's sort.
    ///
    /// ```swift
    /// let perLocation = try context.fetchGroups(FetchRequest(entityName: "Task"), groupBy: ["location.name"],
    ///                                           aggregates: [PropertyAggregate("n", .count, of: "text")])
    /// // [["location.name": "Home", "n": 2], ...]
    /// ```
    public func fetchGroups(_ request: FetchRequest, groupBy: [String], aggregates: [PropertyAggregate]) throws -> [[String: Value]] {
        // A sum or average of what is not a number is refused before anything is read,
        // naming the aggregate and its key path (it failed on the first value before).
        let entityName = request.entityName
        if model.entity(named: entityName) != nil {
            let checker = PredicateTypeChecker(model: model)
            for aggregate in aggregates where aggregate.function == .sum || aggregate.function == .average {
                let type = try checker.type(of: try ObjectExpression(aggregate.keyPath), on: entityName).element
                switch type {
                case .number, .unknown, .null: continue
                default:
                    throw PredicateTypeError(message: "the aggregate \(aggregate.name) (\(aggregate.function.rawValue) of \(entityName).\(aggregate.keyPath)) adds up numbers, and \(aggregate.keyPath) is \(type)", key: aggregate.keyPath)
                }
            }
        }
        let executor = try FetchExecutor.planned(request, in: self)
        let entity = try executor.entity()
        // Per group its key, and per aggregate a running fold of the values met so far (in
        // the order `@sum`, `@min`... fold a collection), so members are not kept.
        var groups = Groups(aggregates.map(\.function), keyCount: groupBy.count)
        if let attributes = Self.attributeNames(groupBy + aggregates.map(\.keyPath), in: entity) {
            // Attributes only: grouped and aggregated from the rows, without objects.
            let keyPositions = groupBy.map { attributes.firstIndex(of: $0) ?? 0 }
            let valuePositions = aggregates.map { attributes.firstIndex(of: $0.keyPath) ?? 0 }
            if request.fetchOffset == 0 && request.fetchLimit == 0 {
                // Each row as it is read, none kept. Unsorted rows come in the store's order;
                // groups are put in their first members' order of keys (fetch's order) after.
                // Attributes only counted (not grouped by, not folded otherwise) are read for
                // whether they hold a value, not decoded (`count` of titles makes no `String`).
                let folded = Set(groupBy + aggregates.filter { $0.function != .count }.map(\.keyPath))
                let counted = Set(aggregates.filter { $0.function == .count }.map(\.keyPath)).subtracting(folded)
                let sorted = try forEachValues(executor.request, properties: attributes, presentOnly: counted) { row in
                    try groups.add(row.objectID, key: { row.values[keyPositions[$0]].value }) { row.values[valuePositions[$0]].value }
                }
                if !sorted { groups.orderByFirstMembers() }
            } else {
                for row in try fetchValues(executor.request, properties: attributes) {
                    try groups.add(row.objectID, key: { row.values[keyPositions[$0]].value }) { row.values[valuePositions[$0]].value }
                }
            }
        } else {
            let keyReaders = try groupBy.map { compiler.compile(try ObjectExpression($0), entity: entity) }
            let columns = try aggregates.map { compiler.compile(try ObjectExpression($0.keyPath), entity: entity) }
            let scope = evaluationScope()
            for object in try executor.objects() {
                try groups.add(object.objectID, key: { try keyReaders[$0](object, scope).sortValue }, operands: { try columns[$0](object, scope) })
            }
        }
        return groups.order.map { group in
            var row = Dictionary(zip(groupBy, groups.keys[group]), uniquingKeysWith: { first, _ in first })
            for (index, aggregate) in aggregates.enumerated() { row[aggregate.name] = groups.folds[group][index].result }
            return row
        }
    }
}

/// The groups of ``ManagedObjectContext/fetchGroups(_:groupBy:aggregates:)``: each key, its
/// first member and its aggregates' running folds, in order of their first member.
private struct Groups {
    let functions: [PropertyAggregate.Function]
    let keyCount: Int
    private var indexOfKey: [[Value]: Int] = [:]
    /// One key path's groups, without an array made per row.
    private var indexOfValue: [Value: Int] = [:]
    private(set) var keys: [[Value]] = []
    private var firstMembers: [ObjectID] = []
    private(set) var folds: [[Fold]] = []
    /// The groups' positions in the order they are returned.
    private(set) var order: [Int] = []

    /// Up to this many groups of one key are looked up by comparing their keys in turn.
    static let fewGroups = 8

    init(_ functions: [PropertyAggregate.Function], keyCount: Int) {
        self.functions = functions
        self.keyCount = keyCount
    }

    /// Adds a member: its key's values by position and its aggregated values by aggregate.
    mutating func add(_ id: ObjectID, key: (Int) throws -> Value, _ values: (Int) throws -> Value) throws {
        try add(id, key: key, operands: { .value(try values($0)) })
    }

    mutating func add(_ id: ObjectID, key: (Int) throws -> Value, operands: (Int) throws -> Operand) throws {
        let group: Int
        if keyCount == 1 {
            let value = try key(0)
            // A few groups (priorities, statuses): compared in turn, not hashed (hashing a
            // value was a tenth of a group by over 10,000 rows).
            var few: Int?
            if keys.count <= Self.fewGroups {
                for (index, known) in keys.enumerated() where known[0] == value {
                    few = index
                    break
                }
            }
            if keys.count <= Self.fewGroups, few == nil {
                group = newGroup([value], first: id)
                indexOfValue[value] = group
            } else if let known = few ?? indexOfValue[value] {
                group = known
                noteMember(id, of: group)
            } else {
                group = newGroup([value], first: id)
                indexOfValue[value] = group
            }
        } else {
            let values = try (0..<keyCount).map(key)
            if let known = indexOfKey[values] {
                group = known
                noteMember(id, of: group)
            } else {
                group = newGroup(values, first: id)
                indexOfKey[values] = group
            }
        }
        for index in functions.indices { try folds[group][index].add(try operands(index)) }
    }

    /// Keeps the group's first member in fetch's order of objects, whatever order they
    /// come in.
    private mutating func noteMember(_ id: ObjectID, of group: Int) {
        if ObjectID.tieBreak(id, firstMembers[group]) { firstMembers[group] = id }
    }

    private mutating func newGroup(_ key: [Value], first: ObjectID) -> Int {
        let group = keys.count
        keys.append(key)
        firstMembers.append(first)
        folds.append(functions.map { Fold(function: $0) })
        order.append(group)
        return group
    }

    /// Orders the groups by their first members in fetch's order of objects (their keys),
    /// for members that came in another order.
    mutating func orderByFirstMembers() {
        let firsts = firstMembers
        order.sort { ObjectID.tieBreak(firsts[$0], firsts[$1]) }
    }

    /// One aggregate of one group so far: the objects with a value counted, or the values
    /// folded as `@sum`, `@avg`, `@min` and `@max` fold a collection.
    struct Fold {
        private var present = 0
        private var fold: CollectionOperators.Fold?

        init(function: PropertyAggregate.Function) {
            switch function {
            case .count: fold = nil
            case .sum: fold = CollectionOperators.Fold(.sum)
            case .average: fold = CollectionOperators.Fold(.average)
            case .min: fold = CollectionOperators.Fold(.min)
            case .max: fold = CollectionOperators.Fold(.max)
            }
        }

        mutating func add(_ operand: Operand) throws {
            if fold == nil {
                if !operand.isNull { present += 1 }
            } else {
                try fold?.add(operand)
            }
        }

        var result: Value { fold?.result ?? .integer(Int64(present)) }
    }
}

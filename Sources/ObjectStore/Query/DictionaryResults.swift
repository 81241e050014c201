import ObjectStoreModel

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
        let executor = FetchExecutor(context: self, request: request)
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
            for row in try fetchValues(request, properties: attributes) { add(positions.map { row.values[$0].value }) }
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
        let executor = FetchExecutor(context: self, request: request)
        let entity = try executor.entity()
        // Per group, in order of its first member: its key, and per aggregate the number of
        // non-nil values (a count) or the values themselves (the other functions).
        var groupIndex: [[Value]: Int] = [:]
        var keys: [[Value]] = []
        var counts: [[Int]] = []
        var members: [[[Operand]]] = []
        let counting = aggregates.map { $0.function == .count }
        func add(_ key: [Value], _ values: (Int) throws -> Operand) rethrows {
            let group: Int
            if let known = groupIndex[key] {
                group = known
            } else {
                group = keys.count
                groupIndex[key] = group
                keys.append(key)
                counts.append([Int](repeating: 0, count: aggregates.count))
                members.append([[Operand]](repeating: [], count: aggregates.count))
            }
            for index in aggregates.indices {
                let value = try values(index)
                if counting[index] {
                    if !value.isNull { counts[group][index] += 1 }
                } else {
                    members[group][index].append(value)
                }
            }
        }
        if let attributes = Self.attributeNames(groupBy + aggregates.map(\.keyPath), in: entity) {
            // Attributes only: grouped and aggregated from the rows, without objects.
            let keyPositions = groupBy.map { attributes.firstIndex(of: $0) ?? 0 }
            let valuePositions = aggregates.map { attributes.firstIndex(of: $0.keyPath) ?? 0 }
            for row in try fetchValues(request, properties: attributes) {
                add(keyPositions.map { row.values[$0].value }) { .value(row.values[valuePositions[$0]].value) }
            }
        } else {
            let keyReaders = try groupBy.map { compiler.compile(try ObjectExpression($0), entity: entity) }
            let columns = try aggregates.map { compiler.compile(try ObjectExpression($0.keyPath), entity: entity) }
            let scope = evaluationScope()
            for object in try executor.objects() {
                try add(try keyReaders.map { try $0(object, scope).sortValue }) { try columns[$0](object, scope) }
            }
        }
        return try keys.indices.map { group in
            var row = Dictionary(zip(groupBy, keys[group]), uniquingKeysWith: { first, _ in first })
            for (index, aggregate) in aggregates.enumerated() {
                let values = members[group][index]
                let result: Operand
                switch aggregate.function {
                case .count: result = .value(.integer(Int64(counts[group][index])))
                case .sum: result = try CollectionOperators.apply("@sum", values) { $0 }
                case .average: result = try CollectionOperators.apply("@avg", values) { $0 }
                case .min: result = try CollectionOperators.apply("@min", values) { $0 }
                case .max: result = try CollectionOperators.apply("@max", values) { $0 }
                }
                row[aggregate.name] = result.sortValue
            }
            return row
        }
    }
}

import Foundation
import ObjectStore
import ObjectStoreModel

/// What compiling a filter may read from the store: tasks looked up once by a property the
/// predicate language cannot reach (a UUID prefix, a field kept from Taskwarrior, a
/// dependency), turned into `SELF IN {...}`.
final class FilterScope {
    let app: App
    let context: ManagedObjectContext
    private var dependencyClauses: (blocked: ObjectPredicate, blocking: ObjectPredicate)?

    init(app: App, context: ManagedObjectContext) {
        self.app = app
        self.context = context
    }

    /// The objects as a predicate: the evaluated task is one of them.
    func among(_ objects: [ManagedObject]) throws -> ObjectPredicate {
        guard !objects.isEmpty else { return .constant(false) }
        return try ObjectPredicate(format: "SELF IN %@", placeholders: [.list(objects.map { .uri($0.objectID.uriRepresentation) })])
    }

    /// Tasks with any of Taskwarrior's fields `keys` kept (their extras).
    func tasks(withExtra keys: Set<String>) throws -> ObjectPredicate {
        let candidates = try app.tasks(context, where: try ObjectPredicate("extras != nil"))
        return try among(candidates.filter { task in ExtrasText.decode(task["extras"]).contains { keys.contains($0.key) } })
    }

    /// Tasks with the user-defined attribute `name` whose value (as text) passes `test`.
    func tasks(withUserAttribute name: String, where test: (String) -> Bool) throws -> ObjectPredicate {
        let candidates = try app.tasks(context, where: try ObjectPredicate(format: "extras CONTAINS %@", .string("\"\(name)\"")))
        return try among(candidates.filter { task in
            guard let field = ExtrasText.decode(task["extras"]).first(where: { $0.key == name }) else { return false }
            return test(UserAttribute.text(ofJSON: field.json))
        })
    }

    /// Fields Taskwarrior knows without a user-defined attribute, beside those taskctl models.
    static let taskwarriorColumns: Set<String> = ["depends", "imask", "last", "mask", "modified", "parent", "rtype", "template", "recur", "id", "urgency"]

    /// Tasks with a field that is neither Taskwarrior's nor a configured attribute (+ORPHAN).
    func orphans() throws -> ObjectPredicate {
        let candidates = try app.tasks(context, where: try ObjectPredicate("extras != nil"))
        return try among(candidates.filter { task in
            ExtrasText.decode(task["extras"]).contains {
                !Self.taskwarriorColumns.contains($0.key) && !$0.key.hasPrefix("annotation_") && app.config.userAttributes[$0.key] == nil
            }
        })
    }

    /// Tasks with any user-defined attribute the settings define, or a priority (+UDA:
    /// Taskwarrior 2.6's priority is one).
    func withUserAttributes() throws -> ObjectPredicate {
        var clause = try ObjectPredicate("priority != 0")
        for name in app.config.userAttributes.keys.sorted() { clause = .or(clause, try tasks(withUserAttribute: name) { _ in true }) }
        return clause
    }

    /// The pending task with the highest id (+LATEST: the last one added).
    func latest() throws -> ObjectPredicate {
        let pending = try app.tasks(context, where: try app.pending())
        guard let last = pending.max(by: { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) }) else { return .constant(false) }
        return try among([last])
    }

    /// Taskwarrior's dependencies (``Dependencies``): the blocked tasks and the blocking
    /// ones, as predicates on their UUIDs.
    func dependencies() throws -> (blocked: ObjectPredicate, blocking: ObjectPredicate) {
        if let dependencyClauses { return dependencyClauses }
        let index = try app.urgency.dependencyIndex(context)
        func having(_ uuids: Set<UUID>) throws -> ObjectPredicate {
            guard !uuids.isEmpty else { return .constant(false) }
            return try ObjectPredicate(format: "uuid IN %@", placeholders: [.list(uuids.sorted { $0.uuidString < $1.uuidString }.map(Value.uuid))])
        }
        let clauses = (try having(index.blocked), try having(index.blocking))
        dependencyClauses = clauses
        return clauses
    }

    /// The UUIDs in a `depends` value: a JSON array of strings, or one comma-separated string.
    static func uuids(inJSON json: String) -> [UUID] {
        guard let root = try? JSONParser.parse(json) else { return [] }
        var texts: [String] = []
        switch root.kind {
        case .string(let text): texts = text.split(separator: ",").map(String.init)
        case .array(let items): for item in items { if case .string(let text) = item.kind { texts.append(text) } }
        default: break
        }
        return texts.compactMap { UUID(uuidString: $0.trimmingBlanks()) }
    }
}

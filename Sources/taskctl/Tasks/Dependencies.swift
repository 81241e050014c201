import Foundation
import ObjectStore
import ObjectStoreModel

/// Taskwarrior's dependencies: a task depends on other tasks, named by UUID and kept among
/// its Taskwarrior fields as `depends` (a JSON array of UUIDs, as Taskwarrior 2.6 exports
/// them; sync sends one `dep_UUID` key each). Kept by UUID, not as a relationship, because
/// Taskwarrior's are: a dependency may name a task this replica has not received yet, and it
/// holds once that task arrives.
///
/// A task is blocked while a task it depends on is open (pending, waiting or a recurrence
/// template); an open task that an open task depends on is blocking.
enum Dependencies {
    /// The UUIDs a task depends on (its `depends` field), in the order kept.
    static func uuids(of task: ManagedObject) -> [UUID] {
        guard let field = ExtrasText.decode(task["extras"]).first(where: { $0.key == "depends" }) else { return [] }
        return FilterScope.uuids(inJSON: field.json)
    }

    /// Keeps `uuids` as the task's dependencies (none: the field is removed).
    static func set(_ uuids: [UUID], on task: ManagedObject) throws {
        var extras = ExtrasText.decode(task["extras"])
        let json = uuids.isEmpty ? nil : "[" + uuids.map { JSONText.quote($0.uuidString.lowercased()) }.joined(separator: ",") + "]"
        if let index = extras.firstIndex(where: { $0.key == "depends" }) {
            if let json { extras[index].json = json } else { extras.remove(at: index) }
        } else if let json {
            extras.append(("depends", json))
        }
        try task.setValue(ExtrasText.encode(extras), forKey: "extras")
    }

    /// Applies a `depends:` value as Taskwarrior's `modify` does: comma-separated ids, id
    /// ranges (`3-5`), UUIDs or their first 8 hex digits or more, each added, or removed when
    /// written `-ID`; an empty value removes them all. A dependency on the task itself, on a
    /// task that does not exist, or one that closes a circle is refused.
    static func apply(_ value: String, to task: ManagedObject, app: App, context: ManagedObjectContext) throws {
        var current = uuids(of: task)
        let own = task["uuid"].uuidValue
        let id = task.objectID.primaryKey ?? 0
        if value.trimmingBlanks().isEmpty {
            try set([], on: task)
            return
        }
        for part in value.split(separator: ",", omittingEmptySubsequences: false).map({ $0.trimmingBlanks() }) {
            guard !part.isEmpty else { throw CLIError.usage("depends:\(value): an empty dependency between commas") }
            let removing = part.hasPrefix("-")
            let reference = removing ? String(part.dropFirst()) : part
            var found: [UUID] = []
            if let full = UUID(uuidString: reference) {
                found = [full]
                if !removing, try context.count(for: FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "uuid == %@", .uuid(full)))) == 0 {
                    // Taskwarrior keeps it: the task may come with the next sync.
                    app.output.warn("taskctl: no task here has the UUID \(reference) yet; the dependency is kept for when it arrives")
                }
            } else if let dash = reference.firstIndex(of: "-"), let low = Int64(reference[..<dash]), let high = Int64(reference[reference.index(after: dash)...]), low > 0, low <= high {
                guard high - low < 10_000 else { throw CLIError.usage("depends:\(part): a range of at most 10000 ids") }
                for n in low...high { found.append(try uuid(of: try app.task(String(n), in: context), reference: String(n))) }
            } else if Int64(reference) != nil || TaskFilter.isUUID(reference) {
                found = [try uuid(of: try app.task(reference, in: context), reference: reference)]
            } else {
                throw CLIError.usage("depends:\(part) is not a task id, id range or UUID")
            }
            for uuid in found {
                if removing {
                    guard let index = current.firstIndex(of: uuid) else {
                        throw CLIError.usage("task \(id) does not depend on \(reference); nothing changed")
                    }
                    current.remove(at: index)
                } else {
                    if uuid == own { throw CLIError.usage("task \(id) cannot depend on itself") }
                    if !current.contains(uuid) { current.append(uuid) }
                }
            }
        }
        if let own, let circle = try circle(from: own, through: current, in: context) {
            throw CLIError.usage("task \(id) cannot depend on \(circle): that task depends on it already (directly or through others); nothing changed")
        }
        try set(current, on: task)
    }

    private static func uuid(of task: ManagedObject, reference: String) throws -> UUID {
        guard case .uuid(let uuid) = task["uuid"] else { throw CLIError.usage("task \(reference) has no UUID") }
        return uuid
    }

    /// The first of `dependencies` (as an id, or a UUID) whose own dependencies lead back to
    /// `start`, or nil. The store's tasks as they are in `context` (unsaved changes included).
    static func circle(from start: UUID, through dependencies: [UUID], in context: ManagedObjectContext) throws -> String? {
        for first in dependencies {
            var seen: Set<UUID> = [first]
            var frontier = [first]
            while !frontier.isEmpty {
                let tasks = try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate(
                    format: "uuid IN %@", placeholders: [.list(frontier.map(Value.uuid))])))
                frontier = []
                for task in tasks {
                    for next in uuids(of: task) {
                        if next == start {
                            let blocker = try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "uuid == %@", .uuid(first)))).first
                            return blocker?.objectID.primaryKey.map(String.init) ?? first.uuidString.lowercased()
                        }
                        if seen.insert(next).inserted { frontier.append(next) }
                    }
                }
            }
        }
        return nil
    }
}

/// Which tasks are blocked and which are blocking, read from the store once.
struct DependencyIndex {
    var blocked: Set<UUID> = []
    var blocking: Set<UUID> = []
    /// Each open dependent task's dependencies.
    var dependents: [UUID: [UUID]] = [:]

    /// Open: neither done nor deleted (pending, waiting, a recurrence template).
    static let open = "status IN {'pending', 'recurring'}"

    init(_ context: ManagedObjectContext) throws {
        let candidates = try context.fetchValues(FetchRequest(entityName: "Task", predicate: .and(
            try ObjectPredicate(Self.open), try ObjectPredicate(format: "extras CONTAINS %@", .string("\"depends\"")))), properties: ["uuid", "extras"])
        for row in candidates {
            guard row.values.count == 2, case .uuid(let uuid) = row.values[0].value,
                  let field = ExtrasText.decode(row.values[1].value).first(where: { $0.key == "depends" }) else { continue }
            let on = FilterScope.uuids(inJSON: field.json)
            if !on.isEmpty { dependents[uuid] = on }
        }
        guard !dependents.isEmpty else { return }
        let wanted = Set(dependents.values.joined())
        let found = try context.fetchValues(FetchRequest(entityName: "Task", predicate: .and(try ObjectPredicate(Self.open), try ObjectPredicate(
            format: "uuid IN %@", placeholders: [.list(wanted.sorted { $0.uuidString < $1.uuidString }.map(Value.uuid))]))), properties: ["uuid"])
        for row in found { if case .uuid(let uuid)? = row.values.first?.value { blocking.insert(uuid) } }
        for (task, on) in dependents where on.contains(where: blocking.contains) { blocked.insert(task) }
    }
}

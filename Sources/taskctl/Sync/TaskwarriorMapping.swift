import Foundation
import ObjectStore
import ObjectStoreModel
import ObjectStoreSync

/// taskctl's tasks as Taskwarrior 3 keeps them in TaskChampion: a map of strings.
///
/// | key | taskctl |
/// | --- | --- |
/// | `description` | text |
/// | `status` | pending, completed (done), deleted, recurring |
/// | `priority` | H, M, L (3, 2, 1; none: no key) |
/// | `entry`, `end`, `due`, `wait`, `scheduled`, `start`, `until` | the dates, as seconds since 1970 |
/// | `project`, `recur` | project name, recurrence |
/// | `location` | location name (a user-defined attribute for Taskwarrior) |
/// | `tag_NAME` | one per tag, empty value |
/// | `annotation_SECONDS` | one per annotation, its text |
/// | `dep_UUID` | one per dependency (kept as `depends` in the task's extras) |
/// | anything else | kept untouched in the task's extras |
final class TaskwarriorMapping: SyncMapping {
    let stateEntity = SyncStateEntity(name: "SyncState")
    let modifiedKey: String? = "modified"
    /// The entry date of a task that arrives without one.
    let now: Date

    init(now: Date) {
        self.now = now
    }

    /// Keys of the extras that are not the task's own: computed by Taskwarrior's export (or
    /// marking a waiting task in an import), never sent.
    static let exportOnly: Set<String> = ["id", "urgency", "status", "uuid"]
    static let dates: [(key: String, attribute: String)] = [("entry", "createdAt"), ("end", "completedAt"), ("due", "dueDate"), ("wait", "waitUntil"),
                                                            ("scheduled", "scheduled"), ("start", "startedAt"), ("until", "until")]
    static let keyOfAttribute: [String: String] = {
        var keys = ["title": "description", "priority": "priority", "status": "status", "recurrence": "recur", "project": "project", "location": "location"]
        for (key, attribute) in dates { keys[attribute] = key }
        return keys
    }()

    /// Tasks by UUID, and tags, projects and locations by name, read once per context: a
    /// version of 10,000 tasks fetched one by one would scan the store 10,000 times.
    /// Weak, and compared by identity: a later context can be made at a freed one's address.
    private weak var cachedContext: ManagedObjectContext?
    private var tasksByUUID: [UUID: ManagedObject] = [:]
    private var named: [String: [String: ManagedObject]] = [:]

    private func load(_ context: ManagedObjectContext) throws {
        guard cachedContext !== context else { return }
        tasksByUUID = [:]
        for task in try context.fetch(FetchRequest(entityName: "Task")) {
            if case .uuid(let uuid) = task["uuid"] { tasksByUUID[uuid] = task }
        }
        named = [:]
        for entity in ["Tag", "Project", "Location"] {
            var byName: [String: ManagedObject] = [:]
            for object in try context.fetch(FetchRequest(entityName: entity)) {
                if case .string(let name) = object["name"] {
                    let key = entity == "Location" ? name.lowercased() : name
                    byName[key] = byName[key] ?? object
                }
            }
            named[entity] = byName
        }
        cachedContext = context
    }

    // MARK: Store to task

    func allTasks(in context: ManagedObjectContext) throws -> [(uuid: UUID, properties: [String: String])] {
        try load(context)
        return try tasksByUUID.keys.sorted { $0.uuidString < $1.uuidString }.compactMap { uuid in
            guard let task = tasksByUUID[uuid], !task.isDeleted else { return nil }
            return (uuid, try properties(of: task))
        }
    }

    func task(_ uuid: UUID, in context: ManagedObjectContext) throws -> [String: String]? {
        try load(context)
        guard let task = tasksByUUID[uuid], !task.isDeleted else { return nil }
        return try properties(of: task)
    }

    /// The title of a task whose description taskctl could not store (kept in its extras).
    static let noDescription = "(no description)"
    /// The longest description taskctl stores as a task's text (the model's bound).
    static let maximumText = 100_000
    /// The most of a received value taskctl cannot store that it keeps with the task (and
    /// sends back as it came): 1 MiB. A longer one is named in a warning and not kept, so a
    /// hostile peer's 300 MB description does not become a 300 MB store.
    static let maximumKept = 1 << 20

    static func seconds(_ date: Date) -> String { String(Int64(date.timeIntervalSince1970.rounded(.down))) }

    /// A date as Taskwarrior keeps it, seconds since 1970, within the years 1 to 9999 (nil
    /// for anything else: kept as it came, never a date nobody can show).
    static func date(_ text: String) -> Date? {
        guard let seconds = Int64(text) ?? Double(text).flatMap({ $0.isFinite && abs($0) < 1e12 ? Int64($0) : nil }),
              (-62_135_596_800...253_402_300_799).contains(seconds) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    func properties(of task: ManagedObject) throws -> [String: String] {
        var properties: [String: String] = [:]
        for (key, value) in Self.extras(task["extras"]) { properties[key] = value }
        // The placeholder of a description kept in the extras gives way to it (sent as it came).
        if case .string(let title) = task["title"], title != Self.noDescription || properties["description"] == nil { properties["description"] = title }
        if case .string(let status) = task["status"] { properties["status"] = status == "done" ? "completed" : status }
        if case .integer(let priority) = task["priority"], (1...3).contains(priority) { properties["priority"] = ["L", "M", "H"][Int(priority) - 1] }
        for (key, attribute) in Self.dates {
            if case .date(let date) = task[attribute] { properties[key] = Self.seconds(date) }
        }
        if case .string(let recurrence) = task["recurrence"] { properties["recur"] = recurrence }
        if let project = try task.object(forKey: "project"), case .string(let name) = project["name"] { properties["project"] = name }
        if let location = try task.object(forKey: "location"), case .string(let name) = location["name"] { properties["location"] = name }
        for tag in try task.objects(forKey: "tags") {
            if case .string(let name) = tag["name"] { properties["tag_" + name] = "" }
        }
        for note in try task.objects(forKey: "annotations") {
            if case .string(let text) = note["text"], case .date(let entry) = note["entry"] { properties["annotation_" + Self.seconds(entry)] = text }
        }
        return properties
    }

    /// The task keys of an extras value: each member as its string (a number or other JSON
    /// as its text), `depends` as one `dep_UUID` key per task.
    static func extras(_ value: Value) -> [(key: String, value: String)] {
        var result: [(String, String)] = []
        for (key, json) in ExtrasText.decode(value) where !exportOnly.contains(key) {
            let node = try? JSONParser.parse(json)
            if key == "depends" {
                // Taskwarrior 2 exports an array of UUIDs, older ones a comma-separated string.
                let uuids = node?.elements?.compactMap(\.stringValue) ?? node?.stringValue?.split(separator: ",").map(String.init) ?? []
                for uuid in uuids where TaskwarriorFormat.parseUUID(uuid) != nil { result.append(("dep_" + uuid.lowercased(), "")) }
                continue
            }
            result.append((key, node?.stringValue ?? json))
        }
        return result
    }

    // MARK: History to keys

    func touches(of change: HistoryChange, tombstones: SyncTombstones, in context: ManagedObjectContext) throws -> [SyncTouch] {
        try load(context)
        func object(_ id: ObjectID) -> ManagedObject? {
            guard let object = try? context.existingObject(with: id), !object.isDeleted else { return nil }
            return object
        }
        func uuid(ofTask id: ObjectID) -> UUID? {
            if let task = object(id), case .uuid(let uuid) = task["uuid"] { return uuid }
            if case .uuid(let uuid)? = tombstones[id, "uuid"] { return uuid }
            return nil
        }
        func name(_ id: ObjectID) -> String? {
            if let object = object(id), case .string(let name) = object["name"] { return name }
            if case .string(let name)? = tombstones[id, "name"] { return name }
            return nil
        }
        func annotationKey(_ id: ObjectID) -> String? {
            if let note = object(id), case .date(let entry) = note["entry"] { return "annotation_" + Self.seconds(entry) }
            if case .date(let entry)? = tombstones[id, "entry"] { return "annotation_" + Self.seconds(entry) }
            return nil
        }
        func tasks(of id: ObjectID) throws -> [UUID] {
            guard let owner = object(id) else { return [] }
            return try owner.objects(forKey: "tasks").compactMap { task in
                if case .uuid(let uuid) = task["uuid"] { return uuid }
                return nil
            }
        }
        switch change.entityName {
        case "Task":
            guard let uuid = uuid(ofTask: change.objectID) else { return [] }
            switch change.kind {
            case .insert: return [SyncTouch(task: uuid, kind: .created)]
            case .delete: return [SyncTouch(task: uuid, kind: .deleted)]
            case .update:
                var keys: Set<String> = []
                for property in change.values {
                    switch property.name {
                    case "tags":
                        for id in property.oldValue.referencedIDs + property.newValue.referencedIDs {
                            if let name = name(id) { keys.insert("tag_" + name) }
                        }
                    case "annotations":
                        for id in property.oldValue.referencedIDs + property.newValue.referencedIDs {
                            if let key = annotationKey(id) { keys.insert(key) }
                        }
                    case "extras":
                        for (key, _) in Self.extras(property.oldValue.value) + Self.extras(property.newValue.value) { keys.insert(key) }
                    default:
                        if let key = Self.keyOfAttribute[property.name] { keys.insert(key) }
                    }
                }
                return keys.isEmpty ? [] : [SyncTouch(task: uuid, kind: .keys(keys))]
            }
        case "Tag", "Project", "Location":
            // A rename changes the key of every task that has it.
            guard change.kind == .update, let rename = change.values.first(where: { $0.name == "name" }) else { return [] }
            var keys: Set<String> = ["project"]
            if change.entityName == "Location" { keys = ["location"] }
            if change.entityName == "Tag" {
                keys = []
                for value in [rename.oldValue.value, rename.newValue.value] {
                    if case .string(let name) = value { keys.insert("tag_" + name) }
                }
            }
            return try tasks(of: change.objectID).map { SyncTouch(task: $0, kind: .keys(keys)) }
        case "Annotation":
            // Added and removed notes show in their task's change; an edited one here.
            guard change.kind == .update, let note = object(change.objectID), let task = try note.object(forKey: "task"),
                  case .uuid(let uuid) = task["uuid"] else { return [] }
            var keys: Set<String> = []
            for property in change.values where property.name == "entry" {
                for value in [property.oldValue.value, property.newValue.value] {
                    if case .date(let entry) = value { keys.insert("annotation_" + Self.seconds(entry)) }
                }
            }
            if let key = annotationKey(change.objectID) { keys.insert(key) }
            return [SyncTouch(task: uuid, kind: .keys(keys))]
        default:
            return []
        }
    }

    // MARK: Task to store

    func write(_ properties: [String: String]?, for uuid: UUID, in context: ManagedObjectContext) throws -> [String] {
        try load(context)
        guard let properties else {
            if let task = tasksByUUID[uuid] {
                context.delete(task)
                tasksByUUID[uuid] = nil
            }
            return []
        }
        var warnings: [String] = []
        let short = String(uuid.uuidString.lowercased().prefix(8))
        let task: ManagedObject
        if let found = tasksByUUID[uuid] {
            task = found
        } else {
            task = try context.insertObject(entityName: "Task")
            try task.setValue(.uuid(uuid), forKey: "uuid")
            tasksByUUID[uuid] = task
        }
        // Keys the model cannot hold as they are stay in the extras, under their own name.
        var extras: [(key: String, json: String)] = []
        func keep(_ key: String, _ value: String, _ why: String) {
            let shown = value.count > 60 ? String(value.prefix(60)) + "... (\(value.utf8.count) bytes)" : value
            guard value.utf8.count <= Self.maximumKept else {
                warnings.append("task \(short): \(key) '\(shown)' \(why), and more than the \(Self.maximumKept) bytes taskctl keeps of such a value; not kept")
                return
            }
            extras.append((key, JSONText.quote(value)))
            warnings.append("task \(short): \(key) '\(shown)' \(why); kept as it is")
        }
        // `modified` is made from the store's history when a change is sent, not kept.
        var handled: Set<String> = ["description", "status", "priority", "recur", "project", "location", "modified"]
        // A description taskctl cannot store (empty, or longer than a task's text may be)
        // is kept with the task, new or not, and named: the title then says so, rather than
        // keep an old text the other replicas no longer have.
        if let text = properties["description"], !text.isEmpty, text.count <= Self.maximumText {
            try task.setValue(.string(text), forKey: "title")
        } else if let text = properties["description"] {
            try task.setValue(.string(Self.noDescription), forKey: "title")
            keep("description", text, text.isEmpty ? "is empty, which taskctl does not store as a task's text"
                                                   : "is longer than the \(Self.maximumText) characters of a task's text")
        } else if task.isInserted || task["title"].isNull {
            try task.setValue(.string(Self.noDescription), forKey: "title")
        }
        switch properties["status"] {
        case "pending"?, "waiting"?, nil: try task.setValue("pending", forKey: "status")
        case "completed"?: try task.setValue("done", forKey: "status")
        case "deleted"?: try task.setValue("deleted", forKey: "status")
        case "recurring"?: try task.setValue("recurring", forKey: "status")
        case let other?:
            try task.setValue("pending", forKey: "status")
            keep("status", other, "is not a status taskctl knows")
        }
        switch properties["priority"] {
        case nil: try task.setValue(.integer(0), forKey: "priority")
        case "L"?: try task.setValue(.integer(1), forKey: "priority")
        case "M"?: try task.setValue(.integer(2), forKey: "priority")
        case "H"?: try task.setValue(.integer(3), forKey: "priority")
        case let other?:
            try task.setValue(.integer(0), forKey: "priority")
            keep("priority", other, "is not H, M or L")
        }
        for (key, attribute) in Self.dates {
            handled.insert(key)
            guard let text = properties[key] else {
                try task.setValue(key == "entry" && task.isInserted ? .date(now) : .null, forKey: attribute)
                continue
            }
            if let date = Self.date(text) {
                try task.setValue(.date(date), forKey: attribute)
            } else {
                try task.setValue(.null, forKey: attribute)
                keep(key, text, "is not a date (seconds since 1970)")
            }
        }
        if let recurrence = properties["recur"], !recurrence.isEmpty {
            if recurrence.count <= 20 {
                try task.setValue(.string(recurrence), forKey: "recurrence")
            } else {
                try task.setValue(.null, forKey: "recurrence")
                keep("recur", recurrence, "is longer than 20 characters")
            }
        } else {
            try task.setValue(.null, forKey: "recurrence")
        }
        try task.setObject(try object("Project", named: properties["project"], in: context), forKey: "project")
        try task.setObject(try object("Location", named: properties["location"], in: context), forKey: "location")
        var tags: [ManagedObject] = []
        var notes: [(entry: Date?, text: String)] = []
        var dependencies: [String] = []
        for key in properties.keys.sorted() {
            guard let value = properties[key], !handled.contains(key) else { continue }
            if key.hasPrefix("tag_"), key.count > 4 {
                if let tag = try object("Tag", named: String(key.dropFirst(4)), in: context) { tags.append(tag) }
            } else if key.hasPrefix("annotation_"), let entry = Self.date(String(key.dropFirst(11))), !value.isEmpty, value.count <= 100_000 {
                notes.append((entry, value))
            } else if key.hasPrefix("dep_"), TaskwarriorFormat.parseUUID(String(key.dropFirst(4))) != nil {
                dependencies.append(String(key.dropFirst(4)))
            } else {
                extras.append((key, JSONText.quote(value)))
            }
        }
        if !dependencies.isEmpty { extras.append(("depends", "[" + dependencies.map(JSONText.quote).joined(separator: ",") + "]")) }
        // The extras as before when nothing in them changed (the member order of an import kept).
        let current = Self.extras(task["extras"])
        let wanted = extras.map { ($0.key, (try? JSONParser.parse($0.json))?.stringValue ?? $0.json) }
        let same = Dictionary(current.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a }) == Dictionary(wanted.map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a })
        if !same { try task.setValue(ExtrasText.encode(extras), forKey: "extras") }
        let currentTags = try task.objects(forKey: "tags").map(\.objectID)
        if Set(currentTags) != Set(tags.map(\.objectID)) { try task.setObjects(tags, forKey: "tags") }
        try Annotations.replace(on: task, with: notes.sorted { ($0.entry ?? .distantPast, $0.text) < ($1.entry ?? .distantPast, $1.text) }, in: context)
        return warnings
    }

    /// The tag, project or location of a name, made when new (nil for no name).
    private func object(_ entity: String, named name: String?, in context: ManagedObjectContext) throws -> ManagedObject? {
        guard let name, !name.isEmpty else { return nil }
        let key = entity == "Location" ? name.lowercased() : name
        if let known = named[entity]?[key], !known.isDeleted { return known }
        let object = try context.insertObject(entityName: entity)
        try object.setValue(.string(name), forKey: "name")
        named[entity, default: [:]][key] = object
        return object
    }
}

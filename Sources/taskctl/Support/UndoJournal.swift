import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ObjectStore
import ObjectStoreModel

/// The last changes made by any taskctl process, kept beside the store
/// (`STORE.undo.json`, one JSON object per line), so `taskctl undo` reverts the last change
/// whoever made it. A command appends its line; undo rewrites the file without it.
///
/// Each entry holds the state of every task and location a command changed, as it was
/// before: a task's fields, or nothing when the command created it.
struct UndoJournal {
    let url: URL
    static let limit = 50

    init(storeURL: URL) {
        url = URL(fileURLWithPath: storeURL.path + ".undo.json")
    }

    /// One recorded change.
    struct Entry {
        var command: String
        /// Task id to its fields before the change (nil: the command created it).
        var tasks: [(id: Int64, before: [String: String]?)]
        /// Location names before the change (nil: created) with the name after.
        var locations: [(after: String?, before: [String: String]?)]
    }

    /// The fields undo restores, as JSON texts.
    static func snapshot(task: ManagedObject) throws -> [String: String] {
        var fields: [String: String] = [:]
        for key in ["title", "priority", "dueDate", "status", "createdAt", "completedAt", "uuid", "extras"] {
            fields[key] = JSONText.encode(task[key])
        }
        fields["location"] = JSONText.encode(try task.value(forKeyPath: "location.name").value ?? .null)
        fields["project"] = JSONText.encode(try task.value(forKeyPath: "project.name").value ?? .null)
        let tags = try task.objects(forKey: "tags").map { JSONText.encode($0["name"]) }
        fields["tags"] = "[" + tags.joined(separator: ",") + "]"
        return fields
    }

    static func snapshot(location: ManagedObject) throws -> [String: String] {
        let ids = try location.objectIDs(forRelationship: "tasks").compactMap(\.primaryKey)
        return ["name": JSONText.encode(location["name"]), "tasks": "[" + ids.map(String.init).joined(separator: ",") + "]"]
    }

    func read() -> [Entry] {
        guard let data = FileManager.default.contents(atPath: url.path) else { return [] }
        func fields(_ node: JSONNode?) -> [String: String]? {
            guard let members = node?.members else { return nil }
            var result: [String: String] = [:]
            for member in members { result[member.key] = member.value.stringValue }
            return result
        }
        return data.split(separator: UInt8(ascii: "\n")).compactMap { line in
            guard let node = try? JSONParser.parse(Array(line)), let command = node["command"]?.stringValue else { return nil }
            let tasks: [(Int64, [String: String]?)] = (node["tasks"]?.elements ?? []).compactMap { t in
                guard let id = t["id"]?.numberText.flatMap({ Int64($0) }) else { return nil }
                return (id, fields(t["before"]))
            }
            let locations: [(String?, [String: String]?)] = (node["locations"]?.elements ?? []).map { l in
                (l["after"]?.stringValue, fields(l["before"]))
            }
            return Entry(command: command, tasks: tasks, locations: locations)
        }
    }

    static func line(_ entry: Entry) -> String {
        func object(_ fields: [String: String]?) -> String {
            guard let fields else { return "null" }
            return "{" + fields.keys.sorted().map { "\(JSONText.quote($0)): \(JSONText.quote(fields[$0] ?? "null"))" }.joined(separator: ", ") + "}"
        }
        let tasks = entry.tasks.map { "{\"id\": \($0.id), \"before\": \(object($0.before))}" }.joined(separator: ", ")
        let locations = entry.locations.map { "{\"after\": \($0.after.map(JSONText.quote) ?? "null"), \"before\": \(object($0.before))}" }.joined(separator: ", ")
        return "{\"command\": \(JSONText.quote(entry.command)), \"tasks\": [\(tasks)], \"locations\": [\(locations)]}\n"
    }

    /// Replaces the journal (atomically) with the last entries.
    func write(_ entries: [Entry]) throws {
        let text = entries.suffix(Self.limit).map(Self.line).joined()
        let temporary = url.path + ".tmp-\(ProcessInfo.processInfo.processIdentifier)"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw CLIError.store("cannot write the undo journal \(url.path)")
        }
        guard rename(temporary, url.path) == 0 else {
            try? FileManager.default.removeItem(atPath: temporary)
            throw CLIError.store("cannot write the undo journal \(url.path)")
        }
    }

    /// Appends one entry: one write at the end of the file, whatever the journal's size.
    /// Now and then the journal is trimmed to its last entries.
    func append(_ entry: Entry) throws {
        guard !entry.tasks.isEmpty || !entry.locations.isEmpty else { return }
        let fd = open(url.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CLIError.store("cannot write the undo journal \(url.path)") }
        let bytes = Array(Self.line(entry).utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        var info = stat()
        let size = fstat(fd, &info) == 0 ? Int(info.st_size) : 0
        close(fd)
        guard written == bytes.count else { throw CLIError.store("cannot write the undo journal \(url.path)") }
        if size > 4 << 20 { try write(read()) }
    }
}

/// Records what a command changes, then saves and journals it in one go.
struct ChangeRecorder {
    let command: String
    private var taskBefore: [ObjectID: [String: String]?] = [:]
    private var locationBefore: [ObjectID: [String: String]?] = [:]

    init(command: String) { self.command = command }

    /// Call before changing an existing task (or after inserting a new one).
    mutating func willChange(task: ManagedObject) throws {
        guard taskBefore[task.objectID] == nil else { return }
        taskBefore[task.objectID] = task.isInserted ? .some(nil) : .some(try UndoJournal.snapshot(task: task))
    }

    mutating func willChange(location: ManagedObject) throws {
        guard locationBefore[location.objectID] == nil else { return }
        locationBefore[location.objectID] = location.isInserted ? .some(nil) : .some(try UndoJournal.snapshot(location: location))
    }

    /// Saves the context and appends the journal entry (with the tasks' final ids).
    func save(_ context: ManagedObjectContext, journal: UndoJournal) throws {
        let tasks = taskBefore.compactMap { id, before in context.registeredObject(for: id).map { ($0, before) } }
        let locations = locationBefore.compactMap { id, before -> (String?, [String: String]?)? in
            guard let object = context.registeredObject(for: id) else { return nil }
            if object.isDeleted { return (nil, before) }
            if case .string(let name) = object["name"] { return (name, before) }
            return (nil, before)
        }
        try context.save()
        let entry = UndoJournal.Entry(
            command: command,
            tasks: tasks.map { ($0.0.objectID.primaryKey ?? 0, $0.1) }.sorted { $0.0 < $1.0 },
            locations: locations)
        try journal.append(entry)
    }
}

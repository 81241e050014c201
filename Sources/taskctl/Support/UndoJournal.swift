import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ObjectStore
import ObjectStoreModel

/// The last changes made by any taskctl process, kept beside the store
/// (`STORE.undo.json`, one JSON object per line), so `taskctl undo` reverts the last change
/// whoever made it. A command saves and appends its line while it holds the store's lock,
/// and undo pops its line under the same lock, so the journal's order is the order of the
/// saves and two undos never take the same entry.
///
/// Each entry holds, for every task a command changed, its fields before and after (or no
/// "before" when the command created it), and for every location its state before.
struct UndoJournal {
    let url: URL
    static let limit = 50

    /// The journal of the store at `storeURL`, beside the real file (a symbolic link to the
    /// store shares its journal).
    init(storeURL: URL) {
        url = URL(fileURLWithPath: storeURL.resolvingSymlinksInPath().path + ".undo.json")
    }

    /// One recorded change.
    struct Entry {
        var command: String
        /// Task id to its fields before the change (nil: the command created it) and after
        /// it (nil in entries written before taskctl recorded it).
        var tasks: [(id: Int64, before: [String: String]?, after: [String: String]?)]
        /// Location names before the change (nil: created) with the name after.
        var locations: [(after: String?, before: [String: String]?)]
    }

    /// The fields undo restores, as JSON texts.
    static func snapshot(task: ManagedObject) throws -> [String: String] {
        var fields: [String: String] = [:]
        for key in UndoCommand.taskTypes.keys {
            fields[key] = JSONText.encode(task[key])
        }
        fields["annotations"] = try Annotations.journalText(of: task)
        fields["location"] = JSONText.encode(try TaskView.name(of: task.object(forKey: "location"), entity: "Location").map(Value.string) ?? .null)
        fields["project"] = JSONText.encode(try TaskView.name(of: task.object(forKey: "project"), entity: "Project").map(Value.string) ?? .null)
        let tags = try task.objects(forKey: "tags").map { JSONText.encode(try TaskView.name(of: $0, entity: "Tag").map(Value.string) ?? .null) }
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
            var tasks: [(Int64, [String: String]?, [String: String]?)] = (node["tasks"]?.elements ?? []).compactMap { t in
                guard let id = t["id"]?.numberText.flatMap({ Int64($0) }) else { return nil }
                return (id, fields(t["before"]), fields(t["after"]))
            }
            for range in node["created"]?.elements ?? [] {
                guard let bounds = range.elements, bounds.count == 2,
                      let first = bounds[0].numberText.flatMap({ Int64($0) }), let last = bounds[1].numberText.flatMap({ Int64($0) }),
                      first >= 1, first <= last, last - first < 100_000_000 else { continue }
                tasks += (first...last).map { ($0, nil, nil) }
            }
            tasks.sort { $0.0 < $1.0 }
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
        // Created tasks (no "before", no "after") as ranges of ids: an import of 100,000
        // tasks is one short line.
        let created = ranges(entry.tasks.filter { $0.before == nil && $0.after == nil }.map(\.id))
            .map { "[\($0.lowerBound), \($0.upperBound)]" }.joined(separator: ", ")
        let tasks = entry.tasks.filter { $0.before != nil || $0.after != nil }
            .map { "{\"id\": \($0.id), \"before\": \(object($0.before)), \"after\": \(object($0.after))}" }.joined(separator: ", ")
        let locations = entry.locations.map { "{\"after\": \($0.after.map(JSONText.quote) ?? "null"), \"before\": \(object($0.before))}" }.joined(separator: ", ")
        return "{\"command\": \(JSONText.quote(entry.command)), \"created\": [\(created)], \"tasks\": [\(tasks)], \"locations\": [\(locations)]}\n"
    }

    /// Ids as runs of consecutive ids.
    static func ranges(_ ids: [Int64]) -> [ClosedRange<Int64>] {
        var result: [ClosedRange<Int64>] = []
        for id in Set(ids).sorted() {
            if let last = result.last, last.upperBound == id &- 1 {
                result[result.count - 1] = last.lowerBound...id
            } else {
                result.append(id...id)
            }
        }
        return result
    }

    /// Replaces the journal (atomically) with the last entries. Call it holding the store's lock.
    func write(_ entries: [Entry]) throws {
        let text = entries.suffix(Self.limit).map(Self.line).joined()
        let temporary = url.path + ".tmp-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw CLIError.store("cannot write the undo journal \(url.path)")
        }
        guard rename(temporary, url.path) == 0 else {
            try? FileManager.default.removeItem(atPath: temporary)
            throw CLIError.store("cannot write the undo journal \(url.path)")
        }
    }

    /// Appends one entry: one write at the end of the file, whatever the journal's size.
    /// Now and then the journal is trimmed to its last entries. Call it holding the store's lock.
    func append(_ entry: Entry) throws {
        guard !entry.tasks.isEmpty || !entry.locations.isEmpty else { return }
        let fd = open(url.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CLIError.store("cannot write the undo journal \(url.path)") }
        let bytes = Array(Self.line(entry).utf8)
        #if canImport(Darwin)
        let written = bytes.withUnsafeBytes { Darwin.write(fd, $0.baseAddress, $0.count) }
        #else
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        #endif
        var info = stat()
        let size = fstat(fd, &info) == 0 ? Int(info.st_size) : 0
        close(fd)
        guard written == bytes.count else { throw CLIError.store("cannot write the undo journal \(url.path)") }
        // Trimming is housekeeping: the entry is written, the next append tries again. A
        // journal that is large because its last entries are (an import that updated many
        // tasks) is left as it is rather than rewritten by every command.
        if size > 4 << 20, let data = FileManager.default.contents(atPath: url.path),
           data.reduce(0, { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }) > Self.limit {
            try? write(read())
        }
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

    /// Saves the context and appends the journal entry (with the tasks' final ids), both
    /// under the store's lock, so the journal lists saves in the order they happened.
    /// A journal that cannot be written after the save committed is a warning: the change
    /// is saved, and reporting failure would make the user repeat it.
    func save(_ context: ManagedObjectContext, journal: UndoJournal, app: App) throws {
        // The changes as this command made them (before a merge with other processes' saves).
        context.processPendingChanges()
        // A task imported from Taskwarrior keeps its "modified" time for exports: a change
        // made here is a modification too.
        for (id, before) in taskBefore where before != nil {
            guard let task = context.registeredObject(for: id), task.isUpdated else { continue }
            var extras = ExtrasText.decode(task["extras"])
            guard let index = extras.firstIndex(where: { $0.key == "modified" }) else { continue }
            extras[index].json = JSONText.quote(TaskwarriorFormat.format(app.now))
            try task.setValue(ExtrasText.encode(extras), forKey: "extras")
        }
        // A created task is recorded by its id alone (undo deletes it); a changed one with
        // its fields after the change, so undo can tell whether they changed since. An
        // import of 100,000 tasks writes a line of ids, not of 100,000 snapshots.
        var tasks: [(ManagedObject, [String: String]?, [String: String]?)] = []
        for (id, before) in taskBefore {
            guard let task = context.registeredObject(for: id) else { continue }
            tasks.append((task, before, before == nil ? nil : try UndoJournal.snapshot(task: task)))
        }
        let locations = locationBefore.compactMap { id, before -> (String?, [String: String]?)? in
            guard let object = context.registeredObject(for: id) else { return nil }
            if object.isDeleted { return (nil, before) }
            if case .string(let name) = object["name"] { return (name, before) }
            return (nil, before)
        }
        let coordinator = context.coordinator
        // Nothing changed (a value set to what it was): nothing to save or to undo.
        guard context.hasChanges else { return }
        try coordinator.withExclusiveStoreAccess {
            try context.save()
            let entry = UndoJournal.Entry(
                command: command,
                tasks: tasks.map { ($0.0.objectID.primaryKey ?? 0, $0.1, $0.2) }.sorted { $0.0 < $1.0 },
                locations: locations)
            do {
                try journal.append(entry)
            } catch {
                app.output.warn("taskctl: warning: the change is saved, but \(CLIError.from(error).message); it cannot be undone")
            }
        }
        if let warning = coordinator.housekeepingWarning { app.output.warn("taskctl: warning: \(warning)") }
    }
}

import Foundation
import ObjectStore
import ObjectStoreModel
import ObjectStoreSync

/// The fields of a task as read from or written to another format.
struct TaskRecord {
    var uuid: UUID?
    var title: String
    var priority: Int64 = 0
    var due: Date?
    var status = "pending"
    var created: Date?
    var completed: Date?
    var project: String?
    var location: String?
    var tags: [String] = []
    var wait: Date?
    var scheduled: Date?
    var started: Date?
    var until: Date?
    var recurrence: String?
    var annotations: [(entry: Date?, text: String)] = []
    /// Raw JSON members of fields taskctl does not model, kept for round trips.
    var extras: [(key: String, json: String)] = []
}

/// Taskwarrior's `task export` JSON and its compact dates (20261122T000000Z).
enum TaskwarriorFormat {
    static let modelled: Set<String> = ["uuid", "description", "priority", "due", "status", "entry", "end", "project", "tags", "location",
                                        "wait", "scheduled", "start", "until", "recur", "annotations"]

    /// A UUID read in place (Foundation's parser was a twentieth of an import).
    static func parseUUID(_ text: String) -> UUID? { SyncUUID.parse(text) }

    static func parseDate(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            // Taskwarrior's own form, 20261122T143000Z, read in place (an import reads two
            // per task); anything else as ISO-8601.
            guard bytes.count == 16, bytes[8] == UInt8(ascii: "T"), bytes[15] == UInt8(ascii: "Z") else { return ISO8601.parse(bytes: bytes) }
            func number(_ from: Int, _ count: Int) -> Int? {
                var value = 0
                for k in from..<(from + count) {
                    guard (48...57).contains(bytes[k]) else { return nil }
                    value = value * 10 + Int(bytes[k] - 48)
                }
                return value
            }
            guard let year = number(0, 4), let month = number(4, 2), let day = number(6, 2),
                let hour = number(9, 2), let minute = number(11, 2), let second = number(13, 2)
            else { return nil }
            return ISO8601.date(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        }
    }

    static func format(_ date: Date) -> String {
        let iso = ISO8601.format(Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
        return String(decoding: iso.utf8.filter { $0 != 0x2D && $0 != 0x3A }, as: UTF8.self)  // without - and :
    }

    /// One task of a Taskwarrior export (element `index` of its array); `bytes` are the
    /// export's, from which the fields taskctl does not model are kept as written.
    /// Read as Taskwarrior 2.6 imports it: a task without a UUID gets one; dates may be
    /// epoch seconds (a number or digits) or carry an offset; a priority other than H, M or
    /// L is kept as written and counts as none (as there); `"project": ""` is no project;
    /// 2.5's `"tags": "a,b"` is two tags; `waiting` is pending with its wait; a done or
    /// deleted task without `end` ends `now`, a pending one has none; an annotation without
    /// `entry` is dated `now`.
    static func record(_ item: JSONNode, index: Int, bytes: [UInt8], now: Date, line: Int? = nil, warn: (String) -> Void = { _ in }) throws -> TaskRecord {
        let line = line ?? item.location.line  // JSON lines: the file's line, not the object's
        func bad(_ message: String) -> CLIError { .usage("task \(index + 1) (line \(line)): \(message)") }
        guard let members = item.members else { throw bad("expected a JSON object") }
        guard let description = item["description"]?.stringValue, !description.isEmpty else { throw bad("no description") }
        var record = TaskRecord(title: description)
        if let node = item["uuid"] {
            guard let uuidText = node.stringValue, let uuid = parseUUID(uuidText) else { throw bad("uuid '\(node.stringValue ?? "?")' is not a UUID") }
            record.uuid = uuid
        } else {
            record.uuid = UUID()
        }
        var keptPriority: String?
        switch item["priority"]?.kind {
        case .string("H")?: record.priority = 3
        case .string("M")?: record.priority = 2
        case .string("L")?: record.priority = 1
        case nil, .null?, .string("")?: record.priority = 0
        case .string(let other)?, .number(let other)?:
            keptPriority = other
            warn("taskctl: task \(index + 1) (line \(line)): priority '\(other)' is not H, M or L; kept as written and read as none, as Taskwarrior reads it")
        default: throw bad("priority must be H, M or L")
        }
        func date(_ key: String) throws -> Date? {
            guard let node = item[key] else { return nil }
            let text: String
            switch node.kind {
            case .string(let value): text = value
            case .number(let value): text = value
            default: throw bad("\(key) is not a Taskwarrior date")
            }
            guard let date = parseImportDate(text) else { throw bad("\(key) '\(text)' is not a Taskwarrior date") }
            return date
        }
        record.due = try date("due")
        record.created = try date("entry")
        record.completed = try date("end")
        record.wait = try date("wait")
        record.scheduled = try date("scheduled")
        record.started = try date("start")
        record.until = try date("until")
        if let recur = item["recur"] {
            guard let text = recur.stringValue, !text.isEmpty, text.count <= 20 else { throw bad("recur is not a recurrence such as weekly") }
            record.recurrence = text
        }
        for (number, note) in (item["annotations"]?.elements ?? []).enumerated() {
            guard let text = note["description"]?.stringValue, !text.isEmpty else { throw bad("annotation \(number + 1) has no description") }
            var entry = now
            if let node = note["entry"] {
                guard let value = node.stringValue.flatMap(parseImportDate) else { throw bad("annotation \(number + 1)'s entry is not a Taskwarrior date") }
                entry = value
            }
            record.annotations.append((entry, text))
        }
        let status = item["status"]?.stringValue ?? "pending"
        switch status {
        case "pending", "waiting": record.status = "pending"
        case "completed": record.status = "done"
        case "deleted": record.status = "deleted"
        case "recurring": record.status = "recurring"
        default: throw bad("unknown status '\(status)'")
        }
        record.project = item["project"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        record.location = item["location"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        if let tags = item["tags"]?.stringValue {
            record.tags = tags.split(separator: ",").map { $0.trimmingBlanks() }.filter { !$0.isEmpty }
        } else {
            record.tags = (item["tags"]?.elements ?? []).compactMap(\.stringValue)
        }
        // Taskwarrior ends a done or deleted task that has no end at the import, and keeps no
        // end on a pending one.
        if record.status == "done" || record.status == "deleted" {
            if record.completed == nil { record.completed = now }
        } else if record.status == "pending" {
            record.completed = nil
        }
        for member in members where !modelled.contains(member.key) {
            record.extras.append((member.key, JSONSlice.text(of: member.value, in: bytes)))
        }
        if keptPriority != nil, let node = item["priority"] { record.extras.append(("priority", JSONSlice.text(of: node, in: bytes))) }
        return record
    }

    /// A date of an import: Taskwarrior's form, ISO 8601 (an offset too), its form with an
    /// offset (20261201T100000+0100), or epoch seconds.
    static func parseImportDate(_ text: String) -> Date? {
        if let date = parseDate(text) { return date }
        if !text.isEmpty, text.count <= 12, text.allSatisfy(\.isNumber), let seconds = Double(text) { return Date(timeIntervalSince1970: seconds) }
        // 20261201T100000+0100
        let characters = Array(text)
        guard characters.count == 20, characters[8] == "T", characters[15] == "+" || characters[15] == "-",
              let offset = Int(String(characters[16...])), let base = parseDate(String(characters[..<15]) + "Z") else { return nil }
        let seconds = (offset / 100) * 3_600 + (offset % 100) * 60
        return base.addingTimeInterval(characters[15] == "+" ? -Double(seconds) : Double(seconds))
    }
}

/// Extras are stored as one JSON object of raw member texts.
enum ExtrasText {
    static func encode(_ extras: [(key: String, json: String)]) -> Value {
        guard !extras.isEmpty else { return .null }
        return .string("{" + extras.map { "\(JSONText.quote($0.key)):\($0.json)" }.joined(separator: ",") + "}")
    }

    static func decode(_ value: Value) -> [(key: String, json: String)] {
        guard case .string(let text) = value, let root = try? JSONParser.parse(text) else { return [] }
        let bytes = Array(text.utf8)
        return (root.members ?? []).map { ($0.key, JSONSlice.text(of: $0.value, in: bytes)) }
    }
}

/// The exact source text of a parsed JSON value, so numbers and strings survive unchanged.
enum JSONSlice {
    static func text(of node: JSONNode, in bytes: [UInt8]) -> String {
        switch node.kind {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return n
        case .string(let s): return JSONText.quote(s)
        case .array(let items): return "[" + items.map { text(of: $0, in: bytes) }.joined(separator: ",") + "]"
        case .object(let members): return "{" + members.map { "\(JSONText.quote($0.key)):\(text(of: $0.value, in: bytes))" }.joined(separator: ",") + "}"
        }
    }
}

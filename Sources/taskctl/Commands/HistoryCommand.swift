import Foundation
import ObjectStore
import ObjectStoreModel

/// `taskctl log`: the store's recent transactions, newest last: when, which command (or
/// which other program), and per changed object its fields, old -> new.
enum HistoryCommand {
    static func run(_ words: [String], _ app: App) throws {
        // `log TEXT...` is Taskwarrior's: a task recorded as done already. Without words, the
        // store's recent changes.
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            if word == "--limit" { index += 1; continue }
            if word == "--json" || word.hasPrefix("--limit=") { continue }
            return try TaskCommands.add(words, app, logged: true)
        }
        let args = try Arguments(words, for: "log")
        try args.allowWords(0, command: "log")
        let limit = try args.value("limit").map { text -> Int in
            guard let n = Int(text), n > 0 else { throw CLIError.usage("--limit needs a positive number, not '\(text)'") }
            return n
        } ?? 10
        let context = try app.context(readOnly: true)
        let coordinator = context.coordinator
        guard coordinator.keepsHistory else {
            if args.has("json") { app.output.line("[]") } else { app.output.line("no changes recorded yet") }
            return
        }
        // A sync's own bookkeeping (where it stands with the server) is not a change of tasks.
        let entities = Set(context.model.entities.map(\.name)).subtracting(["SyncState"])
        let transactions = Array(try coordinator.fetchHistory(after: nil, entities: entities).suffix(limit))
        let namer = Namer(context: context)
        if args.has("json") {
            app.output.line("[" + transactions.map { json($0, namer) }.joined(separator: ",\n ") + "]")
            return
        }
        if transactions.isEmpty { app.output.line("no changes recorded yet") }
        let dates = RelativeDate(now: app.now, timeZone: app.timeZone)
        for transaction in transactions {
            var title = "#\(transaction.number)  \(dates.date(transaction.timestamp)) \(time(transaction.timestamp, app.timeZone))  "
            if let undone = UndoCommand.undoneNumber(transaction) {
                title += "undo of #\(undone)"
            } else {
                title += transaction.contextName ?? "(unnamed)"
            }
            if transaction.author != App.historyAuthor { title += "  by \(transaction.author ?? "another program")" }
            app.output.line(title)
            // Inverse sides of relationships (a location's tasks) repeat what their tasks say.
            let shown = transaction.changes.filter { change in change.kind != .update || !change.values.allSatisfy { isInverseList($0, change, context.model) } }
            for change in shown.prefix(20) {
                app.output.line("  " + describe(change, namer, context.model))
            }
            if shown.count > 20 { app.output.line("  ... and \(shown.count - 20) more") }
        }
    }

    /// A to-many relationship whose inverse is to-one: the other side lists the change.
    static func isInverseList(_ value: PropertyChange, _ change: HistoryChange, _ model: ManagedObjectModel) -> Bool {
        guard let entity = model.entity(named: change.entityName), case .relationship(let relationship)? = entity.property(named: value.name),
              relationship.isToMany, let inverseName = relationship.inverseName,
              case .relationship(let inverse)? = model.entity(named: relationship.destinationEntityName)?.property(named: inverseName)
        else { return false }
        return !inverse.isToMany
    }

    static func time(_ date: Date, _ zone: TimeZone) -> String {
        let c = Calendar.taskctl(in: zone).isoFields(of: date)
        return String(format: "%02d:%02d", c.hour, c.minute)
    }

    /// The name the manual uses for a field.
    static func fieldName(_ name: String) -> String {
        switch name {
        case "title": return "text"
        case "dueDate": return "due"
        case "waitUntil": return "wait"
        case "startedAt": return "started"
        case "completedAt": return "completed"
        case "createdAt": return "created"
        case "recurrence": return "recur"
        default: return name
        }
    }

    /// Names objects as the user does, reading names of objects that still exist.
    struct Namer {
        let context: ManagedObjectContext

        /// An object as a field's value: "task 5", "home", "#3" (one that no longer exists).
        func name(_ id: ObjectID) -> String {
            if id.entityName == "Task" { return "task \(id.primaryKey ?? 0)" }
            if let object = try? context.existingObject(with: id) {
                if case .string(let name) = object["name"] { return name }
                if case .string(let text) = object["text"] { return JSONText.quote(text.count > 40 ? String(text.prefix(37)) + "..." : text) }
            }
            return "#\(id.primaryKey ?? 0)"
        }

        /// An object as the subject of a line: "task 5", "location home".
        func subject(_ id: ObjectID) -> String {
            id.entityName == "Task" ? name(id) : "\(id.entityName.lowercased()) \(name(id))"
        }
    }

    static func text(_ value: SlotValue, field: String, _ namer: Namer) -> String {
        switch value {
        case .value(.null), .toOne(nil): return "none"
        case .value(.integer(let n)) where field == "priority": return Priority.names.indices.contains(Int(n)) ? Priority.names[Int(n)] : "\(n)"
        case .value(.string(let s)): return JSONText.quote(s.count > 60 ? String(s.prefix(57)) + "..." : s)
        case .value(.date(let d)): return ISO8601.format(d)
        case .value(let v): return v.description
        case .toOne(let id?): return namer.name(id)
        case .toMany(let ids): return ids.isEmpty ? "none" : ids.map(namer.name).joined(separator: ", ")
        }
    }

    static func describe(_ change: HistoryChange, _ namer: Namer, _ model: ManagedObjectModel) -> String {
        let subject = namer.subject(change.objectID)
        let values = change.values.filter { !isInverseList($0, change, model) }.map { value -> String in
            let field = fieldName(value.name)
            if case .toMany(let removed) = value.oldValue, case .toMany(let added) = value.newValue {
                return field + ": " + (added.map { "+" + namer.name($0) } + removed.map { "-" + namer.name($0) }).joined(separator: " ")
            }
            switch change.kind {
            case .insert: return "\(field) \(text(value.newValue, field: value.name, namer))"
            case .delete: return "\(field) was \(text(value.oldValue, field: value.name, namer))"
            case .update: return "\(field) \(text(value.oldValue, field: value.name, namer)) -> \(text(value.newValue, field: value.name, namer))"
            }
        }
        let verb = change.kind == .insert ? " added" : change.kind == .delete ? " deleted" : ""
        // An insertion records no values: a task that still exists shows its text now.
        if change.kind == .insert, change.entityName == "Task", case .string(let text)? = (try? namer.context.existingObject(with: change.objectID))?["title"] {
            return subject + verb + ": " + JSONText.quote(text.count > 60 ? String(text.prefix(57)) + "..." : text)
        }
        return subject + verb + (values.isEmpty ? "" : ": " + values.joined(separator: ", "))
    }

    static func json(_ transaction: HistoryTransaction, _ namer: Namer) -> String {
        func slot(_ value: SlotValue) -> String {
            switch value {
            case .value(let v): return JSONText.encode(v)
            case .toOne(nil): return "null"
            case .toOne(let id?): return JSONText.quote(namer.name(id))
            case .toMany(let ids): return "[" + ids.map { JSONText.quote(namer.name($0)) }.joined(separator: ", ") + "]"
            }
        }
        let changes = transaction.changes.map { change in
            let values = change.values.map { "\(JSONText.quote(fieldName($0.name))): [\(slot($0.oldValue)), \(slot($0.newValue))]" }.joined(separator: ", ")
            return "{\"kind\": \(JSONText.quote(change.kind.rawValue)), \"entity\": \(JSONText.quote(change.entityName)), \"id\": \(change.objectID.primaryKey ?? 0), \"values\": {\(values)}}"
        }
        return "{\"number\": \(transaction.number), \"time\": \(JSONText.quote(ISO8601.format(transaction.timestamp))), "
            + "\"author\": \(transaction.author.map(JSONText.quote) ?? "null"), \"command\": \(transaction.contextName.map(JSONText.quote) ?? "null"), "
            + "\"changes\": [\(changes.joined(separator: ", "))]}"
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
}

import Foundation
import ObjectStore
import ObjectStoreModel
import ObjectStoreSync

/// todo.txt (todotxt.org): one task per line.
enum TodoTxtFormat {
    static func records(_ text: String, dates: DateParser) throws -> [TaskRecord] {
        var records: [TaskRecord] = []
        // "\r\n" is one Character, so splitting on "\n" kept a Windows file one line.
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = rawLine.trimmingBlanks()
            guard !line.isEmpty else { continue }
            var words = line.split(separator: " ").map(String.init)
            var record = TaskRecord(title: "")
            func isDate(_ word: String?) -> Date? {
                guard let word, word.count == 10, word.split(separator: "-").count == 3 else { return nil }
                return ISO8601.parse(word)
            }
            if words.first == "x" {
                record.status = "done"
                words.removeFirst()
                if let date = isDate(words.first) { record.completed = date; words.removeFirst() }
            }
            if let first = words.first, first.count == 3, first.hasPrefix("("), first.hasSuffix(")"), let letter = first.dropFirst().first, letter.isUppercase {
                record.priority = letter == "A" ? 3 : letter == "B" ? 2 : 1
                words.removeFirst()
            }
            if let date = isDate(words.first) { record.created = date; words.removeFirst() }
            var title: [String] = []
            for word in words {
                if word.count > 1, word.hasPrefix("+") {
                    if record.project == nil { record.project = String(word.dropFirst()) } else { record.tags.append(String(word.dropFirst())) }
                    title.append(word)
                } else if word.count > 1, word.hasPrefix("@") {
                    if record.location == nil { record.location = String(word.dropFirst()) }
                    title.append(word)
                } else if let colon = word.firstIndex(of: ":"), colon != word.startIndex, word.index(after: colon) != word.endIndex,
                    !word.hasPrefix("http"), word[..<colon].allSatisfy({ $0.isLetter })
                {
                    let key = String(word[..<colon]), value = String(word[word.index(after: colon)...])
                    if key == "due" {
                        guard let date = isDate(value) else { throw CLIError.usage("todo.txt line \(index + 1): due:\(value) is not a date (YYYY-MM-DD)") }
                        record.due = dates.endOfDay(date.addingTimeInterval(12 * 3600))
                    }
                    title.append(word)
                } else {
                    title.append(word)
                }
            }
            // The text keeps its +project and @context words, as todo.txt shows them; the
            // line itself is kept so exporting gives it back unchanged.
            record.title = title.filter { !($0.hasPrefix("due:")) }.joined(separator: " ").replacingOccurrences(of: "\\n", with: "\n")
            guard !record.title.isEmpty else { throw CLIError.usage("todo.txt line \(index + 1) has no text") }
            record.extras.append(("todo.txt", JSONText.quote(line)))
            if record.priority == 3 && record.due == nil { record.due = nil }
            records.append(record)
        }
        return records
    }

    static func export(_ view: TaskView, timeZone: TimeZone) -> String {
        let extras = ExtrasText.decode(view.extrasText.map(Value.string) ?? .null)
        if let original = extras.first(where: { $0.key == "todo.txt" }), let node = try? JSONParser.parse(original.json), let line = node.stringValue,
            let parsed = try? records(line, dates: DateParser(now: Date(), timeZone: timeZone)).first,
            parsed.title == view.text, parsed.priority == view.priority, (parsed.status == "done") == (view.status == "done")
        {
            return line
        }
        let calendar = Calendar.taskctl(in: timeZone)
        func day(_ date: Date) -> String {
            let c = calendar.isoFields(of: date)
            return String(format: "%04d-%02d-%02d", c.year, c.month, c.day)
        }
        var words: [String] = []
        if view.status == "done" {
            words.append("x")
            if let completed = view.completed { words.append(day(completed)) }
        }
        if view.priority > 0 && view.status != "done" { words.append(["", "(C)", "(B)", "(A)"][Int(min(3, view.priority))]) }
        if let created = view.created { words.append(day(created)) }
        // One task per line: a line break in the text is written as \n (and read back).
        words.append(view.text.replacingOccurrences(of: "\r\n", with: "\\n").replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\n"))
        if let project = view.project, !view.text.contains("+" + project) { words.append("+" + project) }
        // Tags follow the project as +words (todo.txt reads the first +word as the project).
        for tag in view.tags where !view.text.contains("+" + tag) { words.append("+" + tag) }
        if let location = view.location, !view.text.contains("@" + location) { words.append("@" + location.replacingOccurrences(of: " ", with: "_")) }
        if let due = view.due { words.append("due:" + day(due)) }
        return words.joined(separator: " ")
    }
}

/// `taskctl import FILE`.
enum ImportCommand {
    /// How many tasks a large import makes objects of at a time (it commits them together).
    static let batchSize = 50_000

    /// Whether a file of this size is parsed on a second thread ahead of the import: past
    /// 8 MB (some 40,000 tasks; a batch is 50,000); in a debug build with
    /// TASKCTL_IMPORT_BATCH set, TASKCTL_IMPORT_AHEAD=0 keeps the parse on this thread.
    static func parsesAhead(bytes: Int, _ app: App) -> Bool {
        #if DEBUG
        if app.environment["TASKCTL_IMPORT_BATCH"] != nil { return app.environment["TASKCTL_IMPORT_AHEAD"] != "0" }
        #endif
        return bytes > 8 << 20
    }

    /// The batch size of this run: in a debug build (the tests'), TASKCTL_IMPORT_BATCH may
    /// set a smaller one, so that batched imports are tested with a few hundred tasks.
    static func batchSize(_ app: App) -> Int {
        #if DEBUG
        if let text = app.environment["TASKCTL_IMPORT_BATCH"], let size = Int(text), size > 0 { return size }
        #endif
        return batchSize
    }

    static func run(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "import")
        guard args.positional.count == 1 else { throw CLIError.usage("usage: taskctl import FILE [--format taskctl|taskwarrior|todo.txt]") }
        let path = args.positional[0]
        let format: String
        var records: [[TaskRecord]] = []
        // A large JSON file into a binary store is parsed on a second thread, a chunk ahead
        // of the import (RecordStream); the first two chunks are parsed before the store is
        // opened, as the whole file is otherwise.
        var stream: RecordStream?
        var fileBytes = 0
        do {
            // The file's bytes once: JSON is parsed from them a task at a time, and kept
            // fields are cut from them (a million tasks' export held three copies of its text
            // and a tree of every task).
            // `import -`: the standard input, as Taskwarrior reads it.
            guard let bytes = path == "-" ? readStandardInput() : FileBytes.contents(of: path) else { throw CLIError.usage("cannot read \(path)") }
            // Validated as UTF-8 by the standard library (Foundation's decoding of a 21 MB
            // export was 7% of an import).
            guard isUTF8(bytes) else { throw CLIError.usage("\(path) is not UTF-8 text") }
            format = try detectFormat(bytes, given: args.value("format"), path: path)
            fileBytes = bytes.count
            if format != "todo.txt" && StoreType.forFile(app.storeURL) == .binary && parsesAhead(bytes: bytes.count, app) {
                let parsing = RecordStream(bytes, format: format, now: app.now, path: path, chunk: batchSize(app))
                if let first = try parsing.next() { records = [first] }
                if try parsing.hasMore() { stream = parsing } else { warn(parsing.warnings, app) }
            } else {
                records = try parse(bytes, format: format, app: app, path: path, chunk: batchSize(app))
            }
        }
        defer { stream?.cancel() }

        let context = try app.context()
        let coordinator = context.coordinator
        var added = 0, updated = 0
        var recordCount = records.reduce(0) { $0 + $1.count }
        // Tasks already stored (and those this import adds) by UUID, as IDs: objects are let
        // go of after each batch.
        var existing: [UUID: ObjectID] = [:]
        // Every location, project and tag the store has, read once; a name not among them is
        // new. (A fetch per new name met every name inserted before it: one task with 8,000
        // tags took 4 s, 100,000 over two minutes.) Locations match ignoring case, as
        // `name ==[c]` does.
        var names: [String: [String: ObjectID]] = [:]
        func readStore() throws {
            existing = try app.tasks(context).reduce(into: [UUID: ObjectID]()) { map, task in
                if case .uuid(let u) = task["uuid"] { map[u] = task.objectID }
            }
            // (The file's tasks, or for a stream about them: a task is some 200 bytes.)
            existing.reserveCapacity(existing.count + (stream == nil ? recordCount : fileBytes / 200))
            names = ["Location": [:], "Project": [:], "Tag": [:]]
            for (entity, ignoringCase) in [("Location", true), ("Project", false), ("Tag", false)] {
                for object in try context.fetch(FetchRequest(entityName: entity)) {
                    guard case .string(let name) = try object.value(forKey: "name") else { continue }
                    let key = ignoringCase ? name.lowercased() : name
                    if names[entity]?[key] == nil { names[entity]?[key] = object.objectID }
                }
            }
        }
        // A large import into a binary store saves in batches, letting each batch's objects
        // go, and commits the batches together: one commit and one transaction (one undo),
        // all or nothing, without holding a million tasks' objects at once.
        let batched = stream != nil || recordCount > Self.batchSize(app) && StoreType.forFile(app.storeURL) == .binary
        /// Makes objects of the records `take` hands over and saves them.
        func importBatch(_ take: () -> [TaskRecord]) throws {
            var records = take()
            var recorder = ChangeRecorder(command: "import")
            recorder.makesInstances = !batched
            // This batch's objects of the names and of the tasks it adds, by key.
            var named: [String: [String: ManagedObject]] = [:]
            var inserted: [UUID: ManagedObject] = [:]
            func object(_ entity: String, _ name: String, key: String) throws -> ManagedObject {
                if let known = named[entity]?[key] { return known }
                let object: ManagedObject
                if let id = names[entity]?[key] {
                    object = try context.object(with: id)
                } else {
                    object = try context.insertObject(entityName: entity)
                    try object.setValue(.string(name), forKey: "name")
                }
                named[entity, default: [:]][key] = object
                return object
            }
            for record in records {
                let task: ManagedObject
                var created = false
                if let uuid = record.uuid, let found = try inserted[uuid] ?? existing[uuid].map({ try context.object(with: $0) }) {
                    // A stored task, or one an earlier record of this file added (a UUID twice in
                    // one file: the later record wins, as in Taskwarrior, and counts as an update).
                    task = found
                    if !task.isInserted { try recorder.willChange(task: task) }
                    updated += 1
                } else {
                    task = try context.insertObject(entityName: "Task")
                    let uuid = record.uuid ?? UUID()
                    try task.setValue(.uuid(uuid), forKey: "uuid")
                    inserted[uuid] = task
                    created = true
                    added += 1
                }
                try task.setValue(.string(record.title), forKey: "title")
                try task.setValue(.integer(record.priority), forKey: "priority")
                try task.setValue(record.due.map(Value.date) ?? .null, forKey: "dueDate")
                try task.setValue(.string(record.status), forKey: "status")
                try task.setValue(.date(record.created ?? app.now), forKey: "createdAt")
                try task.setValue(record.completed.map(Value.date) ?? .null, forKey: "completedAt")
                try task.setValue(ExtrasText.encode(record.extras), forKey: "extras")
                try task.setObject(try record.location.map { try object("Location", $0, key: $0.lowercased()) }, forKey: "location")
                try task.setObject(try record.project.map { try object("Project", $0, key: $0) }, forKey: "project")
                try task.setObjects(try record.tags.map { try object("Tag", $0, key: $0) }, forKey: "tags")
                try task.setValue(record.wait.map(Value.date) ?? .null, forKey: "waitUntil")
                try task.setValue(record.scheduled.map(Value.date) ?? .null, forKey: "scheduled")
                try task.setValue(record.started.map(Value.date) ?? .null, forKey: "startedAt")
                try task.setValue(record.until.map(Value.date) ?? .null, forKey: "until")
                try task.setValue(record.recurrence.map(Value.string) ?? .null, forKey: "recurrence")
                try Annotations.replace(on: task, with: record.annotations, in: context)
                if created { try recorder.willChange(task: task) }
            }
            // The records are in the objects now: let go of them before the save's own copies.
            records = []
            try recorder.save(context, app: app)
            // The batch's new tasks and names by their saved IDs, then its objects let go.
            for (uuid, task) in inserted { existing[uuid] = task.objectID }
            for (entity, objects) in named {
                for (key, object) in objects where names[entity]?[key] == nil { names[entity]?[key] = object.objectID }
            }
            context.reset()
        }
        // The compaction a large import's save brings runs after the objects are let go
        // (a million tasks' objects and a compaction of their rows took 1.9 GB together).
        do {
            try coordinator.deferringHousekeeping {
                if batched {
                    try coordinator.committingTogether {
                        // Read under the lock the batches hold: no other process adds a task
                        // or a name before the commit, so nothing is left to merge, and each
                        // batch's save skips reading every stored value for merges.
                        try readStore()
                        context.mergePolicy = .error
                        // A chunk of records at a time, let go of once its tasks are saved.
                        for index in records.indices {
                            try importBatch {
                                defer { records[index] = [] }
                                return records[index]
                            }
                        }
                        var batches = records.count
                        if let stream {
                            while let chunk = try stream.next() {
                                recordCount += chunk.count
                                batches += 1
                                try importBatch { chunk }
                            }
                            warn(stream.warnings, app)
                        }
                        #if DEBUG
                        if app.environment["TASKCTL_IMPORT_BATCH"] != nil {
                            app.output.warn("taskctl: debug: imported in \(batches) batches\(stream == nil ? "" : ", parsed ahead")")
                        }
                        #endif
                        existing = [:]  // not held through the commit and the compaction
                    }
                } else {
                    try readStore()
                    try importBatch {
                        defer { records = [] }
                        return records.count == 1 ? records[0] : Array(records.joined())
                    }
                    existing = [:]
                }
            }
        } catch let error as ValidationError {
            throw CLIError.usage("nothing imported: \(CLIError.from(error).message)")
        }
        if let warning = coordinator.housekeepingWarning { app.output.warn("taskctl: warning: \(warning)") }
        if args.has("json") {
            app.output.line("{\"added\": \(added), \"updated\": \(updated)}")
        } else {
            let name = ["taskwarrior": "Taskwarrior JSON", "taskctl": "taskctl JSON", "todo.txt": "todo.txt"][format] ?? format
            app.output.line("imported \(recordCount) task\(recordCount == 1 ? "" : "s") from \(path) (\(name)): \(added) added, \(updated) updated")
        }
    }

    /// The standard input's bytes, read to its end (a file's: ``FileBytes``).
    static func readStandardInput() -> [UInt8]? {
        [UInt8](FileHandle.standardInput.readDataToEndOfFile())
    }

    /// Whether the bytes are UTF-8, checked 16 MiB at a time (each piece ending before a
    /// character's first byte), so no copy of the whole file as a string is made.
    static func isUTF8(_ bytes: [UInt8]) -> Bool {
        var start = 0
        while start < bytes.count {
            var end = min(start + (1 << 24), bytes.count)
            var steps = 0
            while end < bytes.count, end > start, steps < 3, bytes[end] & 0xC0 == 0x80 {
                end -= 1
                steps += 1
            }
            guard String(validating: bytes[start..<end], as: UTF8.self) != nil else { return false }
            start = end
        }
        return true
    }

    /// The format of an import: as given, JSON (Taskwarrior's when its tasks have a
    /// "description"), or todo.txt for a `*.txt` file. Any other file is refused: lines of
    /// an arbitrary file (/etc/hosts) are not tasks.
    static func detectFormat(_ bytes: [UInt8], given: String?, path: String) throws -> String {
        if let given {
            try OptionValue.check("format", given)
            return given
        }
        // The first character that is not white space, and a byte search: trimming and
        // searching a large export through Foundation took as long as parsing it.
        let first = bytes.first { ![UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t")].contains($0) }
        guard let first else { throw CLIError.usage("\(path) is empty: nothing to import") }
        if first == UInt8(ascii: "[") || first == UInt8(ascii: "{") { return TaskView.bytes(bytes, contain: "\"description\"") ? "taskwarrior" : "taskctl" }
        if path.lowercased().hasSuffix(".txt") { return "todo.txt" }
        throw CLIError.usage("cannot tell what \(path) holds: it is neither a JSON export (taskctl or Taskwarrior) nor a todo.txt file (*.txt); give --format todo.txt to read each line as a task")
    }

    /// The file's tasks, in chunks of at most `chunk` (each let go of once imported).
    /// A JSON array is read a task at a time (its tree never whole).
    static func parse(_ bytes: [UInt8], format detected: String, app: App, path: String, chunk: Int) throws -> [[TaskRecord]] {
        if detected == "todo.txt" { return [try TodoTxtFormat.records(String(decoding: bytes, as: UTF8.self), dates: app.dates)] }
        var records: [[TaskRecord]] = []
        let warnings = try parseJSON(bytes, format: detected, now: app.now, path: path, chunk: chunk) { records.append($0) }
        warn(warnings, app)
        return records
    }

    /// The warnings of a parse (priorities kept as written), at most twenty.
    static func warn(_ warnings: [String], _ app: App) {
        for warning in warnings.prefix(20) { app.output.warn(warning) }
        if warnings.count > 20 { app.output.warn("taskctl: ... and \(warnings.count - 20) more such priorities") }
    }

    /// A JSON file's tasks (taskctl's or Taskwarrior's export, JSON lines, one object),
    /// handed to `deliver` in chunks of `chunk` in the file's order, the last one shorter;
    /// returns the warnings. Needs nothing of the app (a parse may run on another thread).
    static func parseJSON(_ bytes: [UInt8], format detected: String, now: Date, path: String, chunk: Int,
                          deliver: ([TaskRecord]) throws -> Void) throws -> [String] {
        var current: [TaskRecord] = []
        var warnings: [String] = []
        func add(_ item: JSONNode, _ index: Int, _ source: [UInt8], line: Int? = nil) throws {
            let record = detected == "taskwarrior"
                ? try TaskwarriorFormat.record(item, index: index, bytes: source, now: now, line: line) { warnings.append($0) }
                : try record(item, index: index, path: path)
            if current.count >= chunk {
                try deliver(current)
                current = []
            }
            if current.isEmpty { current.reserveCapacity(chunk) }
            current.append(record)
        }
        let isArray: Bool
        do {
            isArray = try JSONParser.forEachElement(ofArrayIn: bytes) { index, item in try add(item, index, bytes) }
        } catch let error as JSONSyntaxError {
            throw CLIError.usage("\(path): invalid JSON at line \(error.location.line), column \(error.location.column): \(error.message)")
        }
        if !isArray {
            // One object (a task as `task 12 export` writes it with json.array=off), or one
            // object a line (JSON lines, what json.array=off exports for several).
            if let whole = try? JSONParser.parse(bytes), whole.members != nil {
                try add(whole, 0, bytes)
            } else {
                var start = 0, line = 0, index = 0
                while start < bytes.count {
                    let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
                    line += 1
                    let piece = Array(bytes[start..<end])
                    start = end + 1
                    guard piece.contains(where: { ![UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r")].contains($0) }) else { continue }
                    let item: JSONNode
                    do {
                        item = try JSONParser.parse(piece)
                    } catch {
                        throw CLIError.usage("\(path): line \(line) is not a JSON task (JSON lines: one task a line): \(error.message) at column \(error.location.column)")
                    }
                    guard item.members != nil else { throw CLIError.usage("\(path): line \(line) is not a JSON object (a task)") }
                    try add(item, index, piece, line: line)
                    index += 1
                }
            }
        }
        if !current.isEmpty { try deliver(current) }
        return warnings
    }

    /// One task of taskctl's JSON export.
    static func record(_ item: JSONNode, index: Int, path: String) throws -> TaskRecord {
        func bad(_ message: String) -> CLIError { .usage("\(path): task \(index + 1) (line \(item.location.line)): \(message)") }
        guard let title = item["text"]?.stringValue else { throw bad("no \"text\"") }
        var record = TaskRecord(title: title)
        record.uuid = item["uuid"]?.stringValue.flatMap(UUID.init(uuidString:))
        // A name or a number (0-3), as `add --priority` takes it; anything else is an
        // error, never "none" (a numeric priority 3 was dropped).
        switch item["priority"]?.kind {
        case nil, .null?: break
        case .string(let p)?, .number(let p)?:
            do { record.priority = try Priority.parse(p) } catch { throw bad("unknown priority \(p) (none, low, medium, high or 0-3)") }
        default: throw bad("priority must be a name or a number")
        }
        func date(_ key: String) throws -> Date? {
            guard let node = item[key], node.kind != .null else { return nil }
            guard let text = node.stringValue, let date = ISO8601.parse(text) else { throw bad("\(key) is not an ISO-8601 date") }
            return date
        }
        record.due = try date("due")
        record.created = try date("created")
        record.completed = try date("completed")
        record.status = item["status"]?.stringValue ?? "pending"
        guard ["pending", "done", "deleted", "recurring"].contains(record.status) else { throw bad("unknown status '\(record.status)'") }
        record.location = item["location"]?.stringValue
        record.project = item["project"]?.stringValue
        record.tags = (item["tags"]?.elements ?? []).compactMap(\.stringValue)
        record.wait = try date("wait")
        record.scheduled = try date("scheduled")
        record.started = try date("started")
        record.until = try date("until")
        if let recur = item["recur"], recur.kind != .null {
            guard let text = recur.stringValue, !text.isEmpty, text.count <= 20 else { throw bad("recur is not a recurrence such as weekly") }
            record.recurrence = text
        }
        for (number, note) in (item["annotations"]?.elements ?? []).enumerated() {
            guard let text = note["text"]?.stringValue, !text.isEmpty else { throw bad("annotation \(number + 1) has no text") }
            var entry: Date?
            if let node = note["entry"], node.kind != .null {
                guard let value = node.stringValue.flatMap(ISO8601.parse) else { throw bad("annotation \(number + 1)'s entry is not an ISO-8601 date") }
                entry = value
            }
            record.annotations.append((entry, text))
        }
        return record
    }
}

/// `taskctl export`.
enum ExportCommand {
    static func run(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "export")
        let filter = args.positional.isEmpty ? app.filter : try TaskFilter.parse(app.filter.words + args.positional)
        let format = args.value("format") ?? "taskctl"
        try OptionValue.check("format", format)
        let context = try app.context(readOnly: true)
        var predicate = args.has("all") || filter.namesStatus ? try ObjectPredicate("TRUEPREDICATE") : .and(try ObjectPredicate("status != 'deleted'"), .not(try app.expired()))
        if let selected = try filter.predicate(in: FilterScope(app: app, context: context)) { predicate = .and(predicate, selected) }
        // Streamed: the matching tasks' IDs are listed without making objects, then the tasks
        // are loaded, rendered and let go a batch at a time (the context is emptied after
        // each; it changes nothing), and the text is written as it grows, so memory holds a
        // batch and the IDs (a million tasks took 2 GB when all were held at once).
        // The lines are rendered from the views alone (RenderPipeline), on a second thread
        // when there is more than one batch.
        let tasks = try context.fetchObjectIDs(FetchRequest(entityName: "Task", predicate: predicate))
        let timeZone = app.timeZone
        let render: @Sendable (TaskView) -> String
        switch format {
        case "taskwarrior": render = { TaskwarriorFormat.export($0) }
        case "todo.txt": render = { TodoTxtFormat.export($0, timeZone: timeZone) }
        default: render = { "  " + $0.json }
        }
        let array = format != "todo.txt"
        if array && tasks.isEmpty {
            app.output.line(format == "taskwarrior" ? "[\n\n]" : "[]")
            return
        }
        if array { app.output.line("[") }
        var written = 0
        let pipeline = RenderPipeline(threaded: tasks.count > batch, render: render) { line in
            written += 1
            app.output.line(array && written < tasks.count ? line + "," : line)
        }
        for start in stride(from: 0, to: tasks.count, by: batch) {
            let chunk = try context.faults(for: Array(tasks[start..<min(start + batch, tasks.count)]))
            let views = try TaskView.of(chunk, app: app)
            context.reset()
            try pipeline.add(views)
            try app.output.flush(above: 1 << 20)
        }
        try pipeline.finish()
        if array { app.output.line("]") }
    }

    /// Tasks rendered (and then released) together.
    static let batch = 10_000
}

extension TaskwarriorFormat {
    /// One task as Taskwarrior writes it: id first, then its attributes by name, arrays, and urgency.
    static func export(_ view: TaskView) -> String {
        // The fields by name, a short list (a dictionary's hashing was a tenth of the export).
        var fields = Fields()
        for (key, json) in ExtrasText.decode(view.extrasText.map(Value.string) ?? .null) { fields[key] = json }
        // A description kept in the extras (one taskctl could not store) goes out as it came.
        if view.text != TaskwarriorMapping.noDescription || fields["description"] == nil { fields["description"] = JSONText.quote(view.text) }
        if fields["status"] == nil || view.status != "pending" {
            fields["status"] = JSONText.quote(view.status == "done" ? "completed" : view.status)
        }
        fields["uuid"] = view.uuid.map(JSONText.quote)
        // A priority kept as written (not H, M or L: "none" to both) goes out as it came.
        if view.priority > 0 { fields["priority"] = JSONText.quote(["", "L", "M", "H"][Int(min(3, view.priority))]) }
        fields["due"] = view.due.map { JSONText.quote(format($0)) }
        fields["entry"] = view.created.map { JSONText.quote(format($0)) }
        fields["end"] = view.completed.map { JSONText.quote(format($0)) }
        fields["project"] = view.project.map(JSONText.quote)
        fields["location"] = view.location.map(JSONText.quote)
        fields["tags"] = view.tags.isEmpty ? nil : "[" + view.tags.map(JSONText.quote).joined(separator: ",") + "]"
        // Fields of model v4 (an older store keeps them in the extras, read into the view).
        fields["wait"] = view.wait.map { JSONText.quote(format($0)) }
        fields["scheduled"] = view.scheduled.map { JSONText.quote(format($0)) }
        fields["start"] = view.started.map { JSONText.quote(format($0)) }
        fields["until"] = view.until.map { JSONText.quote(format($0)) }
        fields["recur"] = view.recurrence.map(JSONText.quote)
        fields["annotations"] = view.annotations.isEmpty ? nil : "[" + view.annotations.map { note in
            "{" + (note.entry.map { "\"entry\":\(JSONText.quote(format($0))),"} ?? "") + "\"description\":\(JSONText.quote(note.text))}"
        }.joined(separator: ",") + "]"
        return fields.text
    }

    /// Named JSON texts, each name once; a name set to nil is removed.
    private struct Fields {
        private var pairs: [(key: String, json: String)] = []

        subscript(key: String) -> String? {
            get { pairs.first { $0.key == key }?.json }
            set {
                let at = pairs.firstIndex { $0.key == key }
                switch (at, newValue) {
                case (let at?, let json?): pairs[at].json = json
                case (let at?, nil): pairs.remove(at: at)
                case (nil, let json?): pairs.append((key, json))
                case (nil, nil): break
                }
            }
        }

        /// The object: id first, then the attributes by name, the arrays by name, and urgency.
        var text: String {
            func isArray(_ key: String) -> Bool { key == "annotations" || key == "tags" || key == "depends" }
            let id = pairs.filter { $0.key == "id" }, urgency = pairs.filter { $0.key == "urgency" }
            let plain = pairs.filter { $0.key != "id" && $0.key != "urgency" && !isArray($0.key) }.sorted { $0.key < $1.key }
            let lists = pairs.filter { isArray($0.key) }.sorted { $0.key < $1.key }
            var out = "{"
            out.reserveCapacity(400)
            for (n, pair) in (id + plain + lists + urgency).enumerated() {
                if n > 0 { out += "," }
                out += JSONText.quote(pair.key)
                out += ":"
                out += pair.json
            }
            return out + "}"
        }
    }
}

/// A large JSON import's records, parsed on a second thread a chunk ahead of the import,
/// which builds and saves one chunk while the next is parsed. The chunks come in the file's
/// order; a parse error comes after the chunks before it, and the import, which commits
/// its chunks together, then saves none of them.
final class RecordStream: @unchecked Sendable {
    private let condition = NSCondition()
    /// Parsed chunks not taken yet (at most `ahead`).
    private var ready: [[TaskRecord]] = []
    private var ended = false
    private var failure: (any Error)?
    private var cancelled = false
    private var parsedWarnings: [String] = []
    private let ahead = 1

    private struct Cancelled: Error {}

    init(_ bytes: [UInt8], format: String, now: Date, path: String, chunk: Int) {
        DispatchQueue.global().async { [self] in
            var warnings: [String] = []
            var failure: (any Error)?
            do {
                warnings = try ImportCommand.parseJSON(bytes, format: format, now: now, path: path, chunk: chunk) { try self.put($0) }
            } catch is Cancelled {
            } catch {
                failure = error
            }
            condition.withLock {
                parsedWarnings = warnings
                self.failure = failure
                ended = true
                condition.broadcast()
            }
        }
    }

    private func put(_ chunk: [TaskRecord]) throws {
        try condition.withLock {
            while ready.count >= ahead && !cancelled { condition.wait() }
            if cancelled { throw Cancelled() }
            ready.append(chunk)
            condition.broadcast()
        }
    }

    /// The next chunk, nil after the last; the parse's error once the chunks before it are taken.
    func next() throws -> [TaskRecord]? {
        try condition.withLock {
            while ready.isEmpty && !ended { condition.wait() }
            if !ready.isEmpty {
                condition.broadcast()
                return ready.removeFirst()
            }
            if let failure { throw failure }
            return nil
        }
    }

    /// Whether a chunk follows the ones taken (waiting for the parse to tell); the parse's
    /// error when none does and it failed.
    func hasMore() throws -> Bool {
        try condition.withLock {
            while ready.isEmpty && !ended { condition.wait() }
            if ready.isEmpty, let failure { throw failure }
            return !ready.isEmpty
        }
    }

    /// The parse's warnings, once it has ended.
    var warnings: [String] { condition.withLock { parsedWarnings } }

    /// Stops the parse (the import failed): it takes no more chunks and ends.
    func cancel() {
        condition.withLock {
            cancelled = true
            ready = []
            condition.broadcast()
        }
    }
}

import Foundation
import ObjectStore
import ObjectStoreModel

/// A task as taskctl shows it. A class: a list sorts, filters and groups thousands of them,
/// and copying a dozen fields per move was a tenth of its time.
final class TaskView {
    /// The task's object.
    let objectID: ObjectID
    var id: Int64
    var uuidValue: UUID?
    /// The UUID as Taskwarrior writes it, made when asked (formatting one per listed task
    /// was a tenth of `list`).
    var uuid: String? { uuidValue?.uuidString.lowercased() }
    var text: String
    var priority: Int64
    var due: Date?
    var location: String?
    var project: String?
    var tags: [String]
    var status: String
    var overdue: Bool
    var created: Date?
    var completed: Date?
    /// Until when the task waits (hidden from the pending list), when it is scheduled.
    var wait: Date?
    var scheduled: Date?
    /// When `start` was run (the task is active), its recurrence and the recurrence's end.
    var started: Date?
    var recurrence: String?
    var until: Date?
    /// Annotations, oldest first (the entry date is nil for ones kept from an old import
    /// without it).
    var annotations: [(entry: Date?, text: String)] = []
    /// Taskwarrior's urgency (``Urgency``), as of `now`: with the settings' coefficients and
    /// the store's dependencies when made with a scorer, else with the default coefficients.
    var urgency: Double = 0
    /// The tasks it depends on (Taskwarrior's `depends`).
    var depends: [UUID] = []
    /// Its Taskwarrior fields taskctl does not model, as stored (JSON text).
    var extrasText: String?

    /// Where a view finds each property it reads: slots of the entity (reading objects) or
    /// positions in ``Slots/names`` (reading ``FetchedValues``), found once per list.
    struct Slots {
        /// The properties a view reads.
        static let names = ["uuid", "title", "priority", "dueDate", "status", "isOverdue", "createdAt", "completedAt", "waitUntil",
                            "scheduled", "startedAt", "recurrence", "until", "extras", "location", "project", "tags", "annotations"]

        let uuid, title, priority, dueDate, status, isOverdue, createdAt, completedAt: Int?
        let waitUntil, scheduled, startedAt, recurrence, until, extras: Int?
        let location, project, tags, annotations: Int?
        /// Names of the locations, projects and tags met so far (a list meets a few, many times).
        let names = Names()

        final class Names {
            var byID: [ObjectID: String?] = [:]
        }

        init(_ entity: EntityDescription) {
            self.init { entity.slot(of: $0) }
        }

        init(index: (String) -> Int?) {
            location = index("location")
            project = index("project")
            tags = index("tags")
            annotations = index("annotations")
            uuid = index("uuid")
            title = index("title")
            priority = index("priority")
            dueDate = index("dueDate")
            status = index("status")
            isOverdue = index("isOverdue")
            createdAt = index("createdAt")
            completedAt = index("completedAt")
            waitUntil = index("waitUntil")
            scheduled = index("scheduled")
            startedAt = index("startedAt")
            recurrence = index("recurrence")
            until = index("until")
            extras = index("extras")
        }
    }

    /// The name of a task's location, project or tag (`entity`); nil for none, or for an
    /// object of another entity: a damaged store may point the relationship at one, which
    /// `store check` reports and an edit must still be able to repair, so reading the task
    /// does not fail on it. (A row that cannot be read still throws.)
    static func name(of object: ManagedObject?, entity: String) throws -> String? {
        guard let object, object.entity.isKind(of: entity), object.entity.slot(of: "name") != nil else { return nil }
        return try object.value(forKey: "name").stringValue
    }

    /// How a view reads the property at an index of ``Slots``: from an object's slots or
    /// from a row's values. A protocol, so each kind of source gets its own specialized
    /// reading (through closures, every field was an indirect call and a copy).
    protocol Source {
        func value(_ position: Int) throws -> Value
        func ids(_ position: Int) throws -> [ObjectID]
        /// The first ID (a to-one relationship's), without an array for it.
        func firstID(_ position: Int) throws -> ObjectID?
    }

    private struct ObjectSource: Source {
        let task: ManagedObject
        func value(_ position: Int) throws -> Value { try task.value(atSlot: position) }
        func ids(_ position: Int) throws -> [ObjectID] { try task.objectIDs(atSlot: position) }
        func firstID(_ position: Int) throws -> ObjectID? { try task.objectIDs(atSlot: position).first }
    }

    private struct RowSource: Source {
        let row: FetchedValues
        func value(_ position: Int) throws -> Value { position < row.values.count ? row.values[position].value : .null }
        func ids(_ position: Int) throws -> [ObjectID] { position < row.values.count ? row.values[position].referencedIDs : [] }
        func firstID(_ position: Int) throws -> ObjectID? {
            guard position < row.values.count else { return nil }
            switch row.values[position] {
            case .value: return nil
            case .toOne(let id): return id
            case .toMany(let ids): return ids.first
            }
        }
    }

    private struct ClosureSource: Source {
        let read: (Int) throws -> Value
        let readIDs: (Int) throws -> [ObjectID]
        func value(_ position: Int) throws -> Value { try read(position) }
        func ids(_ position: Int) throws -> [ObjectID] { try readIDs(position) }
        func firstID(_ position: Int) throws -> ObjectID? { try readIDs(position).first }
    }

    convenience init(_ task: ManagedObject, now: Date, slots known: Slots? = nil, scorer: UrgencyScorer? = nil) throws {
        let slots = known ?? Slots(task.entity)
        try self.init(id: task.objectID, now: now, slots: slots, context: task.managedObjectContext, source: ObjectSource(task: task), scorer: scorer)
    }

    /// A view with the urgency the command's settings and the store's dependencies give.
    convenience init(_ task: ManagedObject, app: App) throws {
        try self.init(task, now: app.now, scorer: app.urgency)
    }

    /// A view of a task read without its object (``ManagedObjectContext/fetchValues(_:properties:)``
    /// with ``Slots/names``' properties the entity has, in that order).
    convenience init(_ row: FetchedValues, now: Date, slots: Slots, context: ManagedObjectContext, scorer: UrgencyScorer? = nil) throws {
        try self.init(id: row.objectID, now: now, slots: slots, context: context, source: RowSource(row: row), scorer: scorer)
    }

    /// `value` and `ids` read the property at an index of `slots`.
    convenience init(id objectID: ObjectID, now: Date, slots: Slots, context: ManagedObjectContext?,
                     value read: @escaping (Int) throws -> Value, ids readIDs: @escaping (Int) throws -> [ObjectID]) throws {
        try self.init(id: objectID, now: now, slots: slots, context: context, source: ClosureSource(read: read, readIDs: readIDs))
    }

    private init<S: Source>(id objectID: ObjectID, now: Date, slots: Slots, context: ManagedObjectContext?, source: S, scorer: UrgencyScorer? = nil) throws {
        func value(_ slot: Int?) throws -> Value {
            guard let slot else { return .null }
            return try source.value(slot)
        }
        self.objectID = objectID
        id = objectID.primaryKey ?? 0
        if case .uuid(let u) = try value(slots.uuid) { uuidValue = u }
        if case .string(let s) = try value(slots.title) { text = s } else { text = "" }
        if case .integer(let p) = try value(slots.priority) { priority = p } else { priority = 0 }
        if case .date(let d) = try value(slots.dueDate) { due = d }
        func ids(_ slot: Int?) throws -> [ObjectID] {
            guard let slot else { return [] }
            return try source.ids(slot)
        }
        /// The `name` of a related object, looked up once per object per list.
        func name(_ id: ObjectID, _ entity: String) throws -> String? {
            guard id.entityName == entity else { return nil }  // a damaged store's pointer
            if let known = slots.names.byID[id] { return known }
            var found: String?
            if let context { found = try TaskView.name(of: try context.object(with: id), entity: entity) }
            slots.names.byID[id] = found
            return found
        }
        location = try slots.location.flatMap { try source.firstID($0) }.flatMap { try name($0, "Location") }
        project = try slots.project.flatMap { try source.firstID($0) }.flatMap { try name($0, "Project") }
        let tagIDs = try ids(slots.tags)
        if tagIDs.isEmpty {
            tags = []
        } else if tagIDs.count == 1 {
            tags = try name(tagIDs[0], "Tag").map { [$0] } ?? []
        } else {
            tags = try tagIDs.compactMap { try name($0, "Tag") }.sorted()
        }
        if case .string(let s) = try value(slots.status) { status = s } else { status = "pending" }
        overdue = try value(slots.isOverdue) == true
        if case .date(let d) = try value(slots.createdAt) { created = d }
        if case .date(let d) = try value(slots.completedAt) { completed = d }
        if case .date(let d) = try value(slots.waitUntil) { wait = d }
        if case .date(let d) = try value(slots.scheduled) { scheduled = d }
        if case .date(let d) = try value(slots.startedAt) { started = d }
        if case .string(let s) = try value(slots.recurrence) { recurrence = s }
        if case .date(let d) = try value(slots.until) { until = d }
        // Past its `until`, a pending task has expired as Taskwarrior counts it:
        // the next writing command deletes it; until then it reads as deleted.
        if status == "pending", let until, until <= now {
            status = "deleted"
            completed = completed ?? until
        }
        // Stores written before model v4 keep Taskwarrior's wait, scheduled and annotations
        // in the extras. A byte scan first: most extras have none of these keys, and every
        // listed task passes here.
        if case .string(let text) = try value(slots.extras) {
            extrasText = text
            if Self.bytes(of: text, contain: "\"depends\""), let field = ExtrasText.decode(.string(text)).first(where: { $0.key == "depends" }) {
                depends = FilterScope.uuids(inJSON: field.json)
            }
        }
        if let text = extrasText,
            ["\"wait\"", "\"scheduled\"", "\"annotations\""].contains(where: { Self.bytes(of: text, contain: $0) }),
            let root = try? JSONParser.parse(text)
        {
            wait = wait ?? root["wait"]?.stringValue.flatMap(TaskwarriorFormat.parseDate)
            scheduled = scheduled ?? root["scheduled"]?.stringValue.flatMap(TaskwarriorFormat.parseDate)
            annotations = (root["annotations"]?.elements ?? []).compactMap { note in
                note["description"]?.stringValue.map { (note["entry"]?.stringValue.flatMap(TaskwarriorFormat.parseDate), $0) }
            }
        }
        let notes = try ids(slots.annotations).compactMap { id -> ManagedObject? in try context?.object(with: id) }.compactMap { note -> (Date?, String)? in
            guard case .string(let text) = try note.value(forKey: "text") else { return nil }
            if case .date(let entry) = try note.value(forKey: "entry") { return (entry, text) }
            return (nil, text)
        }
        if !notes.isEmpty {
            annotations = (annotations + notes).enumerated().sorted { a, b in
                (a.element.entry ?? .distantPast, a.offset) < (b.element.entry ?? .distantPast, b.offset)
            }.map(\.element)
        }
        if let scorer {
            urgency = try scorer.score(self, context: context)
        } else {
            urgency = Urgency.of(self, now: now, coefficients: .standard, blocked: false, blocking: false)
        }
    }

    /// Views of the tasks a predicate matches, read as values: no managed object is made or
    /// kept per task (a list of 100,000 tasks held 600 bytes of slots per object besides
    /// its view).
    static func fetch(_ context: ManagedObjectContext, where predicate: ObjectPredicate?, hidesWaiting: Bool = false, app: App) throws -> [TaskView] {
        guard let entity = context.model.entity(named: "Task") else { return [] }
        // In slot order: with every property asked for, a row is read as it was decoded.
        let names = Slots.names.compactMap { name in entity.slot(of: name).map { (name, $0) } }.sorted { $0.1 < $1.1 }.map(\.0)
        let slots = Slots { names.firstIndex(of: $0) }
        var rows = try context.fetchValues(FetchRequest(entityName: "Task", predicate: predicate), properties: names)
        // Each row is let go once its view is made, so the views (and the table after them)
        // reuse its memory instead of new pages.
        var views: [TaskView] = []
        views.reserveCapacity(rows.count)
        while let row = rows.popLast() {
            let view = try TaskView(row, now: app.now, slots: slots, context: context, scorer: app.urgency)
            // Waiting tasks (Taskwarrior's wait:) stay out of the pending list until their date.
            if hidesWaiting && (view.wait ?? .distantPast) > app.now { continue }
            views.append(view)
        }
        views.reverse()
        return views
    }

    /// The views of the tasks a predicate matches, handed to `body` one at a time (in the
    /// store's order) and not kept.
    static func forEach(_ context: ManagedObjectContext, where predicate: ObjectPredicate?, app: App, _ body: (TaskView) throws -> Void) throws {
        guard let entity = context.model.entity(named: "Task") else { return }
        let names = Slots.names.compactMap { name in entity.slot(of: name).map { (name, $0) } }.sorted { $0.1 < $1.1 }.map(\.0)
        let slots = Slots { names.firstIndex(of: $0) }
        let now = app.now, scorer = app.urgency
        try context.forEachValues(FetchRequest(entityName: "Task", predicate: predicate), properties: names) { row in
            try body(try TaskView(row, now: now, slots: slots, context: context, scorer: scorer))
        }
    }

    /// Views of many tasks, the attributes' slots found once.
    static func of(_ tasks: [ManagedObject], app: App) throws -> [TaskView] {
        guard let first = tasks.first else { return [] }
        let slots = Slots(first.entity)
        return try tasks.map { try TaskView($0, now: app.now, slots: $0.entity.name == first.entity.name ? slots : nil, scorer: app.urgency) }
    }

    /// Whether the task waits until after `now` (hidden from the pending list).
    func isWaiting(at now: Date) -> Bool { status == "pending" && (wait ?? .distantPast) > now }

    /// Whether `needle` occurs in `text`, by a byte search (String's contains goes through
    /// Foundation's locale-aware search, which was a tenth of `list`'s time).
    static func bytes(of text: String, contain needle: String) -> Bool {
        var text = text
        return text.withUTF8 { contains($0, needle) }
    }

    /// Whether `needle`'s UTF-8 occurs in `bytes`.
    static func bytes(_ bytes: [UInt8], contain needle: String) -> Bool {
        bytes.withUnsafeBufferPointer { contains($0, needle) }
    }

    private static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: String) -> Bool {
        var needle = needle
        return needle.withUTF8 { pattern in
            guard let base = haystack.baseAddress, let key = pattern.baseAddress, pattern.count > 0, haystack.count >= pattern.count else { return false }
            for start in 0...(haystack.count - pattern.count) where haystack[start] == pattern[0] {
                if memcmp(base + start, key, pattern.count) == 0 { return true }
            }
            return false
        }
    }

    /// The stable `--json` form (docs/taskctl.md): fixed keys in a fixed order.
    var json: String {
        var out = ""
        out.reserveCapacity(512)
        func date(_ d: Date?) {
            if let d { out += JSONText.quote(ISO8601.format(d)) } else { out += "null" }
        }
        func text(_ s: String?) {
            if let s { out += JSONText.quote(s) } else { out += "null" }
        }
        func list<T>(_ items: [T], _ each: (T) -> Void) {
            out += "["
            for (k, item) in items.enumerated() {
                if k > 0 { out += ", " }
                each(item)
            }
            out += "]"
        }
        func key(_ name: String) { out += ", \"" + name + "\": " }
        out += "{\"id\": " + String(id)
        for (name, value) in [("uuid", uuid), ("text", self.text), ("priority", Priority.name(priority))] {
            key(name)
            text(value)
        }
        key("due")
        date(due)
        for (name, value) in [("location", location), ("project", project)] {
            key(name)
            text(value)
        }
        key("tags")
        list(tags) { text($0) }
        key("status")
        text(status)
        out += overdue ? ", \"overdue\": true" : ", \"overdue\": false"
        for (name, value) in [("created", created), ("completed", completed), ("wait", wait), ("scheduled", scheduled), ("started", started)] {
            key(name)
            date(value)
        }
        key("recur")
        text(recurrence)
        key("until")
        date(until)
        key("annotations")
        list(annotations) { note in
            out += "{\"entry\": "
            date(note.entry)
            out += ", \"text\": "
            text(note.text)
            out += "}"
        }
        key("depends")
        list(depends) { text($0.uuidString.lowercased()) }
        key("urgency")
        out += Urgency.text(urgency)
        out += "}"
        return out
    }

    static func jsonArray(_ views: [TaskView]) -> String {
        views.isEmpty ? "[]" : "[\n" + views.map { "  " + $0.json }.joined(separator: ",\n") + "\n]"
    }
}

/// Renders due dates relative to now: "today", "in 2 days", "3 days overdue".
struct RelativeDate {
    let now: Date
    let calendar: Calendar
    /// The date part of ``day(_:)``, in Taskwarrior's letters (the config's `dateformat`).
    var format = "Y-M-D"
    private let today: Date
    private let daysAway = DayCache()

    /// Days from today to a date, by the quarter hour the date falls in (every zone's
    /// midnight is on a quarter hour): a list of 10,000 tasks asks the calendar once per
    /// distinct quarter hour, not twice per row.
    private final class DayCache {
        var days: [Int64: Int] = [:]
        /// ``describe(_:)``'s text by quarter hour and whether the date is past.
        var texts: [Int64: String] = [:]
    }

    init(now: Date, timeZone: TimeZone) {
        self.now = now
        self.calendar = .taskctl(in: timeZone)
        self.today = calendar.startOfDay(for: now)
    }

    private func days(to date: Date) -> Int {
        let quarter = Int64((date.timeIntervalSince1970 / 900).rounded(.down))
        if let known = daysAway.days[quarter] { return known }
        let days = calendar.dateComponents([.day], from: today, to: calendar.startOfDay(for: date)).day ?? 0
        daysAway.days[quarter] = days
        return days
    }

    func describe(_ date: Date) -> String { describeKeyed(date).text }

    /// The quarter hour a date falls in and whether it is past: dates with the same key
    /// have the same ``describe(_:)`` text, except hours overdue today.
    func key(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 / 900).rounded(.down)) &* 2 &+ (date < now ? 1 : 0)
    }

    /// ``describe(_:)``'s text, and its ``key(_:)`` when every date of that key has this
    /// text (nil for hours overdue today, which differ within a quarter hour).
    func describeKeyed(_ date: Date) -> (text: String, key: Int64?) {
        let key = key(date)
        if let known = daysAway.texts[key] { return (known, key) }
        let days = days(to: date)
        let text = describe(date, days: days)
        guard !(days == 0 && date < now) else { return (text, nil) }
        daysAway.texts[key] = text
        return (text, key)
    }

    private func describe(_ date: Date, days: Int) -> String {
        if date < now {
            if days == 0 {
                let hours = Int(now.timeIntervalSince(date) / 3600)
                return hours < 1 ? "just overdue" : "\(hours)h overdue"
            }
            return -days == 1 ? "1 day overdue" : "\(-days) days overdue"
        }
        switch days {
        case 0: return "today"
        case 1: return "tomorrow"
        case 2..<14: return "in \(days) days"
        case 14..<60: return "in \(days / 7) weeks"
        default: return "in \(days / 30) months"
        }
    }

    func day(_ date: Date) -> String {
        let c = calendar.isoFields(of: date)
        func two(_ v: Int) -> String { String(format: "%02d", v) }
        let time = (c.hour == 23 && c.minute == 59) ? "" : " \(two(c.hour)):\(two(c.minute))"
        return Self.apply(format, year: c.year, month: c.month, day: c.day, weekday: c.weekday) + time
    }

    /// The date alone, in the format.
    func date(_ date: Date) -> String {
        let c = calendar.isoFields(of: date)
        return Self.apply(format, year: c.year, month: c.month, day: c.day, weekday: c.weekday)
    }

    /// The time (HH:MM), or nil for the end of a day (a due date without a time).
    func time(_ date: Date) -> String? {
        let c = calendar.isoFields(of: date)
        return c.hour == 23 && c.minute == 59 ? nil : String(format: "%02d:%02d", c.hour, c.minute)
    }

    /// The date in ISO form (YYYY-MM-DD), whatever the format: for --json and exports.
    func isoDay(_ date: Date) -> String {
        let c = calendar.isoFields(of: date)
        return String(format: "%04d-%02d-%02d", c.year, c.month, c.day)
    }

    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let formatLetters: Set<Character> = ["Y", "y", "M", "m", "D", "d", "b", "a"]

    /// Whether a format has at least a day, a month and a year, and only letters taskctl knows.
    static func isValidFormat(_ format: String) -> Bool {
        !format.isEmpty && format.count <= 40
            && format.allSatisfy { formatLetters.contains($0) || (!$0.isLetter && !$0.isNumber && !$0.isNewline) }
            && format.contains { "Dd".contains($0) } && format.contains { "Mmb".contains($0) } && format.contains { "Yy".contains($0) }
    }

    /// Y 2026, y 26, M 03, m 3, D 07, d 7, b Mar, a Sat; anything else as written.
    static func apply(_ format: String, year: Int, month: Int, day: Int, weekday: Int) -> String {
        var result = ""
        for letter in format {
            switch letter {
            case "Y": result += String(format: "%04d", year)
            case "y": result += String(format: "%02d", year % 100)
            case "M": result += String(format: "%02d", month)
            case "m": result += String(month)
            case "D": result += String(format: "%02d", day)
            case "d": result += String(day)
            case "b": result += months[(month + 11) % 12]
            case "a": result += weekdays[(weekday + 6) % 7]
            default: result.append(letter)
            }
        }
        return result
    }
}

/// A text table sized to the terminal: the widest column (the task text) wraps or is cut
/// with an ellipsis so the other columns never break.
struct Table {
    var headers: [String]
    var rows: [[String]]
    /// The index of the column that absorbs the width.
    var flexible: Int
    /// Columns that may go, first to last, when the table cannot fit the width otherwise
    /// (a narrow terminal); the style closure still gets the columns' original indices.
    var droppable: [Int] = []

    /// The lines, header first. `style` (row, column, padded cell) may paint a cell; without
    /// it cells are copied into each line as they are.
    func render(width: Int, style: ((Int, Int, String) -> String)? = nil) -> [String] {
        var lines: [String] = []
        lines.reserveCapacity(rows.count + 1)
        render(width: width, style: style, header: { lines.append($0) }, row: { lines.append(String(decoding: $0, as: UTF8.self)) })
        return lines
    }

    /// The lines handed over one by one: the header as a string, each row as its UTF-8
    /// bytes (valid only during the call), so a long list goes to the output without a
    /// string per line.
    func render(width: Int, style: ((Int, Int, String) -> String)? = nil, header: (String) -> Void, row emit: (UnsafeBufferPointer<UInt8>) -> Void) {
        guard !headers.isEmpty else { return }
        // A line break or escape sequence in a cell would break the table: shown, not obeyed.
        // Each cell's width is counted once (in characters; printable ASCII by its bytes).
        var rows = rows
        // Cell widths in one flat array, row by row (cells past the headers' count are
        // never shown).
        let columns = headers.count
        var cellWidths = [Int](repeating: 0, count: rows.count * columns)
        var widths = headers.map(\.count)
        for r in rows.indices {
            for i in 0..<min(columns, rows[r].count) {
                var width = 0
                if let ascii = Terminal.printableASCIIWidth(rows[r][i]) {
                    width = ascii
                } else {
                    rows[r][i] = Terminal.visible(rows[r][i])
                    width = rows[r][i].count
                }
                cellWidths[r * columns + i] = width
                widths[i] = max(widths[i], width)
            }
        }
        var shown = Array(headers.indices)
        func fixedWidth() -> Int {
            shown.filter { $0 != flexible }.map { widths[$0] }.reduce(0, +) + 2 * (shown.count - 1)
        }
        // Drop columns by priority until the flexible one keeps at least 10 characters.
        var candidates = droppable
        while fixedWidth() + 10 > width, let next = candidates.first {
            candidates.removeFirst()
            shown.removeAll { $0 == next }
        }
        widths[flexible] = max(10, min(widths[flexible], width - fixedWidth()))
        /// `s` (`count` characters) cut or padded to `w` characters.
        func fit(_ s: String, _ count: Int, _ w: Int) -> String {
            if count > w { return String(s.prefix(max(0, w - 1))) + "…" }
            return count == w ? s : s + String(repeating: " ", count: w - count)
        }
        header(shown.map { fit(headers[$0], headers[$0].count, widths[$0]) }.joined(separator: "  ").trimmingTrailingSpaces())
        let lineWidth = shown.map { widths[$0] + 2 }.reduce(0, +)
        // Each line is built as UTF-8 bytes and made a string once: a string per padded
        // cell, then per line, was a fifth of listing 10,000 tasks, and appending to a
        // string a tenth.
        var line: [UInt8] = []
        line.reserveCapacity(lineWidth)
        for (r, row) in rows.enumerated() {
            line.removeAll(keepingCapacity: true)
            var first = true
            for i in shown where i < row.count {
                if !first {
                    line.append(0x20)
                    line.append(0x20)
                }
                first = false
                let count = cellWidths[r * columns + i], w = widths[i]
                if let style {
                    line.append(contentsOf: style(r, i, fit(row[i], count, w)).utf8)
                } else if count > w {
                    line.append(contentsOf: row[i].prefix(max(0, w - 1)).utf8)
                    line.append(contentsOf: "…".utf8)
                } else {
                    line.append(contentsOf: row[i].utf8)
                    for _ in count..<w { line.append(0x20) }
                }
            }
            // Trailing spaces go (padding, and a cell's own), as the header's do.
            while line.last == 0x20 { line.removeLast() }
            line.withUnsafeBufferPointer(emit)
        }
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var s = self
        while s.hasSuffix(" ") { s.removeLast() }
        return s
    }
}

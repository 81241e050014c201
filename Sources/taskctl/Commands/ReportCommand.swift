import Foundation
import ObjectStore
import ObjectStoreModel

/// Taskwarrior's reports (`next`, `ls`, `long`, `completed`, `blocked`, ..., and those the
/// settings define): the report's filter and the command line's, Taskwarrior's sort rules
/// and columns (``ReportDefinition``).
enum ReportCommand {
    static func run(_ name: String, _ words: [String], _ app: App) throws {
        guard let report = app.config.report(named: name) else { throw CLIError.usage("unknown report '\(name)'") }
        let attributes = Set(app.config.userAttributes.keys)
        try report.check(name: name, userAttributes: attributes)
        if let option = words.first(where: { $0.hasPrefix("--") && $0 != "--" }) {
            throw CLIError.usage("'\(option)': Taskwarrior's reports take filter words, not options (taskctl list has --json, --sort, ...)")
        }
        // The report's filter and the line's, each in parentheses; a limit from the line wins.
        let reportWords = try ContextFilters.words(report.filter)
        let lineWords = app.filter.words + words
        func own(_ words: [String]) -> [String] { words.filter { !$0.lowercased().hasPrefix("limit:") } }
        func limits(_ words: [String]) -> [String] { words.filter { $0.lowercased().hasPrefix("limit:") } }
        var combined: [String] = []
        for part in [own(reportWords), own(lineWords)] where !part.isEmpty { combined += ["("] + part + [")"] }
        let filter = try TaskFilter.parse(combined + limits(reportWords) + limits(lineWords))
        let context = try app.context(readOnly: true)
        let predicate = try filter.predicate(in: FilterScope(app: app, context: context))
        // Taskwarrior's order before sorting: its pending file, then its completed one.
        var views = try TaskView.fetch(context, where: predicate, app: app).sorted { a, b in
            let open = (a.status != "done" && a.status != "deleted", b.status != "done" && b.status != "deleted")
            return open.0 != open.1 ? open.0 : a.id < b.id
        }
        app.keptUntilExit.append(views)
        let keys = try ReportDefinition.sortKeys(report.sort, userAttributes: attributes, report: name)
        let sorter = Sorter(app: app, context: context, views: views)
        let order = try sorter.order(by: keys)
        views = order.map { views[$0] }
        var limit = filter.limit
        if filter.limitsToPage { limit = max(1, app.terminal.height - 5) }
        if let limit { views = Array(views.prefix(limit)) }
        guard !views.isEmpty else { throw CLIError.usage("no matches") }
        let renderer = try ColumnRenderer(app: app, context: context, views: views)
        let labels = report.labels.count == report.columns.count ? report.labels : report.columns.map(ColumnRenderer.defaultLabel)
        // Cells by column (each a list of lines), then columns nobody fills are left out, as
        // Taskwarrior leaves them out.
        var columns: [(label: String, right: Bool, cells: [[String]])] = []
        for (index, column) in report.columns.enumerated() {
            let cells = views.map { renderer.cell(column, of: $0) }
            guard cells.contains(where: { $0.contains { !$0.isEmpty } }) else { continue }
            columns.append((labels[index], ColumnRenderer.alignsRight(column), cells))
        }
        let widths = columns.map { column in max(column.label.count, column.cells.flatMap { $0 }.map(\.count).max() ?? 0) }
        func line(_ texts: [String]) -> String {
            zip(texts, zip(widths, columns.map(\.right))).map { text, format in
                let pad = String(repeating: " ", count: max(0, format.0 - text.count))
                return format.1 ? pad + text : text + pad
            }.joined(separator: " ").trimmingTrailingSpaces()
        }
        app.output.line()
        app.output.line(line(columns.map(\.label)))
        app.output.line(line(widths.map { String(repeating: "-", count: $0) }))
        let breaks = keys.filter(\.breaks).map(\.field)
        var previous: [String]?
        for (row, view) in views.enumerated() {
            let current = breaks.map { sorter.text($0, of: view) }
            if let previous, previous != current { app.output.line() }
            previous = current
            let height = columns.map { $0.cells[row].count }.max() ?? 1
            for lineIndex in 0..<max(1, height) {
                app.output.line(Terminal.visible(line(columns.map { lineIndex < $0.cells[row].count ? $0.cells[row][lineIndex] : "" })))
            }
        }
        app.output.line()
        app.output.line(views.count == 1 ? "1 task" : "\(views.count) tasks")
    }

    /// Taskwarrior's sort (its `sort.cpp`): each key in turn, a stable sort over the tasks in
    /// id order; dates missing sort last either way; priority in the order H, M, L, none;
    /// strings by their bytes.
    struct Sorter {
        let app: App
        let context: ManagedObjectContext
        let views: [TaskView]
        /// A dependency's id, by UUID (for sorting by `depends`).
        private let ids: [UUID: Int64]

        init(app: App, context: ManagedObjectContext, views: [TaskView]) {
            self.app = app
            self.context = context
            self.views = views
            var ids: [UUID: Int64] = [:]
            for view in views { if let uuid = view.uuidValue { ids[uuid] = view.id } }
            let missing = Set(views.flatMap(\.depends)).subtracting(ids.keys)
            if !missing.isEmpty, let rows = try? context.fetchValues(FetchRequest(entityName: "Task", predicate: try ObjectPredicate(
                format: "uuid IN %@", placeholders: [.list(missing.map(Value.uuid))])), properties: ["uuid"]) {
                for row in rows { if case .uuid(let uuid)? = row.values.first?.value, let key = row.objectID.primaryKey { ids[uuid] = key } }
            }
            self.ids = ids
        }

        func order(by keys: [(field: String, ascending: Bool, breaks: Bool)]) throws -> [Int] {
            guard !keys.isEmpty else { return Array(views.indices) }
            return views.indices.sorted { i, j in
                for key in keys {
                    if let less = compare(key.field, views[i], views[j], ascending: key.ascending) { return less }
                }
                return i < j  // stable
            }
        }

        /// Whether `a` goes before `b` on this key; nil when they are equal on it.
        func compare(_ field: String, _ a: TaskView, _ b: TaskView, ascending: Bool) -> Bool? {
            func ordered<T: Comparable>(_ x: T, _ y: T) -> Bool? { x == y ? nil : (ascending ? x < y : x > y) }
            func bytes(_ x: String, _ y: String) -> Bool? {
                x == y ? nil : (ascending ? x.utf8.lexicographicallyPrecedes(y.utf8) : y.utf8.lexicographicallyPrecedes(x.utf8))
            }
            func dates(_ x: Date?, _ y: Date?) -> Bool? {
                switch (x, y) {
                case (nil, nil): return nil
                case (_?, nil): return true
                case (nil, _?): return false
                case (let x?, let y?): return ordered(x.timeIntervalSince1970.rounded(.down), y.timeIntervalSince1970.rounded(.down))
                }
            }
            switch field {
            case "urgency": return ordered(Float(a.urgency), Float(b.urgency))
            case "id": return ordered(a.id, b.id)
            case "description": return bytes(a.text, b.text)
            case "project": return bytes(a.project ?? "", b.project ?? "")
            case "location": return bytes(a.location ?? "", b.location ?? "")
            case "status": return bytes(Self.status(a, now: app.now), Self.status(b, now: app.now))
            case "tags": return bytes(a.tags.joined(separator: ","), b.tags.joined(separator: ","))
            case "uuid": return bytes(a.uuid ?? "", b.uuid ?? "")
            case "parent": return bytes(Self.extra("parent", of: a) ?? "", Self.extra("parent", of: b) ?? "")
            case _ where Self.date(field, of: a) != nil: return dates(Self.date(field, of: a) ?? nil, Self.date(field, of: b) ?? nil)
            case "priority":
                // Taskwarrior's priority is an attribute whose values are ordered H, M, L, none.
                func position(_ view: TaskView) -> Int { view.priority > 0 ? 3 - Int(min(3, view.priority)) : 3 }
                return ordered(position(a), position(b))
            case "depends":
                let x = a.depends.map { $0.uuidString.lowercased() }.sorted(), y = b.depends.map { $0.uuidString.lowercased() }.sorted()
                if x == y { return nil }
                if x.isEmpty { return ascending }
                if y.isEmpty { return !ascending }
                return ordered(UUID(uuidString: x[0]).flatMap { ids[$0] } ?? 0, UUID(uuidString: y[0]).flatMap { ids[$0] } ?? 0)
            case "recur":
                if a.recurrence == b.recurrence { return nil }
                return ordered(Self.seconds(ofPeriod: a.recurrence), Self.seconds(ofPeriod: b.recurrence))
            default:
                // A user-defined attribute, by its type.
                let x = Self.extra(field, of: a), y = Self.extra(field, of: b)
                guard let attribute = app.config.userAttributes[field] else { return nil }
                switch attribute.kind {
                case .numeric: return ordered(Double(x ?? "") ?? 0, Double(y ?? "") ?? 0)
                case .date: return dates(x.flatMap(TaskwarriorFormat.parseDate), y.flatMap(TaskwarriorFormat.parseDate))
                case .duration:
                    if x == y { return nil }
                    return ordered(x.flatMap { FilterValue.seconds(Substring($0)) } ?? 0, y.flatMap { FilterValue.seconds(Substring($0)) } ?? 0)
                case .string:
                    let x = x ?? "", y = y ?? ""
                    if x == y { return nil }
                    if let values = attribute.values {
                        return ordered(values.firstIndex(of: x) ?? values.count, values.firstIndex(of: y) ?? values.count)
                    }
                    if x.isEmpty { return false }
                    if y.isEmpty { return true }
                    return bytes(x, y)
                }
            }
        }

        /// The value a break compares: the field as text.
        func text(_ field: String, of view: TaskView) -> String {
            switch field {
            case "project": return view.project ?? ""
            case "due": return view.due.map { String($0.timeIntervalSince1970) } ?? ""
            case "priority": return Priority.letter(view.priority)
            case "status": return Self.status(view, now: app.now)
            case "tags": return view.tags.joined(separator: ",")
            case "location": return view.location ?? ""
            default: return Self.extra(field, of: view) ?? ""
            }
        }

        /// A view's date by Taskwarrior's attribute name (`entry`, `end`, `start`, `due`,
        /// `wait`, `scheduled`, `until`, `modified`); `.none` for another name.
        static func date(_ name: String, of view: TaskView) -> Date?? {
            switch name {
            case "entry": return .some(view.created)
            case "end": return .some(view.completed)
            case "start": return .some(view.started)
            case "due": return .some(view.due)
            case "wait": return .some(view.wait)
            case "scheduled": return .some(view.scheduled)
            case "until": return .some(view.until)
            case "modified": return .some(modified(view))
            default: return .none
            }
        }

        /// Taskwarrior's status names (a pending task waiting until later is `waiting`).
        static func status(_ view: TaskView, now: Date) -> String {
            switch view.status {
            case "done": return "completed"
            case "pending": return view.isWaiting(at: now) ? "waiting" : "pending"
            default: return view.status
            }
        }

        /// A Taskwarrior field kept in the task's extras, as text.
        static func extra(_ key: String, of view: TaskView) -> String? {
            guard let text = view.extrasText, TaskView.bytes(of: text, contain: "\"\(key)\"") else { return nil }
            return ExtrasText.decode(.string(text)).first { $0.key == key }.map { UserAttribute.text(ofJSON: $0.json) }
        }

        /// When the task last changed, as Taskwarrior's `modified` (kept from an import or a
        /// sync); a task taskctl made keeps none, so its creation stands in.
        static func modified(_ view: TaskView) -> Date? {
            extra("modified", of: view).flatMap(TaskwarriorFormat.parseDate) ?? view.created
        }

        /// A recurrence's period in seconds, as Taskwarrior orders them.
        static func seconds(ofPeriod text: String?) -> Double {
            guard let text = text?.lowercased() else { return 0 }
            let named: [String: Double] = ["daily": 86_400, "day": 86_400, "weekdays": 86_400, "weekly": 604_800, "biweekly": 1_209_600,
                                           "fortnight": 1_209_600, "monthly": 2_592_000, "bimonthly": 5_184_000, "quarterly": 7_776_000,
                                           "semiannual": 15_552_000, "annual": 31_536_000, "yearly": 31_536_000, "biannual": 63_072_000,
                                           "biyearly": 63_072_000]
            return named[text] ?? FilterValue.seconds(Substring(text)) ?? 0
        }
    }
}

/// A report's cells: Taskwarrior's columns and their styles (`due.relative`, `tags.count`),
/// rendered as Taskwarrior renders them (its `columns/`), each a list of lines.
struct ColumnRenderer {
    let app: App
    let relative: RelativeDate
    /// Open tasks' ids by UUID, for the dependency columns.
    let openIDs: [UUID: Int64]

    init(app: App, context: ManagedObjectContext, views: [TaskView]) throws {
        self.app = app
        relative = app.relative
        let wanted = Set(views.flatMap(\.depends))
        var ids: [UUID: Int64] = [:]
        if !wanted.isEmpty {
            let rows = try context.fetchValues(FetchRequest(entityName: "Task", predicate: .and(try ObjectPredicate(DependencyIndex.open), try ObjectPredicate(
                format: "uuid IN %@", placeholders: [.list(wanted.map(Value.uuid))]))), properties: ["uuid"])
            for row in rows { if case .uuid(let uuid)? = row.values.first?.value, let key = row.objectID.primaryKey { ids[uuid] = key } }
        }
        openIDs = ids
    }

    static func defaultLabel(_ column: String) -> String {
        let base = String(column.split(separator: ".").first ?? "")
        let labels = ["id": "ID", "uuid": "UUID", "description": "Description", "project": "Project", "tags": "Tags", "priority": "P",
                      "status": "Status", "depends": "Depends", "recur": "Recur", "urgency": "Urgency", "parent": "Parent", "entry": "Added",
                      "start": "Started", "end": "Completed", "due": "Due", "wait": "Wait", "scheduled": "Scheduled", "until": "Until",
                      "modified": "Modified", "location": "Location"]
        return labels[base] ?? base.prefix(1).uppercased() + base.dropFirst()
    }

    /// Numbers and durations line up on the right, as in Taskwarrior.
    static func alignsRight(_ column: String) -> Bool {
        let parts = column.split(separator: ".").map(String.init)
        if ["id", "urgency"].contains(parts[0]) { return true }
        if parts.count == 2, ["age", "relative", "remaining", "countdown", "epoch", "julian", "count", "indicator"].contains(parts[1]) {
            return !(parts[0] == "description")
        }
        return false
    }

    /// Taskwarrior's vague duration: 1.2y, 5mo, 3w, 4d, 2h, 10min, 30s (nothing for none or
    /// less than a second; a negative duration is nothing too).
    static func vague(_ seconds: Double) -> String {
        let period = seconds.rounded(.towardZero)
        let days = Float(period / 86_400)
        if period >= 86_400 * 365 { return String(format: "%.1fy", days / 365) }
        if period >= 86_400 * 90 { return "\(Int(days / 30))mo" }
        if period >= 86_400 * 14 { return "\(Int(days / 7))w" }
        if period >= 86_400 { return "\(Int(days))d" }
        if period >= 3_600 { return "\(Int(period / 3_600))h" }
        if period >= 60 { return "\(Int(period / 60))min" }
        if period >= 1 { return "\(Int(period))s" }
        return ""
    }

    func cell(_ column: String, of view: TaskView) -> [String] {
        let parts = column.split(separator: ".", maxSplits: 1).map(String.init)
        let base = parts[0], style = parts.count == 2 ? parts[1] : "default"
        let now = app.now
        func date(_ value: Date?) -> [String] {
            guard let value else { return [] }
            switch style {
            case "julian": return [String(format: "%.6f", value.timeIntervalSince1970 / 86_400 + 2_440_587.5)]
            case "epoch": return [String(Int64(value.timeIntervalSince1970))]
            case "iso": return [TaskwarriorFormat.format(value)]
            case "age": return [now > value ? Self.vague(now.timeIntervalSince(value)) : "-" + Self.vague(value.timeIntervalSince(now))]
            case "relative": return [now < value ? Self.vague(value.timeIntervalSince(now)) : "-" + Self.vague(now.timeIntervalSince(value))]
            case "remaining": return value > now ? [Self.vague(value.timeIntervalSince(now))] : []
            case "countdown": return [Self.vague(value.timeIntervalSince(now))]
            case "active": return ["*"]
            default: return [relative.date(value)]
            }
        }
        switch base {
        case "id": return [String(view.id)]
        case "uuid": return [style == "short" ? String((view.uuid ?? "").prefix(8)) : view.uuid ?? ""]
        case "description":
            let notes = view.annotations.map { ($0.entry.map { relative.date($0) + " " } ?? "") + $0.text }
            switch style {
            case "desc", "truncated": return [view.text]
            case "oneline": return [([view.text] + notes).joined(separator: " ")]
            case "count", "truncated_count": return [view.text + (notes.isEmpty ? "" : " [\(notes.count)]")]
            default: return [view.text] + notes.map { "  " + $0 }
            }
        case "project":
            guard let project = view.project else { return [] }
            switch style {
            case "parent": return [String(project.split(separator: ".").first ?? "")]
            case "indented":
                let pieces = project.split(separator: ".")
                return [String(repeating: "  ", count: max(0, pieces.count - 1)) + (pieces.last.map(String.init) ?? "")]
            default: return [project]
            }
        case "location": return view.location.map { [$0] } ?? []
        case "tags":
            guard !view.tags.isEmpty else { return [] }
            switch style {
            case "indicator": return ["+"]
            case "count": return ["[\(view.tags.count)]"]
            default: return [view.tags.joined(separator: " ")]
            }
        case "priority": return view.priority > 0 ? [Priority.letter(view.priority)] : []
        case "status":
            let status = ReportCommand.Sorter.status(view, now: now)
            return [style == "short" ? String(status.prefix(1)).uppercased() : status.prefix(1).uppercased() + status.dropFirst()]
        case "depends":
            let open = view.depends.compactMap { openIDs[$0] }
            guard !open.isEmpty else { return [] }
            switch style {
            case "indicator": return ["D"]
            case "count": return ["[\(open.count)]"]
            default: return [open.map(String.init).joined(separator: " ")]
            }
        case "recur":
            guard let recurrence = view.recurrence else { return [] }
            return [style == "indicator" ? "R" : recurrence]
        case "urgency":
            if style == "integer" { return [String(Int(view.urgency))] }
            var value = view.urgency
            if value > 0 && value < 1 { value = (value * 100).rounded() / 100 }
            return [String(format: "%.3g", value)]
        case "parent":
            guard let parent = ReportCommand.Sorter.extra("parent", of: view) else { return [] }
            return [style == "short" ? String(parent.prefix(8)) : parent]
        case _ where ReportCommand.Sorter.date(base, of: view) != nil: return date(ReportCommand.Sorter.date(base, of: view) ?? nil)
        default:
            // A user-defined attribute.
            guard let value = ReportCommand.Sorter.extra(base, of: view), !value.isEmpty else { return [] }
            return [style == "indicator" ? "U" : value]
        }
    }
}

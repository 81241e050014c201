import Foundation
import ObjectStore
import ObjectStoreModel

/// A task as taskctl shows it.
struct TaskView {
    var id: Int64
    var uuid: String?
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
    /// Kept from a Taskwarrior import (taskctl's model has no such fields yet): until when
    /// the task waits (hidden from the pending list), when it is scheduled, its annotations.
    var wait: Date?
    var scheduled: Date?
    var annotations: [String] = []

    init(_ task: ManagedObject) throws {
        id = task.objectID.primaryKey ?? 0
        if case .uuid(let u) = task["uuid"] { uuid = u.uuidString.lowercased() }
        if case .string(let s) = task["title"] { text = s } else { text = "" }
        if case .integer(let p) = task["priority"] { priority = p } else { priority = 0 }
        if case .date(let d) = task["dueDate"] { due = d }
        if case .string(let s)? = try task.object(forKey: "location")?["name"] { location = s }
        if case .string(let s)? = try task.object(forKey: "project")?["name"] { project = s }
        tags = try task.objects(forKey: "tags").compactMap { if case .string(let s) = $0["name"] { return s } else { return nil } }.sorted()
        if case .string(let s) = task["status"] { status = s } else { status = "pending" }
        overdue = task["isOverdue"] == true
        if case .date(let d) = task["createdAt"] { created = d }
        if case .date(let d) = task["completedAt"] { completed = d }
        // A byte scan first: most extras have none of these keys, and every listed task passes here.
        if case .string(let text) = task["extras"],
            ["\"wait\"", "\"scheduled\"", "\"annotations\""].contains(where: { Self.bytes(of: text, contain: $0) }),
            let root = try? JSONParser.parse(text)
        {
            wait = root["wait"]?.stringValue.flatMap(TaskwarriorFormat.parseDate)
            scheduled = root["scheduled"]?.stringValue.flatMap(TaskwarriorFormat.parseDate)
            annotations = (root["annotations"]?.elements ?? []).compactMap { $0["description"]?.stringValue }
        }
    }

    /// Whether `needle` occurs in `text`, by a byte search (String's contains goes through
    /// Foundation's locale-aware search, which was a tenth of `list`'s time).
    static func bytes(of text: String, contain needle: String) -> Bool {
        var text = text, needle = needle
        return text.withUTF8 { haystack in
            needle.withUTF8 { pattern in
                guard let base = haystack.baseAddress, let key = pattern.baseAddress, pattern.count > 0, haystack.count >= pattern.count else { return false }
                for start in 0...(haystack.count - pattern.count) where haystack[start] == pattern[0] {
                    if memcmp(base + start, key, pattern.count) == 0 { return true }
                }
                return false
            }
        }
    }

    /// The stable `--json` form (docs/taskctl.md): fixed keys in a fixed order.
    var json: String {
        func date(_ d: Date?) -> String { d.map { JSONText.quote(ISO8601.format($0)) } ?? "null" }
        func text(_ s: String?) -> String { s.map(JSONText.quote) ?? "null" }
        let fields = [
            "\"id\": \(id)", "\"uuid\": \(text(uuid))", "\"text\": \(JSONText.quote(self.text))",
            "\"priority\": \(JSONText.quote(Priority.name(priority)))", "\"due\": \(date(due))", "\"location\": \(text(location))",
            "\"project\": \(text(project))", "\"tags\": [\(tags.map(JSONText.quote).joined(separator: ", "))]",
            "\"status\": \(JSONText.quote(status == "done" ? "done" : status))", "\"overdue\": \(overdue)",
            "\"created\": \(date(created))", "\"completed\": \(date(completed))",
        ]
        return "{" + fields.joined(separator: ", ") + "}"
    }

    static func jsonArray(_ views: [TaskView]) -> String {
        views.isEmpty ? "[]" : "[\n" + views.map { "  " + $0.json }.joined(separator: ",\n") + "\n]"
    }
}

/// Renders due dates relative to now: "today", "in 2 days", "3 days overdue".
struct RelativeDate {
    let now: Date
    let calendar: Calendar
    private let today: Date
    private let daysAway = DayCache()

    /// Days from today to a date, by the quarter hour the date falls in (every zone's
    /// midnight is on a quarter hour): a list of 10,000 tasks asks the calendar once per
    /// distinct quarter hour, not twice per row.
    private final class DayCache {
        var days: [Int64: Int] = [:]
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

    func describe(_ date: Date) -> String {
        let days = days(to: date)
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
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        func two(_ v: Int?) -> String { String(format: "%02d", v ?? 0) }
        let time = (c.hour == 23 && c.minute == 59) ? "" : " \(two(c.hour)):\(two(c.minute))"
        return "\(c.year ?? 0)-\(two(c.month))-\(two(c.day))\(time)"
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

    func render(width: Int, style: (Int, Int, String) -> String = { _, _, s in s }) -> [String] {
        guard !headers.isEmpty else { return [] }
        // A line break or escape sequence in a cell would break the table: shown, not obeyed.
        let rows = rows.map { $0.map { Terminal.visible($0) } }
        var widths = headers.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
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
        func pad(_ s: String, _ w: Int) -> String { s.count >= w ? s : s + String(repeating: " ", count: w - s.count) }
        func cut(_ s: String, _ w: Int) -> String { s.count <= w ? s : String(s.prefix(max(0, w - 1))) + "…" }
        var lines = [shown.map { pad(cut(headers[$0], widths[$0]), widths[$0]) }.joined(separator: "  ").trimmingTrailingSpaces()]
        for (r, row) in rows.enumerated() {
            let cells = shown.filter { $0 < row.count }.map { i in style(r, i, pad(cut(row[i], widths[i]), widths[i])) }
            lines.append(cells.joined(separator: "  ").trimmingTrailingSpaces())
        }
        return lines
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var s = self
        while s.hasSuffix(" ") { s.removeLast() }
        return s
    }
}

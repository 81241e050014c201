import Foundation
import ObjectStore
import ObjectStoreModel

/// `taskctl agenda` (and `stats`): overdue tasks, then the next weeks as a calendar of how
/// many tasks fall due each day, then counts by priority and location.
enum AgendaCommand {
    static func run(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, valued: ["weeks"], switches: ["json"], command: "agenda")
        try args.allowWords(0, command: "agenda")
        let weeks = try args.value("weeks").map { text -> Int in
            guard let n = Int(text), (1...52).contains(n) else { throw CLIError.usage("--weeks takes 1 to 52, not '\(text)'") }
            return n
        } ?? 4
        let context = try app.context(readOnly: true)
        let pending = try app.tasks(context, where: try ObjectPredicate("status == 'pending'")).map { try TaskView($0, now: app.now) }
        let relative = RelativeDate(now: app.now, timeZone: app.timeZone)
        let calendar = relative.calendar
        let today = calendar.startOfDay(for: app.now)
        let weekday = (calendar.component(.weekday, from: today) + 5) % 7  // Monday = 0
        guard let start = calendar.date(byAdding: .day, value: -weekday, to: today) else { return }
        // Calendar rows from this week's Monday that cover the next `weeks` weeks from today
        // (on a Sunday, one week is this week's last day and all of the next).
        let rows = (weekday + weeks * 7 + 6) / 7
        var perDay: [Int: Int] = [:]
        for view in pending {
            guard let due = view.due, due >= app.now else { continue }
            let offset = calendar.dateComponents([.day], from: start, to: calendar.startOfDay(for: due)).day ?? -1
            if offset >= 0 && offset < rows * 7 { perDay[offset, default: 0] += 1 }
        }
        let overdue = pending.filter(\.overdue).sorted { ($0.due ?? .distantPast) < ($1.due ?? .distantPast) }
        let byPriority = (0...3).reversed().map { p in (Priority.name(Int64(p)), pending.filter { $0.priority == p }.count) }
        var byLocation: [String: Int] = [:]
        for view in pending { byLocation[view.location ?? "(none)", default: 0] += 1 }

        if args.has("json") {
            let days = (0..<rows * 7).compactMap { offset -> String? in
                guard let count = perDay[offset], let day = calendar.date(byAdding: .day, value: offset, to: start) else { return nil }
                return "{\"date\": \(JSONText.quote(relative.day(relative.calendar.startOfDay(for: day)).prefix(10).description)), \"due\": \(count)}"
            }
            app.output.line("{\"pending\": \(pending.count), \"overdue\": [\(overdue.map { String($0.id) }.joined(separator: ", "))], \"days\": [\(days.joined(separator: ", "))], "
                + "\"byPriority\": {\(byPriority.map { "\(JSONText.quote($0.0)): \($0.1)" }.joined(separator: ", "))}, "
                + "\"byLocation\": {\(byLocation.keys.sorted().map { "\(JSONText.quote($0)): \(byLocation[$0] ?? 0)" }.joined(separator: ", "))}}")
            return
        }
        let t = app.terminal
        app.output.line(t.paint("\(pending.count) pending, \(overdue.count) overdue", .bold))
        for view in overdue.prefix(10) {
            app.output.line(t.paint("  ! \(view.id) \(Terminal.visible(view.text)) (\(view.due.map(relative.describe) ?? ""))", .red))
        }
        if overdue.count > 10 { app.output.line(t.paint("  ... and \(overdue.count - 10) more: taskctl list --overdue", .red)) }
        app.output.line()
        app.output.line("          Mon Tue Wed Thu Fri Sat Sun")
        for week in 0..<rows {
            guard let monday = calendar.date(byAdding: .day, value: week * 7, to: start) else { continue }
            let c = calendar.dateComponents([.month, .day], from: monday)
            var line = String(format: "%02d-%02d     ", c.month ?? 0, c.day ?? 0)
            for day in 0..<7 {
                let offset = week * 7 + day
                let count = perDay[offset] ?? 0
                let isToday = offset == weekday
                var cell = count == 0 ? "  ·" : String(format: "%3d", count)
                if isToday { cell = t.useColor ? t.paint(cell, .cyan) : String(cell.dropFirst()) + "*" }
                else if count > 0 { cell = t.paint(cell, count >= 3 ? .yellow : .green) }
                line += cell + " "
            }
            app.output.line(line.trimmingTrailingSpaces())
        }
        app.output.line(t.useColor ? "" : "(* today)")
        app.output.line("by priority: " + byPriority.map { "\($0.0) \($0.1)" }.joined(separator: ", "))
        app.output.line("by location: " + byLocation.keys.sorted().map { "\(Terminal.visible($0)) \(byLocation[$0] ?? 0)" }.joined(separator: ", "))
    }
}

import Foundation
import ObjectStore
import ObjectStoreModel

/// `taskctl agenda`: overdue tasks, the tasks due each day of the next weeks, then those
/// weeks as a calendar of how many tasks fall due each day, and counts by priority and
/// location; `agenda --month` is a month's calendar.
enum AgendaCommand {
    static func run(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "agenda")
        if args.has("month") {
            try args.allowWords(1, command: "agenda --month")
            return try month(args.positional.first ?? "", json: args.has("json"), app)
        }
        try args.allowWords(0, command: "agenda")
        let weeks = try args.value("weeks").map { text -> Int in
            guard let n = Int(text), (1...52).contains(n) else { throw CLIError.usage("--weeks takes 1 to 52, not '\(text)'") }
            return n
        } ?? 4
        let context = try app.context(readOnly: true)
        let pending = try TaskView.fetch(context, where: try app.pending(), app: app)
        let relative = app.relative
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
                return "{\"date\": \(JSONText.quote(relative.isoDay(day))), \"due\": \(count)}"
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
        // The tasks due each day from today to the end of the calendar below.
        var dueByDay: [Int: [TaskView]] = [:]
        for view in pending {
            guard let due = view.due, due >= app.now else { continue }
            let offset = calendar.dateComponents([.day], from: start, to: calendar.startOfDay(for: due)).day ?? -1
            if offset >= weekday && offset < rows * 7 { dueByDay[offset, default: []].append(view) }
        }
        for offset in dueByDay.keys.sorted() {
            guard let day = calendar.date(byAdding: .day, value: offset, to: start), let views = dueByDay[offset] else { continue }
            let name = calendar.shortWeekdaySymbols[(calendar.component(.weekday, from: day) + 6) % 7]
            let label = offset == weekday ? " (today)" : offset == weekday + 1 ? " (tomorrow)" : ""
            app.output.line(t.paint("\(name) \(relative.date(day))\(label)", .bold))
            for view in ListCommand.sorted(views, by: [("due", false)]) {
                let time = view.due.flatMap(relative.time).map { $0 + " " } ?? ""
                let place = view.location.map { " @" + $0 } ?? ""
                app.output.line("  \(view.id) \(time)\(Terminal.visible(view.text))\(Terminal.visible(place))")
            }
        }
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

    /// `agenda --month [YYYY-MM]`: a month as a calendar, each day with its count of tasks due.
    static func month(_ text: String, json: Bool, _ app: App) throws {
        let relative = app.relative
        let calendar = relative.calendar
        var components = calendar.dateComponents([.year, .month], from: app.now)
        if !text.isEmpty && text != "this" {
            let parts = text.split(separator: "-")
            guard parts.count == 2, parts[0].count == 4, let year = Int(parts[0]), let month = Int(parts[1]), (1...9999).contains(year), (1...12).contains(month) else {
                throw CLIError.usage("--month takes YYYY-MM (or 'this'), not '\(text)'")
            }
            components = DateComponents(year: year, month: month)
        }
        components.day = 1
        components.hour = 12
        guard let first = calendar.date(from: components).map(calendar.startOfDay(for:)),
              let days = calendar.range(of: .day, in: .month, for: first)?.count,
              let end = calendar.date(byAdding: .day, value: days, to: first) else { throw CLIError.usage("--month '\(text)' is not a month taskctl can show") }
        let context = try app.context(readOnly: true)
        let predicate: ObjectPredicate = .and(try app.pending(), try ObjectPredicate(format: "dueDate >= %@ AND dueDate < %@", .date(first), .date(end)))
        var perDay: [Int: Int] = [:]
        for task in try app.tasks(context, where: predicate) {
            guard case .date(let due) = task["dueDate"] else { continue }
            perDay[calendar.component(.day, from: due), default: 0] += 1
        }
        let title = String(relative.isoDay(first).prefix(7))
        if json {
            let items = (1...days).compactMap { day in perDay[day].map { "{\"date\": \"\(title)-\(day < 10 ? "0" : "")\(day)\", \"due\": \($0)}" } }
            app.output.line("{\"month\": \"\(title)\", \"days\": [\(items.joined(separator: ", "))]}")
            return
        }
        let t = app.terminal
        let names = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
        let total = perDay.values.reduce(0, +)
        app.output.line(t.paint("\(names[(calendar.component(.month, from: first) + 11) % 12]) \(calendar.component(.year, from: first)): \(total) task\(total == 1 ? "" : "s") due", .bold))
        // Six characters a day: its number, the count of tasks due, a mark for today.
        app.output.line("Mo    Tu    We    Th    Fr    Sa    Su")
        let today = calendar.dateComponents([.year, .month, .day], from: app.now)
        let isThisMonth = today.year == calendar.component(.year, from: first) && today.month == calendar.component(.month, from: first)
        let lead = (calendar.component(.weekday, from: first) + 5) % 7
        var line = String(repeating: " ", count: 6 * lead)
        for day in 1...days {
            let count = perDay[day] ?? 0
            let number = String(format: "%2d", day)
            let tally = count == 0 ? "   " : count < 10 ? "(\(count))" : "+" + String(min(count, 99))
            let isToday = isThisMonth && today.day == day
            var cell = number + tally + (isToday && !t.useColor ? "*" : " ")
            if isToday && t.useColor { cell = t.paint(cell, .cyan) } else if count > 0 { cell = t.paint(cell, count >= 3 ? .yellow : .green) }
            line += cell
            if (lead + day) % 7 == 0 {
                app.output.line(line.trimmingTrailingSpaces())
                line = ""
            }
        }
        if !line.isEmpty { app.output.line(line.trimmingTrailingSpaces()) }
        app.output.line("(N): tasks due that day" + (isThisMonth && !t.useColor ? "; * today" : ""))
    }
}

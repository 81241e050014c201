import Foundation
import ObjectStore
import ObjectStoreModel

/// `taskctl stats`: how the tasks stand and how they went: counts by status, tasks done per
/// week, the age of what is pending, how long tasks took to get done, and pending tasks by
/// project, location and priority.
enum StatsCommand {
    static func run(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "stats")
        try args.allowWords(0, command: "stats")
        let weeks = try args.value("weeks").map { text -> Int in
            guard let n = Int(text), (1...104).contains(n) else { throw CLIError.usage("--weeks takes 1 to 104, not '\(text)'") }
            return n
        } ?? 8
        let context = try app.context(readOnly: true)
        let all = try TaskView.fetch(context, where: nil, app: app)
        let pending = all.filter { $0.status == "pending" }
        let done = all.filter { $0.status == "done" }
        let calendar = Calendar.taskctl(in: app.timeZone)
        let today = calendar.startOfDay(for: app.now)
        let weekday = (calendar.component(.weekday, from: today) + 5) % 7  // Monday = 0
        guard let thisMonday = calendar.date(byAdding: .day, value: -weekday, to: today) else { return }
        // Done per week, Monday to Sunday, this week last.
        let mondays = (0..<weeks).reversed().compactMap { calendar.date(byAdding: .day, value: -7 * $0, to: thisMonday) }
        var perWeek = [Int](repeating: 0, count: mondays.count)
        for view in done {
            guard let completed = view.completed, let first = mondays.first, completed >= first else { continue }
            let index = (calendar.dateComponents([.day], from: first, to: calendar.startOfDay(for: completed)).day ?? -1) / 7
            if perWeek.indices.contains(index) { perWeek[index] += 1 }
        }
        let ages = pending.compactMap { $0.created.map { app.now.timeIntervalSince($0) / 86_400 } }
        let averageAge = ages.isEmpty ? nil : ages.reduce(0, +) / Double(ages.count)
        let oldest = pending.filter { $0.created != nil }.min { ($0.created ?? .distantFuture, $0.id) < ($1.created ?? .distantFuture, $1.id) }
        let durations = done.compactMap { view -> Double? in
            guard let created = view.created, let completed = view.completed, completed >= created else { return nil }
            return completed.timeIntervalSince(created) / 86_400
        }
        let averageDuration = durations.isEmpty ? nil : durations.reduce(0, +) / Double(durations.count)
        func counts(_ key: (TaskView) -> String) -> [(String, Int)] {
            Dictionary(grouping: pending, by: key).map { ($0.key, $0.value.count) }.sorted { ($1.1, $0.0) < ($0.1, $1.0) }
        }
        let byProject = counts { $0.project ?? "(none)" }, byLocation = counts { $0.location ?? "(none)" }
        let byPriority = (0...3).reversed().map { p in (Priority.name(Int64(p)), pending.filter { $0.priority == p }.count) }
        let overdue = pending.filter(\.overdue).count, waiting = pending.filter { $0.isWaiting(at: app.now) }.count
        let started = pending.filter { $0.started != nil }.count
        let deleted = all.filter { $0.status == "deleted" }.count
        func days(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "null" }
        func day(_ date: Date) -> String { app.relative.date(date) }

        if args.has("json") {
            func object(_ pairs: [(String, Int)]) -> String { "{" + pairs.map { "\(JSONText.quote($0.0)): \($0.1)" }.joined(separator: ", ") + "}" }
            let weekItems = zip(mondays, perWeek).map { "{\"week\": \(JSONText.quote(app.relative.isoDay($0))), \"done\": \($1)}" }
            app.output.line("{\"pending\": \(pending.count), \"overdue\": \(overdue), \"waiting\": \(waiting), \"started\": \(started), \"done\": \(done.count), \"deleted\": \(deleted), "
                + "\"donePerWeek\": [\(weekItems.joined(separator: ", "))], \"averagePendingAgeDays\": \(days(averageAge)), "
                + "\"averageDaysToDone\": \(days(averageDuration)), \"oldestPending\": \(oldest.map { String($0.id) } ?? "null"), "
                + "\"byProject\": \(object(byProject)), \"byLocation\": \(object(byLocation)), \"byPriority\": \(object(byPriority))}")
            return
        }
        let t = app.terminal
        app.output.line(t.paint("\(pending.count) pending (\(overdue) overdue, \(waiting) waiting, \(started) started), \(done.count) done, \(deleted) deleted", .bold))
        app.output.line()
        app.output.line("done per week (weeks from Monday):")
        let widest = max(1, perWeek.max() ?? 1)
        for (monday, count) in zip(mondays, perWeek) {
            let bar = String(repeating: "█", count: count == 0 ? 0 : max(1, count * 30 / widest))
            app.output.line("  \(day(monday))  \(String(format: "%3d", count)) \(t.paint(bar, .green))".trimmingTrailingSpaces())
        }
        app.output.line()
        app.output.line("pending tasks are \(averageAge.map { String(format: "%.1f", $0) + " days" } ?? "-") old on average"
            + (oldest.map { "; the oldest is \($0.id) \(Terminal.visible($0.text)) (\(day($0.created ?? app.now)))" } ?? ""))
        app.output.line("done tasks took \(averageDuration.map { String(format: "%.1f", $0) + " days" } ?? "-") from added to done on average")
        app.output.line()
        app.output.line("pending by project:  " + byProject.map { "\(Terminal.visible($0.0)) \($0.1)" }.joined(separator: ", "))
        app.output.line("pending by location: " + byLocation.map { "\(Terminal.visible($0.0)) \($0.1)" }.joined(separator: ", "))
        app.output.line("pending by priority: " + byPriority.map { "\($0.0) \($0.1)" }.joined(separator: ", "))
    }
}

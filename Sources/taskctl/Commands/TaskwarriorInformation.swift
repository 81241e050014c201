import Foundation
import ObjectStore
import ObjectStoreModel

/// Taskwarrior's information commands: `projects`, `_projects`, `tags`, `summary`,
/// `history.monthly`, `history.annual`, `_get` and `calc`, each answering as Taskwarrior 2.6's
/// (its `CmdProjects`, `CmdTags`, `CmdSummary`, `CmdHistory`, `DOM` and `Eval`).
enum TaskwarriorInformation {
    /// The tasks a command counts: those the filter selects among `base`.
    static func tasks(_ app: App, words: [String], base: String?) throws -> (ManagedObjectContext, [TaskView]) {
        let filter = words.isEmpty ? app.filter : try TaskFilter.parse(app.filter.words + words)
        let context = try app.context(readOnly: true)
        var clauses: [ObjectPredicate] = []
        if let base { clauses.append(try ObjectPredicate(base)) }
        if let selected = try filter.predicate(in: FilterScope(app: app, context: context)) { clauses.append(selected) }
        var predicate: ObjectPredicate?
        for clause in clauses { predicate = predicate.map { .and($0, clause) } ?? clause }
        let views = try TaskView.fetch(context, where: predicate, app: app)
        app.keptUntilExit.append(views)
        return (context, views)
    }

    /// A project and each project above it (`home.garden`: `home`, `home.garden`).
    static func withParents(_ project: String) -> [String] {
        let parts = project.split(separator: ".", omittingEmptySubsequences: false)
        return (1...max(1, parts.count)).map { parts.prefix($0).joined(separator: ".") }
    }

    /// Projects in Taskwarrior's order: by name, each below the last of its parents.
    static func sortedProjects(_ names: [String]) -> [String] {
        var sorted: [String] = []
        for name in Set(names).sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            let parents = withParents(name).dropLast()
            guard !parents.isEmpty else { sorted.append(name); continue }
            var position = sorted.endIndex
            for parent in parents {
                if let found = sorted.firstIndex(of: parent) { position = found } else { sorted.append(parent); position = sorted.count - 1 }
            }
            sorted.insert(name, at: min(sorted.count, position + 1))
        }
        return sorted
    }

    static func indented(_ project: String) -> String {
        project.isEmpty ? "(none)" : String(repeating: "  ", count: project.split(separator: ".").count - 1) + (project.split(separator: ".").last.map(String.init) ?? "")
    }

    /// A table as Taskwarrior draws one without colour: labels, dashes, rows; `right` the
    /// columns aligned right.
    static func table(_ labels: [String], _ rows: [[String]], right: Set<Int>) -> [String] {
        let widths = labels.indices.map { column in max(labels[column].count, rows.map { $0[column].count }.max() ?? 0) }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, text in
                let pad = String(repeating: " ", count: max(0, widths[column] - text.count))
                return right.contains(column) ? pad + text : text + pad
            }.joined(separator: " ").trimmingTrailingSpaces()
        }
        return [line(labels), line(widths.map { String(repeating: "-", count: $0) })] + rows.map(line)
    }

    /// `[FILTER] projects`: the open tasks' projects, each counted with its subprojects.
    static func projects(_ words: [String], _ app: App) throws {
        let (_, views) = try tasks(app, words: words, base: DependencyIndex.open)
        var counts: [String: Int] = [:]
        var noProject = false
        for view in views {
            let project = view.project ?? ""
            if project.isEmpty { noProject = true }
            for name in project.isEmpty ? [""] : withParents(project) { counts[name, default: 0] += 1 }
        }
        guard !counts.isEmpty else { throw CLIError.usage("no projects") }
        let rows = sortedProjects(Array(counts.keys)).map { [indented($0), String(counts[$0] ?? 0)] }
        app.output.line()
        for line in table(["Project", "Tasks"], rows, right: [1]) { app.output.line(Terminal.visible(line)) }
        app.output.line()
        let projects = counts.count - (noProject ? 1 : 0)
        app.output.line("\(projects) project\(projects == 1 ? "" : "s") (\(views.count) task\(views.count == 1 ? "" : "s"))")
    }

    /// `[FILTER] _projects`: the open tasks' project names, one a line.
    static func projectNames(_ words: [String], _ app: App) throws {
        let (_, views) = try tasks(app, words: words, base: DependencyIndex.open)
        for name in Set(views.compactMap(\.project)).sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) { app.output.line(Terminal.visible(name)) }
    }

    /// `[FILTER] tags`: the open tasks' tags and how many tasks have each.
    static func tags(_ words: [String], _ app: App) throws {
        let (context, views) = try tasks(app, words: words, base: DependencyIndex.open)
        var counts: [String: Int] = [:]
        for view in views { for tag in view.tags { counts[tag, default: 0] += 1 } }
        guard !counts.isEmpty else { throw CLIError.usage("no tags") }
        let rows = counts.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map { [$0, String(counts[$0] ?? 0)] }
        app.output.line()
        for line in table(["Tag", "Count"], rows, right: [1]) { app.output.line(Terminal.visible(line)) }
        app.output.line()
        // As Taskwarrior: the tasks it read, before the filter.
        let all = try context.count(for: FetchRequest(entityName: "Task", predicate: try ObjectPredicate(DependencyIndex.open)))
        app.output.line("\(counts.count) tag\(counts.count == 1 ? "" : "s") (\(all) task\(all == 1 ? "" : "s"))")
    }

    /// `[FILTER] summary`: per project of a pending task, the tasks remaining, their average
    /// age, and how much of it is done.
    static func summary(_ words: [String], _ app: App) throws {
        let (_, views) = try tasks(app, words: words, base: nil)
        var shown: Set<String> = []
        for view in views where view.status == "pending" { shown.insert(view.project ?? "") }
        var pending: [String: Int] = [:], done: [String: Int] = [:], ages: [String: Double] = [:], counted: [String: Int] = [:]
        for view in views {
            let project = view.project ?? ""
            let names = project.isEmpty ? [""] : withParents(project)
            for name in names { counted[name, default: 0] += 1 }
            if view.status == "pending" {
                for name in names {
                    pending[name, default: 0] += 1
                    if let created = view.created { ages[name, default: 0] += app.now.timeIntervalSince(created).rounded(.towardZero) }
                }
            } else if view.status == "done" {
                for name in names {
                    done[name, default: 0] += 1
                    if let created = view.created, let completed = view.completed {
                        ages[name, default: 0] += completed.timeIntervalSince(created).rounded(.towardZero)
                    }
                }
            }
        }
        guard !shown.isEmpty else { throw CLIError.usage("no projects") }
        let rows = sortedProjects(Array(shown)).map { name -> [String] in
            let p = pending[name] ?? 0, c = done[name] ?? 0
            let age = (counted[name] ?? 0) > 0 ? ColumnRenderer.vague(((ages[name] ?? 0) / Double(counted[name] ?? 1)).rounded(.towardZero)) : ""
            let bar = c + p > 0 ? c * 30 / (c + p) : 0
            return [indented(name), String(p), age, c + p > 0 ? "\(100 * c / (c + p))%" : "0%",
                    String(repeating: "=", count: bar) + String(repeating: " ", count: 30 - bar)]
        }
        app.output.line()
        for line in table(["Project", "Remaining", "Avg age", "Complete", "0%                        100%"], rows, right: [1, 2, 3]) {
            app.output.line(Terminal.visible(line))
        }
        app.output.line()
        app.output.line("\(rows.count) project\(rows.count == 1 ? "" : "s")")
    }

    /// `[FILTER] history.monthly` and `history.annual`: per month (or year), the tasks added,
    /// completed and deleted then, and the net change; then their averages.
    static func history(_ words: [String], _ app: App, annual: Bool) throws {
        let (_, views) = try tasks(app, words: words, base: nil)
        let calendar = Calendar.taskctl(in: app.timeZone)
        func period(_ date: Date) -> (Int, Int) {
            let parts = calendar.dateComponents([.year, .month], from: date)
            return (parts.year ?? 0, annual ? 0 : parts.month ?? 0)
        }
        var added: [Int: Int] = [:], completed: [Int: Int] = [:], deleted: [Int: Int] = [:], periods: Set<Int> = []
        func key(_ date: Date) -> Int { let (y, m) = period(date); return y * 100 + m }
        for view in views {
            guard let created = view.created else { continue }
            periods.insert(key(created))
            if view.status != "recurring" { added[key(created), default: 0] += 1 }
            if let end = view.completed, view.status == "deleted" || view.status == "done" {
                periods.insert(key(end))
                if view.status == "deleted" { deleted[key(end), default: 0] += 1 } else { completed[key(end), default: 0] += 1 }
            }
        }
        guard !periods.isEmpty else { throw CLIError.usage("no tasks") }
        var rows: [[String]] = []
        var lastYear = -1
        var total = (added: 0, completed: 0, deleted: 0)
        for period in periods.sorted() {
            let year = period / 100, month = period % 100
            let a = added[period] ?? 0, c = completed[period] ?? 0, d = deleted[period] ?? 0
            total = (total.added + a, total.completed + c, total.deleted + d)
            let yearText = year != lastYear ? String(year) : ""
            lastYear = year
            let counts = [String(a), String(c), String(d), String(a - c - d)]
            rows.append(annual ? [yearText] + counts : [yearText, Self.monthNames[month - 1]] + counts)
        }
        let n = periods.count
        let averages = [String(total.added / n), String(total.completed / n), String(total.deleted / n), String((total.added - total.completed - total.deleted) / n)]
        rows.append(Array(repeating: "", count: annual ? 5 : 6))
        rows.append(annual ? ["Average"] + averages : ["", "Average"] + averages)
        let labels = (annual ? ["Year"] : ["Year", "Month"]) + ["Added", "Completed", "Deleted", "Net"]
        app.output.line()
        for line in table(labels, rows, right: Set((annual ? 1 : 2)..<labels.count)) { app.output.line(line) }
    }

    static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                             "November", "December"]

    /// `[FILTER] timesheet`: the tasks completed and started in the last four weeks (or those
    /// the filter selects), by when, week by week (weeks starting on Sunday, as Taskwarrior's
    /// default `weekstart` counts them).
    static func timesheet(_ words: [String], _ app: App) throws {
        let line = app.filter.words + words
        let filterWords = line.isEmpty ? try ContextFilters.words("(+PENDING and start.after:now-4wks) or (+COMPLETED and end.after:now-4wks)") : line
        let filter = try TaskFilter.parse(filterWords)
        let context = try app.context(readOnly: true)
        let views = try TaskView.fetch(context, where: try filter.predicate(in: FilterScope(app: app, context: context)), app: app)
        app.keptUntilExit.append(views)
        func key(_ view: TaskView) -> Date? { view.status == "done" ? view.completed : view.status == "pending" ? view.started : nil }
        let completed = views.filter { $0.status == "done" }.count
        let started = views.filter { $0.status == "pending" && $0.started != nil }.count
        let shown = views.enumerated().sorted { a, b in
            let x = key(a.element).map { Int64($0.timeIntervalSince1970) }, y = key(b.element).map { Int64($0.timeIntervalSince1970) }
            if x != y { return (x ?? Int64.min) < (y ?? Int64.min) }
            return a.offset < b.offset
        }.map(\.element)
        let calendar = Calendar.taskctl(in: app.timeZone)
        let relative = app.relative
        var rows: [[String]] = []
        var previous: (week: Int, date: String, day: String)?
        for view in shown {
            let date = key(view) ?? .distantPast
            let parts = calendar.dateComponents([.weekday], from: date)
            let dayOfYear = (calendar.ordinality(of: .day, in: .year, for: date) ?? 1) - 1
            let weekday = (parts.weekday ?? 1) - 1  // 0 Sunday
            let week = (dayOfYear + 7 - weekday) / 7
            let dateText = relative.date(date), day = RelativeDate.weekdays[weekday]
            if let previous, previous.week != week { rows.append(Array(repeating: "", count: 8)) }
            let label = view.completed != nil ? "Completed" : view.started != nil ? "Started" : ""
            rows.append([previous?.week != week ? "W\(week)" : "", previous?.date != dateText ? dateText : "", previous?.day != day ? day : "",
                         String(view.id), label, view.project ?? "", view.due.map(relative.date) ?? "", view.text])
            previous = (week, dateText, day)
        }
        if !rows.isEmpty {
            app.output.line()
            for line in table(["Wk", "Date", "Day", "ID", "Action", "Project", "Due", "Task"], rows, right: [3]) { app.output.line(Terminal.visible(line)) }
            app.output.line()
        }
        app.output.line("\(completed) completed, \(started) started.")
    }

    /// `_get REFERENCE...`: Taskwarrior's DOM references (`12.description`, `12.due`,
    /// `12.tags`, `12.annotations.1.description`, `UUID.project`, `rc.NAME`), their values on
    /// one line, separated by spaces.
    static func get(_ words: [String], _ app: App) throws {
        guard !words.isEmpty else { throw CLIError.usage("_get needs DOM references: taskctl _get 12.description rc.dateformat") }
        var values: [String] = []
        let context = try app.context(readOnly: true)
        for word in words {
            if word.hasPrefix("rc.") {
                values.append(try setting(String(word.dropFirst(3)), app: app))
                continue
            }
            let parts = word.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard parts.count >= 2, !parts[0].isEmpty else { throw CLIError.usage("'\(word)' is not a DOM reference") }
            // Eight hex digits or more are a UUID's start, as in Taskwarrior (00000014 is not id 14).
            var task: ManagedObject
            if TaskFilter.isUUID(parts[0]), let predicate = try TaskFilter.parse([parts[0]]).predicate(in: FilterScope(app: app, context: context)) {
                let found = try app.tasks(context, where: predicate)
                guard found.count == 1 else {
                    throw CLIError.usage(found.isEmpty ? "no task has a UUID starting with \(parts[0])" : "\(parts[0]) starts the UUIDs of \(found.count) tasks; give more of it")
                }
                task = found[0]
            } else {
                task = try app.task(parts[0], in: context)
            }
            let view = try TaskView(task, app: app)
            guard let value = try attribute(Array(parts.dropFirst()), of: view, task: task, app: app) else {
                throw CLIError.usage("'\(word)' is not a DOM reference")
            }
            values.append(value)
        }
        app.output.line(Terminal.visible(values.joined(separator: " ")))
    }

    /// A date as `_get` and `calc` write it: local, ISO 8601 without a zone.
    static func localISO(_ date: Date, app: App) -> String {
        let calendar = Calendar.taskctl(in: app.timeZone)
        let p = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d", p.year ?? 0, p.month ?? 0, p.day ?? 0, p.hour ?? 0, p.minute ?? 0, p.second ?? 0)
    }

    static func attribute(_ path: [String], of view: TaskView, task: ManagedObject, app: App) throws -> String? {
        func date(_ value: Date?) -> String { value.map { localISO($0, app: app) } ?? "" }
        switch path.first ?? "" {
        case "description": return path.count == 1 ? view.text : nil
        case "id": return String(view.id)
        case "uuid": return view.uuid ?? ""
        case "status": return ReportCommand.Sorter.status(view, now: app.now)
        case "project": return view.project ?? ""
        case "location": return view.location ?? ""
        case "priority": return Priority.letter(view.priority)
        case "urgency": return String(format: "%g", Float(view.urgency))
        case let name where ReportCommand.Sorter.date(name, of: view) != nil: return date(ReportCommand.Sorter.date(name, of: view) ?? nil)
        case "recur":
            // As Taskwarrior gives it: a duration (a month 30 days, a year 365).
            guard let text = view.recurrence, let recurrence = Recurrence(text) else { return view.recurrence ?? "PT0S" }
            let seconds: Double
            switch recurrence.step {
            case .days(let n): seconds = Double(n) * 86_400
            case .seconds(let s): seconds = s
            case .months(let n, _): seconds = Double(n) * 30 * 86_400
            case .years(let n, _): seconds = Double(n) * 365 * 86_400
            case .weekdays: seconds = 86_400
            }
            return Calculator.format(.duration(seconds), app: app)
        case "depends": return view.depends.map { $0.uuidString.lowercased() }.joined(separator: ",")
        case "tags":
            if path.count == 2 { return view.tags.contains(path[1]) ? path[1] : "" }
            return view.tags.joined(separator: ",")
        case "annotations":
            if path.count == 2 && path[1] == "count" { return String(view.annotations.count) }
            guard path.count == 3, let n = Int(path[1]), n >= 1 else { return nil }
            guard n <= view.annotations.count else { return "" }
            let note = view.annotations[n - 1]
            switch path[2] {
            case "description": return note.text
            case "entry": return date(note.entry)
            default: return nil
            }
        default:
            // A field Taskwarrior keeps (parent, mask, imask) or a user-defined attribute.
            guard path.count == 1, ["parent", "mask", "imask", "rtype"].contains(path[0]) || app.config.userAttributes[path[0]] != nil else { return nil }
            return ReportCommand.Sorter.extra(path[0], of: view) ?? ""
        }
    }

    /// A setting's value as `_get rc.NAME` gives it (Taskwarrior's default where unset).
    static func setting(_ name: String, app: App) throws -> String {
        let config = app.config
        switch name {
        case "dateformat": return config.dateFormat ?? "Y-M-D"
        case "bulk": return String(config.bulk)
        case "confirmation": return config.confirmation ? "on" : "off"
        case "search.case.sensitive": return config.searchCaseSensitive ? "yes" : "no"
        case "default.project": return config.defaultProject ?? ""
        case "default.due": return config.defaultDue ?? ""
        case "default.command": return config.defaultCommand ?? ""
        case "uda.priority.default": return config.defaultPriority ?? ""
        case "context": return config.context ?? ""
        case "recurrence": return config.recurrence ? "on" : "off"
        case "recurrence.limit": return String(config.recurrenceLimit)
        case "color": return config.color ?? "auto"
        default:
            if let (report, field) = Config.reportSetting(name), let definition = config.report(named: report) {
                switch field {
                case "columns": return definition.columns.joined(separator: ",")
                case "labels": return definition.labels.joined(separator: ",")
                case "sort": return definition.sort
                case "filter": return definition.filter
                default: return definition.description
                }
            }
            throw CLIError.usage("'rc.\(name)' is not a setting taskctl has")
        }
    }
}

/// `calc EXPRESSION`: Taskwarrior's calculator over numbers, dates and durations (`1+2*3`,
/// `now+3d`, `eom`, `2026-12-01 - 2026-11-25`, `1w + 2d`): numbers as numbers (whole numbers
/// divide to a whole number), dates as local ISO 8601, durations as ISO 8601 periods.
enum Calculator {
    enum Value {
        case number(Double, whole: Bool)
        case date(Date)
        case duration(Double)
    }

    static func run(_ words: [String], _ app: App) throws {
        let text = words.joined(separator: " ")
        guard !text.trimmingBlanks().isEmpty else { throw CLIError.usage("calc needs an expression: taskctl calc 'now + 3d'") }
        var parser = Parser(tokens: try tokens(text, app: app), text: text)
        let value = try parser.expression()
        guard parser.position == parser.tokens.count else { throw CLIError.usage("calc: '\(text)' has more after the expression") }
        app.output.line(format(value, app: app))
    }

    static func format(_ value: Value, app: App) -> String {
        switch value {
        case .number(let n, _): return n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(format: "%g", n)
        case .date(let date): return TaskwarriorInformation.localISO(date, app: app)
        case .duration(let seconds):
            var t = Int64(seconds.rounded(.towardZero))
            guard t != 0 else { return "PT0S" }
            let sign = t < 0 ? "-" : ""
            t = abs(t)
            let s = t % 60, m = t / 60 % 60, h = t / 3_600 % 24, d = t / 86_400
            var text = sign + "P" + (d > 0 ? "\(d)D" : "")
            if h > 0 || m > 0 || s > 0 { text += "T" + (h > 0 ? "\(h)H" : "") + (m > 0 ? "\(m)M" : "") + (s > 0 ? "\(s)S" : "") }
            return text
        }
    }

    enum Token {
        case value(Value)
        case symbol(Character)
    }

    /// Words are values where they read as one whole (a number, a duration, a date such as
    /// `now+3d` or `2026-12-01`); otherwise they are split at operators and parentheses.
    static func tokens(_ text: String, app: App) throws -> [Token] {
        var result: [Token] = []
        for word in text.split(whereSeparator: \.isWhitespace).map(String.init) {
            if let value = classify(word, app: app) { result.append(.value(value)); continue }
            var current = ""
            func flush() throws {
                guard !current.isEmpty else { return }
                guard let value = classify(current, app: app) else { throw CLIError.usage("calc: '\(current)' is not a number, date or duration") }
                result.append(.value(value))
                current = ""
            }
            for character in word {
                if "+-*/()".contains(character) {
                    try flush()
                    result.append(.symbol(character))
                } else {
                    current.append(character)
                }
            }
            try flush()
        }
        guard result.count <= 1_000 else { throw CLIError.usage("calc: an expression of at most 1,000 terms") }
        return result
    }

    /// A word's value, or nil.
    static func classify(_ word: String, app: App) -> Value? {
        if let n = Double(word), word.first?.isNumber == true || word.first == "." {
            return .number(n, whole: !word.contains(".") && !word.lowercased().contains("e"))
        }
        if word.first?.isNumber == true || word.hasPrefix("P"), let seconds = FilterValue.seconds(Substring(word)) { return .duration(seconds) }
        let looksLikeDate = word.contains(where: \.isLetter) || word.range(of: #"^\d{4}-\d{2}-\d{2}"#, options: .regularExpression) != nil
        if looksLikeDate, let date = try? FilterValue(dates: app.dates).date(word) { return .date(date) }
        return nil
    }

    struct Parser {
        var tokens: [Token]
        let text: String
        var position = 0

        mutating func expression() throws -> Value {
            var left = try term()
            while position < tokens.count, case .symbol(let op) = tokens[position], op == "+" || op == "-" {
                position += 1
                left = try Calculator.apply(op, left, try term(), text: text)
            }
            return left
        }

        mutating func term() throws -> Value {
            var left = try factor()
            while position < tokens.count, case .symbol(let op) = tokens[position], op == "*" || op == "/" {
                position += 1
                left = try Calculator.apply(op, left, try factor(), text: text)
            }
            return left
        }

        mutating func factor(depth: Int = 0) throws -> Value {
            guard depth < 50, position < tokens.count else { throw CLIError.usage("calc: '\(text)' ends before its last term") }
            let token = tokens[position]
            position += 1
            switch token {
            case .symbol("("):
                let value = try expression()
                guard position < tokens.count, case .symbol(")") = tokens[position] else { throw CLIError.usage("calc: a '(' is not closed in '\(text)'") }
                position += 1
                return value
            case .symbol("-"):
                return try Calculator.apply("-", .number(0, whole: true), try factor(depth: depth + 1), text: text)
            case .symbol(let symbol):
                throw CLIError.usage("calc: '\(symbol)' where a value was expected in '\(text)'")
            case .value(let value):
                return value
            }
        }
    }

    static func apply(_ op: Character, _ a: Value, _ b: Value, text: String) throws -> Value {
        switch (a, b, op) {
        case (.number(let x, let wx), .number(let y, let wy), _):
            switch op {
            case "+": return .number(x + y, whole: wx && wy)
            case "-": return .number(x - y, whole: wx && wy)
            case "*": return .number(x * y, whole: wx && wy)
            default:
                guard y != 0 else { throw CLIError.usage("calc: division by zero in '\(text)'") }
                return wx && wy ? .number((x / y).rounded(.towardZero), whole: true) : .number(x / y, whole: false)
            }
        case (.date(let d), .duration(let s), "+"), (.duration(let s), .date(let d), "+"): return .date(d.addingTimeInterval(s))
        case (.date(let d), .duration(let s), "-"): return .date(d.addingTimeInterval(-s))
        case (.date(let x), .date(let y), "-"): return .duration(x.timeIntervalSince(y))
        case (.duration(let x), .duration(let y), "+"): return .duration(x + y)
        case (.duration(let x), .duration(let y), "-"): return .duration(x - y)
        case (.duration(let x), .number(let n, _), "*"), (.number(let n, _), .duration(let x), "*"): return .duration(x * n)
        case (.duration(let x), .number(let n, _), "/"):
            guard n != 0 else { throw CLIError.usage("calc: division by zero in '\(text)'") }
            return .duration(x / n)
        case (.number(0, _), .duration(let x), "-"): return .duration(-x)
        default: throw CLIError.usage("calc: '\(op)' cannot combine these values in '\(text)'")
        }
    }
}

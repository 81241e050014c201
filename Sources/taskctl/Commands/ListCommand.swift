import Foundation
import ObjectStore
import ObjectStoreModel

/// `taskctl list`: filters become one predicate, run by the framework; sorting, grouping and
/// the table happen here.
enum ListCommand {

    /// A tag filter: a tag of the task, or one of Taskwarrior's virtual tags (upper case):
    /// OVERDUE (due before now), TODAY, TOMORROW, WEEK (due this day, the next, this week,
    /// Monday to Sunday), DUE (due from today's start to 7 days from now), WAITING (hidden
    /// until a later date), ACTIVE (started).
    static func tagPredicate(_ tag: String, app: App) throws -> ObjectPredicate {
        let dates = DateParser(now: app.now, timeZone: app.timeZone)
        func due(from start: Date, to end: Date) throws -> ObjectPredicate {
            try ObjectPredicate(format: "dueDate >= %@ AND dueDate <= %@", .date(start), .date(end))
        }
        switch tag {
        case "OVERDUE": return try ObjectPredicate(format: "dueDate < %@", .date(app.now))
        case "TODAY": return try due(from: try dates.parse("sod"), to: try dates.parse("eod"))
        case "TOMORROW": return try due(from: try dates.parse("eod").addingTimeInterval(1), to: try dates.parse("tomorrow"))
        case "WEEK": return try due(from: try dates.parse("sow"), to: try dates.parse("eow"))
        case "DUE": return try due(from: try dates.parse("sod"), to: app.now.addingTimeInterval(7 * 86_400))
        case "WAITING": return try ObjectPredicate(format: "waitUntil > %@", .date(app.now))
        case "ACTIVE": return try ObjectPredicate("startedAt != nil")
        default: return try ObjectPredicate(format: "ANY tags.name ==[c] %@", .string(tag))
        }
    }

    static func run(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "list")
        // Taskwarrior's filter, before the command and after it: one expression.
        let filter = args.positional.isEmpty ? app.filter : try TaskFilter.parse(app.filter.words + args.positional)
        var clauses: [ObjectPredicate] = []
        let tags = (args.value("tag") ?? "").split(separator: ",").map { $0.trimmingBlanks() }.filter { !$0.isEmpty }
        let withoutTags = (args.value("untag") ?? "").split(separator: ",").map { $0.trimmingBlanks() }.filter { !$0.isEmpty }
        // Waiting tasks show where asked for (+WAITING, status:waiting).
        let waiting = tags.contains("WAITING") || args.value("status")?.lowercased() == "waiting" || filter.namesWaiting
        if let status = args.value("status") {
            // Taskwarrior's status: filter.
            switch status.lowercased() {
            case "pending": clauses.append(try app.pending())
            case "completed", "done": clauses.append(try ObjectPredicate("status == 'done'"))
            case "deleted": clauses.append(.or(try app.expired(), try ObjectPredicate("status == 'deleted'")))
            case "waiting": clauses.append(.and(try app.pending(), try ObjectPredicate(format: "waitUntil > %@", .date(app.now))))
            default: throw CLIError.usage("status:\(status): use pending, completed, deleted or waiting")
            }
        } else if filter.namesStatus && !args.has("all") && !args.has("done") {
            // The filter says which statuses it wants (status:completed, +DELETED).
        } else if args.has("all") {
            clauses.append(.and(try ObjectPredicate("status IN {'pending', 'done'}"), .not(try app.expired())))
        } else if args.has("done") {
            clauses.append(try ObjectPredicate("status == 'done'"))
        } else {
            clauses.append(try app.pending())
        }
        if let p = args.value("priority") { clauses.append(try ObjectPredicate(format: "priority == %d", .integer(try Priority.parse(p)))) }
        // A location's or project's name: the library's planner finds the objects of that
        // name first and tests each task's reference, without reading a project per task.
        if let l = args.value("location") { clauses.append(try Self.named("location", l, hierarchical: false)) }
        if let p = args.value("project") {
            // Projects are hierarchical, as in Taskwarrior: work includes work.code.
            clauses.append(try Self.named("project", p, hierarchical: true))
        }
        for t in tags { clauses.append(try tagPredicate(t, app: app)) }
        for t in withoutTags { clauses.append(.not(try tagPredicate(t, app: app))) }
        if let d = args.value("due-by") { clauses.append(try ObjectPredicate(format: "dueDate <= %@", .date(try app.parseDate(d)))) }
        if let p = args.value("project-not") {
            clauses.append(.not(try Self.named("project", p, hierarchical: true)))
        }
        if let text = args.value("text-contains") { clauses.append(try ObjectPredicate(format: "title CONTAINS[c] %@", .string(text))) }
        if args.has("overdue") { clauses.append(try ObjectPredicate("isOverdue == TRUE")) }
        if let d = args.value("due-before") { clauses.append(try ObjectPredicate(format: "dueDate < %@", .date(try app.parseDate(d)))) }
        if let d = args.value("due-after") { clauses.append(try ObjectPredicate(format: "dueDate > %@", .date(try app.parseDate(d)))) }
        if let text = args.value("where") { clauses.append(try userPredicate(text, app: app)) }
        let limit = try args.value("limit").map { text -> Int in
            guard let n = Int(text), n > 0 else { throw CLIError.usage("--limit needs a positive number, not '\(text)'") }
            return n
        } ?? (filter.limitsToPage ? max(1, app.terminal.height - 5) : filter.limit)
        let sort = try (args.value("sort") ?? app.config.sort).map(ListSort.parse) ?? []
        let groupBy = args.value("group-by")  // checked by Arguments (OptionValue)

        let context = try app.context(readOnly: true)
        if let typo = app.commandTypo {
            let unknown = "unknown command '\(typo.word)' (did you mean '\(typo.command)'?)"
            guard let search = try filter.predicate(in: FilterScope(app: app, context: context)),
                  try context.count(for: FetchRequest(entityName: "Task", predicate: search)) > 0 else {
                throw CLIError.usage("\(unknown); no task mentions '\(typo.word)' either; see taskctl help")
            }
        }
        if let compiled = try filter.predicate(in: FilterScope(app: app, context: context)) { clauses.append(compiled) }
        let predicate = clauses.dropFirst().reduce(clauses.first ?? .constant(true)) { .and($0, $1) }
        // Waiting tasks (Taskwarrior's wait:) stay out of the pending list until their date.
        let hidesWaiting = !args.has("all") && !args.has("done") && !waiting
        if args.has("json") && groupBy == nil {
            try streamJSON(context, where: predicate, hidesWaiting: hidesWaiting, sort: sort, limit: limit, app: app)
            return
        }
        var views: [TaskView]
        if groupBy == nil && !args.has("json") {
            guard let general = try writePlainList(context, where: predicate, hidesWaiting: hidesWaiting, sort: sort, limit: limit, app: app) else { return }
            views = general
        } else {
            views = try TaskView.fetch(context, where: predicate, hidesWaiting: hidesWaiting, app: app)
        }
        views = sorted(views, by: sort)
        app.keptUntilExit.append(views)
        // Groups count every matching task; --limit caps the rows shown, after grouping.
        let groups = groupBy.map { group(views, by: $0, app: app) }
        if let limit { views = Array(views.prefix(limit)) }

        if args.has("json"), let groups {
            var budget = limit ?? Int.max
            var items: [String] = []
            for (title, members) in groups where budget > 0 {
                let shown = Array(members.prefix(budget))
                budget -= shown.count
                items.append("{\"group\": \(JSONText.quote(title)), \"count\": \(members.count), \"tasks\": \(TaskView.jsonArray(shown))}")
            }
            app.output.line(items.isEmpty ? "[]" : "[\n" + items.joined(separator: ",\n") + "\n]")
            return
        }
        if views.isEmpty {
            let anyTask = try context.count(for: FetchRequest(entityName: "Task")) > 0
            app.output.line(anyTask ? "no tasks" : "no tasks yet: add one with taskctl add \"Buy milk\" --due tomorrow (taskctl help for more)")
            return
        }
        if let groups, let groupBy {
            // One table for every group, so columns line up across groups; the grouped
            // column is the groups' titles, not a column.
            var budget = limit ?? Int.max
            var shown: [(title: String, count: Int, views: [TaskView])] = []
            for (title, members) in groups where budget > 0 {
                let rows = Array(members.prefix(budget))
                budget -= rows.count
                shown.append((title, members.count, rows))
            }
            let omitted = ["location": "Location", "project": "Project", "priority": "Pri"][groupBy]
            let lines = render(shown.flatMap(\.views), app: app, indent: "  ", omitting: omitted)
            var next = 1
            for group in shown {
                app.output.line(app.terminal.paint("\(Terminal.visible(group.title)) (\(group.count))", .bold))
                app.output.line(lines[0])
                for line in lines[next..<min(lines.count, next + group.views.count)] { app.output.line(line) }
                app.output.line()
                next += group.views.count
            }
        } else {
            try write(views, app: app)
        }
    }

    /// Names people see in taskctl's output that differ from the model's.
    static let aliases = ["text": "title", "due": "dueDate"]

    /// The user's predicate, type-checked against Task, with errors pointing at the column.
    /// `text` and `due` may be used for the model's `title` and `dueDate`.
    static func userPredicate(_ text: String, app: App) throws -> ObjectPredicate {
        let predicate: ObjectPredicate
        do {
            predicate = aliased(try ObjectPredicate(text))
        } catch {
            let caret = String(repeating: " ", count: max(0, error.column - 1)) + "^"
            throw CLIError.usage("bad --where predicate at column \(error.column): \(error.message)\n\(text)\n\(caret)")
        }
        do {
            try PredicateTypeChecker(model: try App.modelDirectory().currentModel()).check(predicate, on: "Task")
        } catch let error as PredicateTypeError {
            let column = error.column(in: text)
            let pointer = column.map { "\n\(text)\n" + String(repeating: " ", count: $0 - 1) + "^" } ?? ""
            throw CLIError.usage("bad --where predicate: \(error.message)\(pointer)")
        }
        return predicate
    }

    static func aliased(_ predicate: ObjectPredicate) -> ObjectPredicate {
        switch predicate {
        case .constant: return predicate
        case .not(let p): return .not(aliased(p))
        case .and(let a, let b): return .and(aliased(a), aliased(b))
        case .or(let a, let b): return .or(aliased(a), aliased(b))
        case .comparison(var c):
            c.lhs = aliased(c.lhs)
            c.rhs = aliased(c.rhs)
            return .comparison(c)
        }
    }

    static func aliased(_ expression: ObjectExpression) -> ObjectExpression {
        switch expression {
        case .keyPath(.evaluatedObject, var path):
            if let first = path.first, let name = aliases[first] { path[0] = name }
            return .keyPath(.evaluatedObject, path)
        case .keyPath(let base, let path): return .keyPath(aliased(base), path)
        case .array(let items): return .array(items.map(aliased))
        case .arithmetic(let op, let a, let b): return .arithmetic(op, aliased(a), aliased(b))
        case .negate(let e): return .negate(aliased(e))
        case .function(let name, let args): return .function(name, args.map(aliased))
        case .index(let e, let i): return .index(aliased(e), i)
        case .subquery(let c, let v, let p): return .subquery(aliased(c), variable: v, aliased(p))
        case .cast(let e, let t): return .cast(aliased(e), t)
        default: return expression
        }
    }

    /// `relationship`'s name is `name` ignoring case (or, `hierarchical`, begins with
    /// `name.`: work.code is in work).
    static func named(_ relationship: String, _ name: String, hierarchical: Bool) throws -> ObjectPredicate {
        hierarchical
            ? try ObjectPredicate(format: "%K ==[c] %@ OR %K BEGINSWITH[c] %@", .string(relationship + ".name"), .string(name), .string(relationship + ".name"), .string(name + "."))
            : try ObjectPredicate(format: "%K ==[c] %@", .string(relationship + ".name"), .string(name))
    }

    /// Sorts by the keys, then by the default order: most urgent first (Taskwarrior's
    /// urgency), then due soonest (no due date last), priority high first, id.
    /// `list --json` without groups, written as it goes. Up to a batch of matches, as the
    /// table is: every view made, sorted, written. Past that, in two passes, so memory does
    /// not grow with the matches' views: the first reads each match's sort keys and lets
    /// the view go; the second makes the views again in the sorted order, a batch at a time
    /// (the read-only context emptied after each), rendered on a second thread while the
    /// next batch is read (``RenderPipeline``).
    static func streamJSON(_ context: ManagedObjectContext, where predicate: ObjectPredicate, hidesWaiting: Bool,
                           sort: [(key: String, descending: Bool)], limit: Int?, app: App) throws {
        let batch = 10_000
        var views: [TaskView] = []
        // The tasks set aside: their keys (their IDs are made again from the first one's), and
        // their sort keys (the default order's as plain arrays).
        var keys: [Int64] = []
        var first: ObjectID?
        var others: [Int: ObjectID] = [:]  // IDs that are not a key of the first one's entity
        var defaultKeys = DefaultOrderKeys()
        var columns: [SortColumn] = []
        func setAside() {
            for view in views {
                let id = view.objectID
                if first == nil { first = id }
                if let key = id.primaryKey, let first, id == first.withKey(.permanent(key)) {
                    keys.append(key)
                } else {
                    others[keys.count] = id
                    keys.append(0)
                }
            }
            if sort.isEmpty {
                for view in views { defaultKeys.append(view) }
            } else {
                let made = sortColumns(views, by: sort)
                if columns.isEmpty { columns = made } else { for index in columns.indices { columns[index].append(made[index]) } }
            }
            views.removeAll(keepingCapacity: true)
        }
        try TaskView.forEach(context, where: predicate, app: app) { view in
            if hidesWaiting && (view.wait ?? .distantPast) > app.now { return }
            views.append(view)
            if views.count == batch { setAside() }
        }
        if keys.isEmpty {
            views = sorted(views, by: sort)
            if let limit { views = Array(views.prefix(limit)) }
            if views.isEmpty {
                app.output.line("[]")
                return
            }
            app.output.line("[")
            for (index, view) in views.enumerated() { app.output.line("  " + view.json + (index == views.count - 1 ? "" : ",")) }
            app.output.line("]")
            return
        }
        setAside()
        guard let first else { return }
        func id(at position: Int) -> ObjectID { others[position] ?? first.withKey(.permanent(keys[position])) }
        var order = sort.isEmpty ? defaultKeys.order() : self.order(columns, count: keys.count)
        if let limit { order = Array(order.prefix(limit)) }
        context.reset()
        app.output.line("[")
        var written = 0
        let pipeline = RenderPipeline<TaskView>(threaded: order.count > batch, render: { "  " + $0.json }) { line in
            written += 1
            app.output.line(written < order.count ? line + "," : line)
        }
        for start in stride(from: 0, to: order.count, by: batch) {
            let chunk = try context.faults(for: order[start..<min(start + batch, order.count)].map(id(at:)))
            let views = try TaskView.of(chunk, app: app)
            context.reset()
            try pipeline.add(views)
            try app.output.flush(above: 1 << 20)
        }
        try pipeline.finish()
        app.output.line("]")
    }

    /// The plain table (``writePlain(_:app:)``) of a list without groups, written from rows
    /// kept compact (``PlainRows``) as the matches are read, the views let go: a view per
    /// task held 700 bytes of a list of 900,000. Nil when written; otherwise the matching
    /// views for the general table (no plain table: colour, a done task, text that is not
    /// printable ASCII, columns wider than the terminal). Those are kept while they are
    /// few; a longer list is read again for them.
    static func writePlainList(_ context: ManagedObjectContext, where predicate: ObjectPredicate, hidesWaiting: Bool,
                               sort: [(key: String, descending: Bool)], limit: Int?, app: App) throws -> [TaskView]? {
        guard !app.terminal.useColor else { return try TaskView.fetch(context, where: predicate, hidesWaiting: hidesWaiting, app: app) }
        let batch = 1_000
        var rows = PlainRows(relative: app.relative)
        // Every view while there are few; past that, the current batch for the sort columns.
        var views: [TaskView] = []
        var setAside = false
        var columns: [SortColumn] = []
        func setAsideViews() {
            if !sort.isEmpty {
                let made = sortColumns(views, by: sort)
                if columns.isEmpty { columns = made } else { for index in columns.indices { columns[index].append(made[index]) } }
            }
            views.removeAll(keepingCapacity: true)
            setAside = true
        }
        var plain = true
        try TaskView.forEach(context, where: predicate, app: app) { view in
            if hidesWaiting && (view.wait ?? .distantPast) > app.now { return }
            if plain { plain = rows.append(view) }
            if !plain && setAside { return }  // read again below
            if plain && setAside && sort.isEmpty { return }  // the rows have all the default order needs
            views.append(view)
            if plain && views.count == batch { setAsideViews() }
        }
        if plain {
            if setAside && !views.isEmpty { setAsideViews() }
            var order = sort.isEmpty ? rows.defaultOrder() : setAside ? self.order(columns, count: rows.count)
                : order(sortColumns(views, by: sort), count: views.count)
            if let limit { order = Array(order.prefix(limit)) }
            app.keptUntilExit.append(rows)
            if try rows.write(order, app: app) { return nil }
        }
        return setAside ? try TaskView.fetch(context, where: predicate, hidesWaiting: hidesWaiting, app: app) : views
    }

    /// One sort key's value per view, read once: comparing copies of views (a dozen fields
    /// each) cost a fifth of a 10,000-task list. With whether the key sorts descending.
    struct SortColumn {
        enum Values {
            case numbers([Double?])
            case texts([String?])
        }
        var values: Values
        let descending: Bool

        mutating func append(_ other: SortColumn) {
            switch (values, other.values) {
            case (.numbers(var a), .numbers(let b)):
                values = .numbers([])
                a += b
                values = .numbers(a)
            case (.texts(var a), .texts(let b)):
                values = .texts([])
                a += b
                values = .texts(a)
            default: break
            }
        }
    }

    /// The columns `sorted(_:by:)` orders by: the keys given, then the default order
    /// (urgency, due date, priority, id) to break ties.
    static func sortColumns(_ views: [TaskView], by keys: [(key: String, descending: Bool)]) -> [SortColumn] {
        func column(_ key: String) -> SortColumn.Values {
            switch key {
            case "id": return .numbers(views.map { Double($0.id) })
            case "text": return .texts(views.map { $0.text.lowercased() })
            case "priority": return .numbers(views.map { Double($0.priority) })
            case "due": return .numbers(views.map { $0.due?.timeIntervalSinceReferenceDate })
            case "location": return .texts(views.map { $0.location?.lowercased() })
            case "project": return .texts(views.map { $0.project?.lowercased() })
            case "created": return .numbers(views.map { $0.created?.timeIntervalSinceReferenceDate })
            case "urgency": return .numbers(views.map(\.urgency))
            default: return .texts(views.map(\.status))
            }
        }
        let all = keys + [("urgency", true), ("due", false), ("priority", true), ("id", false)]
        return all.map { SortColumn(values: column($0.key), descending: $0.descending) }
    }

    /// The positions of `count` rows in the columns' order (missing values last, whichever
    /// the direction).
    static func order(_ columns: [SortColumn], count: Int) -> [Int] {
        func compare<T: Comparable>(_ x: T?, _ y: T?, descending: Bool) -> ComparisonResult {
            switch (x, y) {
            case (nil, nil): return .orderedSame
            case (nil, _): return .orderedDescending
            case (_, nil): return .orderedAscending
            case (let x?, let y?):
                if x == y { return .orderedSame }
                return (x < y) != descending ? .orderedAscending : .orderedDescending
            }
        }
        return (0..<count).sorted { i, j in
            for column in columns {
                let result: ComparisonResult
                switch column.values {
                case .numbers(let values): result = compare(values[i], values[j], descending: column.descending)
                case .texts(let values): result = compare(values[i], values[j], descending: column.descending)
                }
                if result != .orderedSame { return result == .orderedAscending }
            }
            return false
        }
    }

    static func sorted(_ views: [TaskView], by keys: [(key: String, descending: Bool)]) -> [TaskView] {
        if keys.isEmpty { return DefaultOrderKeys(views).order().map { views[$0] } }
        return order(sortColumns(views, by: keys), count: views.count).map { views[$0] }
    }

    static func group(_ views: [TaskView], by key: String, app: App) -> [(String, [TaskView])] {
        var order: [String] = []
        var groups: [String: [TaskView]] = [:]
        let calendar = app.relative.calendar
        func bucket(_ view: TaskView) -> String {
            switch key {
            case "location": return view.location ?? "No location"
            case "project": return view.project ?? "No project"
            case "priority": return Priority.name(view.priority).capitalized
            default:
                guard let due = view.due else { return "No due date" }
                if due < app.now { return "Overdue" }
                let days = calendar.dateComponents([.day], from: calendar.startOfDay(for: app.now), to: calendar.startOfDay(for: due)).day ?? 0
                switch days {
                case 0: return "Today"
                case 1: return "Tomorrow"
                case 2...6: return "This week"
                default: return "Later"
                }
            }
        }
        for view in views {
            let name = bucket(view)
            if groups[name] == nil { order.append(name) }
            groups[name, default: []].append(view)
        }
        // Sections in a meaningful order.
        let ranks: [String: [String]] = [
            "priority": ["High", "Medium", "Low", "None"],
            "due": ["Overdue", "Today", "Tomorrow", "This week", "Later", "No due date"],
        ]
        if let rank = ranks[key] {
            order.sort { (rank.firstIndex(of: $0) ?? 99) < (rank.firstIndex(of: $1) ?? 99) }
        } else {
            order.sort { a, b in
                let missing = ["No location", "No project"]
                if missing.contains(a) != missing.contains(b) { return missing.contains(b) }
                return a.lowercased() < b.lowercased()
            }
        }
        return order.map { ($0, groups[$0] ?? []) }
    }

    static let priorityLetters = ["", "L", "M", "H"]

    /// The Due column: when the task is due, or for a done task (never overdue) when it was
    /// done.
    static func when(_ view: TaskView, _ relative: RelativeDate) -> String {
        guard view.status == "done" else { return view.due.map(relative.describe) ?? "" }
        return view.completed.map { "done " + relative.day($0) } ?? "done"
    }

    /// The table's lines: the header first, then a line per view.
    static func render(_ views: [TaskView], app: App, indent: String, omitting omitted: String?) -> [String] {
        let (table, paint) = table(views, app: app, omitting: omitted)
        var lines = table.render(width: app.terminal.width - indent.count, style: paint)
        if !lines.isEmpty { lines[0] = app.terminal.paint(lines[0], .bold) }
        return indent.isEmpty ? lines : lines.map { indent + $0 }
    }

    /// The table written straight to the output, line by line.
    static func write(_ views: [TaskView], app: App) throws {
        if try writePlain(views, app: app) { return }
        let (table, paint) = table(views, app: app, omitting: nil)
        app.output.reserve(lines: views.count + 1, width: 100)
        table.render(width: app.terminal.width, style: paint, header: { app.output.line(app.terminal.paint($0, .bold)) }, row: { app.output.line(bytes: $0) })
    }

    /// The table ``write(_:app:)`` would write, written from the views' fields as bytes when
    /// it is the plain case: no colour, every cell printable ASCII (no done task's check
    /// mark), and every column fitting the width, so nothing is cut, dropped or shown in
    /// caret notation. The same lines as ``Table`` makes, without a string per cell and an
    /// array per row (making those was a fifth of listing 100,000 tasks). False, having
    /// written nothing, in any other case.
    static func writePlain(_ views: [TaskView], app: App) throws -> Bool {
        guard !app.terminal.useColor else { return false }
        var rows = PlainRows(relative: app.relative)
        for view in views { guard rows.append(view) else { return false } }
        return try rows.write(Array(0..<rows.count), app: app)
    }

    /// The table of the views and how its cells are painted.
    static func table(_ views: [TaskView], app: App, omitting omitted: String?) -> (Table, ((Int, Int, String) -> String)?) {
        let relative = app.relative
        let showProject = views.contains { $0.project != nil }
        var headers = ["ID", "Pri", "Due", "Location"]
        if showProject { headers.append("Project") }
        headers.append("Text")
        let keep = headers.map { $0 != omitted }
        let rows: [[String]] = views.map { view in
            let when = Self.when(view, relative)
            var row: [String] = []
            row.reserveCapacity(6)
            row.append(String(view.id))
            row.append(priorityLetters[Int(min(3, max(0, view.priority)))])
            row.append(when)
            row.append(view.location ?? "")
            if showProject { row.append(view.project ?? "") }
            var text = view.text
            if view.status == "done" { text = "✓ " + text }
            if !view.tags.isEmpty { text += " " + view.tags.map { "#" + $0 }.joined(separator: " ") }
            row.append(text)
            return omitted == nil ? row : zip(row, keep).filter(\.1).map(\.0)
        }
        let names = zip(headers, keep).filter(\.1).map(\.0)
        // On a narrow terminal: project first, then location, then priority make room.
        app.keptUntilExit.append(rows)
        let table = Table(headers: names, rows: rows, flexible: names.count - 1,
                          droppable: ["Project", "Location", "Pri"].compactMap { names.firstIndex(of: $0) })
        // Per row, what the colours depend on (not a copy of the row's view per cell).
        let overdue = views.map(\.overdue), high = views.map { $0.priority == 3 }, done = views.map { $0.status == "done" }
        let dueColumn = names.firstIndex(of: "Due"), priorityColumn = names.firstIndex(of: "Pri")
        let paint: ((Int, Int, String) -> String)? = !app.terminal.useColor ? nil : { row, column, cell in
            if column == dueColumn && overdue[row] { return app.terminal.paint(cell, .red) }
            if column == priorityColumn && high[row] { return app.terminal.paint(cell, .yellow) }
            if done[row] { return app.terminal.paint(cell, .dim) }
            return cell
        }
        return (table, paint)
    }
}

import Foundation
import Testing
import ObjectStore
import ObjectStoreModel
@testable import taskctl

/// `list` writes its plain tables (no colour, printable ASCII, fitting the width) from the
/// views' fields; those lines must be the ones `Table` makes, at every width.
@Suite struct ListTableTests {
    static let names = TaskView.Slots.names

    /// A view with the given fields (relationships filled in afterwards, as a list's are).
    static func view(id: Int64, title: String, priority: Int64, due: Date?, status: String = "pending", now: Date) throws -> TaskView {
        let values: [String: Value] = ["title": .string(title), "priority": .integer(priority), "status": .string(status),
                                       "dueDate": due.map(Value.date) ?? .null]
        let slots = TaskView.Slots { names.firstIndex(of: $0) }
        return try TaskView(id: ObjectID(entityName: "Task", storeIdentifier: "S", key: .permanent(id)), now: now, slots: slots, context: nil,
                            value: { values[names[$0]] ?? .null }, ids: { _ in [] })
    }

    static func tableLines(_ views: [TaskView], app: App) -> String {
        let (table, paint) = ListCommand.table(views, app: app, omitting: nil)
        var lines = table.render(width: app.terminal.width, style: paint)
        if !lines.isEmpty { lines[0] = app.terminal.paint(lines[0], .bold) }
        return lines.map { $0 + "\n" }.joined()
    }

    @Test func plainTablesAreTheTablesLines() throws {
        let environment = ["TZ": "UTC", "TASKCTL_NOW": "2026-11-22T12:00:00Z", "NO_COLOR": "1", "TASKCTL_STORE": "/nonexistent/tasks.store"]
        let now = try #require(ISO8601.parse("2026-11-22T12:00:00Z"))
        var views: [TaskView] = []
        for n in 0..<200 {
            let due: Date? = n % 3 == 0 ? nil : now.addingTimeInterval(Double(n % 40 - 20) * 43_200)
            let view = try Self.view(id: Int64(n * 37 % 1000 + 1), title: "Task \(n)" + String(repeating: " word", count: n % 9) + (n % 17 == 0 ? "  " : ""),
                                     priority: Int64(n % 4), due: due, now: now)
            if n % 5 == 0 { view.location = ["Home", "Office", "A much longer place name"][n % 3] }
            if n % 7 == 0 { view.project = "work.part\(n % 3)" }
            if n % 4 == 0 { view.tags = ["next", "t\(n)"] }
            views.append(view)
        }
        var written = 0
        for columns in [nil, "200", "100", "80", "60", "45", "30"] {
            var env = environment
            if let columns { env["COLUMNS"] = columns }
            for subset in [views, Array(views.prefix(3)), views.filter { $0.project == nil }] {
                let app = try App(environment: env, storePath: nil)
                if try ListCommand.writePlain(subset, app: app) {
                    if columns == nil || columns == "200" { written += 1 }
                    #expect(app.output.out == Self.tableLines(subset, app: try App(environment: env, storePath: nil)), "COLUMNS=\(columns ?? "-")")
                } else {
                    #expect(app.output.out.isEmpty, "nothing written when the plain table does not apply")
                }
            }
        }
        #expect(written == 6, "the plain table applies to a pipe and to 200 columns")
        // Text that is not printable ASCII, and a done task's check mark, take the general table.
        let app = try App(environment: environment, storePath: nil)
        #expect(try !ListCommand.writePlain([try Self.view(id: 1, title: "Café", priority: 0, due: nil, now: now)], app: app))
        #expect(try !ListCommand.writePlain([try Self.view(id: 1, title: "tab\there", priority: 0, due: nil, now: now)], app: app))
        #expect(try !ListCommand.writePlain([try Self.view(id: 1, title: "Done", priority: 0, due: nil, status: "done", now: now)], app: app))
        #expect(app.output.out.isEmpty)
    }

    /// A plain table (no colour) of more than a thousand tasks is written from compact rows
    /// and the tasks are let go; when a task read late needs the general table (text that is
    /// not printable ASCII, a done task's check mark), the tasks are read again for it. Either
    /// way the lines are the table `Table` makes of the list's tasks in its order.
    /// The plain table finds a due date's text by its quarter hour once a date of that
    /// quarter hour had it; hours overdue today differ within a quarter hour and are made
    /// for each date.
    @Test func dueTextsWithinAQuarterHourAreEachDatesOwn() throws {
        let environment = ["TZ": "UTC", "TASKCTL_NOW": "2026-11-22T12:07:00Z", "NO_COLOR": "1", "TASKCTL_STORE": "/nonexistent/tasks.store"]
        let now = try #require(ISO8601.parse("2026-11-22T12:07:00Z"))
        // 10:06 and 10:08 share the quarter hour from 10:00: 2.02 and 1.98 hours overdue.
        // Two days ahead, 09:01 and 09:14 share one too, and one text.
        let dues = ["2026-11-22T10:06:00Z", "2026-11-22T10:08:00Z", "2026-11-22T10:09:00Z", "2026-11-24T09:01:00Z", "2026-11-24T09:14:00Z",
                    "2026-11-21T10:06:00Z", "2026-11-21T10:08:00Z", "2026-11-22T12:06:30Z"]
        var views: [TaskView] = []
        for (n, text) in dues.enumerated() {
            let due: Date = try #require(ISO8601.parse(text))
            views.append(try Self.view(id: Int64(n + 1), title: "Task \(n)", priority: 0, due: due, now: now))
        }
        let app = try App(environment: environment, storePath: nil)
        #expect(try ListCommand.writePlain(views, app: app))
        let out = app.output.out
        #expect(out == Self.tableLines(views, app: try App(environment: environment, storePath: nil)))
        func line(_ title: String) -> String { out.split(separator: "\n").first { $0.hasSuffix(title) }.map(String.init) ?? "" }
        #expect(line("Task 0").contains("2h overdue") && line("Task 1").contains("1h overdue") && line("Task 2").contains("1h overdue"), "\(out)")
        #expect(line("Task 3").contains("in 2 days") && line("Task 4").contains("in 2 days"), "\(out)")
        #expect(line("Task 5").contains("1 day overdue") && line("Task 6").contains("1 day overdue"), "\(out)")
        #expect(line("Task 7").contains("just overdue"), "\(out)")
    }

    @Test func aLongListIsTheTableOfItsTasksWhicheverTableWritesIt() throws {
        let t = try TaskctlRunner()
        let count = 1_500
        var lines: [String] = []
        for i in 0..<count {
            let text = "Task \(i)"
            let status = i % 7 == 3 ? "completed\",\"end\":\"20261105T000000Z" : "pending"
            let due = i % 5 == 0 ? "" : #","due":"202611\#(10 + i % 17)T000000Z""#
            lines.append(#"{"description":"\#(text)","status":"\#(status)","entry":"20261101T000000Z","uuid":"\#(UUID().uuidString.lowercased())"\#(due)}"#)
        }
        let file = t.directory.appendingPathComponent("many.json")
        try Data(("[" + lines.joined(separator: ",") + "]").utf8).write(to: file)
        #expect(try t.ok("import", file.path).contains("\(count) added"))
        // Added last, so read last: after the first thousand rows were let go.
        try t.ok("add", "Café late")
        let app = try App(environment: t.environment, storePath: nil)
        let context = try app.context(readOnly: true)
        func expected(_ predicate: ObjectPredicate) throws -> String {
            ListTableTests.tableLines(ListCommand.sorted(try TaskView.fetch(context, where: predicate, hidesWaiting: true, app: app), by: []), app: app)
        }
        // The pending tasks, the last with an accent: read again for the general table.
        let pending = try t.ok("list")
        #expect(pending == (try expected(try app.pending())))
        #expect(pending.contains("Café late") && pending.split(separator: "\n").count == count - count / 7 + 2)
        // Without it, the plain table; with done tasks (--all), the general one again.
        let plain = try t.ok("list", "--where", "text BEGINSWITH 'Task'")
        #expect(plain == (try expected(.and(try app.pending(), try ObjectPredicate("title BEGINSWITH 'Task'")))))
        #expect(!plain.contains("Café"))
        let all = try t.ok("list", "--all")
        #expect(all.contains("✓ Task 3") && all.split(separator: "\n").count == count + 2)
    }
}

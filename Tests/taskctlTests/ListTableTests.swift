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
}

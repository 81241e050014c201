import Foundation
import ObjectStore
import ObjectStoreModel

/// `taskctl locations` and `taskctl location add|rename|delete`.
enum LocationCommands {
    static func list(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "locations")
        try args.allowWords(0, command: "locations")
        let context = try app.context(readOnly: true)
        let locations = try context.fetch(FetchRequest(entityName: "Location", sortDescriptors: [SortKey("name", comparison: .localized)]))
        var rows: [(name: String, pending: Int, high: [TaskView])] = []
        let highProperty = try App.modelDirectory().currentModel().entity(named: "Location")?.fetchedProperty(named: "highPriTasks")
        // The pending tasks of every location, counted in one read of the tasks (a location's
        // tasks are derived from the tasks' locations).
        var pending: [ObjectID: Int] = [:]
        if !locations.isEmpty {
            let request = FetchRequest(entityName: "Task", predicate: try ObjectPredicate("status == 'pending' AND location != nil"))
            for row in try context.fetchValues(request, properties: ["location"]) {
                if case .toOne(let id?) = row.values[0] { pending[id, default: 0] += 1 }
            }
        }
        for location in locations {
            guard case .string(let name) = try location.value(forKey: "name") else { continue }
            // The model's fetched property: high-priority tasks of this location.
            let high = try highProperty.map { try context.fetchedPropertyObjects($0, of: location) } ?? []
            rows.append((name, pending[location.objectID] ?? 0, try high.filter { try $0.value(forKey: "status") == "pending" }.map { try TaskView($0, app: app) }))
        }
        if args.has("json") {
            let items = rows.map { row in
                "{\"name\": \(JSONText.quote(row.name)), \"pending\": \(row.pending), \"highPriority\": [\(row.high.map { String($0.id) }.joined(separator: ", "))]}"
            }
            app.output.line(items.isEmpty ? "[]" : "[\n  " + items.joined(separator: ",\n  ") + "\n]")
            return
        }
        if rows.isEmpty {
            app.output.line("no locations; add one with taskctl location add NAME or taskctl add TEXT --location NAME")
            return
        }
        let table = Table(headers: ["Location", "Pending", "High priority"], rows: rows.map { row in
            [row.name, String(row.pending), row.high.map { "\($0.id) \($0.text)" }.joined(separator: "; ")]
        }, flexible: 2)
        for (index, line) in table.render(width: app.terminal.width).enumerated() {
            app.output.line(index == 0 ? app.terminal.paint(line, .bold) : line)
        }
    }

    static func run(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "location")
        guard let action = args.positional.first else { throw CLIError.usage(Help.commands["location"] ?? "usage: taskctl location add|rename|delete") }
        let names = Array(args.positional.dropFirst()).map { $0.trimmingBlanks() }
        let context = try app.context()
        var recorder = ChangeRecorder(command: "location \(action)")
        switch action {
        case "add":
            guard names.count == 1, !names[0].isEmpty else { throw CLIError.usage("usage: taskctl location add NAME") }
            if try app.location(named: names[0], in: context, create: false) != nil {
                throw CLIError.usage("there is already a location named \(names[0])")
            }
            // Inserted, not looked up again: a location another process added meanwhile must
            // make this save fail (the store checks names under its lock), not be "added"
            // twice; so no upsert here (which the merging policy would do).
            context.mergePolicy = .error
            let location = try context.insertObject(entityName: "Location")
            try location.setValue(.string(names[0]), forKey: "name")
            try recorder.save(context, app: app)
            app.output.line("added location \(names[0])")
        case "rename":
            guard names.count == 2, !names[1].isEmpty else { throw CLIError.usage("usage: taskctl location rename OLD NEW") }
            guard let location = try app.location(named: names[0], in: context, create: false) else {
                throw CLIError.usage("no location named \(names[0]); see taskctl locations")
            }
            if let other = try app.location(named: names[1], in: context, create: false), other !== location {
                throw CLIError.usage("there is already a location named \(names[1])")
            }
            try location.setValue(.string(names[1]), forKey: "name")
            try recorder.save(context, app: app)
            app.output.line("renamed location \(names[0]) to \(names[1])")
        case "delete":
            guard names.count == 1 else { throw CLIError.usage("usage: taskctl location delete NAME [--with-tasks]") }
            guard let location = try app.location(named: names[0], in: context, create: false) else {
                throw CLIError.usage("no location named \(names[0]); see taskctl locations")
            }
            let tasks = try location.objects(forKey: "tasks")
            for task in tasks {
                try recorder.willChange(task: task)
                if args.has("with-tasks") {
                    try task.setValue("deleted", forKey: "status")
                    try task.setValue(.null, forKey: "completedAt")
                }
            }
            context.delete(location)
            try recorder.save(context, app: app)
            let what = args.has("with-tasks") ? "and its \(tasks.count) task(s)" : "(\(tasks.count) task(s) now have no location)"
            app.output.line("deleted location \(names[0]) \(what)")
        default:
            throw CLIError.usage("unknown location action '\(action)'; use add, rename or delete")
        }
    }
}

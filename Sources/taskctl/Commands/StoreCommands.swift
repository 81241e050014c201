import Foundation
import ObjectStore
import ObjectStoreModel

/// `taskctl store info|check` and `taskctl migrate`.
enum StoreCommands {
    /// The size of the store's file: the file a symbolic link names, not the link.
    static func storeFileSize(_ app: App) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: app.storeURL.resolvingSymlinksInPath().path)[.size] as? Int) ?? 0
    }

    static func run(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "store")
        try args.allowWords(1, command: "store")
        switch args.positional.first {
        case "info": try info(args, app)
        case "check": try check(app)
        case "compact":
            let context = try app.context()
            guard StoreType.forFile(app.storeURL) == .binary else {
                app.output.line("a JSON store is rewritten whole on every save; nothing to compact")
                return
            }
            let before = storeFileSize(app)
            try context.coordinator.compactStore()
            app.output.line("compacted: \(before) -> \(storeFileSize(app)) bytes")
        case "repair":
            let context = try app.context()
            if let last = try context.coordinator.dropHistoryThroughLastUndecodableTransaction() {
                app.output.line("repaired: the history up to transaction #\(last), which did not decode, was dropped (undo and log reach back to #\(last + 1)); every task is as it was")
            } else {
                app.output.line("nothing to repair: every transaction of the history decodes")
            }
        default: throw CLIError.usage("usage: taskctl store info | taskctl store check | taskctl store compact | taskctl store repair")
        }
    }

    static func info(_ args: Arguments, _ app: App) throws {
        let context = try app.context(readOnly: true)
        let store = context.coordinator.store
        let format = StoreType.forFile(app.storeURL) == .json ? "json" : "binary"
        let size = storeFileSize(app)
        let model = context.model
        var counts: [(String, Int)] = []
        for entity in model.entities { counts.append((entity.name, try store.objectIDs(ofEntity: entity.name).count)) }
        let version = store.metadata?.modelVersionName ?? "?"
        if args.has("json") {
            app.output.line("{\"path\": \(JSONText.quote(app.storeURL.path)), \"format\": \(JSONText.quote(format)), \"modelVersion\": \(JSONText.quote(version)), "
                + "\"size\": \(size), \"storeUUID\": \(JSONText.quote(store.identifier)), \"objects\": {\(counts.map { "\(JSONText.quote($0.0)): \($0.1)" }.joined(separator: ", "))}}")
            return
        }
        app.output.line("path:          \(app.storeURL.path)")
        app.output.line("format:        \(format)")
        app.output.line("model version: \(version)")
        app.output.line("store UUID:    \(store.identifier)")
        app.output.line("size:          \(size) bytes")
        for (name, count) in counts { app.output.line("\(name.lowercased())s:".padding(toLength: 15, withPad: " ", startingAt: 0) + String(count)) }
    }

    /// Reads every row and checks it against the model (types, required values, validation
    /// rules, date range, relationship destinations and counts), every reference and
    /// inverse, and uniqueness across the store.
    static func check(_ app: App) throws {
        let context = try app.context(readOnly: true)
        let report: IntegrityReport
        do {
            report = try context.coordinator.checkIntegrity()
        } catch let error as StoreError {
            throw CLIError.store(error.description)
        }
        let problems = report.problems
        if !problems.isEmpty {
            throw CLIError.store("the store has \(problems.count) problem(s):\n" + problems.sorted().prefix(50).joined(separator: "\n"))
        }
        app.output.line("ok: \(report.objectCount) objects, every value valid for the model, every reference and inverse consistent, unique values unique, checksums verified")
    }

    static func migrate(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "migrate")
        try args.allowWords(0, command: "migrate")
        guard FileManager.default.fileExists(atPath: app.storeURL.path) else { throw CLIError.store("no store at \(app.storeURL.path)") }
        let migrator = StoreMigrator(models: try App.modelDirectory())
        let plan = try migrator.plan(storeURL: app.storeURL)
        guard plan.isNeeded else {
            app.output.line("the store is already at the current model version")
            return
        }
        let counts = plan.objectCounts.keys.sorted().map { "\($0): \(plan.objectCounts[$0] ?? 0)" }.joined(separator: ", ")
        for step in plan.steps {
            app.output.line("step: \(step.source) -> \(step.destination) (\(step.usesCustomMapping ? "custom mapping" : "inferred"))")
        }
        app.output.line("objects: \(counts)")
        if args.has("dry-run") {
            // The whole migration, checks included, into temporary files that are then removed.
            try migrator.dryRun(storeURL: app.storeURL)
            app.output.line("dry run: every object migrates and validates; nothing was written")
            return
        }
        _ = try app.context()
        app.output.line("migrated")
    }
}

import Foundation
import ObjectStore
import ObjectStoreModel

/// `taskctl store info|check` and `taskctl migrate`.
enum StoreCommands {
    static func run(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, valued: [], switches: ["json"], command: "store")
        try args.allowWords(1, command: "store")
        switch args.positional.first {
        case "info": try info(args, app)
        case "check": try check(app)
        case "compact":
            let context = try app.context()
            guard let store = context.coordinator.store as? BinaryStore else {
                app.output.line("a JSON store is rewritten whole on every save; nothing to compact")
                return
            }
            let before = store.sizes
            try store.compact()
            app.output.line("compacted: \(before.total) -> \(store.sizes.total) bytes")
        default: throw CLIError.usage("usage: taskctl store info | taskctl store check | taskctl store compact")
        }
    }

    static func info(_ args: Arguments, _ app: App) throws {
        let context = try app.context(readOnly: true)
        let store = context.coordinator.store
        let format = StoreType.forFile(app.storeURL) == .json ? "json" : "binary"
        let size = (try? FileManager.default.attributesOfItem(atPath: app.storeURL.path)[.size] as? Int) ?? 0
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
        let store = context.coordinator.store
        let model = context.model
        var problems: [String] = []
        var rows: [ObjectID: StoredRow] = [:]
        for entity in model.entities {
            for id in try store.objectIDs(ofEntity: entity.name) {
                guard let row = try store.row(for: id) else {
                    problems.append("\(entity.name) \(id.primaryKey ?? 0) is listed but has no row")
                    continue
                }
                rows[id] = row
            }
        }
        for (id, row) in rows {
            guard let entity = model.entity(named: id.entityName) else { continue }
            for (index, property) in entity.properties.enumerated() where index < row.slots.count {
                let name = "\(entity.name) \(id.primaryKey ?? 0)"
                guard let relationship = property.relationship else {
                    guard let attribute = property.attribute, attribute.isStored, case .value(let value) = row.slots[index] else { continue }
                    if !value.fits(attribute.type) {
                        problems.append("\(name): \(attribute.name) holds \(value), not a \(attribute.type.rawValue)")
                    } else if value.isNull {
                        if !attribute.isOptional { problems.append("\(name): \(attribute.name) is required but empty") }
                    } else {
                        for failure in attribute.validation.failures(for: value) {
                            problems.append("\(name).\(attribute.name): \(failure.message)")
                        }
                        if case .date(let date) = value, !ISO8601.supportedDates.contains(date) {
                            problems.append("\(name).\(attribute.name): \(value) is outside the years 0001 to 9999")
                        }
                    }
                    continue
                }
                guard !relationship.isTransient else { continue }
                let count = row.slots[index].referencedIDs.count
                if count == 0 && !relationship.isOptional { problems.append("\(name): \(relationship.name) is required but empty") }
                if let minCount = relationship.minCount, count > 0, count < minCount { problems.append("\(name): \(relationship.name) has \(count) object(s), at least \(minCount) required") }
                if let maxCount = relationship.maxCount, count > maxCount { problems.append("\(name): \(relationship.name) has \(count) object(s), at most \(maxCount) allowed") }
                for target in row.slots[index].referencedIDs {
                    guard let targetRow = rows[target], let targetEntity = model.entity(named: target.entityName) else {
                        problems.append("\(entity.name) \(id.primaryKey ?? 0).\(relationship.name) points at \(target.entityName) \(target.primaryKey ?? 0), which does not exist")
                        continue
                    }
                    guard targetEntity.isKind(of: relationship.destinationEntityName) else {
                        problems.append("\(name).\(relationship.name) points at \(target.entityName) \(target.primaryKey ?? 0), but it must point at a \(relationship.destinationEntityName)")
                        continue
                    }
                    if let inverse = relationship.inverseName, let slot = targetEntity.slot(of: inverse), slot < targetRow.slots.count,
                        !targetRow.slots[slot].referencedIDs.contains(id)
                    {
                        problems.append("\(entity.name) \(id.primaryKey ?? 0).\(relationship.name) -> \(target.entityName) \(target.primaryKey ?? 0), but its \(inverse) does not point back")
                    }
                }
            }
        }
        // Uniqueness constraints hold across the whole store.
        for entity in model.entities {
            for constraint in entity.uniquenessConstraints {
                let indices = constraint.compactMap { entity.slot(of: $0) }
                var seen: [[SlotValue]: ObjectID] = [:]
                for (id, row) in rows.sorted(by: { ($0.key.primaryKey ?? 0) < ($1.key.primaryKey ?? 0) })
                where model.entity(named: id.entityName)?.isKind(of: entity.name) == true {
                    let key = zip(constraint, indices).map { name, index -> SlotValue in
                        guard index < row.slots.count else { return .value(.null) }
                        guard case .value(let value) = row.slots[index], let attribute = entity.attribute(named: name) else { return row.slots[index] }
                        return .value(attribute.uniquenessValue(value))
                    }
                    guard !key.contains(.value(.null)) else { continue }
                    if let other = seen[key] {
                        problems.append("\(id.entityName) \(id.primaryKey ?? 0) has the same \(constraint.joined(separator: ", ")) as \(other.entityName) \(other.primaryKey ?? 0)")
                    } else {
                        seen[key] = id
                    }
                }
            }
        }
        if !problems.isEmpty {
            throw CLIError.store("the store has \(problems.count) problem(s):\n" + problems.sorted().prefix(50).joined(separator: "\n"))
        }
        app.output.line("ok: \(rows.count) objects, every value valid for the model, every reference and inverse consistent, unique values unique, checksums verified")
    }

    static func migrate(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, valued: [], switches: ["dry-run"], command: "migrate")
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

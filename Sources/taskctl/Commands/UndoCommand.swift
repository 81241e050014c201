import Foundation
import ObjectStore
import ObjectStoreModel

/// `taskctl undo`: reverts the last change a taskctl command made, from the store's history.
///
/// It holds the store's lock from reading the history to saving, so concurrent undos each
/// take their own transaction. It reverts exactly the fields the transaction changed, and
/// refuses (changing nothing) when one of them was changed since by something that is not
/// undone, rather than overwrite that change. The undo is itself one transaction, named
/// `undo N`: the next undo goes further back.
enum UndoCommand {
    static func run(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "undo")
        guard args.positional.isEmpty else {
            throw CLIError.usage("undo takes no arguments: it undoes the last change, whichever task it was ('\(args.positional.joined(separator: " "))' given)")
        }
        let context = try app.context()
        let coordinator = context.coordinator
        let (target, gone, kept): (HistoryTransaction, [String], [String]) = try coordinator.withExclusiveStoreAccess {
            let history = try coordinator.fetchHistory(after: nil)
            guard let target = lastUndoable(history) else { throw CLIError.usage("nothing to undo") }
            var reverter = Reverter(context: context, app: app, target: target, later: standing(history.filter { $0.number > target.number }))
            try reverter.revert()
            guard context.hasChanges else {
                throw CLIError.usage("cannot undo \(target.contextName ?? "the last change"): \(reverter.gone.joined(separator: ", ")) no longer exist\(reverter.gone.count == 1 ? "s" : "")")
            }
            context.name = "undo \(target.number)"
            try context.save()
            return (target, reverter.gone, reverter.kept)
        }
        app.removeUndoJournal()
        let ids = taskIDs(in: target)
        let ranges = HistoryCommand.ranges(ids).map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }
        app.output.line("undid \(target.contextName ?? "change #\(target.number)")" + (ranges.isEmpty ? "" : " of task\(ids.count == 1 ? "" : "s") \(ranges.joined(separator: ", "))"))
        if !kept.isEmpty { app.output.warn("taskctl: \(kept.joined(separator: ", ")) stay\(kept.count == 1 ? "s" : ""): changed since by another program, which linked them to what it made or changed") }
        if !gone.isEmpty { app.output.warn("taskctl: \(gone.joined(separator: ", ")) no longer exist\(gone.count == 1 ? "s" : ""): left as they are") }
    }

    /// The number a transaction of `undo` reverted, from its name.
    static func undoneNumber(_ transaction: HistoryTransaction) -> Int64? {
        guard let name = transaction.contextName, name.hasPrefix("undo ") else { return nil }
        return Int64(name.dropFirst(5))
    }

    /// The last transaction of taskctl in `history` that no undo has reverted yet.
    static func lastUndoable(_ history: [HistoryTransaction]) -> HistoryTransaction? {
        var undone = Set<Int64>()
        for transaction in history.reversed() where transaction.author == App.historyAuthor {
            if let number = undoneNumber(transaction) {
                undone.insert(number)
            } else if !undone.contains(transaction.number) {
                return transaction
            }
        }
        return nil
    }

    /// The transactions of `later` whose changes still stand: without those an undo took
    /// back and without the undos themselves. (After the transaction being undone, every
    /// one of taskctl's is such a pair, or it would be the one undone.) Counted as changes
    /// made since, an undo's restoring of a link looked like a link made later, and kept
    /// objects that undoing an add must remove.
    static func standing(_ later: [HistoryTransaction]) -> [HistoryTransaction] {
        var undone = Set<Int64>()
        for transaction in later where transaction.author == App.historyAuthor {
            if let number = undoneNumber(transaction) {
                undone.insert(number)
                undone.insert(transaction.number)
            }
        }
        return later.filter { !undone.contains($0.number) }
    }

    /// The ids of the tasks a transaction changed.
    static func taskIDs(in transaction: HistoryTransaction) -> [Int64] {
        transaction.changes.filter { $0.entityName == "Task" }.compactMap(\.objectID.primaryKey).sorted()
    }
}

/// Reverts one transaction in a context: checks first, then changes.
struct Reverter {
    let context: ManagedObjectContext
    let app: App
    let target: HistoryTransaction
    /// The transactions after it, of any author.
    let later: [HistoryTransaction]
    /// Objects the transaction changed that no longer exist, as the user names them.
    var gone: [String] = []
    /// Objects the transaction made that stay, because a change since (not undone) linked
    /// another object to them.
    var kept: [String] = []

    init(context: ManagedObjectContext, app: App, target: HistoryTransaction, later: [HistoryTransaction]) {
        self.context = context
        self.app = app
        self.target = target
        self.later = later
    }

    private var command: String { target.contextName ?? "change #\(target.number)" }

    func find(_ id: ObjectID) -> ManagedObject? { try? context.existingObject(with: id) }

    /// A relationship's value now, as the history writes it.
    static func current(_ object: ManagedObject, _ change: PropertyChange) throws -> SlotValue {
        guard let property = object.entity.property(named: change.name) else { return .value(.null) }
        switch property {
        case .attribute: return .value(object[change.name])
        case .relationship(let relationship):
            if relationship.isToMany { return .toMany(try object.objectIDs(forRelationship: change.name)) }
            return .toOne(try object.objectIDs(forRelationship: change.name).first)
        }
    }

    /// Whether a change's property is checked for changes since: attributes and to-one
    /// relationships always; a to-many relationship only when no to-one inverse says the
    /// same (and of a many-to-many pair, one side).
    static func isChecked(_ change: PropertyChange, of entity: EntityDescription, model: ManagedObjectModel) -> Bool {
        guard case .relationship(let relationship)? = entity.property(named: change.name), relationship.isToMany else { return true }
        guard let inverseName = relationship.inverseName, let destination = model.entity(named: relationship.destinationEntityName),
              case .relationship(let inverse)? = destination.property(named: inverseName)
        else { return true }
        return inverse.isToMany && (entity.name, relationship.name) < (destination.name, inverseName)
    }

    /// Whether a property holds what the transaction left: the new value, or for a to-many
    /// relationship the objects it added and not those it removed.
    static func holdsWhatWasLeft(_ now: SlotValue, _ change: PropertyChange) -> Bool {
        if case .toMany(let ids) = now, case .toMany(let added) = change.newValue, case .toMany(let removed) = change.oldValue {
            let present = Set(ids)
            return added.allSatisfy(present.contains) && !removed.contains(where: present.contains)
        }
        return now == change.newValue
    }

    /// How the user names an object: "task 5", "location home".
    func describe(_ object: ManagedObject?, _ id: ObjectID) -> String {
        let entity = id.entityName.lowercased()
        if id.entityName == "Task" { return "task \(id.primaryKey ?? 0)" }
        if let object, case .string(let name) = object["name"] { return "\(entity) \(name)" }
        return "\(entity) #\(id.primaryKey ?? 0)"
    }

    mutating func revert() throws {
        // Check every object before changing any. An insertion lists no values: an object
        // it made counts as changed since when another program changed it later.
        var foreign: [ObjectID: Set<String>] = [:]
        for transaction in later where transaction.author != App.historyAuthor {
            for change in transaction.changes { foreign[change.objectID, default: []].formUnion(change.changedKeys) }
        }
        var present: [ObjectID: ManagedObject] = [:]
        var conflicts: [String] = []
        for change in target.changes where change.kind != .delete {
            guard let object = find(change.objectID) else {
                if change.entityName == "Task" || change.kind == .insert { gone.append(describe(nil, change.objectID)) }
                continue
            }
            present[change.objectID] = object
            var changed: [String] = []
            if change.kind == .insert, let keys = foreign[change.objectID] {
                // Its attributes and to-one relationships (edges others made to it are kept
                // below: the object then stays).
                changed = keys.filter { object.entity.property(named: $0)?.relationship?.isToMany != true }.sorted().map(HistoryCommand.fieldName)
            }
            for value in change.values where Self.isChecked(value, of: object.entity, model: context.model) {
                if !Self.holdsWhatWasLeft(try Self.current(object, value), value) {
                    changed.append(HistoryCommand.fieldName(value.name))
                }
            }
            if !changed.isEmpty { conflicts.append("\(describe(object, change.objectID))'s \(changed.joined(separator: ", "))") }
        }
        if !conflicts.isEmpty {
            throw CLIError.usage("cannot undo \(command): \(conflicts.joined(separator: "; ")) changed since, and undo would overwrite that")
        }
        // Deleted objects come back first (with the values their tombstone kept), so edges
        // to them can be restored.
        var restored: [ObjectID: ManagedObject] = [:]
        for change in target.changes where change.kind == .delete {
            // Under its old ID: later history and undos still name it.
            let object = try context.insertObject(restoring: change.objectID)
            for value in change.values {
                if case .value(let old) = value.oldValue { try object.setValue(old, forKey: value.name) }
            }
            restored[change.objectID] = object
        }
        func object(_ id: ObjectID) -> ManagedObject? { restored[id] ?? present[id] ?? find(id) }
        // Objects the transaction inserted go, unless an object it did not insert was linked
        // to one since and still is (a tag another task took up later): those stay, with the
        // transaction's own edges removed.
        let insertedIDs = Set(target.changes.filter { $0.kind == .insert }.map(\.objectID))
        var linkedLater = Set<[ObjectID]>()
        for transaction in later {
            for change in transaction.changes {
                // An insert records no values: its object's stored relationships as they are
                // now link it (a task added since to this add's tag; the tag's own list is
                // derived from the tasks and is not recorded).
                if change.kind == .insert, let inserted = object(change.objectID) {
                    for case .relationship(let relationship) in inserted.entity.properties where !relationship.isDerivedFromInverse {
                        for other in (try? inserted.objectIDs(forRelationship: relationship.name)) ?? [] {
                            linkedLater.formUnion([[change.objectID, other], [other, change.objectID]])
                        }
                    }
                }
                for value in change.values {
                    switch value.newValue {
                    case .toOne(let other?): linkedLater.formUnion([[change.objectID, other], [other, change.objectID]])
                    case .toMany(let added): for other in added { linkedLater.formUnion([[change.objectID, other], [other, change.objectID]]) }
                    default: break
                    }
                }
            }
        }
        var removed = Set<ObjectID>()
        for change in target.changes where change.kind == .insert {
            guard let inserted = present[change.objectID] else { continue }
            var taken = false
            for case .relationship(let relationship) in inserted.entity.properties {
                let linked = try inserted.objectIDs(forRelationship: relationship.name)
                if linked.contains(where: { !insertedIDs.contains($0) && linkedLater.contains([change.objectID, $0]) }) { taken = true }
            }
            if !taken {
                context.delete(inserted)
                removed.insert(change.objectID)
            } else {
                kept.append(describe(inserted, change.objectID))
            }
        }
        // Then every recorded value goes back, relationships edge by edge.
        for change in target.changes where change.kind != .delete && !removed.contains(change.objectID) {
            guard let changed = present[change.objectID] else { continue }
            for value in change.values {
                switch (value.oldValue, value.newValue) {
                case (.value(let old), _):
                    try changed.setValue(old, forKey: value.name)
                case (.toOne(let old), _):
                    try changed.setObject(old.flatMap { removed.contains($0) ? nil : object($0) }, forKey: value.name)
                case (.toMany(let taken), .toMany(let added)):
                    let addedSet = Set(added)
                    var ids = try changed.objectIDs(forRelationship: value.name).filter { !addedSet.contains($0) }
                    for id in taken where !ids.contains(id) { ids.append(id) }
                    let objects = ids.compactMap { id -> ManagedObject? in
                        guard !removed.contains(id) else { return nil }
                        return restored[id] ?? object(id)
                    }
                    try changed.setObjects(objects, forKey: value.name)
                default:
                    continue
                }
            }
        }
    }
}

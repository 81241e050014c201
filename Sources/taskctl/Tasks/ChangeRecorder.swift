import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ObjectStore
import ObjectStoreModel

/// Saves what a command changed as one transaction of the store's history, named after the
/// command and authored by taskctl: `taskctl undo` reverts it and `taskctl log` lists it.
/// The transaction is written in the same commit as the change, so a crash keeps both or
/// neither (ObjectStore's History guide).
struct ChangeRecorder {
    let command: String
    /// Whether the save makes the recurring tasks' due instances (a batched import's saves
    /// do not: each would read the whole store; the next change makes them).
    var makesInstances = true
    /// Tasks that existed before the command changed them.
    private var changedTasks: Set<ObjectID> = []

    init(command: String) { self.command = command }

    /// Call before changing an existing task (or after inserting a new one).
    mutating func willChange(task: ManagedObject) throws {
        if !task.isInserted { changedTasks.insert(task.objectID) }
    }

    /// Saves the context as the command's transaction. A command that changes anything also
    /// makes the recurring tasks' instances that are due (``RecurringTasks``), in the same
    /// transaction (one undo takes both back).
    mutating func save(_ context: ManagedObjectContext, app: App) throws {
        context.processPendingChanges()
        if makesInstances && context.hasChanges { try RecurringTasks.update(in: context, app: app, recorder: &self) }
        context.processPendingChanges()
        // A task imported from Taskwarrior keeps its "modified" time for exports: a change
        // made here is a modification too.
        for id in changedTasks {
            guard let task = context.registeredObject(for: id), task.isUpdated else { continue }
            var extras = ExtrasText.decode(task["extras"])
            guard let index = extras.firstIndex(where: { $0.key == "modified" }) else { continue }
            extras[index].json = JSONText.quote(TaskwarriorFormat.format(app.now))
            try task.setValue(ExtrasText.encode(extras), forKey: "extras")
        }
        // Nothing changed (a value set to what it was): nothing to save or to undo.
        guard context.hasChanges else { return }
        context.name = command
        try context.save()
        app.urgency.invalidate()
        app.removeUndoJournal()
        if let warning = context.coordinator.housekeepingWarning { app.output.warn("taskctl: warning: \(warning)") }
    }
}

extension App {
    /// The author of every transaction taskctl saves.
    static let historyAuthor = "taskctl"
    /// How many transactions taskctl's store keeps (what `undo` can go back through and
    /// `log` lists).
    static let historyKept = 1_000

    /// Removes the undo journal of taskctl versions before the store kept history
    /// (`STORE.undo.json` beside the real file), without opening it: a planted link or FIFO
    /// at that name is removed as a name, never followed or read. Its entries could only undo
    /// changes made before the upgrade; say so once.
    func removeUndoJournal() {
        let path = storeURL.resolvingSymlinksInPath().path + ".undo.json"
        var info = stat()
        guard lstat(path, &info) == 0, unlink(path) == 0 else { return }
        output.warn("taskctl: undo now reads the store's history; the old undo journal \(path) was removed (changes made before this version cannot be undone)")
    }
}

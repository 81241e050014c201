/// Undo and redo for a context, in groups.
///
/// By default a group holds the changes made between two calls of
/// ``ManagedObjectContext/processPendingChanges()`` (which save, fetch and undo call).
/// ``beginGrouping()`` and ``endGrouping()`` make explicit groups, which may nest; changes
/// inside the outermost explicit group form one group. Set the context's `undoManager` to
/// `nil` for bulk imports.
///
/// ```swift
/// context.undoManager?.beginGrouping()
/// try task.setValue(3, forKey: "priority")
/// try task.setObject(home, forKey: "location")
/// context.undoManager?.endGrouping()
/// context.undo()   // both changes reverted
/// ```
public final class UndoStack {
    enum Operation {
        case slot(ManagedObject, Int, old: SlotValue, new: SlotValue)
        case insert(ManagedObject)
        case delete(ManagedObject)
    }

    var undoGroups: [[Operation]] = []
    var redoGroups: [[Operation]] = []
    private var open: [Operation] = []
    private var explicitDepth = 0
    /// While undoing or redoing, changes are not recorded.
    var isReplaying = false
    /// The most groups kept; older ones are dropped. `nil` or `0` keeps everything (as
    /// `UndoManager.levelsOfUndo`, where 0 means no limit); to keep no history, set the
    /// context's `undoManager` to `nil`.
    public var levelsOfUndo: Int?

    /// An empty undo stack.
    public init() {}

    /// Whether there is a group to undo (including the open one).
    public var canUndo: Bool { !undoGroups.isEmpty || !open.isEmpty }
    /// Whether there is a group to redo.
    public var canRedo: Bool { !redoGroups.isEmpty }

    /// Starts an explicit group.
    public func beginGrouping() {
        if explicitDepth == 0 { closeImplicitGroup() }
        explicitDepth += 1
    }

    /// Ends an explicit group.
    public func endGrouping() {
        guard explicitDepth > 0 else { return }
        explicitDepth -= 1
        if explicitDepth == 0 { closeImplicitGroup() }
    }

    /// Forgets every group.
    public func removeAll() {
        undoGroups.removeAll()
        redoGroups.removeAll()
        open.removeAll()
    }

    func record(_ operation: Operation) {
        guard !isReplaying else { return }
        open.append(operation)
        redoGroups.removeAll()
    }

    /// Closes the implicit group, unless an explicit one is open.
    func closeGroup() {
        if explicitDepth == 0 { closeImplicitGroup() }
    }

    private func closeImplicitGroup() {
        guard !open.isEmpty else { return }
        undoGroups.append(open)
        open.removeAll()
        if let levelsOfUndo, levelsOfUndo > 0, undoGroups.count > levelsOfUndo { undoGroups.removeFirst(undoGroups.count - levelsOfUndo) }
    }

    func popUndo() -> [Operation]? {
        closeImplicitGroup()
        return undoGroups.popLast()
    }

    func popRedo() -> [Operation]? { redoGroups.popLast() }

    func pushRedo(_ group: [Operation]) { redoGroups.append(group) }
    func pushUndo(_ group: [Operation]) { undoGroups.append(group) }

    func remap(_ map: (ObjectID) -> ObjectID) {
        func slot(_ s: SlotValue) -> SlotValue {
            switch s {
            case .value: return s
            case .toOne(let id): return .toOne(id.map(map))
            case .toMany(let ids): return .toMany(ids.map(map))
            }
        }
        func op(_ o: Operation) -> Operation {
            if case .slot(let object, let index, let old, let new) = o { return .slot(object, index, old: slot(old), new: slot(new)) }
            return o
        }
        undoGroups = undoGroups.map { $0.map(op) }
        redoGroups = redoGroups.map { $0.map(op) }
        open = open.map(op)
    }
}

extension ManagedObjectContext {
    /// Reverts the most recent undo group.
    public func undo() {
        guard let undoManager else { return }
        processPendingChanges()
        guard let group = undoManager.popUndo() else { return }
        undoManager.isReplaying = true
        for operation in group.reversed() { revert(operation) }
        undoManager.isReplaying = false
        undoManager.pushRedo(group)
        processPendingChanges()
    }

    /// Re-applies the most recently undone group.
    public func redo() {
        guard let undoManager, let group = undoManager.popRedo() else { return }
        undoManager.isReplaying = true
        for operation in group { reapply(operation) }
        undoManager.isReplaying = false
        undoManager.pushUndo(group)
        processPendingChanges()
    }

    private func revert(_ operation: UndoStack.Operation) {
        switch operation {
        case .slot(let object, let index, let old, _):
            try? setSlot(object, index, old)
        case .insert(let object):
            object.deletedState = true
            deletedSet.insert(object.objectID)
            pendingChanges.deleted.insert(object.objectID)
        case .delete(let object):
            object.deletedState = false
            deletedSet.remove(object.objectID)
            if registered[object.objectID] !== object {
                // The delete was saved: bring the object back as a new insert.
                object.managedObjectContext = self
                object.insertedState = true
                object.committedSlots = nil
                registered[object.objectID] = object
                insertedOrder.append(object.objectID)
                insertedByEntity[object.entity.name, default: []].append(object.objectID)
            }
            pendingDeletes.removeAll { $0 === object }
            if object.insertedState { pendingChanges.inserted.insert(object.objectID) } else { pendingChanges.updated.insert(object.objectID) }
        }
    }

    private func reapply(_ operation: UndoStack.Operation) {
        switch operation {
        case .slot(let object, let index, _, let new):
            try? setSlot(object, index, new)
        case .insert(let object):
            object.deletedState = false
            deletedSet.remove(object.objectID)
            pendingChanges.inserted.insert(object.objectID)
        case .delete(let object):
            // The delete rules' effects are replayed by the slot operations of the group.
            object.deletedState = true
            deletedSet.insert(object.objectID)
            pendingChanges.deleted.insert(object.objectID)
        }
    }
}

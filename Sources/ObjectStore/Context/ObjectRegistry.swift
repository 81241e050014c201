/// The objects of a context by ID, one object per ID. Objects with unsaved changes are
/// pinned; clean objects nobody else references are let go by a sweep (they come back as
/// faults when asked for again): at every save, at `releaseCleanObjects()`, and when the
/// registry has doubled since the last sweep, so it stays within about twice what the
/// program holds.
///
/// The registry holds its objects strongly and finds the unreferenced ones with
/// `isKnownUniquelyReferenced`: a weak reference gives an object a side table, and every
/// retain and release of it then takes the runtime's slow path (a fifth of a fetch's or an
/// import's time when the registry held weak references).
struct ObjectRegistry: Sequence {
    private var objects: [ObjectID: ManagedObject] = [:]
    private var pinned: [ObjectID: ManagedObject] = [:]
    /// The size above which registering an object sweeps first.
    private var sweepAt = 4_096
    /// The most recently registered objects, held for a while: a location read by each of
    /// 10,000 tasks in turn is loaded once, not 10,000 times.
    private var recent = [ManagedObject?](repeating: nil, count: 1024)
    private var recentIndex = 0

    subscript(id: ObjectID) -> ManagedObject? {
        get { objects[id] }
        set {
            guard let newValue else {
                objects[id] = nil
                pinned[id] = nil
                return
            }
            if objects.count >= sweepAt && objects[id] == nil {
                sweep()
                sweepAt = Swift.max(4_096, 2 * objects.count)
            }
            objects[id] = newValue
            recent[recentIndex] = newValue
            recentIndex = (recentIndex + 1) % recent.count
            if newValue.hasChanges || newValue.insertedState || newValue.deletedState {
                pinned[id] = newValue
            } else if !pinned.isEmpty {
                pinned[id] = nil
            }
        }
    }

    /// Holds an object strongly: it has (or is about to have) unsaved changes.
    mutating func pin(_ object: ManagedObject) {
        pinned[object.objectID] = object
    }

    /// Lets go of objects without changes, and of clean objects nobody else holds.
    mutating func unpinClean() {
        for (id, object) in pinned where !object.hasChanges && !object.insertedState && !object.deletedState {
            pinned[id] = nil
        }
        sweep()
    }

    /// Drops the objects only the registry references (pinned and recent ones are
    /// referenced twice). Each value is examined in place, through the dictionary's values.
    private mutating func sweep() {
        var gone: Set<ObjectID> = []
        var index = objects.startIndex
        while index != objects.endIndex {
            if isKnownUniquelyReferenced(&objects.values[index]) { gone.insert(objects.keys[index]) }
            objects.formIndex(after: &index)
        }
        guard !gone.isEmpty else { return }
        // Removing most keys one by one costs more than building the dictionary again.
        if gone.count > objects.count / 8 {
            objects = objects.filter { !gone.contains($0.key) }
        } else {
            for id in gone { objects[id] = nil }
        }
    }

    mutating func removeAll() {
        objects.removeAll()
        pinned.removeAll()
        recent = [ManagedObject?](repeating: nil, count: recent.count)
    }

    /// Makes room for `count` more objects at once (a fetch about to make many: growing the
    /// table step by step rehashed it a dozen times on the way to 100,000).
    mutating func reserveCapacity(forMore count: Int) {
        guard count > 1_024 else { return }
        objects.reserveCapacity(objects.count + count)
    }

    /// Lets go of the recently registered objects too (for tests and memory pressure).
    mutating func forgetRecent() {
        recent = [ManagedObject?](repeating: nil, count: recent.count)
    }

    /// The living objects.
    var values: [ManagedObject] { Array(objects.values) }

    /// The keys of the registered permanent IDs of one (entity, store) scope.
    func permanentKeys(in scope: ObjectID.Scope) -> Set<Int64> {
        var keys = Set<Int64>()
        for id in objects.keys where id.scope === scope {
            if let key = id.primaryKey { keys.insert(key) }
        }
        return keys
    }

    var count: Int { objects.count }

    func makeIterator() -> AnyIterator<(key: ObjectID, value: ManagedObject)> {
        var base = objects.makeIterator()
        return AnyIterator { base.next() }
    }
}

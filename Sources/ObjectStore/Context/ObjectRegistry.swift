/// The objects of a context by ID: objects with unsaved changes are held strongly, clean
/// ones weakly, so a context does not keep alive objects nobody else references (they come
/// back as faults when asked for again). One object per ID while it lives.
struct ObjectRegistry: Sequence {
    private final class Weak {
        weak var object: ManagedObject?
        init(_ object: ManagedObject) { self.object = object }
    }

    private var weak: [ObjectID: Weak] = [:]
    private var pinned: [ObjectID: ManagedObject] = [:]
    /// The most recently registered objects, held for a while: a location read by each of
    /// 10,000 tasks in turn is loaded once, not 10,000 times.
    private var recent = [ManagedObject?](repeating: nil, count: 1024)
    private var recentIndex = 0

    subscript(id: ObjectID) -> ManagedObject? {
        get { pinned[id] ?? weak[id]?.object }
        set {
            guard let newValue else {
                weak[id] = nil
                pinned[id] = nil
                return
            }
            weak[id] = Weak(newValue)
            recent[recentIndex] = newValue
            recentIndex = (recentIndex + 1) % recent.count
            if newValue.hasChanges || newValue.insertedState || newValue.deletedState { pinned[id] = newValue } else { pinned[id] = nil }
        }
    }

    /// Holds an object strongly: it has (or is about to have) unsaved changes.
    mutating func pin(_ object: ManagedObject) {
        pinned[object.objectID] = object
    }

    /// Lets go of objects without changes, and forgets objects that are gone.
    mutating func unpinClean() {
        for (id, object) in pinned where !object.hasChanges && !object.insertedState && !object.deletedState {
            pinned[id] = nil
        }
        weak = weak.filter { $0.value.object != nil }
    }

    mutating func removeAll() {
        weak.removeAll()
        pinned.removeAll()
        recent = [ManagedObject?](repeating: nil, count: recent.count)
    }

    /// Lets go of the recently registered objects too (for tests and memory pressure).
    mutating func forgetRecent() {
        recent = [ManagedObject?](repeating: nil, count: recent.count)
    }

    /// The living objects.
    var values: [ManagedObject] { weak.values.compactMap(\.object) }

    /// The keys of the registered permanent IDs of one (entity, store) scope.
    func permanentKeys(in scope: ObjectID.Scope) -> Set<Int64> {
        var keys = Set<Int64>()
        for id in weak.keys where id.scope === scope {
            if let key = id.primaryKey { keys.insert(key) }
        }
        return keys
    }

    var count: Int { values.count }

    func makeIterator() -> AnyIterator<(key: ObjectID, value: ManagedObject)> {
        var base = weak.compactMap { entry in entry.value.object.map { (key: entry.key, value: $0) } }.makeIterator()
        return AnyIterator { base.next() }
    }
}

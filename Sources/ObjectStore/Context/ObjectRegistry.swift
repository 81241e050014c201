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
    private var objects = ObjectTable()
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
    /// referenced twice).
    private mutating func sweep() {
        objects.removeUniquelyReferenced()
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
    var values: [ManagedObject] { objects.all }

    /// The keys of the registered permanent IDs of one (entity, store) scope.
    /// Whether at most `limit` objects of `scope` with permanent keys are registered (a walk
    /// that stops once there are more, and makes nothing).
    func holds(atMost limit: Int, in scope: ObjectID.Scope) -> Bool {
        guard objects.count > limit else { return true }
        var count = 0
        for object in objects where object.objectID.scope === scope && object.objectID.primaryKey != nil {
            count += 1
            if count > limit { return false }
        }
        return true
    }

    func permanentKeys(in scope: ObjectID.Scope) -> Set<Int64> {
        var keys = Set<Int64>()
        for object in objects where object.objectID.scope === scope {
            if let key = object.objectID.primaryKey { keys.insert(key) }
        }
        return keys
    }

    var count: Int { objects.count }

    func makeIterator() -> AnyIterator<(key: ObjectID, value: ManagedObject)> {
        var base = objects.makeIterator()
        return AnyIterator { base.next().map { ($0.objectID, $0) } }
    }
}

/// Objects by their IDs, in an open-addressed table of the objects themselves (each holds
/// its ID) with 32 bits of each one's hash beside it: 12 bytes a slot where a dictionary
/// from ID to object took 40 (the ID stored again). Linear probing; removal shifts the
/// entries after back, so there are no tombstones. An object's ID must not change while it
/// is in the table (the context takes it out to remap it).
struct ObjectTable: Sequence {
    private var slots: [ManagedObject?] = []
    /// The low 32 bits of each slot's hash (its home slot is `hash & mask`), never 0; 0
    /// marks an empty slot, so a probe reads no object whose hash differs.
    private var hashes: [UInt32] = []
    private(set) var count = 0

    private var mask: Int { slots.count - 1 }

    /// Permanent keys that differ only in their low 2 bits share their other hash bits, so
    /// 4 keys in a row of one entity have neighbouring home slots: a fetch, which asks for
    /// its rows' objects in key order, misses the cache once per 4 objects instead of once
    /// per object (these misses were half of a fetch over 100,000 held objects). Runs of 4
    /// cluster a little more than single entries (about 7 probes instead of 2.5 to find an
    /// entry in a table three quarters full); runs of 16 gained no more and probed 27.
    private static func hash(_ id: ObjectID) -> UInt32 {
        let hash: UInt32
        if case .permanent(let key) = id.key {
            let run = UInt32(truncatingIfNeeded: ObjectID.mix(UInt64(bitPattern: key >> 2), scope: id.scope, seed: 0))
            hash = run & ~0x3 | UInt32(truncatingIfNeeded: key) & 0x3
        } else {
            hash = UInt32(truncatingIfNeeded: id._rawHashValue(seed: 0))
        }
        return hash == 0 ? 1 : hash
    }

    /// The slot holding `id`, or the empty slot where it would go.
    private func position(of id: ObjectID, hash: UInt32) -> (index: Int, found: Bool) {
        var index = Int(hash) & mask
        while true {
            let stored = hashes[index]
            if stored == 0 { return (index, false) }
            // The object is read only when the hash matches (binding each one probed past
            // retained and released it: most of a lookup in a full table).
            if stored == hash, let object = slots[index], object.objectID == id { return (index, true) }
            index = (index + 1) & mask
        }
    }

    subscript(id: ObjectID) -> ManagedObject? {
        get {
            guard count > 0 else { return nil }
            let found = position(of: id, hash: Self.hash(id))
            return found.found ? slots[found.index] : nil
        }
        set {
            guard let newValue else {
                remove(id)
                return
            }
            if (count + 1) * 4 > slots.count * 3 { rebuild(to: Swift.max(16, slots.count * 2)) }
            let hash = Self.hash(id)
            let found = position(of: id, hash: hash)
            slots[found.index] = newValue
            hashes[found.index] = hash
            if !found.found { count += 1 }
        }
    }

    private mutating func remove(_ id: ObjectID) {
        guard count > 0 else { return }
        let found = position(of: id, hash: Self.hash(id))
        guard found.found else { return }
        removeSlot(found.index)
    }

    /// Empties a slot and moves back the entries after it that probed past it.
    private mutating func removeSlot(_ removed: Int) {
        var hole = removed
        slots[hole] = nil
        hashes[hole] = 0
        count -= 1
        var next = (hole + 1) & mask
        while hashes[next] != 0 {
            let home = Int(hashes[next]) & mask
            // The entry may fill the hole when its home is not in (hole, next].
            if (next - home) & mask >= (next - hole) & mask {
                slots.swapAt(hole, next)
                hashes[hole] = hashes[next]
                hashes[next] = 0
                hole = next
            }
            next = (next + 1) & mask
        }
    }

    /// The table rebuilt with `capacity` slots (a power of two that fits the objects).
    private mutating func rebuild(to capacity: Int) {
        let old = slots, oldHashes = hashes
        slots = [ManagedObject?](repeating: nil, count: capacity)
        hashes = [UInt32](repeating: 0, count: capacity)
        let mask = capacity - 1
        for (object, hash) in zip(old, oldHashes) where object != nil {
            var index = Int(hash) & mask
            while slots[index] != nil { index = (index + 1) & mask }
            slots[index] = object
            hashes[index] = hash
        }
    }

    /// The smallest power of two, at least `minimum`, that holds `total` objects at most
    /// three quarters full.
    private static func capacity(for total: Int, atLeast minimum: Int) -> Int {
        var capacity = Swift.max(16, minimum)
        while total * 4 > capacity * 3 { capacity *= 2 }
        return capacity
    }

    /// Makes room for `count` objects in all without growing on the way.
    mutating func reserveCapacity(_ total: Int) {
        let capacity = Self.capacity(for: total, atLeast: slots.count)
        if capacity > slots.count { rebuild(to: capacity) }
    }

    /// Drops the objects nobody else references, each examined in place.
    mutating func removeUniquelyReferenced() {
        var gone: [Int] = []
        for index in slots.indices where slots[index] != nil && isKnownUniquelyReferenced(&slots[index]) {
            gone.append(index)
        }
        guard !gone.isEmpty else { return }
        if gone.count > count / 8 {
            // Many gone: the survivors rehashed into a table of their size.
            for index in gone { slots[index] = nil }
            count -= gone.count
            rebuild(to: Self.capacity(for: count, atLeast: 16))
        } else {
            // Few gone: removed by ID (a shift may move a later entry into an earlier slot).
            let ids = gone.compactMap { slots[$0]?.objectID }
            for id in ids { remove(id) }
        }
    }

    mutating func removeAll() {
        slots = []
        hashes = []
        count = 0
    }

    /// Whether the table is well formed (for tests): a slot is empty exactly when its hash
    /// is 0, and every entry is reached from its home slot without passing an empty one.
    var isWellFormed: Bool {
        var entries = 0
        for index in slots.indices {
            guard (slots[index] == nil) == (hashes[index] == 0) else { return false }
            guard let object = slots[index] else { continue }
            entries += 1
            guard hashes[index] == Self.hash(object.objectID) else { return false }
            var probe = Int(hashes[index]) & mask
            while probe != index {
                if hashes[probe] == 0 { return false }
                probe = (probe + 1) & mask
            }
        }
        return entries == count
    }

    /// The objects, in table order.
    var all: [ManagedObject] { slots.compactMap { $0 } }

    /// The objects in table order, as the table was when iteration began.
    struct Iterator: IteratorProtocol {
        let slots: [ManagedObject?]
        var index = 0

        mutating func next() -> ManagedObject? {
            while index < slots.count {
                defer { index += 1 }
                if let object = slots[index] { return object }
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(slots: slots) }
}

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
        objects.reserveCapacity(forMore: count)
    }

    /// Lets go of the recently registered objects too (for tests and memory pressure).
    mutating func forgetRecent() {
        recent = [ManagedObject?](repeating: nil, count: recent.count)
    }

    /// The living objects.
    var values: [ManagedObject] { objects.all }

    /// Whether at most `limit` objects of `scope` with permanent keys are registered (the
    /// table's pages of the scope counted; no object read).
    func holds(atMost limit: Int, in scope: ObjectID.Scope) -> Bool {
        objects.count <= limit || objects.permanentCount(in: scope) <= limit
    }

    /// The keys of the registered permanent IDs of one (entity, store) scope.
    func permanentKeys(in scope: ObjectID.Scope) -> Set<Int64> {
        objects.permanentKeys(in: scope)
    }

    var count: Int { objects.count }

    /// A concrete iterator: an `AnyIterator` cost a scan of the binary's conformance records
    /// the first time a process made one (every save that checks uniqueness).
    struct Iterator: IteratorProtocol {
        var base: ObjectTable.Iterator
        mutating func next() -> (key: ObjectID, value: ManagedObject)? { base.next().map { ($0.objectID, $0) } }
    }

    func makeIterator() -> Iterator { Iterator(base: objects.makeIterator()) }
}

/// Objects by their IDs, in pages of 16 consecutive keys of one entity and store: the
/// objects of page `p` are `objects[16 * p ..< 16 * p + 16]`, the one of key `k` at `k & 15`.
/// A fetch asks for its rows' objects in key order, so it reads each page's index entry
/// once and then the objects' references one after the other; a hash table of single
/// objects sent each lookup to a scattered slot (those cache misses were three quarters of
/// a fetch over 100,000 held objects, once the fetch's own work was cut). A context that
/// holds every object of an entity keeps 8 bytes a reference and about 3 a page per
/// object (12 bytes a slot at most three quarters full before); one that holds a few
/// scattered objects keeps up to 16 references' room for each.
///
/// Pages are found through an open-addressed index (linear probing, entries shifted back
/// on removal, so no tombstones). A page that empties leaves the index and is reused. An
/// object's ID must not change while it is in the table (the context takes it out to remap
/// it).
struct ObjectTable: Sequence {
    /// Keys per page (16: pages of 8 made no measured difference).
    static let pageShift: UInt64 = 4
    static let pageSize = 1 << pageShift

    /// Which keys a page holds: those of one scope (entity and store) that share all but
    /// their low 4 bits, temporary or permanent.
    private struct PageKey: Equatable {
        /// The scope's identity. A page in use holds an object whose ID holds the scope,
        /// so the identity cannot be reused by another scope while the page is in use.
        var scope: ObjectIdentifier
        var run: UInt64
        var temporary: Bool
    }

    private var objects: [ManagedObject?] = []
    private var pageKeys: [PageKey] = []
    /// Objects in each page (0: the page is free, and not in the index).
    private var pageCounts: [UInt8] = []
    private var freePages: [Int] = []
    /// Per index slot, 0 when empty, else the page's hash (never 0) in the high 32 bits and
    /// its number plus one in the low 32.
    private var index: [UInt64] = []
    private var pagesInIndex = 0
    private(set) var count = 0

    /// The page key of `id` and the slot in the page.
    private static func place(of id: ObjectID) -> (key: PageKey, slot: Int) {
        let number: UInt64, temporary: Bool
        switch id.key {
        case .permanent(let key): number = UInt64(bitPattern: key); temporary = false
        case .temporary(let key): number = key; temporary = true
        }
        return (PageKey(scope: ObjectIdentifier(id.scope), run: number >> pageShift, temporary: temporary), Int(number & UInt64(pageSize - 1)))
    }

    private static func hash(_ key: PageKey) -> UInt32 {
        var x = key.run ^ UInt64(UInt(bitPattern: key.scope)) &* 0xC2B2_AE3D_27D4_EB4F ^ (key.temporary ? 0x9E37_79B9_7F4A_7C15 : 0)
        x ^= x >> 33
        x &*= 0xFF51_AFD7_ED55_8CCD
        x ^= x >> 33
        let hash = UInt32(truncatingIfNeeded: x)
        return hash == 0 ? 1 : hash
    }

    /// The index slot of the page with `key`, and that page; or the empty slot where it
    /// would go and nil.
    private func find(_ key: PageKey, hash: UInt32) -> (slot: Int, page: Int?) {
        guard !index.isEmpty else { return (0, nil) }
        let mask = index.count - 1
        var slot = Int(hash) & mask
        while true {
            let entry = index[slot]
            if entry == 0 { return (slot, nil) }
            if UInt32(truncatingIfNeeded: entry >> 32) == hash {
                let page = Int(UInt32(truncatingIfNeeded: entry)) - 1
                if pageKeys[page] == key { return (slot, page) }
            }
            slot = (slot + 1) & mask
        }
    }

    subscript(id: ObjectID) -> ManagedObject? {
        get {
            guard count > 0 else { return nil }
            let place = Self.place(of: id)
            guard let page = find(place.key, hash: Self.hash(place.key)).page else { return nil }
            return objects[page &* Self.pageSize &+ place.slot]
        }
        set {
            let place = Self.place(of: id)
            let hash = Self.hash(place.key)
            let found = find(place.key, hash: hash)
            guard let newValue else {
                if let page = found.page { remove(at: page * Self.pageSize + place.slot, indexSlot: found.slot) }
                return
            }
            let page = found.page ?? addPage(place.key, hash: hash)
            let position = page * Self.pageSize + place.slot
            if objects[position] == nil {
                count += 1
                pageCounts[page] += 1
            }
            objects[position] = newValue
        }
    }

    /// A free page (reused, or appended) given `key`, in the index.
    private mutating func addPage(_ key: PageKey, hash: UInt32) -> Int {
        let page: Int
        if let free = freePages.popLast() {
            page = free
            pageKeys[page] = key
        } else {
            page = pageKeys.count
            pageKeys.append(key)
            pageCounts.append(0)
            objects.append(contentsOf: repeatElement(nil, count: Self.pageSize))
        }
        if (pagesInIndex + 1) * 2 > index.count { rebuildIndex(capacity: Swift.max(16, index.count * 2)) }
        let slot = find(key, hash: hash).slot
        index[slot] = UInt64(hash) << 32 | UInt64(page + 1)
        pagesInIndex += 1
        return page
    }

    /// Empties `position`; a page left empty leaves the index (`indexSlot`, its slot
    /// there, when known) and is free for reuse.
    private mutating func remove(at position: Int, indexSlot: Int? = nil) {
        guard objects[position] != nil else { return }
        objects[position] = nil
        count -= 1
        let page = position / Self.pageSize
        pageCounts[page] -= 1
        guard pageCounts[page] == 0 else { return }
        let key = pageKeys[page]
        removeIndexSlot(indexSlot ?? find(key, hash: Self.hash(key)).slot)
        freePages.append(page)
    }

    /// Empties an index slot and moves back the entries after it that probed past it.
    private mutating func removeIndexSlot(_ removed: Int) {
        let mask = index.count - 1
        var hole = removed
        index[hole] = 0
        pagesInIndex -= 1
        var next = (hole + 1) & mask
        while index[next] != 0 {
            let home = Int(UInt32(truncatingIfNeeded: index[next] >> 32)) & mask
            // The entry may fill the hole when its home is not in (hole, next].
            if (next - home) & mask >= (next - hole) & mask {
                index[hole] = index[next]
                index[next] = 0
                hole = next
            }
            next = (next + 1) & mask
        }
    }

    /// The index rebuilt with `capacity` slots (a power of two), from the pages in use.
    private mutating func rebuildIndex(capacity: Int) {
        index = [UInt64](repeating: 0, count: capacity)
        pagesInIndex = 0
        let mask = capacity - 1
        for page in pageKeys.indices where pageCounts[page] > 0 {
            let hash = Self.hash(pageKeys[page])
            var slot = Int(hash) & mask
            while index[slot] != 0 { slot = (slot + 1) & mask }
            index[slot] = UInt64(hash) << 32 | UInt64(page + 1)
            pagesInIndex += 1
        }
    }

    /// Makes room for `more` objects with consecutive keys (a fetch's rows) without growing
    /// on the way: the pages they span (one more than they fill, as their first key may
    /// fall anywhere in a page), beyond the free ones.
    mutating func reserveCapacity(forMore more: Int) {
        let added = Swift.max(0, (more + Self.pageSize - 1) / Self.pageSize + 1 - freePages.count)
        let pages = pageKeys.count + added
        objects.reserveCapacity(pages * Self.pageSize)
        pageKeys.reserveCapacity(pages)
        pageCounts.reserveCapacity(pages)
        var capacity = Swift.max(16, index.count)
        while (pagesInIndex + added) * 2 > capacity { capacity *= 2 }
        if capacity > index.count { rebuildIndex(capacity: capacity) }
    }

    /// Drops the objects nobody else references, each examined in place; then, when most
    /// pages are free, packs the pages in use together.
    mutating func removeUniquelyReferenced() {
        for position in objects.indices where objects[position] != nil && isKnownUniquelyReferenced(&objects[position]) {
            remove(at: position)
        }
        if freePages.count > 64 && freePages.count * 2 > pageKeys.count { pack() }
    }

    /// The pages in use moved to the front, in their order, the rest let go.
    private mutating func pack() {
        var packedObjects: [ManagedObject?] = []
        var packedKeys: [PageKey] = []
        var packedCounts: [UInt8] = []
        let used = pageKeys.count - freePages.count
        packedObjects.reserveCapacity(used * Self.pageSize)
        for page in pageKeys.indices where pageCounts[page] > 0 {
            packedObjects.append(contentsOf: objects[page * Self.pageSize ..< (page + 1) * Self.pageSize])
            packedKeys.append(pageKeys[page])
            packedCounts.append(pageCounts[page])
        }
        objects = packedObjects
        pageKeys = packedKeys
        pageCounts = packedCounts
        freePages = []
        var capacity = 16
        while used * 2 > capacity { capacity *= 2 }
        rebuildIndex(capacity: capacity)
    }

    mutating func removeAll() {
        objects = []
        pageKeys = []
        pageCounts = []
        freePages = []
        index = []
        pagesInIndex = 0
        count = 0
    }

    /// Whether the table is well formed (for tests): every object sits in the page and
    /// slot of its ID, each page's count is its objects, the pages in use are exactly those
    /// in the index, each reached from its home slot without passing an empty one, and the
    /// free pages are empty.
    var isWellFormed: Bool {
        var total = 0
        for page in pageKeys.indices {
            var held = 0
            for slot in 0..<Self.pageSize {
                guard let object = objects[page * Self.pageSize + slot] else { continue }
                held += 1
                let place = Self.place(of: object.objectID)
                guard place.key == pageKeys[page], place.slot == slot else { return false }
            }
            guard held == Int(pageCounts[page]) else { return false }
            total += held
            let indexed = held > 0 ? find(pageKeys[page], hash: Self.hash(pageKeys[page])).page == page : true
            guard indexed, (held == 0) == freePages.contains(page) else { return false }
        }
        let mask = index.count - 1
        for slot in index.indices where index[slot] != 0 {
            let page = Int(UInt32(truncatingIfNeeded: index[slot])) - 1
            guard page < pageKeys.count, pageCounts[page] > 0,
                  UInt32(truncatingIfNeeded: index[slot] >> 32) == Self.hash(pageKeys[page]) else { return false }
            var probe = Int(UInt32(truncatingIfNeeded: index[slot] >> 32)) & mask
            while probe != slot {
                if index[probe] == 0 { return false }
                probe = (probe + 1) & mask
            }
        }
        return total == count && pagesInIndex == index.filter { $0 != 0 }.count && pagesInIndex == pageKeys.count - freePages.count
    }

    /// How many objects of `scope` with permanent keys the table holds (their pages'
    /// counts summed: no object read).
    func permanentCount(in scope: ObjectID.Scope) -> Int {
        let identity = ObjectIdentifier(scope)
        var total = 0
        for page in pageKeys.indices where pageKeys[page].scope == identity && !pageKeys[page].temporary {
            total += Int(pageCounts[page])
        }
        return total
    }

    /// The permanent keys of the objects of `scope` the table holds (read from their pages'
    /// keys and slots: no object read).
    func permanentKeys(in scope: ObjectID.Scope) -> Set<Int64> {
        let identity = ObjectIdentifier(scope)
        var keys = Set<Int64>()
        for page in pageKeys.indices where pageCounts[page] > 0 && pageKeys[page].scope == identity && !pageKeys[page].temporary {
            for slot in 0..<Self.pageSize where objects[page * Self.pageSize + slot] != nil {
                keys.insert(Int64(bitPattern: pageKeys[page].run << Self.pageShift | UInt64(slot)))
            }
        }
        return keys
    }

    /// The objects, in table order.
    var all: [ManagedObject] { objects.compactMap { $0 } }

    /// The objects in table order, as the table was when iteration began.
    struct Iterator: IteratorProtocol {
        let objects: [ManagedObject?]
        var position = 0

        mutating func next() -> ManagedObject? {
            while position < objects.count {
                defer { position += 1 }
                if let object = objects[position] { return object }
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(objects: objects) }
}

import ObjectStoreModel
import ObjectStoreStorage

/// The results of a fetch request grouped into sections by a key path, kept up to date as
/// the context changes: the role of `NSFetchedResultsController` for lists and tables.
///
/// ```swift
/// let results = FetchedResultsController(request: request, context: context, sectionKeyPath: "location.name")
/// results.onChange = { change in
///     for (from, to) in change.moved { print("moved", from, to) }
/// }
/// try results.performFetch()
/// for section in results.sections { print(section.name, section.count) }
/// ```
///
/// Sort the request by the section key path first, so each section's objects are together.
public final class FetchedResultsController {
    /// A position in the sections: section index and row index.
    public struct IndexPath: Hashable, Sendable, Comparable, CustomStringConvertible {
        /// The section index.
        public var section: Int
        /// The row within the section.
        public var row: Int
        /// A position.
        public init(section: Int, row: Int) {
            self.section = section
            self.row = row
        }
        public static func < (a: IndexPath, b: IndexPath) -> Bool { (a.section, a.row) < (b.section, b.row) }
        public var description: String { "\(section).\(row)" }
    }

    /// One section: its name (the key path's value as text; empty for nil) and objects.
    public struct Section {
        /// The section key path's value as text (empty for nil).
        public var name: String
        /// The section's objects, in the request's order.
        public var objects: [ManagedObject]
        /// How many objects the section has.
        public var count: Int { objects.count }
    }

    /// What one change of the context did to the results.
    public struct Change {
        /// New positions of sections that appeared.
        public var insertedSections: [Int] = []
        /// Old positions of sections that went.
        public var deletedSections: [Int] = []
        /// New positions of objects that entered the results.
        public var inserted: [IndexPath] = []
        /// Old positions of objects that left the results.
        public var deleted: [IndexPath] = []
        /// Objects whose position changed: old and new.
        public var moved: [(from: IndexPath, to: IndexPath)] = []
        /// Objects that changed in place (new positions).
        public var updated: [IndexPath] = []

        /// Whether nothing changed.
        public var isEmpty: Bool {
            insertedSections.isEmpty && deletedSections.isEmpty && inserted.isEmpty && deleted.isEmpty && moved.isEmpty && updated.isEmpty
        }
    }

    /// The request whose results are tracked.
    public let request: FetchRequest
    /// The context observed.
    public let context: ManagedObjectContext
    /// The key path that names sections, if any.
    public let sectionKeyPath: String?
    /// Called after the results changed because the context changed.
    public var onChange: ((Change) -> Void)?
    /// The results in sections (one section named "" without a section key path).
    public private(set) var sections: [Section] = []
    private var token: ContextObservationToken?

    /// Results of `request` in `context`, in sections by `sectionKeyPath`; call ``performFetch()``.
    public init(request: FetchRequest, context: ManagedObjectContext, sectionKeyPath: String? = nil) {
        self.request = request
        self.context = context
        self.sectionKeyPath = sectionKeyPath
    }

    /// Every fetched object, in section order.
    public var fetchedObjects: [ManagedObject] { sections.flatMap(\.objects) }

    /// The object at a position.
    public func object(at indexPath: IndexPath) -> ManagedObject? {
        guard sections.indices.contains(indexPath.section), sections[indexPath.section].objects.indices.contains(indexPath.row) else { return nil }
        return sections[indexPath.section].objects[indexPath.row]
    }

    /// Fetches and starts tracking the context's changes.
    public func performFetch() throws {
        sections = try fetchSections()
        if token == nil {
            token = context.observe { [weak self] event in
                guard let self, case .objectsDidChange(let changes) = event else { return }
                self.contextDidChange(changes)
            }
        }
    }

    private func fetchSections() throws -> [Section] {
        let objects = try context.fetch(request)
        guard let sectionKeyPath else { return [Section(name: "", objects: objects)] }
        var result: [Section] = []
        var index: [String: Int] = [:]
        for object in objects {
            let value = try object.value(forKeyPath: sectionKeyPath)
            let name: String
            switch value {
            case .value(.null), .object(nil): name = ""
            case .value(.string(let s)): name = s
            default: name = value.description
            }
            if let i = index[name] {
                result[i].objects.append(object)
            } else {
                index[name] = result.count
                result.append(Section(name: name, objects: [object]))
            }
        }
        return result
    }

    private func contextDidChange(_ changes: ObjectChanges) {
        guard let new = try? fetchSections() else { return }
        let old = sections
        sections = new
        var change = Change()
        let oldNames = old.map(\.name), newNames = new.map(\.name)
        change.deletedSections = oldNames.indices.filter { !newNames.contains(oldNames[$0]) }
        change.insertedSections = newNames.indices.filter { !oldNames.contains(newNames[$0]) }
        func positions(_ sections: [Section]) -> [ObjectID: IndexPath] {
            var map: [ObjectID: IndexPath] = [:]
            for (s, section) in sections.enumerated() {
                for (r, object) in section.objects.enumerated() { map[object.objectID] = IndexPath(section: s, row: r) }
            }
            return map
        }
        let before = positions(old), after = positions(new)
        for (id, path) in before where after[id] == nil { change.deleted.append(path) }
        let staying = Self.objectsInPlace(old: old, new: new, before: before, changed: changes.updated.union(changes.refreshed))
        for (id, path) in after {
            guard let previous = before[id] else {
                change.inserted.append(path)
                continue
            }
            if !staying.contains(id) {
                change.moved.append((previous, path))
            } else if changes.updated.contains(id) || changes.refreshed.contains(id) {
                change.updated.append(path)
            }
        }
        change.inserted.sort()
        change.deleted.sort()
        change.updated.sort()
        change.moved.sort { $0.to < $1.to }
        if !change.isEmpty { onChange?(change) }
    }

    /// The objects that keep their place: within each section that exists before and after,
    /// the longest run of objects whose old order is preserved. Every other object that is in
    /// both results moved, so one reordered row is reported as one move. Unchanged objects
    /// are kept first, so the object whose change reordered the list is the one that moves.
    private static func objectsInPlace(old: [Section], new: [Section], before: [ObjectID: IndexPath], changed: Set<ObjectID>) -> Set<ObjectID> {
        var result = Set<ObjectID>()
        for section in new {
            guard let oldIndex = old.firstIndex(where: { $0.name == section.name }) else { continue }
            let all = section.objects.compactMap { object -> (ObjectID, Int)? in
                guard let path = before[object.objectID], path.section == oldIndex else { return nil }
                return (object.objectID, path.row)
            }
            let items = all.filter { !changed.contains($0.0) }
            // Longest increasing subsequence of old rows, in O(n log n).
            var tails: [Int] = []
            var tailIndex: [Int] = []
            var previous = [Int](repeating: -1, count: items.count)
            for (i, item) in items.enumerated() {
                var low = 0, high = tails.count
                while low < high {
                    let mid = (low + high) / 2
                    if tails[mid] < item.1 { low = mid + 1 } else { high = mid }
                }
                if low > 0 { previous[i] = tailIndex[low - 1] }
                if low == tails.count {
                    tails.append(item.1)
                    tailIndex.append(i)
                } else {
                    tails[low] = item.1
                    tailIndex[low] = i
                }
            }
            var kept = Set<ObjectID>()
            var i = tailIndex.last ?? -1
            while i >= 0 {
                kept.insert(items[i].0)
                i = previous[i]
            }
            // A changed object is in place when it still sits between the same kept neighbours.
            for (position, item) in all.enumerated() where changed.contains(item.0) {
                let lower = all[..<position].last { kept.contains($0.0) }?.1 ?? Int.min
                let upper = all[(position + 1)...].first { kept.contains($0.0) }?.1 ?? Int.max
                if lower < item.1 && item.1 < upper { kept.insert(item.0) }
            }
            result.formUnion(kept)
        }
        return result
    }
}

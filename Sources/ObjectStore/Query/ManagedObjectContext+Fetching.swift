import Foundation
import ObjectStoreModel
import ObjectStoreStorage

extension ManagedObjectContext {
    /// The objects a fetch request matches.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        noteFetch()
        return try FetchExecutor.planned(request, in: self).objects()
    }

    /// The IDs of the objects a fetch request matches. Without sort descriptors no object is
    /// made for a match this context does not hold (the rows are tested in place), so the
    /// IDs of a million matches cost their IDs, not a million objects.
    public func fetchObjectIDs(_ request: FetchRequest) throws -> [ObjectID] {
        noteFetch()
        guard request.sortDescriptors.isEmpty else { return try fetch(request).map(\.objectID) }
        let executor = try FetchExecutor.planned(request, in: self)
        var ids: [ObjectID]
        if let predicate = executor.request.predicate {
            ids = []
            try executor.forEachMatch(of: predicate, entity: try executor.entity()) { id, registered, saved in
                if registered != nil || saved != nil { ids.append(id) }
            }
        } else {
            ids = try executor.candidateIDs()
        }
        // In key order, as fetch(_:) gives unsorted results.
        if !zip(ids, ids.dropFirst()).allSatisfy({ !ObjectID.tieBreak($1, $0) }) { ids.sort(by: ObjectID.tieBreak) }
        let offset = ids.dropFirst(request.fetchOffset)
        return Array(request.fetchLimit > 0 ? offset.prefix(request.fetchLimit) : offset)
    }

    /// The saved objects a fetch request without sort descriptors, offset or limit matches,
    /// in key order as ``fetchObjectIDs(_:)`` lists them, each with its saved state as the
    /// scan read it (nil for an object registered here): a batch request reads the rows it
    /// changes from these, not by looking each one up again.
    func fetchSavedMatches(_ request: FetchRequest) throws -> [(id: ObjectID, saved: FetchExecutor.SavedState?)] {
        noteFetch()
        let executor = try FetchExecutor.planned(request, in: self)
        var matches: [(id: ObjectID, saved: FetchExecutor.SavedState?)] = []
        try executor.forEachMatch(of: executor.request.predicate ?? .constant(true), entity: try executor.entity()) { id, registered, saved in
            if registered != nil || saved != nil { matches.append((id, registered == nil ? saved : nil)) }
        }
        if !zip(matches, matches.dropFirst()).allSatisfy({ !ObjectID.tieBreak($1.id, $0.id) }) { matches.sort { ObjectID.tieBreak($0.id, $1.id) } }
        return matches
    }

    /// How many objects a fetch request matches. Without a predicate no object is made;
    /// with one, objects this count had to load are let go again afterwards.
    public func count(for request: FetchRequest) throws -> Int {
        noteFetch()
        let executor = try FetchExecutor.planned(request, in: self)
        guard let predicate = executor.request.predicate else {
            let total = try executor.candidateCount() - request.fetchOffset
            return max(0, request.fetchLimit > 0 ? min(total, request.fetchLimit) : total)
        }
        var count = 0
        try executor.forEachMatch(of: predicate, entity: try executor.entity(), counted: { count += $0 }) { _, _, _ in count += 1 }
        let afterOffset = max(0, count - request.fetchOffset)
        return request.fetchLimit > 0 ? min(afterOffset, request.fetchLimit) : afterOffset
    }
}

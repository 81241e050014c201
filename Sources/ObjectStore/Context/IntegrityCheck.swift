import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// What ``PersistentStoreCoordinator/checkIntegrity()`` found.
public struct IntegrityReport: Sendable {
    /// Objects read.
    public var objectCount: Int
    /// Every problem, one line each, naming the object (`Task 3.location: ...`); empty
    /// when the store is sound.
    public var problems: [String]
}

extension PersistentStoreCoordinator {
    /// Reads every saved row and checks it against the model: types, required values,
    /// validation rules, the date range, relationship destinations and counts, that every
    /// reference exists and its inverse points back, and uniqueness constraints (with their
    /// comparison) across the store. Reads only; throws only when the store cannot be read.
    ///
    /// ```swift
    /// let report = try coordinator.checkIntegrity()
    /// for problem in report.problems { print(problem) }
    /// ```
    public func checkIntegrity() throws -> IntegrityReport {
        let model = self.model
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
        // The inverse lists checked against, as sets once they are long: a tag on 100,000
        // tasks is asked 100,000 times whether it points back (a linear search each time
        // made the check quadratic: 5.8 s for 100,000 tasks, 3 minutes for a million).
        var inverseSets: [ObjectID: [Int: Set<ObjectID>]] = [:]
        func pointsBack(_ targetRow: StoredRow, _ target: ObjectID, slot: Int, to id: ObjectID) -> Bool {
            let ids = targetRow.slots[slot].referencedIDs
            guard ids.count > 32 else { return ids.contains(id) }
            if let known = inverseSets[target]?[slot] { return known.contains(id) }
            let made = Set(ids)
            inverseSets[target, default: [:]][slot] = made
            return made.contains(id)
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
                // A to-many derived from its inverse is what the inverse says; its rows hold nothing.
                guard !relationship.isTransient, !(relationship.isDerivedFromInverse && relationship.isToMany) else { continue }
                let count = row.slots[index].referencedIDs.count
                if count == 0 && !relationship.isOptional { problems.append("\(name): \(relationship.name) is required but empty") }
                if let minCount = relationship.minCount, count > 0, count < minCount { problems.append("\(name): \(relationship.name) has \(count) object(s), at least \(minCount) required") }
                if let maxCount = relationship.maxCount, count > maxCount { problems.append("\(name): \(relationship.name) has \(count) object(s), at most \(maxCount) allowed") }
                if relationship.isToMany, count > 1 {
                    // A list names each object once (a damaged store's inverse, repaired by
                    // hand, can name one twice).
                    var seen = Set<ObjectID>(minimumCapacity: count)
                    var repeated: [ObjectID: Int] = [:]
                    for target in row.slots[index].referencedIDs where !seen.insert(target).inserted { repeated[target, default: 1] += 1 }
                    for (target, times) in repeated.sorted(by: { ($0.key.primaryKey ?? 0) < ($1.key.primaryKey ?? 0) }) {
                        problems.append("\(name).\(relationship.name) lists \(target.entityName) \(target.primaryKey ?? 0) \(times) times")
                    }
                }
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
                        targetEntity.properties[slot].relationship?.isDerivedFromInverse != true,
                        !pointsBack(targetRow, target, slot: slot, to: id)
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
                    let values = indices.map { $0 < row.slots.count ? row.slots[$0] : .value(.null) }
                    let key = UniquenessCheck.comparable(values, constraint: constraint, in: entity)
                    guard !key.contains(.value(.null)) else { continue }
                    if let other = seen[key] {
                        problems.append("\(id.entityName) \(id.primaryKey ?? 0) has the same \(constraint.joined(separator: ", ")) as \(other.entityName) \(other.primaryKey ?? 0)")
                    } else {
                        seen[key] = id
                    }
                }
            }
        }
        problems += try store.storageProblems()
        return IntegrityReport(objectCount: rows.count, problems: problems.sorted())
    }
}

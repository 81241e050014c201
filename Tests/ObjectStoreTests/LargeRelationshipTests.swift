import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

/// To-many relationships of 100,000 objects, at the sizes where searching a list per object
/// made work quadratic (docs/performance.md has the figures). No time limits: they measured
/// the machine (a busy one failed a like limit elsewhere at twice the work's usual time),
/// and a quadratic regression at these sizes runs for hours, which CI's own limit stops.
@Suite struct LargeRelationshipTests {
    /// One tag on 100,000 tasks: the integrity check asks the tag 100,000 times whether it
    /// points back (3 minutes for a million tasks when each asked searched the list).
    /// A context without undo (as a bulk import runs) on a new binary store.
    static func bulkContext(in directory: TemporaryDirectory) throws -> (ManagedObjectContext, URL) {
        let url = directory.file("tasks.store")
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url))
        context.undoManager = nil
        return (context, url)
    }

    @Test
    func checkingOneTagOnAHundredThousandTasksIsLinear() throws {
        let directory = try TemporaryDirectory()
        let (context, url) = try Self.bulkContext(in: directory)
        let tag = try context.insertObject(entityName: "Tag")
        try tag.setValue("everywhere", forKey: "label")
        for i in 0..<100_000 { try context.task("task \(i)").addObject(tag, toKey: "tags") }
        try context.save()
        let report = try ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: TestModel.model, storeURL: url)).coordinator.checkIntegrity()
        #expect(report.objectCount == 100_001)
        #expect(report.problems.isEmpty, "\(report.problems.prefix(3))")
    }

    /// One task given 100,000 tags at once, then a different 50,000 of them: both sides
    /// agree, and setting the same list again changes nothing.
    @Test
    func settingAHundredThousandTagsOnOneTaskIsLinear() throws {
        let directory = try TemporaryDirectory()
        let (context, _) = try Self.bulkContext(in: directory)
        var tags: [ManagedObject] = []
        for i in 0..<100_000 {
            let tag = try context.insertObject(entityName: "Tag")
            try tag.setValue(.string("t\(i)"), forKey: "label")
            tags.append(tag)
        }
        let task = try context.task("many tags")
        try task.setObjects(tags + tags.prefix(10), forKey: "tags")  // duplicates count once
        #expect(try task.objectIDs(forRelationship: "tags") == tags.map(\.objectID))
        try context.save()
        let kept = Array(tags[25_000..<75_000])
        try task.setObjects(kept.reversed(), forKey: "tags")
        #expect(try task.objectIDs(forRelationship: "tags") == kept.reversed().map(\.objectID))
        #expect(try tags[0].objectIDs(forRelationship: "tasks").isEmpty)
        #expect(try tags[25_000].objectIDs(forRelationship: "tasks") == [task.objectID])
        try context.save()
        #expect(!context.hasChanges)
        try task.setObjects(kept.reversed(), forKey: "tags")
        #expect(!context.hasChanges)
        let report = try context.coordinator.checkIntegrity()
        #expect(report.problems.isEmpty, "\(report.problems.prefix(3))")
    }
}

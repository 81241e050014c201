import Foundation
import Testing
import ObjectStore
import ObjectStoreModel

/// `@sum` and `@avg` add up numbers: of strings (or dates, booleans) they are a type error
/// naming the key path before anything is read. Before, `@avg` of a string failed on the
/// first value with "cannot compute 0 + \"Ada\"".
@Suite struct AggregateTypeTests {
    @Test func anAverageOfStringsIsATypeErrorNamingTheKeyPath() throws {
        let context = TestModel.context()
        let home = try context.location("Home")
        let task = try context.task("Ada", priority: 2)
        try task.setObject(home, forKey: "location")
        try context.save()

        #expect {
            try context.fetchGroups(FetchRequest(entityName: "Task"), groupBy: ["location.name"], aggregates: [PropertyAggregate("mean", .average, of: "text")])
        } throws: { error in
            guard let error = error as? PredicateTypeError else { return false }
            return error.message.contains("mean (average of Task.text)") && error.message.contains("a string") && error.key == "text"
        }
        // Numbers still average.
        let groups = try context.fetchGroups(FetchRequest(entityName: "Task"), groupBy: ["location.name"], aggregates: [PropertyAggregate("mean", .average, of: "priority")])
        #expect(groups.first?["mean"]?.doubleValue == 2)

        for text in ["tasks.@avg.text > 1", "tasks.@sum.dueDate > 1"] {
            #expect {
                try context.fetch(FetchRequest(entityName: "Location", predicate: try ObjectPredicate(text)))
            } throws: { error in
                guard let error = error as? PredicateTypeError else { return false }
                return error.message.contains("adds up numbers")
            }
        }
        #expect(try context.fetch(FetchRequest(entityName: "Location", predicate: try ObjectPredicate("tasks.@avg.priority == 2"))).count == 1)
    }
}

import Testing
@testable import ObjectStoreModel

@Suite struct PredicateTypeCheckerTests {
    private let model: ManagedObjectModel = {
        do { return try ManagedObjectModel(schema: SchemaFixtures.full) } catch { preconditionFailure("\(error)") }
    }()

    private func check(_ text: String, on entity: String = "Todo") throws {
        try PredicateTypeChecker(model: model).check(try ObjectPredicate(text), on: entity)
    }

    @Test(arguments: [
        "title ==[c] 'x' AND a16 >= 2 AND created < now()",
        "project.name BEGINSWITH 'A'",
        "ANY tags.label == 'red'",
        "subtasks.@count > 2 AND subtasks.@sum.a16 > 3 AND subtasks.@max.created > now()",
        "SUBQUERY(subtasks, $s, $s.status == 'open').@count > 0",
        "aDecimal > 1 AND aDouble < 2.5 AND a64 == aFloat",
        "created BETWEEN {$START, $END}",
        "status IN {'open', 'closed'} AND 'pe' IN status",
        "project == $P AND parentTodo == nil",
        "isLate == TRUE AND aBool == 1",
        "created + 86400 > now() AND (now() - created) > 60",
    ])
    func acceptsWellTypedPredicates(text: String) throws {
        try check(text)
    }

    @Test(arguments: [
        ("prioritty > 1", "Todo has no property 'prioritty'"),
        ("titel == 'x'", "Todo has no property 'titel' (did you mean 'title'?)"),
        ("project.nme == 'x'", "Project has no property 'nme' (did you mean 'name'?)"),
        ("title.length == 1", "'length' in title.length follows a string, which has no keys"),
        ("title > 3", "cannot compare title (a string) with 3 (a number) using >"),
        ("created < 5", "cannot compare created (a date) with 5 (a number) using <; write a date as CAST(seconds, 'NSDate')"),
        ("a16 CONTAINS 'x'", "cannot compare"),
        ("a16 LIKE 'x*'", "LIKE compares strings, but a16 is a number"),
        ("ANY title == 'x'", "ANY needs a to-many key path on its left"),
        ("project > project", "objects have no order"),
        ("project == 'x'", "cannot compare project (a Project) with \"x\" (a string)"),
        ("title + 1 > 2", "arithmetic needs numbers or dates, but title is a string"),
        ("subtasks.@median.a16 > 1", "unknown collection operator @median"),
        ("SUBQUERY(title, $t, $t == 'x').@count > 0", "SUBQUERY needs a to-many collection"),
    ])
    func rejectsUnknownKeysAndIncompatibleTypes(text: String, message: String) {
        do {
            try check(text)
            Issue.record("expected \(text) to be rejected")
        } catch let error as PredicateTypeError {
            #expect(error.message.contains(message), "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func anUnknownKeyCanBePointedAt() throws {
        do {
            try check("a16 > 1 AND titel == 'x'")
        } catch let error as PredicateTypeError {
            #expect(error.column(in: "a16 > 1 AND titel == 'x'") == 13)
        }
    }

    @Test(arguments: [
        (#"{"entities": [{"name": "E", "attributes": [{"name": "a", "type": "int16"}, {"name": "d", "type": "boolean", "derived": "a >"}]}]}"#, "$.entities[0].attributes[1].derived", "E.d: bad derivation at column 4"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "a", "type": "int16"}, {"name": "d", "type": "string", "derived": "a * 2"}]}]}"#, "$.entities[0].attributes[1].derived", "E.d: the derivation gives a number, but the attribute is string"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "d", "type": "boolean", "derived": "b == 1"}]}]}"#, "$.entities[0].attributes[0].derived", "E has no property 'b'"),
        (#"{"entities": [{"name": "E", "fetchedProperties": [{"name": "f", "destination": "E", "predicate": "SELF == $FETCH_SOURCE AND x == 1"}]}]}"#, "$.entities[0].fetchedProperties[0].predicate", "E.f: E has no property 'x'"),
        (#"{"entities": [{"name": "E"}], "fetchRequests": [{"name": "q", "entity": "E", "predicate": "=="}]}"#, "$.fetchRequests[0].predicate", "fetch request q: bad predicate at column 1"),
    ])
    func theSchemaLoaderChecksPredicatesWithTheirPaths(schema: String, path: String, message: String) {
        do {
            _ = try ManagedObjectModel(schema: schema)
            Issue.record("expected the schema to be rejected")
        } catch {
            #expect(error.diagnostics.contains { $0.path == path && $0.message.contains(message) }, "\(error)")
        }
    }
}

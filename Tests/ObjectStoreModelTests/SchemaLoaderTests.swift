import Foundation
import Testing
@testable import ObjectStoreModel

@Suite struct SchemaLoaderTests {
    @Test func loadsAFullSchemaWithTheExpectedLayout() throws {
        let model = try ManagedObjectModel(schema: SchemaFixtures.full)
        #expect(model.entities.map(\.name) == ["Item", "Note", "Person", "Project", "Tag", "Todo"])

        let item = try #require(model.entity(named: "Item"))
        #expect(item.isAbstract)
        #expect(item.userInfo == ["table": "items"])
        #expect(item.properties.map(\.name) == ["created", "tags", "title"])
        #expect(item.subentityNames == ["Note", "Todo"])

        // A sub-entity's layout extends its parent's: inherited slots first, unchanged.
        let todo = try #require(model.entity(named: "Todo"))
        #expect(todo.parentName == "Item")
        #expect(todo.ancestorNames == ["Item"])
        #expect(todo.inheritedPropertyCount == 3)
        #expect(Array(todo.properties.prefix(3)) == item.properties)
        #expect(todo.slot(of: "title") == item.slot(of: "title"))
        #expect(todo.slot(of: "a16") == 3)
        #expect(todo.slot(of: "nope") == nil)
        #expect(todo.isKind(of: "Item") && !item.isKind(of: "Todo"))
        #expect(todo.renamingIdentifier == "Chore")
        #expect(todo.uniquenessConstraints == [["title", "a32"]])
        #expect(todo.indexes == [IndexDescription(name: "byProject", propertyNames: ["project", "a16"]), IndexDescription(name: "Todo_status", propertyNames: ["status"])])

        // Every type's default decodes exactly.
        func defaultValue(_ name: String) -> Value? { todo.attribute(named: name)?.defaultValue }
        #expect(defaultValue("a16") == .integer(-32768))
        #expect(defaultValue("a32") == .integer(2_147_483_647))
        #expect(defaultValue("a64") == .integer(Int64.max))
        #expect(defaultValue("aDouble").flatMap(\.doubleValue)?.isNaN == true)
        #expect(defaultValue("aFloat") == .double(1.5))
        #expect(defaultValue("aDecimal") == .decimal(try #require(Decimal(string: "12345678901234567890.123456789"))))
        #expect(defaultValue("aBool") == .bool(true))
        #expect(defaultValue("aBinary") == .data(Data([0, 1, 2])))
        #expect(defaultValue("aUUID") == .uuid(try #require(UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8"))))
        #expect(defaultValue("aURI") == .uri(try #require(URL(string: "https://example.com/x"))))
        #expect(defaultValue("created") == .date(try #require(ISO8601.parse("2026-01-01T00:00:00Z"))))

        let title = try #require(todo.attribute(named: "title"))
        #expect(!title.isOptional && title.renamingIdentifier == "name")
        #expect(title.validation.minLength == 1 && title.validation.maxLength == 80 && title.validation.pattern == "[A-Za-z].*")
        let status = try #require(todo.attribute(named: "status"))
        #expect(status.validation.allowedValues == ["open", "closed"])
        #expect(status.userInfo == ["ui": "picker"] && status.versionHashModifier == "v2")
        #expect(todo.attribute(named: "isLate")?.derivation == "created < now()")
        #expect(todo.attribute(named: "isLate")?.isStored == false)
        #expect(model.entity(named: "Note")?.attribute(named: "draftCursor")?.isTransient == true)

        let subtasks = try #require(todo.relationship(named: "subtasks"))
        #expect(subtasks.isToMany && subtasks.isOrdered && subtasks.deleteRule == .cascade && subtasks.maxCount == 20)
        #expect(todo.relationship(named: "project")?.isOptional == false)
        let project = try #require(model.entity(named: "Project"))
        #expect(project.relationship(named: "todos")?.deleteRule == .deny)
        #expect(project.relationship(named: "owner")?.deleteRule == .noAction)
        #expect(project.relationship(named: "owner")?.inverseName == nil)
        #expect(project.fetchedProperty(named: "openTodos")?.predicate == "project == $FETCH_SOURCE AND status == 'open'")

        let template = try #require(model.fetchRequestTemplate(named: "openTodos"))
        #expect(template.entityName == "Todo" && template.predicate == "status == $STATUS")
        #expect(template.sortDescriptors == [.init(keyPath: "created", ascending: false), .init(keyPath: "project.name", ascending: true)])
        #expect(model.entityAndDescendants(of: "Item").map(\.name) == ["Item", "Note", "Todo"])
    }

    @Test func defaultsApplyWhenKeysAreOmitted() throws {
        let model = try ManagedObjectModel(schema: #"{"entities": [{"name": "E", "attributes": [{"name": "a", "type": "string"}], "relationships": [{"name": "r", "destination": "E"}]}]}"#)
        let entity = try #require(model.entity(named: "E"))
        let attribute = try #require(entity.attribute(named: "a"))
        #expect(attribute.isOptional && !attribute.isTransient && attribute.defaultValue == .null && attribute.validation.isEmpty)
        let relationship = try #require(entity.relationship(named: "r"))
        #expect(!relationship.isToMany && relationship.isOptional && relationship.deleteRule == .nullify)
    }

    /// Loads `schema`, expecting it to fail, and returns its diagnostics.
    private func diagnostics(_ schema: String) -> [SchemaDiagnostic] {
        do {
            _ = try ManagedObjectModel(schema: schema, file: "test.json")
            Issue.record("expected the schema to be rejected")
            return []
        } catch {
            return error.diagnostics
        }
    }

    private func entity(_ body: String, extra: String = "") -> String {
        #"{"entities": [{"name": "E", \#(body)}\#(extra)]}"#
    }

    @Test(arguments: [
        // (schema, JSON path, part of the message)
        (#"{"entities": [}"#, "$", "malformed JSON"),
        (#"{"entitys": []}"#, "$.entitys", "unknown key 'entitys' in a schema (did you mean 'entities'?)"),
        (#"{"entities": {}}"#, "$.entities", "'entities' must be an array"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "a", "type": "strng"}]}]}"#, "$.entities[0].attributes[0].type", "E.a: unknown type 'strng' (did you mean 'string'?)"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "a", "type": "string", "optinal": true}]}]}"#, "$.entities[0].attributes[0].optinal", "did you mean 'optional'?"),
        (#"{"entities": [{"name": "E"}, {"name": "E"}]}"#, "$.entities[1].name", "duplicate entity name 'E'"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "a", "type": "string"}, {"name": "a", "type": "int16"}]}]}"#, "$.entities[0].attributes[1].name", "duplicate property name 'a' in entity E"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "a", "type": "string"}], "relationships": [{"name": "a", "destination": "E"}]}]}"#, "$.entities[0].relationships[0].name", "duplicate property name 'a'"),
        (#"{"entities": [{"name": "E", "relationships": [{"name": "r", "destination": "F"}]}]}"#, "$.entities[0].relationships[0].destination", "E.r: unknown destination entity 'F'"),
        (#"{"entities": [{"name": "E", "relationships": [{"name": "r", "destination": "F", "inverse": "x"}]}, {"name": "F"}]}"#, "$.entities[0].relationships[0].inverse", "E.r: inverse 'x' is not a relationship of F"),
        (#"{"entities": [{"name": "E", "relationships": [{"name": "r", "destination": "F", "inverse": "s"}]}, {"name": "F", "relationships": [{"name": "s", "destination": "F"}]}]}"#, "$.entities[0].relationships[0].inverse", "points to F, not back to E"),
        (#"{"entities": [{"name": "E", "relationships": [{"name": "r", "destination": "F", "inverse": "s"}]}, {"name": "F", "relationships": [{"name": "s", "destination": "E"}]}]}"#, "$.entities[0].relationships[0].inverse", "has no inverse; it must name 'r'"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "n", "type": "int16", "default": "three"}]}]}"#, "$.entities[0].attributes[0].default", "E.n: bad default value: expected an integer"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "n", "type": "int16", "default": 40000}]}]}"#, "$.entities[0].attributes[0].default", "out of range for type int16"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "n", "type": "int16", "default": 7, "max": 3}]}]}"#, "$.entities[0].attributes[0].default", "E.n: the default value breaks its own 'max' rule"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "s", "type": "string", "default": "x", "allowedValues": ["a", "b"]}]}]}"#, "$.entities[0].attributes[0].default", "breaks its own 'allowedValues' rule"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "s", "type": "string", "default": "42", "pattern": "[a-z]+"}]}]}"#, "$.entities[0].attributes[0].default", "breaks its own 'pattern' rule"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "d", "type": "date", "default": "yesterday"}]}]}"#, "$.entities[0].attributes[0].default", "is not an ISO-8601 date"),
        (#"{"entities": [{"name": "E", "parent": "F"}, {"name": "F", "parent": "E"}]}"#, "$.entities[0].parent", "inheritance cycle E -> F -> E"),
        (#"{"entities": [{"name": "E", "parent": "E"}]}"#, "$.entities[0].parent", "inheritance cycle E -> E"),
        (#"{"entities": [{"name": "E", "parent": "Nope"}]}"#, "$.entities[0].parent", "unknown parent entity 'Nope'"),
        (#"{"entities": [{"name": "P", "attributes": [{"name": "a", "type": "string"}]}, {"name": "C", "parent": "P", "attributes": [{"name": "a", "type": "string"}]}]}"#, "$.entities[1].attributes[0].name", "C.a redeclares a property inherited from P"),
        (#"{"entities": [{"name": "A", "abstract": true}, {"name": "E", "relationships": [{"name": "r", "destination": "A"}]}]}"#, "$.entities[1].relationships[0].destination", "destination A is abstract and has no concrete sub-entity"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "s", "type": "string", "pattern": "([a-z"}]}]}"#, "$.entities[0].attributes[0].pattern", "is not a valid regular expression"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "s", "type": "string"}], "uniquenessConstraints": [["s", "t"]]}]}"#, "$.entities[0].uniquenessConstraints[0]", "uniqueness constraint names 't', which is not an attribute of E"),
        (#"{"entities": [{"name": "E", "indexes": [{"properties": ["zz"]}]}]}"#, "$.entities[0].indexes[0].properties", "index 'E_zz' names 'zz'"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "n", "type": "int16", "minLength": 2}]}]}"#, "$.entities[0].attributes[0].minLength", "'minLength' applies to strings and binary"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "n", "type": "int16", "min": 5, "max": 1}]}]}"#, "$.entities[0].attributes[0].min", "min 5 is greater than max 1"),
        (#"{"entities": [{"name": "E", "relationships": [{"name": "r", "destination": "E", "deleteRule": "cascad"}]}]}"#, "$.entities[0].relationships[0].deleteRule", "unknown delete rule 'cascad' (did you mean 'cascade'?)"),
        (#"{"entities": [{"name": "E", "relationships": [{"name": "r", "destination": "E", "maxCount": 3}]}]}"#, "$.entities[0].relationships[0].maxCount", "applies to to-many relationships only"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "a"}]}]}"#, "$.entities[0].attributes[0].type", "missing required key 'type'"),
        (#"{"entities": [{"name": "1E"}]}"#, "$.entities[0].name", "entity name '1E' must start with a letter"),
        (#"{"entities": [{"name": "E", "fetchedProperties": [{"name": "f", "destination": "X", "predicate": "a == 1"}]}]}"#, "$.entities[0].fetchedProperties[0].destination", "E.f: unknown destination entity 'X'"),
        (#"{"entities": [{"name": "E"}], "fetchRequests": [{"name": "q", "entity": "F"}]}"#, "$.fetchRequests[0].entity", "fetch request q: unknown entity 'F'"),
        (#"{"entities": [{"name": "E"}], "fetchRequests": [{"name": "q", "entity": "E", "sort": [{"key": "x"}]}]}"#, "$.fetchRequests[0].sort[0].key", "'x' is not a property of E"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "d", "type": "boolean", "derived": "true", "default": true}]}]}"#, "$.entities[0].attributes[0].default", "a derived attribute cannot have a default value"),
        (#"{"entities": [{"name": "E", "name": "F"}]}"#, "$.entities[0].name", "duplicate key 'name'"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "n", "type": "int32", "collation": "caseInsensitive"}]}]}"#, "$.entities[0].attributes[0].collation", "'collation' applies to strings"),
        (#"{"entities": [{"name": "E", "attributes": [{"name": "n", "type": "string", "collation": "nocase"}]}]}"#, "$.entities[0].attributes[0].collation", "collation 'nocase' is not 'exact' or 'caseInsensitive'"),
    ])
    func reportsEachClassOfErrorWithItsPath(schema: String, path: String, message: String) {
        let found = diagnostics(schema)
        #expect(found.contains { $0.path == path && $0.message.contains(message) }, "got: \(found.map(\.description))")
    }

    @Test func reportsEveryProblemOfAFileTogether() {
        let found = diagnostics(
            #"""
            {
              "entities": [
                { "name": "Task",
                  "attributes": [
                    { "name": "priority", "type": "int16", "default": 9, "max": 3 },
                    { "name": "text", "type": "text" }
                  ],
                  "relationships": [ { "name": "location", "destination": "Place" } ]
                }
              ]
            }
            """#)
        #expect(found.count == 3)
        #expect(found.map(\.path).sorted() == [
            "$.entities[0].attributes[0].default", "$.entities[0].attributes[1].type", "$.entities[0].relationships[0].destination",
        ])
        // Each diagnostic carries the line and column of the offending value.
        #expect(found.first { $0.path.hasSuffix(".type") }?.location == SourceLocation(line: 6, column: 35))
    }

    /// Problems of expressions come with the structural ones (not only once those are
    /// fixed), each at the value it is about: an inverse at its name, a duplicate at the
    /// second declaration's name, a predicate's syntax error at its column in the file. What
    /// an expression would say of a property that did not read is left out (reported already).
    @Test func expressionProblemsComeWithTheOthersAtTheBadText() {
        let found = diagnostics(
            #"""
            {
              "entities": [
                { "name": "Note",
                  "attributes": [
                    { "name": "title", "type": "string" },
                    { "name": "title", "type": "string" },
                    { "name": "count", "type": "int16", "derived": "title.length" }
                  ],
                  "relationships": [ { "name": "tag", "destination": "Tag", "inverse": "notez" } ],
                  "fetchedProperties": [ { "name": "same", "destination": "Note", "predicate": "tag.label == $FETCH_SOURCE.tag.label" } ]
                },
                { "name": "Tag", "attributes": [ { "name": "label", "type": "strng" } ],
                  "relationships": [ { "name": "notes", "destination": "Note", "toMany": true, "inverse": "tag" } ] }
              ],
              "fetchRequests": [ { "name": "byTitle", "entity": "Note", "predicate": "title == $T AND (priority >" } ]
            }
            """#)
        func at(_ suffix: String) -> SchemaDiagnostic? { found.first { $0.path.hasSuffix(suffix) } }
        #expect(at("attributes[1].name")?.location == SourceLocation(line: 6, column: 19), "the second declaration's name")
        #expect(at("relationships[0].inverse")?.location == SourceLocation(line: 9, column: 76), "at 'notez'")
        #expect(at("attributes[2].derived")?.location == SourceLocation(line: 7, column: 56))
        // The predicate's string starts at column 74; the problem is at its column 28 (its end).
        #expect(at("fetchRequests[0].predicate")?.message.contains("at column 28:") == true)
        #expect(at("fetchRequests[0].predicate")?.location == SourceLocation(line: 15, column: 74 + 28))
        #expect(at("attributes[0].type")?.message.contains("unknown type 'strng'") == true)
        #expect(!found.contains { $0.message.contains("has no property 'label'") }, "\(found)")
        #expect(found.count == 6, "\(found.map(\.description))")
    }

    @Test func errorDescriptionNamesFileLineAndPath() {
        do {
            _ = try ManagedObjectModel(schema: "{\n \"entities\": [ {\"name\": \"E\", \"abstract\": 1} ]}", file: "m.json")
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "m.json:2:42: $.entities[0].abstract: 'abstract' must be true or false, found a number")
        }
    }

    @Test func reportsUnreadableFiles() {
        #expect(throws: SchemaError.self) {
            try ManagedObjectModel(contentsOf: URL(fileURLWithPath: "/nonexistent/model.json"))
        }
    }

    /// Inheritance is at most 100 levels deep: 100 ancestors load, 101 are refused with one
    /// short message at the entity that passes the limit; a chain or cycle of 2,000 entities
    /// is refused at once (it took 18.6 s, and a cycle's message named every entity). No
    /// time limit: one failed on a busy machine (142 s) while the work was as small as ever;
    /// the refusal at the 101st level is what bounds the work, and that is asserted.
    @Test func inheritanceDepthIsBoundedAndLongChainsAreRefusedQuickly() throws {
        func chain(_ count: Int) -> String {
            let entities = (0..<count).map { i in
                #"{"name": "E\#(i)""# + (i == 0 ? "" : #", "parent": "E\#(i - 1)""#) + #", "attributes": [{"name": "a\#(i)", "type": "string"}]}"#
            }
            return #"{"entities": ["# + entities.joined(separator: ", ") + "]}"
        }
        let deepest = try ManagedObjectModel(schema: chain(101))
        #expect(deepest.entity(named: "E100")?.ancestorNames.count == 100)
        #expect(deepest.entity(named: "E100")?.properties.count == 101)
        for count in [102, 2_000] {
            #expect {
                try ManagedObjectModel(schema: chain(count))
            } throws: { error in
                guard let error = error as? SchemaError else { return false }
                return error.diagnostics.count == 1 && error.diagnostics[0].path == "$.entities[101].parent"
                    && error.diagnostics[0].message.hasPrefix("E101: inheritance is more than 100 levels deep") && "\(error)".utf8.count < 400
            }
        }
        let cycle = #"{"entities": ["# + (0..<2_000).map { #"{"name": "C\#($0)", "parent": "C\#(($0 + 1) % 2_000)"}"# }.joined(separator: ", ") + "]}"
        #expect {
            try ManagedObjectModel(schema: cycle)
        } throws: { error in
            guard let error = error as? SchemaError else { return false }
            return error.diagnostics.count == 1 && error.diagnostics[0].message.contains("inheritance cycle C0 -> C1 -> C2 -> ... (2000 entities) -> C0")
        }
    }

    @Test func derivedAttributesReadingEachOtherInACycleAreRefused() throws {
        let cycle = #"""
            {"entities": [
              {"name": "A", "attributes": [
                {"name": "x", "type": "int64", "derived": "y + 1"},
                {"name": "y", "type": "int64", "derived": "x * 2"},
                {"name": "z", "type": "boolean", "derived": "z"}
              ],
               "relationships": [{"name": "b", "destination": "B", "inverse": "a"}]},
              {"name": "B", "attributes": [{"name": "w", "type": "int64", "derived": "a.v"}],
               "relationships": [{"name": "a", "destination": "A", "inverse": "b"}]}
            ]}
            """#
        let found = diagnostics(cycle)
        #expect(found.contains { $0.message.contains("cycle: A.x -> A.y -> A.x") || $0.message.contains("cycle: A.y -> A.x -> A.y") }, "\(found.map(\.description))")
        #expect(found.contains { $0.message.contains("cycle: A.z -> A.z") }, "\(found.map(\.description))")
        // Through a relationship, and a chain without a cycle loads.
        let across = cycle.replacingOccurrences(of: #""derived": "x * 2""#, with: #""derived": "b.w""#).replacingOccurrences(of: #"{"name": "z", "type": "boolean", "derived": "z"}"#, with: #"{"name": "v", "type": "int64", "derived": "x"}"#)
        #expect(diagnostics(across).contains { $0.message.contains("cycle") }, "\(diagnostics(across).map(\.description))")
        let chain = #"{"entities": [{"name": "A", "attributes": [{"name": "p", "type": "int64"}, {"name": "x", "type": "int64", "derived": "y + 1"}, {"name": "y", "type": "int64", "derived": "p * 2"}]}]}"#
        _ = try ManagedObjectModel(schema: chain)
    }
}

import Foundation

/// Schema texts shared by the model tests.
enum SchemaFixtures {
    /// A schema that uses every feature of the format.
    static let full = #"""
    {
      "entities": [
        {
          "name": "Item", "abstract": true, "userInfo": {"table": "items"},
          "attributes": [
            { "name": "title", "type": "string", "optional": false, "minLength": 1, "maxLength": 80,
              "pattern": "[A-Za-z].*", "default": "Untitled", "renamingIdentifier": "name" },
            { "name": "created", "type": "date", "default": "2026-01-01T00:00:00Z",
              "min": "2000-01-01", "max": "2100-01-01" }
          ],
          "relationships": [
            { "name": "tags", "destination": "Tag", "inverse": "items", "toMany": true }
          ]
        },
        {
          "name": "Note", "parent": "Item", "versionHashModifier": "2",
          "attributes": [
            { "name": "body", "type": "string" },
            { "name": "draftCursor", "type": "int32", "transient": true }
          ]
        },
        {
          "name": "Todo", "parent": "Item", "renamingIdentifier": "Chore",
          "attributes": [
            { "name": "a16", "type": "int16", "default": -32768 },
            { "name": "a32", "type": "int32", "default": 2147483647 },
            { "name": "a64", "type": "int64", "default": 9223372036854775807 },
            { "name": "aDouble", "type": "double", "default": "NaN" },
            { "name": "aFloat", "type": "float", "default": 1.5, "min": 0, "max": 10 },
            { "name": "aDecimal", "type": "decimal", "default": "12345678901234567890.123456789" },
            { "name": "aBool", "type": "boolean", "default": true },
            { "name": "aBinary", "type": "binary", "default": "AAEC", "maxLength": 16 },
            { "name": "aUUID", "type": "uuid", "default": "6BA7B810-9DAD-11D1-80B4-00C04FD430C8" },
            { "name": "aURI", "type": "uri", "default": "https://example.com/x" },
            { "name": "status", "type": "string", "default": "open", "allowedValues": ["open", "closed"],
              "userInfo": {"ui": "picker"}, "versionHashModifier": "v2" },
            { "name": "isLate", "type": "boolean", "derived": "created < now()" }
          ],
          "relationships": [
            { "name": "project", "destination": "Project", "inverse": "todos", "optional": false, "deleteRule": "nullify" },
            { "name": "subtasks", "destination": "Todo", "inverse": "parentTodo", "toMany": true, "ordered": true,
              "deleteRule": "cascade", "minCount": 0, "maxCount": 20 },
            { "name": "parentTodo", "destination": "Todo", "inverse": "subtasks" }
          ],
          "uniquenessConstraints": [["title", "a32"]],
          "indexes": [{ "name": "byProject", "properties": ["project", "a16"] }, { "properties": ["status"] }]
        },
        {
          "name": "Project",
          "attributes": [{ "name": "name", "type": "string", "optional": false }],
          "relationships": [
            { "name": "todos", "destination": "Todo", "inverse": "project", "toMany": true, "deleteRule": "deny" },
            { "name": "owner", "destination": "Person", "deleteRule": "noAction" }
          ],
          "fetchedProperties": [
            { "name": "openTodos", "destination": "Todo", "predicate": "project == $FETCH_SOURCE AND status == 'open'" }
          ],
          "uniquenessConstraints": [["name"]]
        },
        { "name": "Person", "attributes": [{ "name": "name", "type": "string" }] },
        {
          "name": "Tag",
          "attributes": [{ "name": "label", "type": "string", "optional": false }],
          "relationships": [{ "name": "items", "destination": "Item", "inverse": "tags", "toMany": true }]
        }
      ],
      "fetchRequests": [
        { "name": "openTodos", "entity": "Todo", "predicate": "status == $STATUS",
          "sort": [{ "key": "created", "ascending": false }, { "key": "project.name" }] }
      ]
    }
    """#

    /// The URL of the repository's Models directory.
    static let modelsDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Models")
}

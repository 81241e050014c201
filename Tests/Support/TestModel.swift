import Foundation
import ObjectStore
import ObjectStoreModel

/// The model the object-graph tests run against, and helpers to make contexts of it.
enum TestModel {
    static let schema = #"""
    {
      "entities": [
        { "name": "Task",
          "attributes": [
            { "name": "text", "type": "string", "optional": false, "minLength": 1, "maxLength": 20, "preserveValueOnDeletion": true },
            { "name": "priority", "type": "int16", "optional": false, "default": 0, "min": 0, "max": 3 },
            { "name": "dueDate", "type": "date" },
            { "name": "code", "type": "string", "pattern": "[A-Z]{3}" },
            { "name": "status", "type": "string", "default": "open", "allowedValues": ["open", "done"] },
            { "name": "estimate", "type": "decimal" },
            { "name": "ratio", "type": "double" },
            { "name": "scratch", "type": "string", "transient": true },
            { "name": "isOverdue", "type": "boolean", "derived": "dueDate != nil AND dueDate < now()" },
            { "name": "doubled", "type": "int32", "derived": "priority * 2" }
          ],
          "relationships": [
            { "name": "location", "destination": "Location", "inverse": "tasks" },
            { "name": "tags", "destination": "Tag", "inverse": "tasks", "toMany": true },
            { "name": "subtasks", "destination": "Task", "inverse": "parent", "toMany": true, "ordered": true,
              "deleteRule": "cascade", "maxCount": 3 },
            { "name": "parent", "destination": "Task", "inverse": "subtasks" },
            { "name": "notes", "destination": "Note", "inverse": "task", "toMany": true, "deleteRule": "cascade" }
          ]
        },
        { "name": "Location",
          "attributes": [{ "name": "name", "type": "string", "optional": false }],
          "relationships": [{ "name": "tasks", "destination": "Task", "inverse": "location", "toMany": true }],
          "fetchedProperties": [
            { "name": "highPriTasks", "destination": "Task", "predicate": "location == $FETCH_SOURCE AND priority == 3" }
          ],
          "uniquenessConstraints": [["name"]]
        },
        { "name": "Tag",
          "attributes": [{ "name": "label", "type": "string", "optional": false }],
          "relationships": [{ "name": "tasks", "destination": "Task", "inverse": "tags", "toMany": true }]
        },
        { "name": "Note",
          "attributes": [{ "name": "body", "type": "string" }],
          "relationships": [
            { "name": "task", "destination": "Task", "inverse": "notes" },
            { "name": "attachments", "destination": "Attachment", "inverse": "note", "toMany": true, "deleteRule": "cascade" }
          ]
        },
        { "name": "Attachment",
          "attributes": [{ "name": "name", "type": "string" }],
          "relationships": [{ "name": "note", "destination": "Note", "inverse": "attachments", "deleteRule": "cascade" }]
        },
        { "name": "Project",
          "attributes": [{ "name": "name", "type": "string" }],
          "relationships": [
            { "name": "members", "destination": "Person", "inverse": "project", "toMany": true, "deleteRule": "deny" },
            { "name": "lead", "destination": "Person", "deleteRule": "noAction" }
          ]
        },
        { "name": "Person",
          "attributes": [{ "name": "name", "type": "string" }],
          "relationships": [
            { "name": "project", "destination": "Project", "inverse": "members" },
            { "name": "spouse", "destination": "Person", "inverse": "spouse" }
          ]
        },
        { "name": "Shape", "abstract": true,
          "attributes": [{ "name": "label", "type": "string" }] },
        { "name": "Circle", "parent": "Shape",
          "attributes": [{ "name": "radius", "type": "double", "default": 1.0 }] }
      ],
      "fetchRequests": [
        { "name": "tasksDueSooner", "entity": "Task", "predicate": "dueDate < $DUE_DATE", "sort": [{ "key": "dueDate" }] }
      ]
    }
    """#

    static let model: ManagedObjectModel = {
        do {
            return try ManagedObjectModel(schema: schema, file: "TestModel")
        } catch {
            preconditionFailure("the test model must load: \(error)")
        }
    }()

    /// The fixed "now" of every test: 2026-11-22T12:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_795_348_800)

    /// A new in-memory coordinator whose clock reads ``now``.
    static func coordinator() -> PersistentStoreCoordinator {
        PersistentStoreCoordinator(model: model, store: InMemoryStore(model: model), clock: { now })
    }

    /// A context of a new in-memory coordinator.
    static func context() -> ManagedObjectContext {
        ManagedObjectContext(coordinator: coordinator())
    }
}

extension ManagedObjectContext {
    /// Inserts a task with text (and optionally other values) for tests.
    @discardableResult
    func task(_ text: String, priority: Int64 = 0) throws -> ManagedObject {
        let task = try insertObject(entityName: "Task")
        try task.setValue(.string(text), forKey: "text")
        try task.setValue(.integer(priority), forKey: "priority")
        return task
    }

    @discardableResult
    func location(_ name: String) throws -> ManagedObject {
        let location = try insertObject(entityName: "Location")
        try location.setValue(.string(name), forKey: "name")
        return location
    }

    func all(_ entity: String) throws -> [ManagedObject] {
        try fetch(FetchRequest(entityName: entity))
    }
}

/// Fields of a binary store file's 64-byte header (docs/store-format.md), for tests that
/// look at the file itself.
enum StoreHeader {
    /// The little-endian 8-byte field at `offset`.
    static func field(_ bytes: some Collection<UInt8>, at offset: Int) -> UInt64 {
        bytes.dropFirst(offset).prefix(8).reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The committed length the header claims.
    static func claimedLength(_ url: URL) throws -> Int { Int(field(try Data(contentsOf: url), at: 16)) }

    /// The snapshot's length (zero: no snapshot).
    static func snapshotLength(_ url: URL) throws -> UInt64 { field(try Data(contentsOf: url), at: 40) }

    /// How many times the log was cut in place since the file was written (format 7).
    static func logCuts(_ url: URL) throws -> UInt64 { field(try Data(contentsOf: url), at: 56) }
}

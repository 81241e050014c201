import Foundation
import Testing
import ObjectStore
@testable import taskctl

@Suite struct ModelEmbeddingTests {
    /// The built products' folder (its Modules hold ObjectStore's), the plugin's tool and swiftc.
    static func tools() throws -> (built: URL, tool: URL, swiftc: URL) {
        let built = try #require(TaskctlRunner.binary).deletingLastPathComponent()
        let swiftc = try #require(ModelPluginBuildTests.swift).deletingLastPathComponent().appendingPathComponent("swiftc")
        return (built, built.appendingPathComponent("objectstore-model"), swiftc)
    }

    @Test func theEmbeddedModelIsModelsTasks() throws {
        let directory = TaskctlRunner.repository.appendingPathComponent("Models/Tasks")
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".json") {
            files[name] = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        #expect(TasksModelFiles.files == files, "ObjectStoreModelPlugin embeds Models/Tasks as it is")
        #expect(try App.modelDirectory().currentModel().versionName == "v10")
    }

    /// The plugin's tool, which the build runs: a model problem fails the build with the
    /// file, line and column, as a compiler error.
    @Test(.enabled(if: TaskctlRunner.binary != nil, "needs the built tools (swift build)"))
    func theModelToolReportsAProblemWhereItIs() throws {
        let tool = try #require(TaskctlRunner.binary).deletingLastPathComponent().appendingPathComponent("objectstore-model")
        let t = try TaskctlRunner()
        let models = t.directory.appendingPathComponent("Notes")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try Data(#"{"versions": ["v1", "v2"], "current": "v2"}"#.utf8).write(to: models.appendingPathComponent("manifest.json"))
        try Data(#"{"entities": [{"name": "Note", "attributes": [{"name": "body", "type": "string"}]}]}"#.utf8).write(to: models.appendingPathComponent("v1.json"))
        // v2 turns body into a number: neither a schema error nor inferable.
        try Data("{\"entities\": [{\"name\": \"Note\",\n  \"attributes\": [{\"name\": \"body\", \"type\": \"int32\"}, {\"name\": \"x\", \"type\": \"strin\"}]}]}".utf8)
            .write(to: models.appendingPathComponent("v2.json"))
        let output = t.directory.appendingPathComponent("NotesModelFiles.swift")
        let broken = try t.run(program: tool.path, ["embed", models.path, output.path])
        #expect(broken.status == 1 && broken.err.contains("/Notes/v2.json:2:75: error: $.entities[0].attributes[1].type: Note.x: unknown type 'strin'"), "\(broken.err)")
        #expect(!FileManager.default.fileExists(atPath: output.path))

        try Data("{\"entities\": [{\"name\": \"Note\",\n  \"attributes\": [{\"name\": \"body\", \"type\": \"int32\"}]}]}".utf8).write(to: models.appendingPathComponent("v2.json"))
        let unmappable = try t.run(program: tool.path, ["embed", models.path, output.path])
        #expect(unmappable.status == 1 && unmappable.err.contains("/Notes/v2.json:1:1: error: no mapping from v1 to v2 can be inferred"), "\(unmappable.err)")

        try Data(#"""
            {"entities": [{"name": "Note", "attributes": [{"name": "body", "type": "string"}, {"name": "tab", "type": "string", "default": "a\tb\u0001"},
                                                         {"name": "default", "type": "int32", "optional": false, "default": 1}, {"name": "entity", "type": "string"}]},
                          {"name": "Memo", "parent": "Note", "attributes": [{"name": "due", "type": "date"}]}]}
            """#.utf8).write(to: models.appendingPathComponent("v2.json"))
        let fine = try t.run(program: tool.path, ["embed", models.path, output.path])
        #expect(fine.status == 0, "\(fine.err)")
        let source = try String(contentsOf: output, encoding: .utf8)
        #expect(source.contains("enum NotesModelFiles {") && source.contains(#""v2.json": "#) && source.contains(#"a\\tb\\u0001"#))
        // Typed classes: a keyword escaped, a name ManagedObject has renamed with its key,
        // every class open to a subclass (a sub-entity's, or the user's with behaviour).
        for line in ["enum NotesModel {", "    class Note: ObjectStore.ManagedObject {", "        @ObjectStore.Attribute var `default`: Swift.Int32\n",
                     "        @ObjectStore.Attribute(\"entity\") var entity_: Swift.String?\n", "    class Memo: Note {",
                     "        @ObjectStore.Attribute var due: Foundation.Date?\n",
                     "        try coordinator.register(Memo.self, forEntityName: \"Memo\")"] {
            #expect(source.contains(line), "\(line) missing from:\n\(source)")
        }
    }

    /// The classes the tool writes compile whatever the entities and properties are named:
    /// entities named like Foundation's and Swift's types (Date, Data, UUID, URL, String),
    /// like ObjectStore's (Attribute, Relationship, Derived, ManagedObject,
    /// PersistentStoreCoordinator) or a keyword (`default`), and properties named like
    /// ManagedObject's members or keywords, `entity` next to `entity_` and a sub-entity's
    /// `entity__`. Names no class can take are refused where the schema says them.
    @Test(.enabled(if: TaskctlRunner.binary != nil && ModelPluginBuildTests.swift != nil, "needs the built tools and swiftc"))
    func theGeneratedClassesCompileWhateverTheNames() throws {
        let (built, tool, swiftc) = try Self.tools()
        let t = try TaskctlRunner()
        let models = t.directory.appendingPathComponent("Nasty")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try Data(#"{"versions": ["v1"], "current": "v1"}"#.utf8).write(to: models.appendingPathComponent("manifest.json"))
        let plain = ["Data", "UUID", "URL", "String", "Tag", "Attribute", "Relationship", "Derived", "ManagedObject", "PersistentStoreCoordinator", "default"]
        var entities = plain.enumerated().map { #"{"name": "\#($0.element)", "attributes": [{"name": "class", "type": "int\#([16, 32, 64][$0.offset % 3])"}]}"# }
        entities.append(#"{"name": "Date", "attributes": [{"name": "at", "type": "date"}], "relationships": [{"name": "notes", "destination": "Note", "inverse": "when", "toMany": true}]}"#)
        let awkward = ["entity", "entity_", "self", "description", "init", "hasChanges", "objectID", "Type", "managedObjectContext", "isFault", "lastAccessError"]
        entities.append(#"{"name": "Note", "attributes": ["# + awkward.map { #"{"name": "\#($0)", "type": "string"}"# }.joined(separator: ", ")
                        + #", {"name": "default", "type": "int32", "optional": false, "default": 1}, {"name": "plusOne", "type": "int32", "derived": "default + 1"}, {"name": "rank", "type": "int16", "default": 5}], "#
                        + #""relationships": [{"name": "when", "destination": "Date", "inverse": "notes"}], "#
                        + #""fetchedProperties": [{"name": "sameWhen", "destination": "Note", "predicate": "when == $FETCH_SOURCE.when"}]}"#)
        entities.append(#"{"name": "Memo", "parent": "Note", "attributes": [{"name": "entity__", "type": "string"}, {"name": "blob", "type": "binary"}, {"name": "amount", "type": "decimal"}, {"name": "link", "type": "uri"}, {"name": "id", "type": "uuid"}, {"name": "ok", "type": "boolean"}, {"name": "x", "type": "double"}, {"name": "y", "type": "float"}]}"#)
        try Data((#"{"entities": [\#n"# + entities.joined(separator: ",\n") + "\n]}").utf8).write(to: models.appendingPathComponent("v1.json"))
        let source = t.directory.appendingPathComponent("NastyModelFiles.swift")
        let generated = try t.run(program: tool.path, ["embed", models.path, source.path])
        try #require(generated.status == 0, "\(generated.err)")
        let use = t.directory.appendingPathComponent("Use.swift")
        try Data("""
            import Foundation
            import ObjectStore
            // The documented way to name a class whose name another module uses too (Swift
            // Testing's Tag, Foundation's Data): qualified, or through a type alias.
            typealias NoteTag = NastyModel.Tag
            // Behaviour in a subclass regeneration never touches, registered for its entity.
            final class MyMemo: NastyModel.Memo {
                override func awakeFromInsert() {
                    super.awakeFromInsert()
                    entity__ = "awake"
                }
            }
            func use(_ coordinator: PersistentStoreCoordinator) throws {
                try NastyModel.register(in: coordinator)
                try coordinator.register(MyMemo.self, forEntityName: "Memo")
                let context = ManagedObjectContext(coordinator: coordinator)
                let memo = try context.insert(NastyModel.Memo.self)
                memo.default = 3
                memo.entity__ = "Memo's own"
                memo.entity___ = "the key entity"
                memo.self_ = "the key self"
                let when = try context.insert(NastyModel.Date.self)
                when.at = Date()
                memo.when = when
                let tag: NoteTag = try context.insert(NoteTag.self)
                tag.class = 2
                let data = try context.insert(NastyModel.Data.self)
                data.class = 1
                let bytes: Foundation.Data = Data([1])
                memo.blob = bytes
                let rank: Int16 = memo.rank   // an attribute with a default is not optional
                let same: [NastyModel.Note] = try memo.sameWhen()   // a fetched property, inherited
                _ = NastyModelFiles.files.count + Int(memo.plusOne ?? 0) + Int(rank) + same.count
            }
            """.utf8).write(to: use)
        let check = try t.run(program: swiftc.path, ["-typecheck", "-swift-version", "6", "-I", built.appendingPathComponent("Modules").path, source.path, use.path])
        let classes = (try? String(contentsOf: source, encoding: .utf8))?.components(separatedBy: "enum NastyModel {").last ?? ""
        #expect(check.status == 0, "the generated classes do not compile:\n\(check.err)\n\(classes)")

        // An entity no Swift class can be named after: refused at its place in the file.
        for name in ["Type", "Swift", "NastyModel"] {
            try Data(("{\"entities\": [\n  {\"name\": \"Fine\"},\n  {\"name\": \"\(name)\"}\n]}").utf8).write(to: models.appendingPathComponent("v1.json"))
            let refused = try t.run(program: tool.path, ["embed", models.path, source.path])
            #expect(refused.status == 1 && refused.err.contains("/Nasty/v1.json:3:12: error: entity \(name) cannot be a Swift class"), "\(refused.err)")
            // Embedding the files only (a target without ObjectStore) has no classes to name.
            #expect(try t.run(program: tool.path, ["embed", models.path, source.path, "--files-only"]).status == 0)
        }
    }

    /// A manifest's `"access": "public"` makes the generated API public and the classes
    /// open: an app's module subclasses a library's class with behaviour and uses its
    /// properties (an attribute with a default not optional, a fetched property's method);
    /// without it the same app does not compile; any other access is refused where it is.
    @Test(.enabled(if: TaskctlRunner.binary != nil && ModelPluginBuildTests.swift != nil, "needs the built tools and swiftc"))
    func aPublicModelIsUsedAndSubclassedFromAnotherModule() throws {
        let (built, tool, swiftc) = try Self.tools()
        let t = try TaskctlRunner()
        let models = t.directory.appendingPathComponent("Notes")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try Data(#"{"entities": [{"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "rank", "type": "int16", "default": 3}], "fetchedProperties": [{"name": "sameRank", "destination": "Note", "predicate": "rank == $FETCH_SOURCE.rank"}]}]}"#.utf8)
            .write(to: models.appendingPathComponent("v1.json"))
        try Data(#"""
            import ObjectStore
            import NotesLib
            final class MyNote: NotesModel.Note {
                override func awakeFromInsert() {
                    super.awakeFromInsert()
                    title = "new"
                }
            }
            func use(_ coordinator: PersistentStoreCoordinator) throws {
                try NotesModel.register(in: coordinator)
                try coordinator.register(MyNote.self, forEntityName: "Note")
                let note = try ManagedObjectContext(coordinator: coordinator).insert(MyNote.self)
                let rank: Int16 = note.rank
                _ = try note.sameRank().count + Int(rank) + NotesModelFiles.files.count
            }
            """#.utf8).write(to: t.directory.appendingPathComponent("App.swift"))
        func compile(access: String) throws -> (library: TaskctlRunner.Result, app: TaskctlRunner.Result) {
            try Data(#"{"versions": ["v1"], "current": "v1", "access": "\#(access)"}"#.utf8).write(to: models.appendingPathComponent("manifest.json"))
            let source = t.directory.appendingPathComponent("NotesLib.swift")
            let generated = try t.run(program: tool.path, ["embed", models.path, source.path])
            try #require(generated.status == 0, "\(generated.err)")
            let library = try t.run(program: swiftc.path, ["-emit-module", "-module-name", "NotesLib", "-parse-as-library", "-swift-version", "6",
                                                           "-I", built.appendingPathComponent("Modules").path, source.path,
                                                           "-emit-module-path", t.directory.appendingPathComponent("NotesLib.swiftmodule").path])
            let app = try t.run(program: swiftc.path, ["-typecheck", "-swift-version", "6", "-I", built.appendingPathComponent("Modules").path,
                                                       "-I", t.directory.path, t.directory.appendingPathComponent("App.swift").path])
            return (library, app)
        }
        let open = try compile(access: "public")
        #expect(open.library.status == 0, "\(open.library.err)")
        #expect(open.app.status == 0, "an app uses the public classes:\n\(open.app.err)")
        let closed = try compile(access: "internal")
        #expect(closed.library.status == 0, "\(closed.library.err)")
        #expect(closed.app.status != 0, "internal classes are not the app's")

        try Data("{\"versions\": [\"v1\"], \"current\": \"v1\",\n \"access\": \"private\"}".utf8).write(to: models.appendingPathComponent("manifest.json"))
        let refused = try t.run(program: tool.path, ["embed", models.path, t.directory.appendingPathComponent("NotesLib.swift").path])
        #expect(refused.status == 1 && refused.err.contains("/Notes/manifest.json:2:12: error: $.access: 'access' must be \"internal\" or \"public\""), "\(refused.err)")
    }

    /// The plugin also writes a typed class per entity of the current version.
    @Test func thePluginsTypedClassesWorkWithTheModel() throws {
        let model = try App.modelDirectory().currentModel()
        let now = Date(timeIntervalSince1970: 1_795_348_800)  // 2026-11-22T12:00Z
        let coordinator = PersistentStoreCoordinator(model: model, store: InMemoryStore(model: model), clock: { now })
        try TasksModel.register(in: coordinator)
        let context = ManagedObjectContext(coordinator: coordinator)
        let home = try context.insert(TasksModel.Location.self)
        home.name = "Home"
        let task = try context.insert(TasksModel.Task.self)
        task.title = "Buy milk"
        task.uuid = UUID()
        task.priority = 2
        task.dueDate = Date(timeIntervalSince1970: 1_795_000_000)
        task.location = home
        let note = try context.insert(TasksModel.Annotation.self)
        note.text = "oat"
        note.entry = Date(timeIntervalSince1970: 1_795_000_000)
        note.task = task
        try context.save()
        #expect(task.status == "pending", "the model's default")
        #expect(home.tasks.map(\.objectID) == [task.objectID] && task.annotations.map(\.text) == ["oat"])
        let found = try context.fetch(TasksModel.Task.self, where: "priority >= %d AND location.name == %@", 2, "Home")
        #expect(found.map(\.title) == ["Buy milk"])
        #expect(found.first?.isOverdue == true, "derived, against the coordinator's clock (due 2026-11-18)")
    }
}

import Foundation
import Testing

/// ObjectStoreModelPlugin as a user meets it: a package of their own that depends on ours,
/// built again and again while its model changes.
@Suite struct ModelPluginBuildTests {
    static let swift: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("swift") }
            + [URL(fileURLWithPath: "/opt/swift/usr/bin/swift"), URL(fileURLWithPath: "/usr/bin/swift")]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// A new folder for a user's package, with `Models/Notes` and `Sources/app` made.
    static func userPackage(_ prefix: String) throws -> (root: URL, models: URL, sources: URL) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        let models = root.appendingPathComponent("Models/Notes")
        let sources = root.appendingPathComponent("Sources/app")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
        return (root, models, sources)
    }

    /// Runs a program to its end: its exit status and what it printed (with `stderr`, its
    /// errors too).
    static func run(_ program: URL, _ arguments: [String] = [], stderr: Bool = false) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        if stderr { process.standardError = pipe }
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// `swift build` of the package at `root`, its build folder inside it.
    static func build(_ root: URL, swift: URL) throws -> (status: Int32, output: String) {
        try run(swift, ["build", "--package-path", root.path, "--scratch-path", root.appendingPathComponent(".build").path], stderr: true)
    }

    /// Every incremental build embeds and checks the model directory as it is at that build:
    /// a version added (and later edits of it), an invalid edit (fails the build at its file,
    /// line and column), a file removed (no "missing inputs"), and a build that changed
    /// nothing relinks nothing.
    @Test(.enabled(if: swift != nil, "needs the swift command"))
    func anIncrementallyBuiltPackageEmbedsTheModelAsItIsAtEachBuild() throws {
        let swift = try #require(Self.swift)
        let (root, models, sources) = try Self.userPackage("plugin-user")
        defer { try? FileManager.default.removeItem(at: root) }
        let repository = TaskctlRunner.repository
        try Data("""
            // swift-tools-version:6.0
            import PackageDescription
            let package = Package(name: "NotesApp", dependencies: [.package(path: "\(repository.path)")], targets: [
                .executableTarget(name: "app", plugins: [.plugin(name: "ObjectStoreModelPlugin", package: "\(repository.lastPathComponent)")]),
            ])
            """.utf8).write(to: root.appendingPathComponent("Package.swift"))
        // A target without ObjectStore gets the files only (the typed classes need ObjectStore).
        try Data(#"for (name, text) in NotesModelFiles.files.sorted(by: { $0.key < $1.key }) { print("\(name)=\(text)") }"#.utf8)
            .write(to: sources.appendingPathComponent("main.swift"))
        let v1 = #"{"entities": [{"name": "Note", "attributes": [{"name": "body", "type": "string"}]}]}"#
        func write(_ text: String, _ name: String) throws {
            // The Swift driver tells a changed source by its modification time in seconds:
            // edits a second apart, as a person makes them.
            Thread.sleep(forTimeInterval: 1.1)
            try Data(text.utf8).write(to: models.appendingPathComponent(name))
        }
        func build() throws -> (status: Int32, output: String) { try Self.build(root, swift: swift) }
        let app = root.appendingPathComponent(".build/debug/app")
        func embedded() throws -> String { try Self.run(app).output }

        try write(#"{"versions": ["v1"], "current": "v1"}"#, "manifest.json")
        try write(v1, "v1.json")
        var result = try build()
        try #require(result.status == 0, "\(result.output)")
        #expect(try embedded().contains("v1.json=\(v1)"))

        // A new version: added and the manifest bumped.
        let v2 = #"{"entities": [{"name": "Note", "attributes": [{"name": "body", "type": "string"}, {"name": "pinned", "type": "boolean"}]}]}"#
        try write(v2, "v2.json")
        try write(#"{"versions": ["v1", "v2"], "current": "v2"}"#, "manifest.json")
        result = try build()
        #expect(result.status == 0, "\(result.output)")
        #expect(try embedded().contains("v2.json=\(v2)"))

        // Edits of the new file: each one checked and embedded.
        let v2b = v2.replacingOccurrences(of: "pinned", with: "starred")
        try write(v2b, "v2.json")
        result = try build()
        #expect(result.status == 0, "\(result.output)")
        #expect(try embedded().contains("v2.json=\(v2b)"))
        try write(v2b.replacingOccurrences(of: "boolean", with: "strng"), "v2.json")
        result = try build()
        #expect(result.status != 0)
        #expect(result.output.contains("Models/Notes/v2.json:1:") && result.output.contains("unknown type 'strng'"), "\(result.output)")

        // The version withdrawn: its file removed.
        try write(#"{"versions": ["v1"], "current": "v1"}"#, "manifest.json")
        try FileManager.default.removeItem(at: models.appendingPathComponent("v2.json"))
        result = try build()
        #expect(result.status == 0, "\(result.output)")
        #expect(!result.output.contains("missing inputs"), "\(result.output)")
        let now = try embedded()
        #expect(now.contains("v1.json=\(v1)") && !now.contains("v2.json"), "\(now)")

        // Nothing changed: the model is checked again, nothing is compiled or linked.
        let linked = try FileManager.default.attributesOfItem(atPath: app.path)[.modificationDate] as? Date
        Thread.sleep(forTimeInterval: 1.1)
        result = try build()
        #expect(result.status == 0, "\(result.output)")
        #expect(try FileManager.default.attributesOfItem(atPath: app.path)[.modificationDate] as? Date == linked, "\(result.output)")
    }

    /// A user's package with a target that depends on ObjectStore, as the README tells it:
    /// the plugin's classes for entities named like other modules' types (Tag, Data), a
    /// subclass with behaviour registered for its entity, an attribute with a default read
    /// as a non-optional property, an array as `IN %@`, and a tag's notes derived from the
    /// notes' tags (`derivedFromInverse`, set and read through the generated properties),
    /// built by SwiftPM and run; its notes and tags synced between two replicas through a
    /// git repository with ObjectStoreSync; values of the app's own types (a transformable
    /// colour, a Codable layout, a string and an integer enum the plugin made); and a batch
    /// update from a background context that a view context on the main actor merges on its
    /// own, and a batch insert and delete.
    @Test(.enabled(if: swift != nil, "needs the swift command"))
    func aUserPackageUsesTheGeneratedClassesWithBehaviour() throws {
        let swift = try #require(Self.swift)
        let (root, models, sources) = try Self.userPackage("plugin-typed")
        defer { try? FileManager.default.removeItem(at: root) }
        let repository = TaskctlRunner.repository
        try Data("""
            // swift-tools-version:6.0
            import PackageDescription
            let package = Package(name: "NotesApp", dependencies: [.package(path: "\(repository.path)")], targets: [
                .executableTarget(name: "app", dependencies: [
                    .product(name: "ObjectStore", package: "\(repository.lastPathComponent)"),
                    .product(name: "ObjectStoreModel", package: "\(repository.lastPathComponent)"),
                    .product(name: "ObjectStoreSync", package: "\(repository.lastPathComponent)"),
                ], plugins: [.plugin(name: "ObjectStoreModelPlugin", package: "\(repository.lastPathComponent)")]),
            ])
            """.utf8).write(to: root.appendingPathComponent("Package.swift"))
        try Data(#"{"versions": ["v1"], "current": "v1"}"#.utf8).write(to: models.appendingPathComponent("manifest.json"))
        try Data(#"""
            {"entities": [
              {"name": "SyncState", "attributes": [{"name": "server", "type": "string"}, {"name": "baseVersion", "type": "uuid"},
                {"name": "syncedTransaction", "type": "int64", "optional": false, "default": 0}, {"name": "lastSync", "type": "date"},
                {"name": "clockFloor", "type": "date"}]},
              {"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "rank", "type": "int16", "default": 3},
                {"name": "uuid", "type": "uuid", "preserveValueOnDeletion": true},
                {"name": "color", "type": "transformable", "transformer": "ColorTransformer", "swiftType": "Color"},
                {"name": "layout", "type": "string", "swiftType": "Layout"},
                {"name": "state", "type": "string", "allowedValues": ["draft", "published"], "default": "draft", "enum": "State"},
                {"name": "weight", "type": "int16", "enum": {"name": "Weight", "cases": {"light": 1, "heavy": 5}}}],
               "relationships": [{"name": "tags", "destination": "Tag", "toMany": true, "inverse": "notes"}]},
              {"name": "Tag", "attributes": [{"name": "name", "type": "string"}, {"name": "uuid", "type": "uuid", "preserveValueOnDeletion": true}],
               "relationships": [{"name": "notes", "destination": "Note", "toMany": true, "inverse": "tags", "derivedFromInverse": true}]},
              {"name": "Data", "attributes": [{"name": "bytes", "type": "binary"}]}
            ]}
            """#.utf8).write(to: models.appendingPathComponent("v1.json"))
        try Data(#"""
            import Foundation
            import ObjectStore
            import ObjectStoreModel
            import ObjectStoreSync

            final class MyNote: NotesModel.Note {
                override func awakeFromInsert() {
                    super.awakeFromInsert()
                    title = "hooked"
                    uuid = UUID()
                }
            }
            typealias NoteTag = NotesModel.Tag

            let models = try ModelDirectory(location: "Notes", files: NotesModelFiles.files)
            let coordinator = PersistentStoreCoordinator(inMemoryWith: try models.currentModel())
            try NotesModel.register(in: coordinator)
            try coordinator.register(MyNote.self, forEntityName: "Note")
            let context = ManagedObjectContext(coordinator: coordinator)
            let home = try context.insert(NoteTag.self)
            home.name = "home"
            let shop = try context.insert(NoteTag.self)
            shop.name = "shop"
            let note = try context.insert(MyNote.self)
            note.tags = [home]
            let other = try context.insert(MyNote.self)
            other.tags = [shop]
            let blob = try context.insert(NotesModel.Data.self)
            blob.bytes = Data([1, 2])
            try context.save()
            let found = try context.fetch(MyNote.self, where: "ANY tags.name IN %@", ["home", "work"])
            print(found.count, found.first?.title ?? "-", note.rank, home.notes.count, shop.notes.first === other)

            // Two replicas of the notes (stores that keep history) through a git repository.
            let folder = URL(fileURLWithPath: CommandLine.arguments[1])
            func replica() throws -> (PersistentStoreCoordinator, SyncEngine) {
                let store = PersistentStoreCoordinator(inMemoryWith: try models.currentModel(), history: .all)
                try NotesModel.register(in: store)
                try store.register(MyNote.self, forEntityName: "Note")
                let remote = SyncRemote.git(localPath: folder.appendingPathComponent("clone-\(UUID().uuidString)"), remote: folder.appendingPathComponent("remote.git").path,
                                            encryptionSecret: "secret", keyCache: folder.appendingPathComponent("key"))
                return (store, try SyncEngine(coordinator: store, remote: remote))
            }
            let (laptop, laptopSync) = try replica(), (desktop, desktopSync) = try replica()
            let written = ManagedObjectContext(coordinator: laptop)
            let synced = try written.insert(MyNote.self)
            synced.title = "from the laptop"
            let laptopTag = try written.insert(NoteTag.self)
            laptopTag.name = "laptop"
            laptopTag.uuid = UUID()
            laptopTag.notes = [synced]  // through the derived side: sets the note's tags
            try written.save()
            let sent = try laptopSync.sync()
            let received = try desktopSync.sync()
            let reader = ManagedObjectContext(coordinator: desktop)
            let there = try reader.fetch(MyNote.self, where: "title == %@", "from the laptop")
            let tagThere = try reader.fetch(NoteTag.self, where: "name == %@", "laptop")
            print(sent.operationsSent > 0, received.operationsApplied > 0, there.count, there.first?.uuid == synced.uuid,
                  there.first?.tags.map(\.name) ?? [], tagThere.first?.notes.count ?? -1)

            // Values of the app's own types: a colour through a named transformer, a Codable
            // layout, a string and an integer enum the plugin made.
            struct Color: Sendable, Equatable, TransformableAttributeValue {
                var red: UInt8, green: UInt8, blue: UInt8
                static let transformerName = "ColorTransformer"
                static let placeholder = Color(red: 0, green: 0, blue: 0)
            }
            struct ColorTransformer: AttributeTransformer {
                func data(from color: Color) -> Foundation.Data { Foundation.Data([color.red, color.green, color.blue]) }
                func value(from data: Foundation.Data) throws -> Color {
                    let bytes = [UInt8](data)
                    guard bytes.count == 3 else { throw ValidationMessage("not a colour") }
                    return Color(red: bytes[0], green: bytes[1], blue: bytes[2])
                }
            }
            struct Layout: CodableAttributeValue, Equatable {
                var columns = 1
                var margins: [Double] = []
                static let placeholder = Layout()
            }
            typealias PlainNote = NotesModel.Note
            AttributeTransformers.register(ColorTransformer(), forName: "ColorTransformer")
            let container = try PersistentContainer(name: "Notes", models: models, storeURL: folder.appendingPathComponent("notes.store"))
            try NotesModel.register(in: container.coordinator)

            // A batch update from a background context, merged by a view context on the main
            // actor on its own; a batch insert and delete.
            @MainActor func custom() async throws {
                let view = container.viewContext
                view.automaticallyMergesChangesFromParent = true
                let note = try view.insert(PlainNote.self)
                note.title = "first"
                note.color = Color(red: 10, green: 20, blue: 30)
                note.layout = Layout(columns: 2, margins: [1.5])
                note.weight = .heavy
                try view.save()
                let draft: NotesModel.State = note.state
                print(note.color == Color(red: 10, green: 20, blue: 30), note.layout?.columns ?? 0, draft, note.weight.map { "\($0)" } ?? "-", note.lastAccessError == nil)
                let changed = try await container.performBackgroundTask { context in
                    var request = BatchUpdateRequest(entityName: "Note", predicate: try ObjectPredicate("state == 'draft'"), propertiesToUpdate: ["state": "published"])
                    request.resultType = .count
                    return try context.execute(request).count ?? 0
                }
                for _ in 0..<200 where note.state != .published { try await Task.sleep(for: .milliseconds(10)) }
                print(changed, note.state)
                let inserted = try view.execute(BatchInsertRequest(entityName: "Note", objects: [["title": "second", "weight": 1], ["title": "third"]]))
                var delete = BatchDeleteRequest(entityName: "Note", predicate: try ObjectPredicate("weight == 5"))
                delete.resultType = .count
                let deleted = try view.execute(delete).count ?? 0
                let left = try view.fetch(PlainNote.self, where: "weight == %@", Int16(1))
                print(inserted, deleted, left.map { $0.title ?? "" }, left.first?.weight == .light, note.managedObjectContext == nil)
            }
            try await custom()
            """#.utf8).write(to: sources.appendingPathComponent("main.swift"))
        let built = try Self.build(root, swift: swift)
        try #require(built.status == 0, "\(built.output)")
        // The replicas' remote: a bare repository (git makes the clones).
        let sync = root.appendingPathComponent("sync")
        try FileManager.default.createDirectory(at: sync, withIntermediateDirectories: true)
        _ = try Self.run(URL(fileURLWithPath: "/usr/bin/git"), ["init", "--bare", "-q", sync.appendingPathComponent("remote.git").path])
        let ran = try Self.run(root.appendingPathComponent(".build/debug/app"), [sync.path], stderr: true)
        #expect(ran.status == 0)
        #expect(ran.output == "1 hooked 3 1 true\ntrue true 1 true [Optional(\"laptop\")] 1\n"
                + "true 2 draft heavy true\n1 published\nstatus(true) 1 [\"second\"] true true\n", "\(ran.output)")
    }
}

import Foundation
import ObjectStore
import ObjectStoreModel

/// What the snippets in README.md and docs/ take for granted: a model, a coordinator,
/// contexts, a store URL, a fetch request. The generated snippet functions declare these
/// (as the docs' prose describes them) for the names a snippet uses without declaring.
enum SnippetEnvironment {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The project's Markdown pages, relative to the repository: README.md, docs/*.md and the
    /// articles of every module's DocC catalog (Sources/MODULE/MODULE.docc/*.md), with
    /// `extra` (CHANGELOG.md for the link check) after README.
    static func pages(extra: [String] = []) throws -> [String] {
        var files = ["README.md"] + extra
        let docs = repository.appendingPathComponent("docs")
        files += try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        let sources = repository.appendingPathComponent("Sources")
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let catalog = "Sources/\(module)/\(module).docc"
            guard let articles = try? FileManager.default.contentsOfDirectory(atPath: repository.appendingPathComponent(catalog).path) else { continue }
            files += articles.filter { $0.hasSuffix(".md") }.sorted().map { "\(catalog)/\($0)" }
        }
        return files
    }

    static func models() throws -> ModelDirectory {
        try ModelDirectory(url: repository.appendingPathComponent("Models/Tasks"))
    }

    static func model() throws -> ManagedObjectModel { try models().currentModel() }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var shared: PersistentStoreCoordinator?

    /// One in-memory coordinator of the Tasks model, so a snippet's context and coordinator
    /// belong together.
    static func coordinator() throws -> PersistentStoreCoordinator {
        try lock.withLock {
            if let shared { return shared }
            let model = try model()
            let coordinator = PersistentStoreCoordinator(inMemoryWith: model)
            shared = coordinator
            return coordinator
        }
    }

    static func context() throws -> ManagedObjectContext { ManagedObjectContext(coordinator: try coordinator()) }

    static func storeURL() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("snippet-\(UUID().uuidString).store")
    }
}

/// Classes the snippets name besides the one they declare.
final class Location: ManagedObject {
    @Attribute var name: String
}

final class Tag: ManagedObject {
    @Attribute var name: String
}

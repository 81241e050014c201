import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// A model directory, its store (created, or migrated to the current version, on open) and
/// a main context, wired in one line, as Core Data's `NSPersistentContainer`.
///
/// ```swift
/// let container = try PersistentContainer(name: "Notes", models: ModelDirectory(url: modelsURL))
/// let note = try container.viewContext.insertObject(entityName: "Note")
/// try container.viewContext.save()
/// ```
///
/// The store lives at `storeURL` when given, else in the platform's place for application
/// data (``defaultStoreURL(name:environment:)``). Like its ``viewContext`` the container
/// stays on one thread; other threads use ``performBackgroundTask(_:)`` or
/// ``newBackgroundContext()`` there.
public final class PersistentContainer {
    /// The model versions.
    public let models: ModelDirectory
    /// The coordinator of the store (Sendable: share it with other threads).
    public let coordinator: PersistentStoreCoordinator
    /// The store file.
    public let storeURL: URL
    /// The migration that ran when the container opened an older store, if one did.
    public let migration: StoreMigrator.Result?
    /// The main context.
    public let viewContext: ManagedObjectContext

    /// Opens (creating or migrating) the store of `models`' current version.
    ///
    /// - Parameters:
    ///   - name: the application's name, for the default store location.
    ///   - models: every version of the model; the store is opened with the current one.
    ///   - storeURL: the store file (`.json` for a JSON store); default
    ///     ``defaultStoreURL(name:environment:)``. Its folder is created when missing.
    ///   - readOnly: open the store for reading only (a store that needs migrating is refused).
    ///   - durability: when a binary store's saves reach the disk (`StoreDurability`).
    ///   - clock: what `now()` reads in predicates and derived attributes.
    ///   - backupPolicy: whether a migration keeps the backups of earlier ones
    ///     (``StoreMigrator/BackupPolicy``).
    ///   - progress: called as a migration on open migrates objects, per step (from 0).
    ///   - history: record every save's transaction in the store's history and keep those
    ///     it covers (ObjectStore's History guide); nil leaves history as the store file has it.
    /// - Throws: `SchemaError` for a bad model, `StoreError` and ``MigrationError``.
    public init(name: String, models: ModelDirectory, storeURL: URL? = nil, readOnly: Bool = false,
                durability: StoreDurability = .full, clock: @escaping @Sendable () -> Date = { Date() },
                backupPolicy: StoreMigrator.BackupPolicy = .keepAll, progress: ((StoreMigrator.Progress) -> Void)? = nil,
                history: HistoryRetention? = nil) throws {
        let url = storeURL ?? Self.defaultStoreURL(name: name)
        // The store's folder is made when missing, for a given URL too (a new store there
        // failed with "no such file"); a read-only open makes nothing.
        if !readOnly && !FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path) {
            do {
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw StoreError.io(path: url.deletingLastPathComponent().path, reason: "cannot create the store's directory: \(error.localizedDescription)")
            }
        }
        var migrator = StoreMigrator(models: models)
        migrator.backupPolicy = backupPolicy
        let (coordinator, migration) = try migrator.openStore(at: url, readOnly: readOnly, durability: durability, clock: clock, progress: progress)
        if let history { try coordinator.trackHistory(history) }
        self.models = models
        self.coordinator = coordinator
        self.storeURL = url
        self.migration = migration
        self.viewContext = ManagedObjectContext(coordinator: coordinator)
    }

    /// Where an application's store lives by default: on macOS
    /// `~/Library/Application Support/NAME/NAME.store`; elsewhere
    /// `$XDG_DATA_HOME/NAME/NAME.store`, or `~/.local/share/NAME/NAME.store`.
    public static func defaultStoreURL(name: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let home = URL(fileURLWithPath: environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory())
        #if os(macOS)
        let base = home.appendingPathComponent("Library/Application Support")
        #else
        let base = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) } ?? home.appendingPathComponent(".local/share")
        #endif
        return base.appendingPathComponent(name).appendingPathComponent(name + ".store")
    }

    /// A new context of the same store, for work on another thread (create it there).
    public func newBackgroundContext() -> ManagedObjectContext {
        ManagedObjectContext(coordinator: coordinator)
    }

    #if compiler(>=6.2)
    /// Runs `body` with a new context on a background thread and returns its result; pass
    /// object IDs, not objects, in and out. It runs on the caller's actor until `body` is
    /// handed to the background (`nonisolated(nonsending)`, Swift 6.2 and later), so a
    /// `@MainActor` type that holds the container calls it without sending the container.
    nonisolated(nonsending) public func performBackgroundTask<T: Sendable>(_ body: @escaping @Sendable (ManagedObjectContext) throws -> T) async throws -> T {
        try await coordinator.performBackgroundTask(body)
    }
    #else
    /// Runs `body` with a new context on a background thread and returns its result; pass
    /// object IDs, not objects, in and out.
    public func performBackgroundTask<T: Sendable>(_ body: @escaping @Sendable (ManagedObjectContext) throws -> T) async throws -> T {
        try await coordinator.performBackgroundTask(body)
    }
    #endif
}

import Foundation
import ObjectStoreModel

/// The one place a store is made: the coordinator and the migrator above the engine ask here
/// and never name a store's class.
package enum StoreFactory {
    /// Opens (or creates, unless read-only) the store at `url`: a JSON store for a `.json`
    /// path, a binary store otherwise, unless `type` says (an in-memory store has no file).
    ///
    /// - Parameters:
    ///   - durability: the binary store's; a JSON store is always flushed.
    ///   - identifier: a new store's UUID (a migration keeps the store's identity).
    ///   - readingLegacy: a pre-release binary file is read rather than refused (a
    ///     migration's source, read-only).
    package static func open(_ url: URL, type: StoreType? = nil, model: ManagedObjectModel, readOnly: Bool = false,
                             durability: StoreDurability = .full, identifier: String? = nil, readingLegacy: Bool = false) throws -> any PersistentStore {
        switch type ?? StoreType.forFile(url) {
        case .binary:
            return try BinaryStore(url: url, model: model, readOnly: readOnly, durability: durability, identifier: identifier, readingLegacy: readingLegacy)
        case .json:
            return try JSONStore(url: url, model: model, readOnly: readOnly, identifier: identifier)
        case .inMemory:
            return inMemory(model: model, identifier: identifier)
        }
    }

    /// A new, empty store in memory.
    package static func inMemory(model: ManagedObjectModel, identifier: String? = nil) -> any PersistentStore {
        InMemoryStore(model: model, identifier: identifier ?? UUID().uuidString)
    }

    /// The metadata of the store file at `url`, read without opening it for use.
    package static func metadata(at url: URL, type: StoreType? = nil) throws -> StoreMetadata {
        try metadataAndLegacyFormat(at: url, type: type).metadata
    }

    /// A store file's metadata, and its pre-release binary format (1 to 7) when it has one,
    /// in one read of the file.
    package static func metadataAndLegacyFormat(at url: URL, type: StoreType? = nil) throws -> (metadata: StoreMetadata, legacyFormat: Int?) {
        switch type ?? StoreType.forFile(url) {
        case .json: return (try JSONStore.metadata(at: url), nil)
        case .binary:
            let (metadata, version) = try BinaryStore.metadataAndVersion(at: url)
            return (metadata, BinaryStore.legacyVersions.contains(version) ? version : nil)
        case .inMemory: throw StoreError.io(path: url.path, reason: "an in-memory store has no file to read")
        }
    }

    /// Upgrades a pre-release binary file of `model` to store format 1.0 in place, keeping the
    /// original at `backup(version)`; nil when the file needs no upgrade.
    package static func upgradeLegacyFile(at url: URL, model: ManagedObjectModel, backup: (Int) -> URL) throws -> (version: Int, backupURL: URL)? {
        try BinaryStore.upgradeLegacyFile(at: url, model: model, backup: backup)
    }
}

import Foundation

/// A store file that cannot be used: what is wrong with which file. The file is left exactly
/// as it was.
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file is damaged: a bad checksum, a truncated record, an unreadable value.
    case corrupt(path: String, reason: String)
    /// The file is not a store of this kind (or is empty, or a directory).
    case foreignFile(path: String, reason: String)
    /// The file was written by a newer version of the store format.
    case newerFormat(path: String, version: Int, supported: Int)
    /// The file is in a pre-release binary format (1 to 7, before store format 1.0). It is
    /// read only to upgrade it: `StoreMigrator.openStore(at:readOnly:durability:clock:progress:)`
    /// and `StoreMigrator.migrate(storeURL:destinationURL:progress:)` do, keeping a backup.
    case legacyFormat(path: String, version: Int)
    /// The file uses features of store format 1.x that this version does not know (the
    /// header's feature bits): it cannot read it (`writing` false), or reads it but cannot
    /// change it (`writing` true). A newer ObjectStore wrote it; the file was not changed.
    case newerFeatures(path: String, features: UInt64, writing: Bool)
    /// The store was written with a model whose entities differ from this one.
    case incompatibleModel(path: String, entities: [String])
    /// The store was written with a version of the model newer than the program's current
    /// one: an older program opening a newer store. It is refused, never migrated down.
    case newerModel(path: String, storeVersion: String, currentVersion: String)
    /// The store was written with a model that is none of the model directory's versions
    /// (an unnamed one when `storeVersion` is nil): it may be newer, so it is refused.
    case unknownModelVersion(path: String, storeVersion: String?, knownVersions: [String])
    /// The store names a model version this program does not know, though its entities hash
    /// as `sameEntitiesAs` does: a newer version that changed only what hashes leave out
    /// (validation rules, defaults). Refused, as an unknown version is.
    case unknownModelVersionName(path: String, storeVersion: String, sameEntitiesAs: String, knownVersions: [String])
    /// The operating system refused: permissions, a full disk, a missing directory.
    case io(path: String, reason: String)
    /// The store was opened read-only.
    case readOnly(path: String)
    /// What was asked of the store cannot be done with it: an entity it does not have, a
    /// row naming an object of an entity the store does not have (a caller's mistake, not
    /// the file's or the system's).
    case invalidRequest(path: String, reason: String)

    public var description: String {
        switch self {
        case .corrupt(let path, let reason): return "\(path): the store is damaged: \(reason)"
        case .foreignFile(let path, let reason): return "\(path): not an ObjectStore store: \(reason)"
        case .newerFormat(let path, let version, let supported):
            return "\(path): written by a newer ObjectStore (store format \(version); this version reads up to \(supported))"
        case .legacyFormat(let path, let version):
            return "\(path): written by a pre-release ObjectStore (binary format \(version)); upgrade it to store format 1.0 with StoreMigrator (openStore and migrate do, keeping a backup; taskctl does on open)"
        case .newerFeatures(let path, let features, let writing):
            let bits = (0..<64).filter { features & (1 << UInt64($0)) != 0 }.map(String.init).joined(separator: ", ")
            return "\(path): written by a newer ObjectStore that uses features this version \(writing ? "can read but not write" : "cannot read") (feature bits \(bits)); use the newer version (the file was not changed)"
        case .incompatibleModel(let path, let entities):
            return "\(path): the store was written with a different model; these entities differ: \(entities.joined(separator: ", "))"
        case .newerModel(let path, let storeVersion, let currentVersion):
            return "\(path): the store was written with model version \(storeVersion), newer than this program's current version \(currentVersion); open it with the newer program (the file was not changed)"
        case .unknownModelVersion(let path, let storeVersion, let knownVersions):
            let written = storeVersion.map { "model version \($0)" } ?? "an unnamed model version"
            return "\(path): the store was written with \(written), whose entities match none of this program's versions (\(knownVersions.joined(separator: ", "))): a newer version of the model or another model; it is not opened or migrated (the file was not changed)"
        case .unknownModelVersionName(let path, let storeVersion, let same, let knownVersions):
            return "\(path): the store was written with model version \(storeVersion), which this program does not know (it knows \(knownVersions.joined(separator: ", "))); its entities are \(same)'s, but \(storeVersion) may differ in what they leave out (validation rules, defaults), so it is not opened (the file was not changed)"
        case .io(let path, let reason): return "\(path): \(reason)"
        case .readOnly(let path): return "\(path): the store is open read-only"
        case .invalidRequest(let path, let reason): return "\(path): \(reason)"
        }
    }
}

/// A save that found rows changed or deleted by someone else since they were loaded.
public struct StoreConflictError: Error, Sendable, CustomStringConvertible {
    /// One conflicting object.
    public struct Conflict: Sendable {
        /// The object saved by someone else.
        public var objectID: ObjectID
        /// The version the context loaded.
        public var expectedVersion: Int64
        /// The version in the store, `nil` when the row was deleted.
        public var storedVersion: Int64?
        /// The keys whose stored value differs from what the context had loaded (empty when unknown).
        public var keys: [String]

        package init(objectID: ObjectID, expectedVersion: Int64, storedVersion: Int64?, keys: [String]) {
            self.objectID = objectID
            self.expectedVersion = expectedVersion
            self.storedVersion = storedVersion
            self.keys = keys
        }
    }

    /// Every conflicting object.
    public var conflicts: [Conflict]

    package init(conflicts: [Conflict]) { self.conflicts = conflicts }

    public var description: String {
        let lines = conflicts.map { c in
            c.storedVersion == nil
                ? "\(c.objectID) was deleted by another save"
                : "\(c.objectID) was changed by another save (version \(c.expectedVersion) -> \(c.storedVersion ?? 0))\(c.keys.isEmpty ? "" : ": " + c.keys.joined(separator: ", "))"
        }
        return "save conflict: " + lines.joined(separator: "; ")
    }
}

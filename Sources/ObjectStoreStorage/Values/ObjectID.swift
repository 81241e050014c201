import Foundation
import ObjectStoreModel

/// The identity of a managed object: entity, store and key. A Sendable value, so it can
/// cross threads where objects cannot.
///
/// An object inserted into a context has a temporary ID until it is saved (or until
/// `ManagedObjectContext.obtainPermanentIDs(for:)`); afterwards its ID is permanent and
/// stays the same for the object's whole life.
///
/// ```swift
/// let id = task.objectID                      // Sendable: it may cross threads, objects may not
/// let title = try await coordinator.performBackgroundTask { context in
///     try context.existingObject(with: id)["title"]
/// }
/// print(id.uriRepresentation)   // x-objectstore://6F9619FF-.../Task/p42
/// ```
public struct ObjectID: Sendable, Hashable, CustomStringConvertible {
    /// The key that tells objects of an entity apart.
    public enum Key: Sendable, Hashable {
        /// Assigned at insert, replaced at save: a number counted up per process, so no two
        /// objects of the process share one (temporary IDs mean nothing outside it).
        case temporary(UInt64)
        /// Assigned by the store; never reused.
        case permanent(Int64)

        @inlinable public static func == (a: Key, b: Key) -> Bool {
            switch (a, b) {
            case (.temporary(let x), .temporary(let y)): return x == y
            case (.permanent(let x), .permanent(let y)): return x == y
            default: return false
            }
        }
    }

    /// The entity and store, shared by every ID of that entity in that store: an ID is a
    /// reference and a key (17 bytes, 24 in an array), and comparing or hashing one compares a
    /// pointer, not an entity name and a 36-character store UUID.
    @usableFromInline package let scope: Scope
    /// The key within the store.
    public let key: Key

    /// The entity of the object (its most specific entity).
    public var entityName: String { scope.entityName }
    /// The identifier of the store the object belongs to (the store's UUID).
    public var storeIdentifier: String { scope.storeIdentifier }

    /// An ID; contexts and stores make them, and `init?(uri:)` reads one back.
    public init(entityName: String, storeIdentifier: String, key: Key) {
        self.scope = Scope.of(entityName: entityName, storeIdentifier: storeIdentifier)
        self.key = key
    }

    /// The ID of another object of this one's entity and store: a list of many IDs of one
    /// entity can keep their keys alone.
    @inlinable package func withKey(_ key: Key) -> ObjectID {
        ObjectID(scope, key: key)
    }

    /// An ID in a scope already looked up (stores and fetches making many IDs of one entity).
    @inlinable package init(_ scope: Scope, key: Key) {
        self.scope = scope
        self.key = key
    }

    /// One entity of one store. Scopes are unique per (entity, store) pair, so two IDs are
    /// of the same entity and store exactly when they share the scope.
    @usableFromInline package final class Scope: Sendable {
        let entityName: String
        package let storeIdentifier: String

        private init(entityName: String, storeIdentifier: String) {
            self.entityName = entityName
            self.storeIdentifier = storeIdentifier
        }

        private struct Name: Hashable {
            var entityName: String
            var storeIdentifier: String
        }

        private static let scopes = Locked([Name: Scope]())

        /// The scope of an entity in a store, made on first use. There are as many as
        /// entities in the stores a process opens.
        package static func of(entityName: String, storeIdentifier: String) -> Scope {
            let name = Name(entityName: entityName, storeIdentifier: storeIdentifier)
            return scopes.withLock { scopes in
                if let scope = scopes[name] { return scope }
                let scope = Scope(entityName: entityName, storeIdentifier: storeIdentifier)
                scopes[name] = scope
                return scope
            }
        }
    }

    @inlinable public static func == (a: ObjectID, b: ObjectID) -> Bool {
        a.key == b.key && a.scope === b.scope
    }

    /// Whether the ID will change when the object is saved.
    @inlinable public var isTemporary: Bool {
        if case .temporary = key { return true }
        return false
    }

    /// The store key of a permanent ID.
    @inlinable public var primaryKey: Int64? {
        if case .permanent(let k) = key { return k }
        return nil
    }

    /// A stable URI: `x-objectstore://STORE/ENTITY/pKEY` (temporary IDs use `tNUMBER`).
    public var uriRepresentation: URL {
        let keyText: String
        switch key {
        case .temporary(let n): keyText = "t" + String(n)
        case .permanent(let k): keyText = "p" + String(k)
        }
        return URL(string: "x-objectstore://\(storeIdentifier)/\(entityName)/\(keyText)") ?? URL(fileURLWithPath: "/")
    }

    /// Parses a URI made by ``uriRepresentation``.
    public init?(uri: URL) {
        guard uri.scheme == "x-objectstore", let host = uri.host else { return nil }
        let parts = uri.path.split(separator: "/").map(String.init)
        guard parts.count == 2, let tag = parts[1].first else { return nil }
        let body = String(parts[1].dropFirst())
        switch tag {
        case "p":
            guard let k = Int64(body) else { return nil }
            self.init(entityName: parts[0], storeIdentifier: host, key: .permanent(k))
        case "t":
            guard let n = UInt64(body) else { return nil }
            self.init(entityName: parts[0], storeIdentifier: host, key: .temporary(n))
        default:
            return nil
        }
    }

    public var description: String { uriRepresentation.absoluteString }

    /// Hashes the key and the scope's identity (no strings).
    @inlinable public func hash(into hasher: inout Hasher) {
        switch key {
        case .permanent(let k): hasher.combine(k)
        case .temporary(let n): hasher.combine(n)
        }
        hasher.combine(ObjectIdentifier(scope))
    }

    /// The hash sets and dictionaries of IDs use (the registry looks an ID up for every
    /// object a fetch, a fault or a save touches): the key and the scope's address mixed
    /// with the table's seed by two multiplications (murmur3's finalizer), where going
    /// through `Hasher` costs several SipHash rounds. Equal IDs share key and scope, so
    /// they hash alike; the seed keeps the order of a table private to the process, as
    /// `Hasher`'s does.
    @inlinable public func _rawHashValue(seed: Int) -> Int {
        switch key {
        case .permanent(let k):
            return Self.mix(UInt64(bitPattern: k), scope: scope, seed: seed)
        case .temporary(let n):
            return Self.mix(n ^ 0x9E37_79B9_7F4A_7C15, scope: scope, seed: seed)  // apart from the permanent key of the same number
        }
    }

    /// A number and a scope's address mixed with a seed (murmur3's finalizer).
    @inlinable static func mix(_ number: UInt64, scope: Scope, seed: Int) -> Int {
        var x = number
        x ^= UInt64(UInt(bitPattern: ObjectIdentifier(scope))) &* 0xC2B2_AE3D_27D4_EB4F
        x ^= UInt64(UInt(bitPattern: seed))
        x ^= x >> 33
        x &*= 0xFF51_AFD7_ED55_8CCD
        x ^= x >> 33
        x &*= 0xC4CE_B9FE_1A85_EC53
        x ^= x >> 33
        return Int(truncatingIfNeeded: x)
    }
}

/// Temporary IDs: a counter, unique within the process (temporary IDs never leave it), in
/// insertion order, and without reading /dev/urandom as `UUID()` does.
package enum TemporaryID {
    private static let counter = Locked<UInt64>(0)

    package static func next() -> UInt64 {
        counter.withLock { counter -> UInt64 in
            counter += 1
            return counter
        }
    }
}

extension ObjectID {
    /// A deterministic order for ties: entity, then saved objects by key, then unsaved ones.
    package static func tieBreak(_ a: ObjectID, _ b: ObjectID) -> Bool {
        if a.entityName != b.entityName { return a.entityName < b.entityName }
        switch (a.key, b.key) {
        case (.permanent(let x), .permanent(let y)): return x < y
        case (.permanent, .temporary): return true
        case (.temporary, .permanent): return false
        case (.temporary(let x), .temporary(let y)): return x < y
        }
    }
}
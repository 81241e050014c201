import Foundation
import ObjectStoreModel

/// A point in a store's history: the store's UUID and the number of the last transaction
/// seen (0: none). Keep one (it is `Codable`) and ask
/// `PersistentStoreCoordinator.fetchHistory(after:)` for what was saved since, as Core
/// Data's `NSPersistentHistoryToken`.
public struct HistoryToken: Sendable, Codable, Hashable, Comparable, CustomStringConvertible {
    /// The store the token belongs to.
    public let storeIdentifier: String
    /// The number of the last transaction the token covers; transactions are numbered from 1.
    public let transactionNumber: Int64

    /// A token of a store at a transaction number.
    public init(storeIdentifier: String, transactionNumber: Int64) {
        self.storeIdentifier = storeIdentifier
        self.transactionNumber = transactionNumber
    }

    /// Tokens of one store order by their transaction number.
    public static func < (lhs: HistoryToken, rhs: HistoryToken) -> Bool {
        (lhs.storeIdentifier, lhs.transactionNumber) < (rhs.storeIdentifier, rhs.transactionNumber)
    }

    public var description: String { "\(storeIdentifier)#\(transactionNumber)" }
}

/// One save as the store's history recorded it: when, by whom, and per changed object what
/// changed, with the values before and after.
public struct HistoryTransaction: Sendable, Identifiable {
    /// The transaction's number in its store: one more than the one before.
    public let number: Int64
    /// The token that covers this transaction and every one before it.
    public let token: HistoryToken
    /// When the save committed, by the coordinator's clock.
    public let timestamp: Date
    /// The saving context's `ManagedObjectContext.transactionAuthor`.
    public let author: String?
    /// The saving context's `ManagedObjectContext.name`.
    public let contextName: String?
    /// The saving process.
    public let processID: Int32
    /// Every object the save inserted, updated or deleted, in the order the store wrote them.
    public let changes: [HistoryChange]

    /// The transaction's number.
    public var id: Int64 { number }

    /// A transaction as a store recorded it.
    package init(number: Int64, storeIdentifier: String, timestamp: Date, author: String?, contextName: String?, processID: Int32, changes: [HistoryChange]) {
        self.number = number
        self.token = HistoryToken(storeIdentifier: storeIdentifier, transactionNumber: number)
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.processID = processID
        self.changes = changes
    }
}

/// What one transaction did to one object.
public struct HistoryChange: Sendable {
    /// What happened to the object.
    public enum Kind: String, Sendable, Codable {
        /// The object was inserted; its ``HistoryChange/values`` are empty (as Core Data's
        /// insertions list no changed attributes): read the object for its values.
        case insert
        /// The object was updated; its values are the properties that changed.
        case update
        /// The object was deleted; its values are its tombstone: the attributes marked
        /// `"preserveValueOnDeletion"` in the schema, as old values (new values are nil).
        case delete
    }

    /// What happened to the object.
    public let kind: Kind
    /// The object (its permanent ID).
    public let objectID: ObjectID
    /// The changed properties, in the entity's slot order.
    ///
    /// For a to-many relationship, `oldValue` lists the objects the save removed and
    /// `newValue` those it added (a change costs the size of the change, not of the list).
    public let values: [PropertyChange]

    /// The object's entity.
    public var entityName: String { objectID.entityName }

    /// The names of the changed properties.
    public var changedKeys: [String] { values.map(\.name) }

    /// The change of one property, or nil when the transaction did not change it.
    public func value(forKey key: String) -> PropertyChange? {
        values.first { $0.name == key }
    }

    /// A change of an object.
    package init(kind: Kind, objectID: ObjectID, values: [PropertyChange]) {
        self.kind = kind
        self.objectID = objectID
        self.values = values
    }
}

/// One property's value before and after a transaction.
public struct PropertyChange: Sendable, Hashable {
    /// The property's name.
    public let name: String
    /// Before the save (for a to-many relationship: the objects removed).
    public let oldValue: SlotValue
    /// After the save (for a to-many relationship: the objects added).
    public let newValue: SlotValue
    /// The property's slot in its entity.
    package let slot: Int

    /// A property's change.
    package init(name: String, slot: Int, oldValue: SlotValue, newValue: SlotValue) {
        self.name = name
        self.slot = slot
        self.oldValue = oldValue
        self.newValue = newValue
    }
}

/// How much history a store keeps. Transactions past the bound are dropped when the store
/// is compacted (the binary store, also by itself as its log grows) or saved (the JSON and
/// in-memory stores); `deleteHistory(before:)` drops them
/// at once.
public struct HistoryRetention: Sendable, Hashable {
    /// The number of most recent transactions kept; nil: no bound.
    public var transactions: Int?
    /// How long a transaction is kept, by its timestamp; nil: no bound.
    public var duration: TimeInterval?

    /// Transactions numbered after this one are kept whatever the bounds above say: those a
    /// reader still needs (a sync that has not sent them yet: dropped, a change such as a tag
    /// taken off could no longer be told to the other replicas). nil: none pinned.
    public var keepingAfter: Int64?

    /// A bound by count, by age, both or neither; with `keepingAfter`, every transaction
    /// after that number is kept too.
    ///
    /// ```swift
    /// // The last 1,000, and every one after transaction 4,200 (not synced yet).
    /// try coordinator.trackHistory(HistoryRetention(transactions: 1_000, keepingAfter: 4_200))
    /// ```
    public init(transactions: Int? = nil, duration: TimeInterval? = nil, keepingAfter: Int64? = nil) {
        self.transactions = transactions.map { max(0, $0) }
        self.duration = duration
        self.keepingAfter = keepingAfter
    }

    /// Every transaction is kept until `deleteHistory(before:)`
    /// (Core Data's behaviour).
    public static let all = HistoryRetention()

    /// Whether a transaction numbered `number` and stamped `timestamp` is still kept when
    /// the last transaction is `last` and the time is `now`.
    package func keeps(number: Int64, timestamp: Date, last: Int64, now: Date) -> Bool {
        if let keepingAfter, number > keepingAfter { return true }
        if let transactions, number <= last - Int64(transactions) { return false }
        if let duration, timestamp < now.addingTimeInterval(-duration) { return false }
        return true
    }
}

/// A request for history the store cannot answer.
public enum HistoryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The store does not keep history (open it with a ``HistoryRetention``).
    case notTracked
    /// The token is of another store.
    case foreignToken(HistoryToken, storeIdentifier: String)
    /// Transactions after the token were deleted (by the retention bound or
    /// `deleteHistory`), or the token is past the store's last transaction (a store whose
    /// history was reset): start again from `PersistentStoreCoordinator.currentHistoryToken`
    /// after reading the objects anew. Core Data's "history token expired" error.
    case expiredToken(HistoryToken, firstAvailable: Int64, last: Int64)

    public var description: String {
        switch self {
        case .notTracked:
            return "the store does not keep history"
        case .foreignToken(let token, let store):
            return "the history token \(token) is of another store than \(store)"
        case .expiredToken(let token, let first, let last):
            return last < token.transactionNumber
                ? "the history token \(token) is past the store's last transaction \(last)"
                : "the history after \(token) was deleted: the first transaction kept is \(first)"
        }
    }
}

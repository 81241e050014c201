/// What a save does when objects it writes were changed in the store by someone else since
/// this context loaded them (optimistic locking by row version).
///
/// Core Data's policies, by their names here: `NSErrorMergePolicy` is ``error``,
/// `NSRollbackMergePolicy` ``storeWins``, `NSOverwriteMergePolicy` ``memoryWins``,
/// `NSMergeByPropertyObjectTrumpMergePolicy` ``mergeByPropertyMemoryWins`` and
/// `NSMergeByPropertyStoreTrumpMergePolicy` ``mergeByPropertyStoreWins``; the static
/// properties below give the Core Data spellings. To-many relationships changed on both
/// sides merge edge by edge under all but ``error`` and ``storeWins``.
public enum MergePolicy: Sendable, Hashable {
    /// Fail with `StoreConflictError` naming the conflicting objects and keys (the default).
    case error
    /// Keep the store's version of conflicting objects; this context's changes to them are
    /// dropped.
    case storeWins
    /// Write this context's version of conflicting objects whole, over the store's.
    case memoryWins
    /// Per property: keys changed in this context take this context's value, other keys keep
    /// the store's value.
    case mergeByPropertyMemoryWins
    /// Per property: keys changed in the store take the store's value, other keys keep this
    /// context's changes.
    case mergeByPropertyStoreWins

    /// Core Data's `NSMergeByPropertyObjectTrumpMergePolicy`: ``mergeByPropertyMemoryWins``.
    public static var mergeByPropertyObjectTrump: MergePolicy { .mergeByPropertyMemoryWins }
    /// Core Data's `NSMergeByPropertyStoreTrumpMergePolicy`: ``mergeByPropertyStoreWins``.
    public static var mergeByPropertyStoreTrump: MergePolicy { .mergeByPropertyStoreWins }
    /// Core Data's `NSOverwriteMergePolicy`: ``memoryWins``.
    public static var overwrite: MergePolicy { .memoryWins }
    /// Core Data's `NSRollbackMergePolicy`: ``storeWins``.
    public static var rollback: MergePolicy { .storeWins }
}

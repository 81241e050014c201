import Foundation

/// How a coordinator stores its objects.
public enum StoreType: String, Sendable, Hashable {
    /// The fast, incremental binary format (docs/store-format.md).
    case binary
    /// One readable JSON file.
    case json
    /// Memory only.
    case inMemory

    /// `.json` files are JSON stores; anything else is binary.
    public static func forFile(_ url: URL) -> StoreType {
        url.pathExtension.lowercased() == "json" ? .json : .binary
    }
}

/// When a binary store's save reaches the disk, against what it costs. A JSON store is
/// always flushed; an in-memory one never reaches a disk.
public enum StoreDurability: Sendable, Hashable {
    /// Every save is flushed (one `fdatasync`) before it returns: once `save()` returns,
    /// the change survives a crash of the process or of the machine. The default.
    case full
    /// Saves are not flushed; the system writes them out in its own time (as SQLite's WAL
    /// with `synchronous=NORMAL`). A crash of the process loses nothing saved, and a
    /// crash of the machine never damages the store, but may lose the last saves (about
    /// 64 KiB of commits at most; then a save flushes). For data that can be made again.
    case normal
}

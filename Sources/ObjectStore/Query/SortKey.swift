import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// One sort key of a fetch: a key path (through to-one relationships), a direction and a
/// string comparison. Nil sorts first ascending and last descending.
///
/// (Foundation owns `SortDescriptor`; this is ours.)
///
/// ```swift
/// request.sortDescriptors = [SortKey("dueDate"), SortKey("priority", ascending: false)]
/// request.sortDescriptors = [SortKey("name", comparison: .natural)]   // file2 < file10
/// ```
public struct SortKey: Sendable, Hashable {
    /// How strings are compared.
    public enum Comparison: Sendable, Hashable {
        /// By unicode scalars.
        case exact
        /// Ignoring case.
        case caseInsensitive
        /// Ignoring case and diacritics, as people expect in a list.
        case localized
        /// Like `localized`, with digit runs compared by value (`file2` < `file10`).
        case natural
    }

    /// The key path to sort by, through to-one relationships (`location.name`).
    public var keyPath: String
    /// Whether smaller values come first (nil first).
    public var ascending: Bool
    /// How strings compare.
    public var comparison: Comparison

    /// A sort key: `SortKey("dueDate")`, `SortKey("priority", ascending: false)`.
    public init(_ keyPath: String, ascending: Bool = true, comparison: Comparison = .exact) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.comparison = comparison
    }

    /// Orders two values by this key's comparison; nil before everything.
    func compare(_ a: Value, _ b: Value) -> ComparisonResult {
        switch (a.isNull, b.isNull) {
        case (true, true): return .orderedSame
        case (true, false): return .orderedAscending
        case (false, true): return .orderedDescending
        default: break
        }
        if case .string(let x) = a, case .string(let y) = b, comparison != .exact {
            let order: ComparisonResult
            switch comparison {
            case .exact, .caseInsensitive:
                order = Value.string(x.lowercased()).compare(to: .string(y.lowercased())) ?? .orderedSame
            case .localized:
                let fx = StringMatching.fold(x, [.caseInsensitive, .diacriticInsensitive])
                let fy = StringMatching.fold(y, [.caseInsensitive, .diacriticInsensitive])
                order = Value.string(fx).compare(to: .string(fy)) ?? .orderedSame
            case .natural:
                order = StringMatching.naturalCompare(
                    StringMatching.fold(x, [.diacriticInsensitive]), StringMatching.fold(y, [.diacriticInsensitive]))
            }
            // Strings equal but for case or accents still sort the same way every time.
            if order != .orderedSame { return order }
        }
        if let order = a.compare(to: b) { return order }
        // Values of different kinds: order by kind name so the result is still deterministic.
        return Value.string(a.typeName).compare(to: .string(b.typeName)) ?? .orderedSame
    }
}


import Foundation
import ObjectStoreModel

/// String comparisons with the `[c]`, `[d]` and `[n]` options.
@usableFromInline package enum StringMatching {
    /// Folds case and diacritics as the options ask, so the comparisons below can be plain.
    package static func fold(_ s: String, _ options: PredicateComparison.Options) -> String {
        var result = s
        if options.contains(.diacriticInsensitive) {
            result = result.folding(options: .diacriticInsensitive, locale: nil)
        }
        if options.contains(.caseInsensitive) {
            result = result.lowercased()
        }
        return result
    }

    /// Whether `haystack` contains `needle` (CONTAINS and IN with the options). Both ASCII
    /// (the usual case), by a byte search, case folded on the bytes when asked: ASCII has no
    /// diacritics and no two canonically equivalent spellings, so it agrees with the general
    /// path, which goes through Foundation's search (a tenth of a 10,000-row scan).
    @usableFromInline package static func contains(_ haystack: String, _ needle: String, _ options: PredicateComparison.Options) -> Bool {
        var haystack = haystack, needle = needle
        let caseless = options.contains(.caseInsensitive)
        let found: Bool? = haystack.withUTF8 { text in
            needle.withUTF8 { pattern -> Bool? in
                if pattern.isEmpty { return nil }
                guard pattern.allSatisfy({ $0 < 0x80 }) else { return nil }
                func folded(_ byte: UInt8) -> UInt8 { caseless && byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
                let first = folded(pattern[0])
                var index = 0
                while index + pattern.count <= text.count {
                    let byte = text[index]
                    if byte >= 0x80 { return nil }
                    if folded(byte) == first {
                        var offset = 1
                        while offset < pattern.count {
                            let other = text[index + offset]
                            if other >= 0x80 { return nil }
                            if folded(other) != folded(pattern[offset]) { break }
                            offset += 1
                        }
                        if offset == pattern.count {
                            // A match; the general path when anything else is not ASCII.
                            return text.allSatisfy { $0 < 0x80 } ? true : nil
                        }
                    }
                    index += 1
                }
                return text.allSatisfy { $0 < 0x80 } ? false : nil
            }
        }
        if let found { return found }
        return fold(haystack, options).contains(fold(needle, options))
    }

    /// ASCII characters that a string may hold without their byte: another code point is
    /// canonically equivalent to each (KELVIN SIGN to K, GREEK QUESTION MARK to ;, GREEK
    /// VARIA to `), and ``contains(_:_:_:)`` without options finds the one for the other.
    /// (SubstringRejectionTests looks for others among every assigned code point.)
    package static let heldByOtherCodePoints: Set<UInt8> = [0x4B, 0x3B, 0x60]

    /// Whether ``contains(_:_:_:)`` without options finds `needle` only in strings whose
    /// UTF-8 holds the needle's bytes: it is ASCII, not empty, and none of its characters is
    /// canonically equivalent to another code point. Then bytes without the needle's (a
    /// store's rows, whole) hold no string that contains it.
    package static func isFoundOnlyByItsBytes(_ needle: String) -> Bool {
        !needle.isEmpty && needle.utf8.allSatisfy { $0 < 0x80 && !heldByOtherCodePoints.contains($0) }
    }

    /// Whether `needle` occurs in `haystack`, byte for byte.
    package static func bytes(_ haystack: UnsafeBufferPointer<UInt8>, contain needle: [UInt8]) -> Bool {
        guard let first = needle.first else { return true }
        guard haystack.count >= needle.count, let base = haystack.baseAddress else { return false }
        return needle.withUnsafeBufferPointer { pattern -> Bool in
            guard let key = pattern.baseAddress else { return false }
            var start = 0
            let last = haystack.count - pattern.count
            while start <= last {
                // memchr finds the next candidate first byte; memcmp checks the rest.
                guard let found = memchr(base + start, Int32(first), last - start + 1) else { return false }
                let at = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                if memcmp(base + at, key, pattern.count) == 0 { return true }
                start = at + 1
            }
            return false
        }
    }

    /// What a schema index on a string attribute files a value under: the value with case
    /// and diacritics folded (as `==[cd]` compares), canonically decomposed, as UTF-8. Strings
    /// that `==` finds equal with any options have the same key (the fold is the coarsest of
    /// the options', and canonically equivalent strings decompose alike), so the rows an
    /// index finds under a constant's key include every match; the query still tests them.
    /// ASCII is lowercased directly (it has no diacritics and decomposes to itself; a test
    /// holds the shortcut to the general path).
    package static func indexKey(_ s: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(s.utf8.count)
        for byte in s.utf8 {
            guard byte < 0x80 else { return foldedIndexKey(s) }
            bytes.append(byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte)
        }
        return bytes
    }

    /// ``indexKey(_:)`` without the ASCII shortcut.
    package static func foldedIndexKey(_ s: String) -> [UInt8] {
        Array(fold(s, [.caseInsensitive, .diacriticInsensitive]).decomposedStringWithCanonicalMapping.utf8)
    }

    /// `LIKE`: `*` any run of characters, `?` one character, `\` escapes; whole string.
    package static func like(_ text: String, _ pattern: String) -> Bool {
        let t = Array(text)
        var p: [(Character, isWildcard: Bool)] = []
        var escaping = false
        for c in pattern {
            if escaping {
                p.append((c, false))
                escaping = false
            } else if c == "\\" {
                escaping = true
            } else {
                p.append((c, c == "*" || c == "?"))
            }
        }
        if escaping { p.append(("\\", false)) }
        // Iterative matching with backtracking to the last star: linear in practice.
        var ti = 0, pi = 0
        var starP = -1, starT = 0
        while ti < t.count {
            if pi < p.count, p[pi].isWildcard, p[pi].0 == "*" {
                starP = pi
                starT = ti
                pi += 1
            } else if pi < p.count, (p[pi].isWildcard && p[pi].0 == "?") || (!p[pi].isWildcard && p[pi].0 == t[ti]) {
                pi += 1
                ti += 1
            } else if starP >= 0 {
                pi = starP + 1
                starT += 1
                ti = starT
            } else {
                return false
            }
        }
        while pi < p.count, p[pi].isWildcard, p[pi].0 == "*" { pi += 1 }
        return pi == p.count
    }

    /// "Natural" order: digit runs compare by numeric value (`file2` < `file10`).
    package static func naturalCompare(_ a: String, _ b: String) -> ComparisonResult {
        var i = a.startIndex, j = b.startIndex
        while i < a.endIndex && j < b.endIndex {
            let ca = a[i], cb = b[j]
            if ca.isASCII && ca.isNumber && cb.isASCII && cb.isNumber {
                var ei = i, ej = j
                while ei < a.endIndex, a[ei].isASCII, a[ei].isNumber { ei = a.index(after: ei) }
                while ej < b.endIndex, b[ej].isASCII, b[ej].isNumber { ej = b.index(after: ej) }
                let na = a[i..<ei].drop { $0 == "0" }, nb = b[j..<ej].drop { $0 == "0" }
                if na.count != nb.count { return na.count < nb.count ? .orderedAscending : .orderedDescending }
                if na != nb { return na < nb ? .orderedAscending : .orderedDescending }
                i = ei
                j = ej
            } else {
                let la = String(ca).lowercased(), lb = String(cb).lowercased()
                if la != lb { return la < lb ? .orderedAscending : .orderedDescending }
                i = a.index(after: i)
                j = b.index(after: j)
            }
        }
        if i < a.endIndex { return .orderedDescending }
        if j < b.endIndex { return .orderedAscending }
        return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
    }
}

/// Finds the closest name to a misspelt one, for "did you mean" hints in error messages.
package enum NameSuggestion {
    /// The candidate closest to `word` by edit distance (case-insensitive), when it is close
    /// enough to be a plausible typo.
    public static func closest<C: Collection>(to word: String, in candidates: C) -> String? where C.Element == String {
        let target = Array(word.lowercased())
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(target, Array(candidate.lowercased()))
            if distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        guard let best else { return nil }
        let limit = max(2, target.count / 3)
        if best.distance <= limit { return best.name }
        // An abbreviation: the only candidate that starts with the word.
        let prefixed = candidates.filter { $0.lowercased().hasPrefix(word.lowercased()) }
        if target.count >= 3, prefixed.count == 1, let only = prefixed.first { return only }
        return nil
    }

    /// Edit distance counting insertions, deletions, substitutions and transpositions of
    /// neighbours (optimal string alignment), so "Tsak" is one edit from "Task".
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = Swift.min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    table[i][j] = Swift.min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }

    /// ", did you mean 'x'?" or the empty string.
    public static func hint<C: Collection>(for word: String, in candidates: C) -> String where C.Element == String {
        closest(to: word, in: candidates).map { " (did you mean '\($0)'?)" } ?? ""
    }
}

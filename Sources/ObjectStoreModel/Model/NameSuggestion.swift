/// Finds the closest name to a misspelt one, for "did you mean" hints in error messages.
public enum NameSuggestion {
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
        return best.distance <= limit ? best.name : nil
    }

    /// Levenshtein distance between two character arrays.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = Swift.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    /// ", did you mean 'x'?" or the empty string.
    public static func hint<C: Collection>(for word: String, in candidates: C) -> String where C.Element == String {
        closest(to: word, in: candidates).map { " (did you mean '\($0)'?)" } ?? ""
    }
}

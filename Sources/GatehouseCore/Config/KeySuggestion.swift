/// The known key a misspelled one most likely meant (`tokn_endpoint` → `token_endpoint`), for messages that
/// teach instead of only refusing.
public enum KeySuggestion {
    /// The closest of `candidates` to `key` by edit distance, when close enough to be a typo: at most 2 edits,
    /// and fewer than a third of the key's length (so `id` does not suggest `kind`).
    public static func closest(to key: String, among candidates: some Sequence<String>) -> String? {
        let limit = min(2, max(1, key.count / 3))
        var best: (key: String, distance: Int)?
        for candidate in candidates where candidate != key {
            let distance = editDistance(Array(key.lowercased().utf8), Array(candidate.lowercased().utf8))
            if distance <= limit, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.key
    }

    /// Levenshtein distance, with a transposition counted as one edit (`tokne` → `token`).
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousPrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previousPrevious[j - 2] + 1)
                }
            }
            (previousPrevious, previous, current) = (previous, current, previousPrevious)
        }
        return previous[b.count]
    }
}

/// ASCII-only text helpers for header names and tokens, which are ASCII by definition (RFC 9110 §5.1):
/// no Unicode case mapping, no Foundation bridging, no allocation — they run several times per proxied request.
enum ASCII {
    /// `text` equals `lowercase` (which must be lowercase ASCII) ignoring ASCII case.
    static func equalsIgnoringCase(_ text: some StringProtocol, _ lowercase: String) -> Bool {
        guard text.utf8.count == lowercase.utf8.count else { return false }
        return startsIgnoringCase(text, lowercase)
    }

    /// `text` starts with `lowercase` (lowercase ASCII) ignoring ASCII case.
    static func hasPrefixIgnoringCase(_ text: some StringProtocol, _ lowercase: String) -> Bool {
        guard text.utf8.count >= lowercase.utf8.count else { return false }
        return startsIgnoringCase(text, lowercase)
    }

    /// The first `lowercase.utf8.count` bytes of `text` (at least as long) are `lowercase` ignoring ASCII case.
    /// Native strings and their substrings are contiguous UTF-8: compared through buffer pointers, as a
    /// `zip` of two UTF-8 views costs an index check per byte on both sides.
    private static func startsIgnoringCase(_ text: some StringProtocol, _ lowercase: String) -> Bool {
        let fast = text.utf8.withContiguousStorageIfAvailable { text in
            lowercase.utf8.withContiguousStorageIfAvailable { lowercase in
                for index in lowercase.indices {
                    let a = text[index]
                    let b = lowercase[index]
                    if a != b && (a | 0x20) != b { return false }
                }
                return true
            }
        }
        if let fast, let result = fast { return result }
        for (a, b) in zip(text.utf8, lowercase.utf8) where a != b && (a | 0x20) != b { return false }
        return true
    }

    /// `text` without leading and trailing spaces and tabs.
    static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while let first = text.utf8.first, first == 0x20 || first == 0x09 { text = text.dropFirst() }
        while let last = text.utf8.last, last == 0x20 || last == 0x09 { text = text.dropLast() }
        return text
    }

    /// `text` in lowercase ASCII; the same string when it has no uppercase letter (the common case).
    static func lowercased(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return text }
        return String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}

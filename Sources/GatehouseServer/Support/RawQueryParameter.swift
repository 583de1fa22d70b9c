import GatehouseCore

/// A query parameter exactly as the client encoded it, for values that must go back byte for byte
/// (a native client's `state`: `a+b` must come back as `a+b`, not as `a%2Bb` or `a b`).
enum RawQueryParameter {
    /// The first value of `name` in the raw query string, still percent-encoded; nil when absent.
    static func value(_ name: String, in query: String?) -> Substring? {
        guard let query else { return nil }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts[0] == name { return parts.count > 1 ? parts[1] : "" }
        }
        return nil
    }

    /// Whether `value` may be put into a query as it is: RFC 3986 query characters other than `&`, `=`
    /// and `#`, and `%` only as a complete escape. Anything else could change the URL it is put into.
    static func isSafe(_ value: Substring) -> Bool {
        var bytes = value.utf8.makeIterator()
        while let byte = bytes.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = bytes.next(), let low = bytes.next(),
                    PercentEncoding.hexValue(high) != nil, PercentEncoding.hexValue(low) != nil
                else { return false }
            } else if !PercentEncoding.isQueryCharacter(byte) || byte == UInt8(ascii: "&") || byte == UInt8(ascii: "=") {
                return false
            }
        }
        return true
    }
}

/// The one reading of `Cookie` values for the session cookie: ``SessionResolver`` takes the session token
/// with it, and ``ForwardedHeaderRule`` strips the session cookie with it, so the two never disagree about
/// where a cookie begins (two readers of one header that trim differently let a token authenticate and
/// still reach the backend).
///
/// A value is read only when it is well formed as RFC 6265 §4.2.1 writes it: pairs separated by `;` and
/// optional SP or HTAB, each name a token (RFC 9110 §5.6.2). Anything else between or inside names —
/// U+00A0, U+0085, U+3000, CR, another control character — makes the whole value unreadable for the
/// session: no token is taken from it, and when it names the session cookie at all (in any case, behind
/// any whitespace, inside another cookie's value) it is not forwarded either.
struct SessionCookieParser: Sendable {
    /// The session cookie's name, e.g. `__Host-gatehouse_session`.
    let name: String
    private let lowercasedName: [UInt8]

    init(name: String) {
        self.name = name
        lowercasedName = Array(ASCII.lowercased(name).utf8)
    }

    /// The session token of a request: the first pair named exactly ``name`` in a well-formed `Cookie` value.
    func token(in values: [String]) -> String? {
        for value in values {
            guard let pairs = Self.pairs(of: value) else { continue }
            for pair in pairs where pair.name.elementsEqual(name.utf8) {
                return String(Substring(pair.value))
            }
        }
        return nil
    }

    /// The `Cookie` value that goes upstream: without any pair named like the session cookie (in any case);
    /// `nil` when nothing is left, or when the value is not well formed and mentions that name anywhere.
    func forwarded(_ value: String) -> String? {
        guard !value.isEmpty else { return nil }
        // Fast path: most values do not mention the name at all, and are forwarded as they came.
        guard mentionsName(value.utf8) else { return value }
        guard let pairs = Self.pairs(of: value) else { return nil }
        var kept: [Substring] = []
        for pair in pairs where !isSessionName(pair.name) {
            // `a=1,__Host-…=tok`: a backend that splits at `,` (RFC 2965) would read the name inside a value.
            guard !mentionsName(pair.value) else { return nil }
            kept.append(Substring(pair.whole))
        }
        return kept.isEmpty ? nil : kept.joined(separator: "; ")
    }

    // MARK: Parsing

    private struct Pair {
        let whole: Substring.UTF8View
        let name: Substring.UTF8View
        let value: Substring.UTF8View
    }

    /// The pairs of a well-formed value; `nil` when a separator or a name is anything else.
    private static func pairs(of value: String) -> [Pair]? {
        var pairs: [Pair] = []
        let text = Substring(value)
        for rawPiece in text.utf8.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false) {
            var piece = rawPiece
            while let first = piece.first, first == 0x20 || first == 0x09 { piece = piece.dropFirst() }
            while let last = piece.last, last == 0x20 || last == 0x09 { piece = piece.dropLast() }
            // `a=1;` and `a=1;;b=2` are sloppy but unambiguous.
            if piece.isEmpty { continue }
            let equals = piece.firstIndex(of: UInt8(ascii: "="))
            let name = equals.map { piece[..<$0] } ?? piece[piece.startIndex..<piece.startIndex]
            let valueBytes = equals.map { piece[piece.index(after: $0)...] } ?? piece
            guard equals == nil || !name.isEmpty, name.allSatisfy(isTokenByte) else { return nil }
            // A value holds no control characters (and, split above, no `;`); anything else is the backend's.
            guard !valueBytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
            pairs.append(Pair(whole: piece, name: name, value: valueBytes))
        }
        return pairs
    }

    /// RFC 9110 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    private func isSessionName(_ candidate: Substring.UTF8View) -> Bool {
        candidate.count == lowercasedName.count && zip(candidate, lowercasedName).allSatisfy(Self.sameIgnoringCase)
    }

    /// `byte` is `lower` (lowercase ASCII), or its uppercase letter.
    private static func sameIgnoringCase(_ byte: UInt8, _ lower: UInt8) -> Bool {
        byte == lower || (lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z") && byte == lower - 0x20)
    }

    /// Whether the name occurs anywhere in `bytes`, ignoring ASCII case.
    private func mentionsName<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        let count = lowercasedName.count
        guard let first = lowercasedName.first, bytes.count >= count else { return false }
        var index = bytes.startIndex
        while let start = bytes[index...].firstIndex(where: { Self.sameIgnoringCase($0, first) }) {
            var candidate = start
            var matched = 0
            while matched < count, candidate != bytes.endIndex {
                let byte = bytes[candidate]
                guard Self.sameIgnoringCase(byte, lowercasedName[matched]) else { break }
                matched += 1
                bytes.formIndex(after: &candidate)
            }
            if matched == count { return true }
            index = bytes.index(after: start)
        }
        return false
    }
}

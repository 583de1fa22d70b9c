/// A host an access rule is for (`hosts:`): an exact name (`app.example.com`), or `*` as the whole first label
/// followed by a name (`*.apps.example.com`), which matches exactly one more label (`a.apps.example.com`, never
/// `apps.example.com` or `a.b.apps.example.com`). Compared case-insensitively, without port or trailing dot.
public struct HostPattern: Sendable, Equatable, CustomStringConvertible {
    /// Lowercased, without trailing dot: the whole name, or what follows `*.`.
    let name: String
    /// `*.` in front.
    let wildcard: Bool
    public let description: String

    /// Parses a pattern; `nil` when it is not a host name, an IP address literal, or `*.` and a host name.
    public init?(_ text: String) {
        var body = Substring(text)
        if body.hasSuffix(".") { body = body.dropLast() }
        wildcard = body.hasPrefix("*.")
        if wildcard { body = body.dropFirst(2) }
        let labels = body.split(separator: ".", omittingEmptySubsequences: false)
        let isIPv6 =
            !wildcard && body.hasPrefix("[") && body.hasSuffix("]") && body.count > 2
            && body.dropFirst().dropLast().allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        guard isIPv6 || (!labels.isEmpty && labels.allSatisfy(Self.isLabel)) else { return nil }
        name = body.lowercased()
        description = text
    }

    /// A DNS label (letters, digits, `-`, `_`; 1 to 63 characters; no `-` at either end).
    private static func isLabel(_ label: Substring) -> Bool {
        guard (1...63).contains(label.count), label.first != "-", label.last != "-" else { return false }
        return label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }

    /// The pattern as it is compared: lowercased, without the trailing dot (`*.` kept): two patterns that match
    /// the same hosts have the same key.
    public var key: String { wildcard ? "*." + name : name }

    /// Whether a host (as ``normalized(_:)`` gives it) is this one.
    public func matches(_ host: String) -> Bool {
        guard wildcard else { return host == name }
        // By bytes: the pattern is ASCII, and a host that is not cannot end in it by accident of Unicode folding.
        let (bytes, suffix) = (host.utf8, name.utf8)
        guard bytes.count > suffix.count + 1, bytes.suffix(suffix.count).elementsEqual(suffix) else { return false }
        let head = bytes.dropLast(suffix.count)
        guard head.last == UInt8(ascii: ".") else { return false }
        let label = head.dropLast()
        return !label.isEmpty && !label.contains(UInt8(ascii: "."))
    }

    /// A request's host as rules compare it: the port removed (`[v6]:port` keeps its brackets), one trailing dot
    /// removed, lowercased; `nil` when empty or holding what no host name holds (a space, a slash, a control
    /// character).
    public static func normalized(_ value: Substring) -> String? {
        var host = value
        while let first = host.first, first == " " || first == "\t" { host.removeFirst() }
        while let last = host.last, last == " " || last == "\t" { host.removeLast() }
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isNumber)) else { return nil }
            host = host[...close]
        } else if let colon = host.firstIndex(of: ":") {
            guard host[host.index(after: colon)...].allSatisfy(\.isNumber) else { return nil }
            host = host[..<colon]
        }
        if host.hasSuffix(".") { host = host.dropLast() }
        guard !host.isEmpty, !host.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F || $0 == "/" || $0 == "\\" || $0 == "@" })
        else { return nil }
        return host.lowercased()
    }
}

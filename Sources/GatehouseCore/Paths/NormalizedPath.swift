/// A request path after the one normalization the gateway applies before it judges or forwards a
/// path: every segment percent-decoded, empty segments (`//`) collapsed, `.` and `..` resolved.
///
/// What cannot be normalized is refused rather than guessed at: a malformed escape, bytes that are
/// not UTF-8 once decoded (overlong forms included), an encoded slash or backslash (a backend would
/// split the segment where the gateway did not), a raw backslash (some servers treat it as `/`),
/// NUL or another control character, a `..` that climbs above the root, and `..;x` (a dot segment to
/// servers that cut path parameters at `;`).
public struct NormalizedPath: Sendable, Equatable {
    /// Decoded segments, none empty, none `.` or `..`.
    public var segments: [String]
    /// Whether the path ended in `/` (kept, because `/a/` and `/a` are different resources to many servers).
    public var trailingSlash: Bool

    /// Why a path could not be normalized.
    public enum Failure: Error, Equatable {
        case malformedEscape
        case notUTF8
        case encodedSeparator
        case controlCharacter
        case aboveRoot
        case dotSegmentWithParameter
        /// A decoded segment still holds an escape of `.`, `/` or `\` (`%252e` sent): a backend that decodes
        /// twice would read a dot segment or a separator the gateway never judged.
        case escapedDotOrSeparator
    }

    /// Normalizes a raw (still percent-encoded) absolute path, e.g. `request.uri.path`.
    public init(raw: Substring) throws(Failure) {
        var segments: [String] = []
        var last = ""
        for rawSegment in raw.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            let decoded = try Self.decode(rawSegment)
            last = decoded
            switch decoded {
            case ".": continue
            case "..":
                guard !segments.isEmpty else { throw .aboveRoot }
                segments.removeLast()
            default:
                // `..;x` is `..` to Tomcat and other servers that cut path parameters at `;`.
                if let semicolon = decoded.firstIndex(of: ";"), [".", ".."].contains(decoded[..<semicolon]) {
                    throw .dotSegmentWithParameter
                }
                segments.append(decoded)
            }
        }
        self.segments = segments
        // `/a/.` and `/a/..` name a directory, as in RFC 3986 §5.2.4.
        self.trailingSlash = !segments.isEmpty && (raw.utf8.last == UInt8(ascii: "/") || last == "." || last == "..")
    }

    public init(segments: [String], trailingSlash: Bool) {
        self.segments = segments
        self.trailingSlash = trailingSlash
    }

    /// `/a/b%20c/`: every segment re-encoded by the gateway; `/` for the root.
    public var encoded: String {
        guard !segments.isEmpty else { return "/" }
        var out = ""
        for segment in segments {
            out += "/"
            out += PercentEncoding.encode(segment.utf8, keeping: PercentEncoding.isPathCharacter)
        }
        return trailingSlash ? out + "/" : out
    }

    // MARK: Decoding and encoding

    private static func decode(_ raw: Substring.UTF8View.SubSequence) throws(Failure) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index != raw.endIndex {
            let byte = raw[index]
            if byte == UInt8(ascii: "%") {
                let high = raw.index(after: index)
                guard high != raw.endIndex, let h = PercentEncoding.hexValue(raw[high]) else { throw .malformedEscape }
                let low = raw.index(after: high)
                guard low != raw.endIndex, let l = PercentEncoding.hexValue(raw[low]) else { throw .malformedEscape }
                let value = h << 4 | l
                if value == UInt8(ascii: "/") || value == UInt8(ascii: "\\") { throw .encodedSeparator }
                bytes.append(value)
                index = raw.index(after: low)
            } else {
                if byte == UInt8(ascii: "\\") { throw .encodedSeparator }
                bytes.append(byte)
                index = raw.index(after: index)
            }
        }
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) { throw .controlCharacter }
        if bytes.contains(UInt8(ascii: "%")), holdsEscapedDotOrSeparator(bytes) { throw .escapedDotOrSeparator }
        // Strict UTF-8: overlong forms, surrogates and truncated sequences are refused.
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notUTF8 }
        if text.unicodeScalars.contains(where: { (0x80...0x9F).contains($0.value) }) { throw .controlCharacter }
        return text
    }
}

extension NormalizedPath {
    /// Whether decoding `bytes` again, as often as it still changes them (a backend may decode more than
    /// once), ever shows an escape of `.`, `/` or `\`.
    static func holdsEscapedDotOrSeparator(_ bytes: [UInt8]) -> Bool {
        var bytes = bytes
        // Each round removes at least two bytes per escape: a bound on the rounds, not on the input.
        for _ in 0..<8 {
            var decoded: [UInt8] = []
            decoded.reserveCapacity(bytes.count)
            var index = 0
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                    let high = PercentEncoding.hexValue(bytes[index + 1]), let low = PercentEncoding.hexValue(bytes[index + 2])
                {
                    let value = high << 4 | low
                    if value == UInt8(ascii: ".") || value == UInt8(ascii: "/") || value == UInt8(ascii: "\\") { return true }
                    decoded.append(value)
                    index += 3
                } else {
                    decoded.append(bytes[index])
                    index += 1
                }
            }
            if decoded.count == bytes.count { return false }
            bytes = decoded
        }
        return true
    }
}

extension NormalizedPath.Failure {
    /// The client's answer: 400 `invalid_path`, before anything is sent upstream.
    public var problem: GatehouseError {
        let reason =
            switch self {
            case .malformedEscape: "a percent-escape is malformed"
            case .notUTF8: "a percent-decoded segment is not UTF-8"
            case .encodedSeparator: "it contains an encoded slash or a backslash"
            case .controlCharacter: "it contains NUL or another control character"
            case .aboveRoot: "a '..' segment climbs above the base path"
            case .dotSegmentWithParameter: "a '.' or '..' segment carries a ';' parameter"
            case .escapedDotOrSeparator: "a segment still holds an escaped '.', '/' or '\\' after decoding (sent encoded twice)"
            }
        return GatehouseError(code: .invalidPath, status: 400, detail: "The path cannot be forwarded: \(reason).")
    }
}

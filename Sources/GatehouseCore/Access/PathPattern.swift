import Foundation

/// A backend path pattern of an access rule: `/` and segments; `*` is one non-empty segment, a final `**`
/// any number of segments (so `/x/**` matches `/x` itself and everything below it).
///
/// Literal segments are compared after folding, on both sides, what some backend would read as the same
/// segment, so that none opens a way around a rule: a path parameter (`admin;x=1` is `admin` to Tomcat),
/// one more percent-decoding (`%61dmin`, sent as `%2561dmin`, is `admin` to a backend that decodes twice),
/// case (`/ADMIN` on IIS) and trailing dots and spaces (`/admin.` on Windows file systems).
public struct PathPattern: Sendable, Equatable, CustomStringConvertible {
    enum Segment: Sendable, Equatable {
        case literal(String)
        case one
    }

    let segments: [Segment]
    /// Ends with `**`.
    let anyDepth: Bool
    public let description: String

    /// Parses a pattern; the error says what is wrong.
    public init(_ text: String) throws(PathPatternError) {
        guard text.hasPrefix("/") else { throw PathPatternError("must start with '/'") }
        var parts = text.split(separator: "/", omittingEmptySubsequences: true)
        anyDepth = parts.last == "**"
        if anyDepth { parts.removeLast() }
        segments = try parts.map { part throws(PathPatternError) in
            if part == "*" { return .one }
            if part.contains("*") { throw PathPatternError("'\(part)': '*' stands alone as a segment, and '**' only at the end") }
            return .literal(Self.fold(part))
        }
        description = text
    }

    /// Whether normalized, decoded path segments match.
    public func matches(_ path: [Substring]) -> Bool {
        guard anyDepth ? path.count >= segments.count : path.count == segments.count else { return false }
        for (segment, part) in zip(segments, path) {
            switch segment {
            case .one: if part.isEmpty { return false }
            case .literal(let literal): if Self.fold(part) != literal { return false }
            }
        }
        return true
    }

    /// Path parameter cut, decoded once more, lowercased, trailing dots and spaces removed.
    static func fold(_ segment: Substring) -> String {
        var text = segment.firstIndex(of: ";").map { segment[..<$0] } ?? segment
        var decoded: String?
        if text.contains("%") {
            decoded = String(text).removingPercentEncoding
            if let decoded { text = Substring(decoded) }
        }
        var end = text.endIndex
        while end > text.startIndex, [".", " "].contains(text[text.index(before: end)]) { end = text.index(before: end) }
        return text[..<end].lowercased()
    }
}

/// Why a path pattern cannot be used.
public struct PathPatternError: Error, Sendable, Equatable {
    public let message: String
    init(_ message: String) { self.message = message }
}

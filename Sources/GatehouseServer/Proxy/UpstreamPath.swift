import Foundation
import GatehouseCore

/// Builds an upstream URL from a base URL and the client's path so that it can never leave the base
/// path or the base origin: the request target is the base path followed by the normalized segments,
/// each re-encoded by the gateway (``NormalizedPath``), and the query with every byte that may not
/// appear in a query percent-encoded. Nothing is taken back from a parsed `URL`. Because every segment
/// is valid UTF-8 written in `pchar` only, Foundation's `URL.path` (from which AsyncHTTPClient derives
/// the request line) decodes to the same segments and re-encodes to this target; the property test
/// `Tests/CLI/test_upstream_paths.py` checks that end to end.
enum UpstreamPath {
    /// `base` + the client's raw path below its first `droppingSegments` (the route's own prefix, e.g.
    /// `v1`, `api`) + `query`. Throws 400 `invalid_path` for what cannot be normalized.
    static func join(base: String, rawPath: Substring, droppingSegments: Int, query: Substring?) throws -> String {
        join(base: base, path: try normalized(rawPath, droppingSegments: droppingSegments), query: query)
    }

    /// The client's raw path below its first `droppingSegments`, normalized; 400 `invalid_path` when it cannot be.
    static func normalized(_ rawPath: Substring, droppingSegments: Int) throws -> NormalizedPath {
        // The route matched its prefix on the raw segments; only what follows is the client's path,
        // normalized on its own so that a `..` can never climb into (and past) the prefix.
        do {
            return try NormalizedPath(raw: remainder(of: rawPath, droppingSegments: droppingSegments))
        } catch {
            throw error.problem
        }
    }

    /// The raw path after its first `count` non-empty segments (`/v1//api/x` minus 2 → `/x`).
    static func remainder(of rawPath: Substring, droppingSegments count: Int) -> Substring {
        // Over the bytes, not Characters: every stop is at a `/` or the end, so always a valid index.
        let bytes = rawPath.utf8
        let slash = UInt8(ascii: "/")
        var index = bytes.startIndex
        for _ in 0..<count {
            while index < bytes.endIndex, bytes[index] == slash { bytes.formIndex(after: &index) }
            while index < bytes.endIndex, bytes[index] != slash { bytes.formIndex(after: &index) }
        }
        return rawPath[index...]
    }

    /// `base` + an already normalized path + `query`.
    static func join(base: String, path: NormalizedPath, query: Substring?) -> String {
        let (origin, basePath) = split(base)
        return origin + target(basePath: basePath, path: path, query: query)
    }

    /// The request target (origin-form) for `basePath` (from ``split(_:)``) + a normalized path + `query`.
    static func target(basePath: String, path: NormalizedPath, query: Substring?) -> String {
        var target = basePath
        if !path.segments.isEmpty { target += path.encoded }
        if target.isEmpty { target = "/" }
        if let query, !query.isEmpty { target += "?" + encodeQuery(query) }
        return target
    }

    /// The same target, built without splitting or re-encoding, for the common case where normalization
    /// changes nothing: `path` (the client's, below the route's prefix) is `/` followed by non-empty segments
    /// of path characters only (no `%`, no segment starting with `.`), and `query` holds query characters
    /// only. `nil` otherwise: take ``target(basePath:path:query:)`` with a ``NormalizedPath``.
    static func plainTarget(basePath: String, path: Substring, query: Substring?) -> String? {
        guard isPlain(path: path, query: query) else { return nil }
        var target = basePath
        target.reserveCapacity(basePath.utf8.count + path.utf8.count + (query?.utf8.count ?? 0) + 1)
        target += path
        if let query, !query.isEmpty {
            target += "?"
            target += query
        }
        return target
    }

    /// Whether ``plainTarget(basePath:path:query:)`` can take `path` and `query` as they are.
    static func isPlain(path: Substring, query: Substring?) -> Bool {
        let slash = UInt8(ascii: "/")
        guard path.utf8.first == slash, path.utf8.count > 1 else { return false }
        var previous = slash
        for byte in path.utf8.dropFirst() {
            if byte == slash {
                guard previous != slash else { return false }
            } else {
                guard PercentEncoding.isPathCharacter(byte), previous != slash || byte != UInt8(ascii: ".") else { return false }
            }
            previous = byte
        }
        if let query, query.utf8.contains(where: { !PercentEncoding.isQueryCharacter($0) }) { return false }
        return true
    }

    /// `https://api.example:8443/base/` → (`https://api.example:8443`, `/base`).
    static func split(_ base: String) -> (origin: String, path: String) {
        var base = Substring(base)
        while base.hasSuffix("/") { base = base.dropLast() }
        guard let scheme = base.range(of: "://") else { return (String(base), "") }
        guard let slash = base[scheme.upperBound...].firstIndex(of: "/") else { return (String(base), "") }
        return (String(base[..<slash]), String(base[slash...]))
    }

    /// The client's query as it came, but for bytes a query may not hold (RFC 3986 §3.4), which are
    /// percent-encoded; a `%` that starts no escape becomes `%25`.
    static func encodeQuery(_ query: Substring) -> String {
        let bytes = Array(query.utf8)
        var out = ""
        out.reserveCapacity(bytes.count)
        var start = 0
        var index = 0
        // Runs of bytes are encoded at once; an intact `%XX` escape is copied as it is.
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                PercentEncoding.hexValue(bytes[index + 1]) != nil, PercentEncoding.hexValue(bytes[index + 2]) != nil
            {
                out += PercentEncoding.encode(bytes[start..<index], keeping: PercentEncoding.isQueryCharacter)
                out += String(decoding: bytes[index...index + 2], as: UTF8.self)
                index += 3
                start = index
            } else {
                index += 1
            }
        }
        out += PercentEncoding.encode(bytes[start...], keeping: PercentEncoding.isQueryCharacter)
        return out
    }
}

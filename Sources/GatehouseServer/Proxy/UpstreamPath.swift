import Foundation
import GatehouseCore

/// Builds an upstream URL from a base URL and the client's path so that it can never leave the base
/// path or the base origin: the request target is the base path followed by the normalized segments,
/// each re-encoded by the gateway (``NormalizedPath``), and the query with every byte that may not
/// appear in a query percent-encoded. Nothing is taken back from a parsed `URL`: the result is checked
/// to parse to exactly that target, so the HTTP client sends what was built.
enum UpstreamPath {
    /// `base` + the client's raw path below its first `droppingSegments` (the route's own prefix, e.g.
    /// `v1`, `api`) + `query`. Throws 400 `invalid_path` for what cannot be normalized.
    static func join(base: String, rawPath: Substring, droppingSegments: Int, query: Substring?) throws -> String {
        // The route matched its prefix on the raw segments; only what follows is the client's path,
        // normalized on its own so that a `..` can never climb into (and past) the prefix.
        let normalized: NormalizedPath
        do {
            normalized = try NormalizedPath(raw: remainder(of: rawPath, droppingSegments: droppingSegments))
        } catch {
            throw error.problem
        }
        return try join(base: base, path: normalized, query: query)
    }

    /// The raw path after its first `count` non-empty segments (`/v1//api/x` minus 2 → `/x`).
    static func remainder(of rawPath: Substring, droppingSegments count: Int) -> Substring {
        var rest = rawPath
        for _ in 0..<count {
            rest = rest.drop { $0 == "/" }
            rest = rest.drop { $0 != "/" }
        }
        return rest
    }

    /// `base` + an already normalized path + `query`.
    static func join(base: String, path: NormalizedPath, query: Substring?) throws -> String {
        let (origin, basePath) = split(base)
        var target = basePath
        if !path.segments.isEmpty { target += path.encoded }
        if target.isEmpty { target = "/" }
        let encodedQuery = query.flatMap { $0.isEmpty ? nil : encodeQuery($0) }
        var url = origin + target
        if let encodedQuery { url += "?" + encodedQuery }
        // What AsyncHTTPClient will send is derived from Foundation's URL: make sure it is what was built.
        guard let parsed = URL(string: url), !parsed.path.isEmpty,
            URLComponents(url: parsed, resolvingAgainstBaseURL: true)?.percentEncodedPath == target,
            parsed.query == encodedQuery
        else {
            throw GatehouseError(code: "invalid_path", status: 400, detail: "The path cannot be forwarded unchanged.")
        }
        return url
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
        let digits = Array("0123456789ABCDEF".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            let isHex: (Int) -> Bool = { position in
                position < bytes.count && (bytes[position].isASCIIHexDigit)
            }
            if byte == UInt8(ascii: "%"), isHex(index + 1), isHex(index + 2) {
                out.append(contentsOf: bytes[index...index + 2])
                index += 3
                continue
            }
            if isQueryCharacter(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0x0F)])
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isQueryCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="): true
        case UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"), UInt8(ascii: "?"): true
        default: false
        }
    }
}

private extension UInt8 {
    var isASCIIHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}

import Foundation
import GatehouseCore

/// The `htu` comparison of RFC 9449 §4.3 step 9: both URLs without query and fragment, after syntax-based
/// (RFC 3986 §6.2.2: case of scheme, host and escapes, unreserved escapes decoded, dot segments removed)
/// and scheme-based (§6.2.3: default port, empty path) normalization.
enum DPoPTargetURI {
    /// The normalized form of an absolute http(s) URL, or `nil` when it is not one.
    static func normalized(_ url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.percentEncodedHost, !host.isEmpty,
            components.user == nil, components.password == nil
        else { return nil }
        var authority = host.lowercased()
        if let port = components.port, port != (scheme == "https" ? 443 : 80) { authority += ":\(port)" }
        guard let path = normalizedPath(components.percentEncodedPath) else { return nil }
        return "\(scheme)://\(authority)\(path)"
    }

    /// Escapes in uppercase, unreserved ones decoded, `.` and `..` segments resolved; `/` when empty.
    private static func normalizedPath(_ path: String) -> String? {
        var bytes: [UInt8] = []
        var utf8 = Array(path.utf8)[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard utf8.count >= 2, let high = PercentEncoding.hexValue(utf8[utf8.startIndex]),
                let low = PercentEncoding.hexValue(utf8[utf8.startIndex + 1])
            else { return nil }
            utf8 = utf8.dropFirst(2)
            let decoded = high << 4 | low
            if PercentEncoding.isUnreserved(decoded) {
                bytes.append(decoded)
            } else {
                bytes.append(contentsOf: PercentEncoding.encode([decoded], keeping: { _ in false }).utf8)
            }
        }
        var segments: [Substring] = []
        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for (index, segment) in parts.enumerated() {
            let last = index == parts.count - 1
            switch segment {
            case ".": if last { segments.append("") }
            case "..":
                _ = segments.popLast()
                if last { segments.append("") }
            default: segments.append(segment)
            }
        }
        return "/" + segments.joined(separator: "/")
    }
}

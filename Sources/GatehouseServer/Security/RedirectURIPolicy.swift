import Foundation

/// Exact matching of client redirect URIs (RFC 9700 §4.1.3); only a loopback `http` URI may vary its
/// port (RFC 8252 §7.3).
struct RedirectURIPolicy: Sendable {
    let allowed: [String]

    func allows(_ candidate: String) -> Bool {
        if allowed.contains(candidate) { return true }
        guard let candidateParts = Self.loopbackParts(candidate) else { return false }
        return allowed.contains { Self.loopbackParts($0) == candidateParts }
    }

    /// For `http://127.0.0.1:port/rest` or `http://[::1]:port/rest`: host and everything after the port.
    private static func loopbackParts(_ uri: String) -> [String]? {
        for host in ["http://127.0.0.1", "http://[::1]"] where uri.hasPrefix(host) {
            var rest = uri.dropFirst(host.count)
            if rest.first == ":" {
                rest = rest.dropFirst()
                let digits = rest.prefix { $0.isNumber }
                guard !digits.isEmpty, digits.count <= 5 else { return nil }
                rest = rest.dropFirst(digits.count)
            }
            guard rest.isEmpty || rest.first == "/" || rest.first == "?" else { return nil }
            return [host, String(rest)]
        }
        return nil
    }
}

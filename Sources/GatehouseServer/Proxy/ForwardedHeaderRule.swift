import Foundation

/// Which of the client's header fields go upstream: the one rule of both upstream paths (the router's
/// ``UpstreamClient`` and the event-loop relay, ``APIRelay``).
///
/// Dropped: hop-by-hop fields (and those `Connection` lists), the client's credentials (`Authorization`,
/// the gateway's session cookie), anything claiming to be the gateway's or a proxy's (`X-Gatehouse-*`,
/// `X-Forwarded-*`, `Forwarded`), `Host` and `Content-Length` (each path frames the request itself), and any
/// name with an underscore: CGI and WSGI servers fold `_` into `-` (`X_Gatehouse_Subject` is
/// `X-Gatehouse-Subject` to them), so like nginx and Apache by default none passes.
enum ForwardedHeaderRule {
    enum Disposition {
        case keep
        case drop
        /// `Cookie`: kept without the gateway's session cookie (``keptCookies(_:sessionCookiePrefix:)``).
        case filterCookie
    }

    /// What happens to a field; `name` lowercased, `hopByHop` from ``HopByHopHeaders``.
    static func disposition(of name: String, hopByHop: Set<String>) -> Disposition {
        if hopByHop.contains(name) || name.hasPrefix("x-gatehouse-") || name.hasPrefix("x-forwarded-") { return .drop }
        if name.utf8.contains(UInt8(ascii: "_")) { return .drop }
        switch name {
        case "host", "content-length", "authorization", "forwarded": return .drop
        case "cookie": return .filterCookie
        default: return .keep
        }
    }

    /// A `Cookie` value without the gateway's session cookie (`sessionCookiePrefix` is `name=`); `nil` when
    /// nothing is left.
    static func keptCookies(_ value: String, sessionCookiePrefix: String) -> String? {
        // Fast path: most requests carry no session cookie at all.
        guard value.contains(sessionCookiePrefix) else { return value.isEmpty ? nil : value }
        let kept = value.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.hasPrefix(sessionCookiePrefix) }
        return kept.isEmpty ? nil : kept.joined(separator: "; ")
    }
}

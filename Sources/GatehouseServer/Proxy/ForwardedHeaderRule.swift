/// Which of the client's header fields go upstream: the one rule of both upstream paths (the router's
/// ``UpstreamClient`` and the event-loop relay, ``APIRelay``).
///
/// Dropped: hop-by-hop fields (and those `Connection` lists), the client's credentials (`Authorization`,
/// its `DPoP` proof, the gateway's session cookie), its `X-Request-Id` (the gateway sends the request's id), anything claiming to be the gateway's or a proxy's (`X-Gatehouse-*`,
/// `X-Forwarded-*`, `Forwarded`, `X-Real-IP`: the gateway sets its own, ``ForwardedFields``), `Host` and `Content-Length` (each path frames the request itself), and any
/// name with an underscore: CGI and WSGI servers fold `_` into `-` (`X_Gatehouse_Subject` is
/// `X-Gatehouse-Subject` to them), so like nginx and Apache by default none passes.
enum ForwardedHeaderRule {
    enum Disposition {
        case keep
        case drop
        /// `Cookie`: kept without the gateway's session cookie (``SessionCookieParser/forwarded(_:)``, the parser
        /// that also finds the session in it).
        case filterCookie
    }

    /// What happens to a field; `name` in any case, `listed` the names its `Connection` lists
    /// (``HopByHopHeaders/listed(in:)``).
    static func disposition(of name: String, listed: [String]) -> Disposition {
        if HopByHopHeaders.contains(name, listed: listed) { return .drop }
        if name.utf8.contains(UInt8(ascii: "_")) { return .drop }
        if ASCII.hasPrefixIgnoringCase(name, "x-gatehouse-") || ASCII.hasPrefixIgnoringCase(name, "x-forwarded-") { return .drop }
        switch name.utf8.count {
        case 4 where ASCII.equalsIgnoringCase(name, "host"), 4 where ASCII.equalsIgnoringCase(name, "dpop"): return .drop
        case 6 where ASCII.equalsIgnoringCase(name, "cookie"): return .filterCookie
        case 9 where ASCII.equalsIgnoringCase(name, "forwarded"), 9 where ASCII.equalsIgnoringCase(name, "x-real-ip"): return .drop
        case 13 where ASCII.equalsIgnoringCase(name, "authorization"): return .drop
        case 14 where ASCII.equalsIgnoringCase(name, "content-length"): return .drop
        case 12 where ASCII.equalsIgnoringCase(name, "x-request-id"): return .drop
        default: return .keep
        }
    }
}

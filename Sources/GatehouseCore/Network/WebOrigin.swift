import Foundation

/// The origin of a URL (RFC 6454), spelled as a browser's `Origin` header spells it: `scheme://host[:port]`,
/// lowercase, an IDN host in its `xn--` form, an IPv6 host in brackets, the scheme's default port left out.
///
/// The one place the gateway computes origins: the return-to and sign-out checks, CORS and WebSocket origins,
/// the login-page proxy's allowed origins, and the configuration's validation of them.
public enum WebOrigin {
    /// The origin of an absolute http(s) URL; nil for another scheme, a URL without host, with user info
    /// (`https://app.example@evil.example` is evil.example's), or one `URLComponents` cannot parse.
    public static func of(_ url: String) -> String? {
        URLComponents(string: url).flatMap(of)
    }

    /// Whether `text` is an origin and nothing more (no path, not even `/`, no query, no fragment), in any case
    /// and with or without its default port: what `cors.allowed_origins` and `access.return_to_origins` hold.
    public static func isOrigin(_ text: String) -> Bool {
        guard let components = URLComponents(string: text), of(components) != nil else { return false }
        return components.percentEncodedPath.isEmpty && components.percentEncodedQuery == nil && components.percentEncodedFragment == nil
    }

    private static func of(_ components: URLComponents) -> String? {
        guard let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            components.percentEncodedUser == nil, components.percentEncodedPassword == nil,
            let host = asciiHost(components), !host.isEmpty
        else { return nil }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        guard let port = components.port else { return "\(scheme)://\(hostPart)" }
        guard (1...65535).contains(port) else { return nil }
        return port == (scheme == "https" ? 443 : 80) ? "\(scheme)://\(hostPart)" : "\(scheme)://\(hostPart):\(port)"
    }

    /// The host as an origin serializes it: lowercase, IDNs in their `xn--` form, as browsers send `Origin`.
    ///
    /// `encodedHost` rather than `host`: `host` decodes `xn--` labels and runs every host through ICU's IDNA,
    /// which kept ICU's pages resident from start-up on. A percent-encoded host (rare) still needs decoding.
    private static func asciiHost(_ components: URLComponents) -> String? {
        guard let encoded = components.encodedHost else { return nil }
        return (encoded.contains("%") ? components.host : encoded)?.lowercased()
    }
}

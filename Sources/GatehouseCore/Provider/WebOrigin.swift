import Foundation

/// `scheme://host[:port]` of a URL: lowercase, the default port omitted. The unit the login-page
/// proxy allows or refuses.
public enum WebOrigin {
    /// The origin of an absolute http(s) URL; nil for anything else.
    public static func of(_ url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = asciiHost(components), !host.isEmpty
        else { return nil }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        if let port = components.port, !(scheme == "http" && port == 80), !(scheme == "https" && port == 443) {
            return "\(scheme)://\(hostPart):\(port)"
        }
        return "\(scheme)://\(hostPart)"
    }

    /// The host as an origin serializes it: lowercase, IDNs in their `xn--` form, as browsers send `Origin`.
    ///
    /// `encodedHost` rather than `host`: `host` decodes `xn--` labels and runs every host through ICU's IDNA,
    /// which kept ICU's pages resident from start-up on. A percent-encoded host (rare) still needs decoding.
    static func asciiHost(_ components: URLComponents) -> String? {
        guard let encoded = components.encodedHost else { return nil }
        return (encoded.contains("%") ? components.host : encoded)?.lowercased()
    }
}

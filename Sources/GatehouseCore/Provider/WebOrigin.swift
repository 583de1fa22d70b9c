import Foundation

/// `scheme://host[:port]` of a URL: lowercase, the default port omitted. The unit the login-page
/// proxy allows or refuses.
public enum WebOrigin {
    /// The origin of an absolute http(s) URL; nil for anything else.
    public static func of(_ url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        if let port = components.port, !(scheme == "http" && port == 80), !(scheme == "https" && port == 443) {
            return "\(scheme)://\(hostPart):\(port)"
        }
        return "\(scheme)://\(hostPart)"
    }
}

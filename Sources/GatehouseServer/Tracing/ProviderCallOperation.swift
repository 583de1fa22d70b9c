import Foundation
import GatehouseCore

/// The name of a provider call's span, read from the call itself (every adapter sends through one transport):
/// `discovery`, `jwks`, `token`, `refresh`, `revocation`, `introspection`, `userinfo`, or `call`.
/// Only the form's `grant_type` and the URL's path are looked at; nothing of a token.
enum ProviderCallOperation {
    static func of(_ request: TransportRequest) -> String {
        let path = path(of: request.url).lowercased()
        if path.contains("/.well-known/") { return "discovery" }
        if path.contains("jwks") || path.hasSuffix("/certs") || path.hasSuffix("/keys") { return "jwks" }
        if request.method == "POST", let body = request.body, let form = String(data: body, encoding: .utf8) {
            let fields = form.split(separator: "&").map { $0.split(separator: "=", maxSplits: 1) }
            if let grant = fields.first(where: { $0.first == "grant_type" }), grant.count == 2 {
                return grant[1] == "refresh_token" ? "refresh" : "token"
            }
            if path.contains("revo") || path.contains("logout") { return "revocation" }
            if path.contains("introspect") || fields.contains(where: { $0.first == "token" }) { return "introspection" }
        }
        if path.contains("introspect") { return "introspection" }
        if path.contains("userinfo") || path.hasSuffix("/me") || path.hasSuffix("/user") { return "userinfo" }
        return "call"
    }

    /// The URL's host (for `server.address`), without user, port, path or query.
    static func host(of url: String) -> String {
        let afterScheme = url.range(of: "://").map { url[$0.upperBound...] } ?? Substring(url)
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostPort = authority.split(separator: "@").last ?? authority
        if hostPort.hasPrefix("["), let end = hostPort.firstIndex(of: "]") { return String(hostPort[...end]) }
        return String(hostPort.prefix { $0 != ":" })
    }

    private static func path(of url: String) -> Substring {
        let afterScheme = url.range(of: "://").map { url[$0.upperBound...] } ?? Substring(url)
        guard let slash = afterScheme.firstIndex(of: "/") else { return "/" }
        return afterScheme[slash...].prefix { $0 != "?" && $0 != "#" }
    }
}

import Foundation
import GatehouseCore

/// The original request a forward-authentication call (`/v1/authz`) asks about, from the proxy's headers:
/// `X-Forwarded-Method` / `X-Forwarded-Uri` (Caddy, Traefik), `X-Original-Method` / `X-Original-URI` or the
/// whole `X-Original-URL` (nginx, ingress-nginx), or, for Envoy (`path_prefix: /v1/authz`), the request's
/// own method, the path after `/v1/authz` and the request's own `Host` (Envoy's check request carries the
/// original request's). The one reading of both front ends (router and relay).
struct ForwardAuthTarget: Equatable {
    /// Upper case.
    var method: String
    /// The original path, raw (percent-encoded as sent).
    var path: Substring
    /// The original request target as the proxy gave it: path and query (where a sign-in returns to).
    var target: Substring
    /// The original request's host as the proxy gave it (`X-Forwarded-Host`, or the host of `X-Original-URL`,
    /// or in Envoy's path form the request's own `Host`); `nil` when it gave none (then no rule with `hosts`
    /// applies).
    var host: String?

    /// The header values as sent (`nil`: absent); `ownMethod`, `ownTarget` and `ownHost` are the `/v1/authz…`
    /// request's. `ownHost` counts only in Envoy's path form: nginx's `auth_request` sends the gateway's own
    /// name there unless told otherwise.
    /// Throws 400 `invalid_request` when the two header families disagree or a value cannot be used.
    init(
        forwardedMethod: String?, forwardedURI: String?, originalMethod: String?, originalURI: String?, originalURL: String?,
        ownMethod: String, ownTarget: String, ownHost: String? = nil, forwardedHost: String? = nil
    ) throws {
        let nginxURI = try originalURI ?? originalURL.map(Self.target(ofURL:))
        if let a = forwardedMethod, let b = originalMethod, a.uppercased() != b.uppercased() {
            throw GatehouseError.invalidRequest("X-Forwarded-Method and X-Original-Method name different methods.")
        }
        if let a = forwardedURI, let b = nginxURI, a != b {
            throw GatehouseError.invalidRequest("X-Forwarded-Uri and X-Original-URI name different targets.")
        }
        method = (forwardedMethod ?? originalMethod)?.uppercased() ?? ownMethod
        guard !method.isEmpty, method.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            throw GatehouseError.invalidRequest("The original method is not an HTTP method.")
        }
        let target: Substring
        // Envoy ext_authz: no header names the original request; the path after the prefix does.
        let envoy = forwardedURI == nil && nginxURI == nil
        if let uri = forwardedURI ?? nginxURI {
            guard uri.hasPrefix("/") else { throw GatehouseError.invalidRequest("The original URI must be a path.") }
            target = Substring(uri)
        } else {
            let rest = ownTarget.dropFirst(Self.prefix.count)
            target = rest.isEmpty || rest.hasPrefix("?") ? Substring("/" + rest) : rest
        }
        path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "/"
        self.target = target
        let urlHost = originalURL.flatMap(Self.authority(ofURL:))
        if let a = forwardedHost.flatMap({ HostPattern.normalized(Substring($0)) }), let b = urlHost.flatMap({ HostPattern.normalized($0) }), a != b {
            throw GatehouseError.invalidRequest("X-Forwarded-Host and X-Original-URL name different hosts.")
        }
        host = forwardedHost ?? urlHost.map(String.init) ?? (envoy ? ownHost : nil)
    }

    /// The request a client's DPoP proof names: the original method and URL — `X-Original-URL` when the proxy
    /// sends it, else the original path under `X-Forwarded-Proto` and `X-Forwarded-Host` (or `Host`: Envoy keeps
    /// the original one), defaulting to `public_url`'s scheme and host. The values as sent (`nil`: absent).
    func proofTarget(
        originalURL: String?, forwardedProto: String?, forwardedHost: String?, ownHost: String?, publicURL: String
    ) -> DPoPVerifier.Target {
        if let originalURL, originalURL.contains("://") {
            return DPoPVerifier.Target(method: method, url: originalURL)
        }
        let base = URLComponents(string: publicURL)
        let scheme = forwardedProto.flatMap(ForwardedFields.firstValue) ?? base?.scheme ?? "http"
        let publicAuthority = (base?.percentEncodedHost ?? "") + (base?.port.map { ":\($0)" } ?? "")
        let host = forwardedHost.flatMap(ForwardedFields.firstValue) ?? ownHost ?? publicAuthority
        return DPoPVerifier.Target(method: method, url: "\(scheme)://\(host)\(path)")
    }

    /// The authority (`host[:port]`) of an absolute URL, without user info; `nil` when it has none.
    private static func authority(ofURL url: String) -> Substring? {
        guard let scheme = url.range(of: "://") else { return nil }
        let rest = url[scheme.upperBound...]
        var authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        return authority.isEmpty ? nil : authority
    }

    /// The one value of a forward-auth field (`nil`: absent); 400 `invalid_request` when it came more than once.
    static func single(_ values: [String], name: String) throws -> String? {
        guard values.count <= 1 else { throw GatehouseError.invalidRequest("\(name) may be sent only once.") }
        return values.first
    }

    /// The fields a forward-auth request may carry at most once each, lowercase: the original request's
    /// method and target of both families, and the scheme and host its DPoP proof names.
    static let singleFields: Set<String> = [
        "x-forwarded-method", "x-forwarded-uri", "x-original-method", "x-original-uri", "x-original-url", "x-forwarded-proto", "x-forwarded-host",
    ]

    /// `/v1/authz`, the route's own path.
    static let prefix = "/v1/authz"

    /// Whether a request target is `/v1/authz` or below it.
    static func isAuthz(_ target: String) -> Bool {
        guard target.hasPrefix(prefix) else { return false }
        let next = target.utf8.dropFirst(prefix.utf8.count).first
        return next == nil || next == UInt8(ascii: "/") || next == UInt8(ascii: "?")
    }

    /// `/path?query` of an absolute URL.
    private static func target(ofURL url: String) throws -> String {
        guard let scheme = url.range(of: "://") else { throw GatehouseError.invalidRequest("X-Original-URL must be an absolute URL.") }
        let rest = url[scheme.upperBound...]
        guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        let target = String(rest[slash...])
        return target.hasPrefix("?") ? "/" + target : target
    }
}

import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
import Logging

/// `ANY /v1/authz` and `ANY /v1/authz/{original path}`: forward authentication for a proxy that does the
/// proxying itself (nginx `auth_request`, Caddy `forward_auth`, Traefik `ForwardAuth`, Envoy `ext_authz`).
///
/// The original request comes from `X-Forwarded-Method` / `X-Forwarded-Uri` (Caddy, Traefik) or
/// `X-Original-Method` / `X-Original-URI` (nginx), or, for Envoy, from the request itself (the path after
/// `/v1/authz`); headers of both families that disagree are 400 (a client could add the family its proxy
/// does not set). The access rules judge the original path, normalized as `/v1/api` normalizes.
/// Allowed: 200, empty, with the identity headers for the proxy to copy upstream; no session: 401;
/// refused: 403 — both with a problem body.
///
/// The session comes from the cookie or `Authorization: Bearer`. No `X-CSRF` is asked of a cookie here:
/// the application's own pages post forms through the proxy, and the session cookie (`SameSite=Lax`) is
/// not sent on another site's POST.
struct AuthzController: Sendable {
    let resolver: SessionResolver
    let access: AccessRules
    let backend: ServerSettings.BackendSettings
    let signer: AssertionSigner
    let providers: ProviderSet
    let refresher: RefreshCoordinator
    let refreshPolicy: RefreshPolicy
    let clock: TimeSource
    let metrics: GatewayMetrics

    private static let methods: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options]

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        for method in Self.methods {
            router.on("/v1/authz", method: method) { request, context in try await authorize(request, context) }
            router.on("/v1/authz/**", method: method) { request, context in try await authorize(request, context) }
        }
    }

    private func authorize(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let (method, target) = try original(request)
        let rawPath = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "/"
        let path = try UpstreamPath.normalized(rawPath, droppingSegments: 0)

        var session: ActiveSession?
        var refusal: (any Error)?
        do {
            // GET: no X-CSRF asked of a cookie (see the type's comment).
            session = try await resolver.resolve(request.headers, method: .get).0
        } catch {
            refusal = error
        }
        let user = session.map { (provider: $0.provider, identity: $0.identity) }
        switch access.current.decide(method: method, path: path.segments.map { Substring($0) }, user: user) {
        case .allow:
            break
        case .needsSession:
            throw refusal ?? GatehouseError.invalidSession()
        case .deny(let rule):
            metrics.accessDenied(rule: rule)
            context.logger.notice(
                "access denied",
                metadata: ["rule": "\(rule)", "provider": "\(session?.provider ?? "")", "session": "\(session?.id ?? "")", "method": "\(method)", "path": "\(path.encoded)", "via": "authz"])
            throw GatehouseError.forbidden(.accessDenied, "The access rule '\(rule)' does not let this session through.")
        }
        var headers = HTTPFields()
        if var session {
            if backend.forwardAccessToken, session.credential.isRefreshable,
                let provider = providers.provider(session.provider) as? any RefreshingProvider,
                refreshPolicy.needsRefresh(session.credential, now: clock.now())
            {
                session = try await refresher.refresh(session, provider: provider, force: false)
            }
            let assertion = backend.assertion ? try await signer.assertion(for: session, now: clock.now()) : nil
            // Always the identity headers here: the proxy decides what it copies upstream.
            var settings = backend
            settings.identityHeaders = true
            BackendIdentityHeaders.add(for: session, backend: settings, assertion: assertion) { name, value in
                if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) }
            }
        }
        // Every identity name, empty when unknown (no session, no email, no groups): Caddy 2.6's
        // `copy_headers` sends an unresolved placeholder upstream for a name the answer lacks.
        for name in [BackendIdentityHeaders.provider, BackendIdentityHeaders.subject, BackendIdentityHeaders.email, BackendIdentityHeaders.groups, BackendIdentityHeaders.assertion] {
            if let field = HTTPField.Name(name), headers[field] == nil { headers[field] = "" }
        }
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers)
    }

    /// The original method and request target.
    private func original(_ request: Request) throws -> (method: String, target: Substring) {
        let forwarded = (method: request.headers[Self.forwardedMethod], uri: request.headers[Self.forwardedURI])
        // ingress-nginx sends the whole URL (`X-Original-URL`); its path and query are the target.
        let nginx = (method: request.headers[Self.originalMethod], uri: try request.headers[Self.originalURI] ?? request.headers[Self.originalURL].map(Self.target(ofURL:)))
        if let a = forwarded.method, let b = nginx.method, a.uppercased() != b.uppercased() {
            throw GatehouseError.invalidRequest("X-Forwarded-Method and X-Original-Method name different methods.")
        }
        if let a = forwarded.uri, let b = nginx.uri, a != b {
            throw GatehouseError.invalidRequest("X-Forwarded-Uri and X-Original-URI name different targets.")
        }
        let method = (forwarded.method ?? nginx.method)?.uppercased() ?? request.method.rawValue
        guard method.allSatisfy({ $0.isASCII && $0.isLetter }) else { throw GatehouseError.invalidRequest("The original method is not an HTTP method.") }
        if let uri = forwarded.uri ?? nginx.uri {
            guard uri.hasPrefix("/") else { throw GatehouseError.invalidRequest("The original URI must be a path.") }
            return (method, Substring(uri))
        }
        // Envoy ext_authz (`path_prefix: /v1/authz`): the original path follows the prefix.
        let own = request.uri.path
        let rest = own.dropFirst("/v1/authz".count)
        let query = request.uri.query.map { "?" + $0 } ?? ""
        return (method, Substring((rest.isEmpty ? "/" : String(rest)) + query))
    }

    /// `/path?query` of an absolute URL.
    private static func target(ofURL url: String) throws -> String {
        guard let scheme = url.range(of: "://") else { throw GatehouseError.invalidRequest("X-Original-URL must be an absolute URL.") }
        let rest = url[scheme.upperBound...]
        guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        let target = String(rest[slash...])
        return target.hasPrefix("?") ? "/" + target : target
    }

    private static let originalURL = HTTPField.Name("X-Original-URL")!
    private static let forwardedMethod = HTTPField.Name("X-Forwarded-Method")!
    private static let forwardedURI = HTTPField.Name("X-Forwarded-Uri")!
    private static let originalMethod = HTTPField.Name("X-Original-Method")!
    private static let originalURI = HTTPField.Name("X-Original-URI")!
}

import Foundation
import GatehouseConfiguration
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
    /// The access rules and the upstreams, read once per request.
    let policy: CurrentPolicy
    let signer: AssertionSigner
    let providers: ProviderSet
    let refresher: RefreshCoordinator
    let refreshPolicy: RefreshPolicy
    let clock: TimeSource
    let metrics: GatewayMetrics
    /// `public_url`: the sign-in page named in a 401 is under it.
    let publicURL: String

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        for method in UpstreamProtocol.methods {
            router.on("/v1/authz", method: method) { request, context in try await authorize(request, context) }
            router.on("/v1/authz/**", method: method) { request, context in try await authorize(request, context) }
        }
    }

    private func authorize(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        // A field sent twice is refused, never joined: a front proxy that appends its value after the
        // client's would otherwise let the client pick which one is read.
        func single(_ name: HTTPField.Name) throws -> String? { try ForwardAuthTarget.single(request.headers[values: name], name: name.rawName) }
        for name in [Self.forwardedProto, Self.forwardedHost] { _ = try single(name) }
        let original = try ForwardAuthTarget(
            forwardedMethod: single(Self.forwardedMethod), forwardedURI: single(Self.forwardedURI),
            originalMethod: single(Self.originalMethod), originalURI: single(Self.originalURI),
            originalURL: single(Self.originalURL), ownMethod: request.method.rawValue, ownTarget: request.uri.description,
            ownHost: request.head.authority, forwardedHost: single(Self.forwardedHost))
        let path = try UpstreamPath.normalized(original.path, droppingSegments: 0)
        // Read before the credential: a provider token verified after a reload is never judged by the rules before it
        // (and one verified before never by the rules after).
        let snapshot = policy.current
        // GET: no X-CSRF asked of a cookie (see the type's comment). A DPoP proof names the original request.
        let credential = await resolver.spent(
            resolver.credential(
                request.headers, method: .get,
                target: original.proofTarget(
                    originalURL: request.headers[Self.originalURL], forwardedProto: request.headers[Self.forwardedProto],
                    forwardedHost: request.headers[Self.forwardedHost], ownHost: request.head.authority, publicURL: publicURL),
                providerTokens: true))
        let (policy, table) = (snapshot.access, snapshot.upstreams)
        // The one decision of `/v1/authz` (the relay asks it too); this route only carries out its plan.
        let plan = ForwardAuthDecision.decide(original, path: path, credential: credential, policy: policy, upstreams: table, publicURL: publicURL)
        let session = plan.session
        if let session { context.logFields.session(provider: session.provider, id: session.id) }
        if let app = plan.app { context.logFields.upstream(app.name) }
        plan.access.decision.audit(session: session, method: original.method, path: path, via: "authz", metrics: metrics, logger: context.logger)
        var answered: ActiveSession?
        let backend: ServerSettings.BackendSettings
        switch plan.verdict {
        case .refuse(let error, let signIn):
            GatewayTracing.decided("refuse")
            // A 401 names the sign-in page that returns to the original request, for the proxy to send a browser
            // to (nginx: `auth_request_set` + `error_page 401`).
            guard let signIn, let unauthorized = error as? GatehouseError else { throw error }
            var response = Problem.response(unauthorized, requestID: context.requestID)
            response.headers[Self.signIn] = signIn
            return response
        case .allow(let session, let settings):
            GatewayTracing.decided("allow")
            (answered, backend) = (session, settings)
        case .allowAfterRefresh(var session, let settings):
            GatewayTracing.decided("allow")
            if session.credential.isRefreshable, let provider = providers.provider(session.provider) as? any RefreshingProvider,
                refreshPolicy.needsRefresh(session.credential, now: clock.now())
            {
                session = try await refresher.refresh(session, provider: provider, force: false)
            }
            (answered, backend) = (session, settings)
        }
        var assertion: String?
        if let answered, backend.assertion { assertion = try await signer.assertion(for: answered, audience: backend.audience, now: clock.now()) }
        var headers = HTTPFields()
        ForwardAuthAnswer.fields(session: answered, backend: backend, assertion: assertion) { name, value in
            if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) }
        }
        return Response(status: .ok, headers: headers)
    }

    private static let signIn = HTTPField.Name(ForwardAuthAnswer.signInField)!
    private static let originalURL = HTTPField.Name("X-Original-URL")!
    private static let forwardedMethod = HTTPField.Name("X-Forwarded-Method")!
    private static let forwardedURI = HTTPField.Name("X-Forwarded-Uri")!
    private static let originalMethod = HTTPField.Name("X-Original-Method")!
    private static let originalURI = HTTPField.Name("X-Original-URI")!
    private static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!
    private static let forwardedHost = HTTPField.Name("X-Forwarded-Host")!
}

import AsyncHTTPClient
import Foundation
import GatehouseConfiguration
import GatehouseCore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import Prometheus

/// `/v1/api/{path…}` (the backend, with the gateway's identity headers) and
/// `/v1/proxy/{provider}/{path…}` (the provider's own API, with the provider credential), both
/// streamed, with transparent refresh and one replay after an upstream 401.
struct ProxyController: Sendable {
    let providers: ProviderSet
    /// Whose `X-Forwarded-Host` names the host the access rules judge.
    let trustedProxies: TrustedProxies
    let resolver: SessionResolver
    let refresher: RefreshCoordinator
    let refreshPolicy: RefreshPolicy
    let signer: AssertionSigner
    let clock: TimeSource
    let upstream: UpstreamClient
    /// The access rules and the upstreams, read once per request (SIGHUP may replace them).
    let policy: CurrentPolicy
    let metrics: GatewayMetrics
    /// Where a step-up login starts (``StepUpSignIn``).
    let publicURL: String

    private static let xForwardedHost = HTTPField.Name("X-Forwarded-Host")!
    private static let secFetchMode = HTTPField.Name("Sec-Fetch-Mode")!

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        // `/v1/api` resolves its session itself: the access policy may let a path through without one.
        let api = router.group("/v1/api")
        let proxy = router.group("/v1/proxy/:provider").add(middleware: SessionMiddleware(resolver: resolver))
        for method in UpstreamProtocol.methods {
            api.on("**", method: method) { request, context in try await backendCall(request, context) }
            proxy.on("**", method: method) { request, context in try await providerAPI(request, context) }
        }
    }

    // MARK: Routes

    private func backendCall(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let path = Substring(request.uri.path)
        // Read before the credential, as in ``AuthzController``: the rules a provider token is judged by are never
        // older than the providers that verified it.
        let snapshot = policy.current
        let credential = await resolver.spent(
            resolver.credential(
                request.headers, method: request.method, target: resolver.proofTarget(method: request.method.rawValue, path: path),
                providerTokens: true))
        // The one decision of `/v1/api` (the relay asks it too); this route only carries out its plan.
        let query = request.uri.query.map { Substring($0) }
        let host = APIDecision.host(
            own: request.head.authority, forwarded: request.headers[Self.xForwardedHost], trusted: trustedProxies.trusts(context.remoteAddress))
        let facts = APIDecision.Facts(
            method: request.method.rawValue, path: UpstreamPath.remainder(of: path, droppingSegments: 2), query: query, host: host)
        let (policy, table) = (snapshot.access, snapshot.upstreams)
        let plan = APIDecision.decide(facts, credential: credential, policy: policy, upstreams: table)
        let session = plan.session
        if let session { context.logFields.session(provider: session.provider, id: session.id) }
        if let access = plan.access {
            access.decision.audit(session: session, method: facts.method, path: access.path, via: "api", metrics: metrics, logger: context.logger)
        }
        switch plan.verdict {
        case .refuse(let error):
            GatewayTracing.decided("refuse")
            throw StepUpSignIn.redirecting(
                error, session: session, method: facts.method, fetchMode: request.headers[Self.secFetchMode], publicURL: publicURL,
                target: Substring(request.uri.description))
        case .forward(let forward):
            GatewayTracing.decided("forward")
            let (chosen, target) = (forward.upstream, forward.target)
            context.logFields.upstream(chosen.name)
            let url = chosen.origin + target
            let hop = UpstreamClient.Hop(timeout: chosen.timeout, label: chosen.name, claimFields: chosen.claimFields, tls: chosen.tls)
            guard let session = forward.session else {
                // A path the rules open to anyone, asked without a session: forwarded with no identity.
                let body = try await upstream.forwardBody(of: request)
                return upstream.makeResponse(
                    try await upstream.send(request, context, url: url, body: body, hop: hop, attach: { _ in }), dropCookies: false)
            }
            // The upstream only needs a fresh provider token when it receives one.
            let refresher = chosen.backend.forwardAccessToken ? refreshingProvider(for: session) : nil
            let response = try await exchange(
                request, context, session: session, url: url, hop: hop, refresher: refresher,
                attachment: { backendHeaders($0, backend: chosen.backend) })
            return upstream.makeResponse(response, dropCookies: false)
        }
    }

    private func providerAPI(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let providerID = try context.parameters.require("provider")
        let provider = try providers.require(providerID)
        let session = try context.requireSession()
        // A session may only reach the API of the provider it signed in with.
        guard session.provider == providerID else {
            throw GatehouseError.forbidden(.providerMismatch, "This session belongs to provider '\(session.provider)', not '\(providerID)'.")
        }
        guard let api = provider.descriptor.api else {
            throw GatehouseError.notFound("Provider '\(providerID)' has no api configured.")
        }
        // `/v1/proxy/{provider}`: three segments.
        let url = try UpstreamPath.join(
            base: api.url, rawPath: Substring(request.uri.path), droppingSegments: 3, query: request.uri.query.map { Substring($0) })
        let response = try await exchange(
            request, context, session: session, url: url, caFile: provider.descriptor.caFile, refresher: refreshingProvider(for: session),
            attachment: { session in providerAttachment(provider, session) })
        if response.status.code >= 400, let translator = provider as? any APIErrorTranslating {
            return try await translated(response, by: translator)
        }
        return upstream.makeResponse(response, dropCookies: true)
    }

    // MARK: Refresh

    private func refreshingProvider(for session: ActiveSession) -> (any RefreshingProvider)? {
        guard session.credential.isRefreshable else { return nil }
        return providers.provider(session.provider) as? any RefreshingProvider
    }

    // MARK: Upstream request

    /// The same for both upstreams: refresh before sending when the credential is about to expire,
    /// send, and after a 401 refresh once and replay (when the body was buffered).
    private func exchange(
        _ request: Request, _ context: GatehouseRequestContext, session: ActiveSession, url: String, hop: UpstreamClient.Hop? = nil,
        caFile: String? = nil, refresher: (any RefreshingProvider)?, attachment: (ActiveSession) -> Attachment
    ) async throws -> HTTPClientResponse {
        var session = session
        if let refresher, refreshPolicy.needsRefresh(session.credential, now: clock.now()) {
            session = try await self.refresher.refresh(session, provider: refresher, force: false)
        }
        let body = try await upstream.forwardBody(of: request)
        let response = try await upstream.send(request, context, url: url, body: body, hop: hop, caFile: caFile, attach: attachment(session))
        guard response.status.code == 401, body.isReplayable, let refresher else { return response }
        session = try await self.refresher.refresh(session, provider: refresher, force: false)
        return try await upstream.send(request, context, url: url, body: body, hop: hop, caFile: caFile, attach: attachment(session))
    }

    private typealias Attachment = UpstreamClient.Attachment

    /// The identity an upstream receives, as its settings (`backend`, or its entry of `upstreams:`) ask.
    private func backendHeaders(_ session: ActiveSession, backend: ServerSettings.BackendSettings) -> Attachment {
        let (signer, clock) = (self.signer, self.clock)
        return { outgoing in
            let assertion = backend.assertion ? try await signer.assertion(for: session, audience: backend.audience, now: clock.now()) : nil
            BackendIdentityHeaders.add(for: session, backend: backend, assertion: assertion) { outgoing.headers.append(($0, $1)) }
        }
    }

    private func providerAttachment(_ provider: any AuthProvider, _ session: ActiveSession) -> Attachment {
        { outgoing in provider.attach(session.credential, to: &outgoing) }
    }

    // MARK: Response

    /// An error answer in the provider's own format becomes a problem with a stable code; anything
    /// the provider does not recognise goes back as it came (errors are small, so they are buffered).
    private func translated(_ upstream: HTTPClientResponse, by translator: any APIErrorTranslating) async throws -> Response {
        let body = (try? await upstream.body.collect(upTo: 256 * 1024)) ?? ByteBuffer()
        if let problem = translator.problem(forAPIStatus: Int(upstream.status.code), body: Data(body.readableBytesView)) {
            throw problem
        }
        var response = self.upstream.makeResponse(upstream, dropCookies: true)
        response.body = ResponseBody(byteBuffer: body)
        response.headers[.contentLength] = String(body.readableBytes)
        return response
    }

}

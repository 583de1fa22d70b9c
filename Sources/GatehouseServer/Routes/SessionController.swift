import GatehouseCore
import HTTPTypes
import Hummingbird
import Logging
import Prometheus

/// `/v1/session`: redeeming handoff codes, viewing, refreshing and ending sessions. Every route but the
/// redemption sits behind ``SessionMiddleware`` and reads the session from the request context.
struct SessionController: Sendable {
    let flow: LoginFlow
    let sessions: SessionManager
    let providers: ProviderSet
    let refresher: RefreshCoordinator
    let resolver: SessionResolver
    let dpop: DPoPVerifier
    let metrics: GatewayMetrics
    let settings: ServerSettings

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.post("/v1/session") { request, context in try await exchange(request, context) }
        router.group("/v1/session").add(middleware: SessionMiddleware(resolver: resolver))
            .get { _, context in try JSONResponse.make(SessionView(try context.requireSession())) }
            .post("refresh") { _, context in try await refresh(context) }
            .delete { _, context in try await logout(context) }
    }

    private struct ExchangeBody: Decodable {
        var grantType: String
        var code: String
        var codeVerifier: String
        var redirectURI: String
        enum CodingKeys: String, CodingKey {
            case code
            case grantType = "grant_type"
            case codeVerifier = "code_verifier"
            case redirectURI = "redirect_uri"
        }
    }

    private func exchange(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let body = try await RequestBodyReader.json(ExchangeBody.self, from: request, limit: 64 * 1024)
        guard body.grantType == "authorization_code" else {
            throw GatehouseError(code: .unsupportedGrantType, status: 400, detail: "grant_type must be authorization_code.")
        }
        // A nonce to fetch keeps the code for the retry; any other refusal of the proof spends it.
        let binding: Result<String?, GatehouseError>
        do {
            binding = .success(
                try await dpop.bindingForSignIn(
                    proofs: request.headers[values: DPoPVerifier.proofField], target: dpop.target(method: "POST", path: Substring(request.uri.path))))
        } catch let error as GatehouseError where error.code != .useDPoPNonce {
            binding = .failure(error)
        }
        var response = try await flow.redeem(
            code: body.code, verifier: body.codeVerifier, redirectURI: body.redirectURI, binding: binding, logger: context.logger)
        if let nonce = dpop.freshNonce() { response.headers[DPoPVerifier.nonceField] = nonce }
        return response
    }

    private func refresh(_ context: GatehouseRequestContext) async throws -> Response {
        let session = try context.requireSession()
        guard let provider = providers.provider(session.provider) as? any RefreshingProvider, session.credential.isRefreshable else {
            throw GatehouseError(code: .notRefreshable, status: 409, detail: "This session's credential cannot be refreshed.")
        }
        return try JSONResponse.make(SessionView(try await refresher.refresh(session, provider: provider, force: true)))
    }

    private struct LogoutBody: Encodable {
        /// `revoked`, `failed` (the gateway session ended anyway) or `not_supported`.
        var providerLogout: String
        /// For browsers: where to end the provider's own browser session.
        var browserLogoutURL: String?
        enum CodingKeys: String, CodingKey {
            case providerLogout = "provider_logout"
            case browserLogoutURL = "browser_logout_url"
        }
    }

    /// Ends the session everywhere and revokes upstream, best effort (``SessionLogout``).
    private func logout(_ context: GatehouseRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let outcome = try await SessionLogout(sessions: sessions, providers: providers, metrics: metrics).end(session, logger: context.logger)
        let provider = providers.provider(session.provider)
        var headers = HTTPFields()
        var browserLogoutURL: String?
        if context.session?.presentation == .cookie {
            headers[.setCookie] = SessionCookie(settings: settings).clearing()
            browserLogoutURL = (provider as? any BrowserLogoutProvider)?.browserLogoutURL(for: session.credential, returnTo: settings.publicURL + "/")
        }
        return try JSONResponse.make(LogoutBody(providerLogout: outcome, browserLogoutURL: browserLogoutURL), headers: headers)
    }
}

import GatehouseCore
import HTTPTypes
import Hummingbird
import Logging

/// `/v1/auth/{provider}/…`: starting logins, provider callbacks, posted assertions and tokens.
/// Routing only: ``LoginFlow`` owns the login, the adapter talks to the provider.
struct AuthController: Sendable {
    let providers: ProviderSet
    let flow: LoginFlow
    let dpop: DPoPVerifier
    let maxBodyBytes: Int
    /// Finds the browser's cookie session a step-up login replaces.
    let resolver: SessionResolver

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("/v1/auth/:provider/login") { request, context in try await login(request, context) }
        router.get("/v1/auth/:provider/callback") { request, context in try await callback(request, context) }
        router.post("/v1/auth/:provider/assertion") { request, context in try await assertion(request, context) }
        router.post("/v1/auth/:provider/token") { request, context in try await token(request, context) }
    }

    private func login(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let providerID = try context.parameters.require("provider")
        let provider = try providers.require(providerID)
        if provider is any LoginPageProvider {
            // Gateway-served login pages (acs, capture): same query, the login-page proxy takes over.
            return JSONResponse.redirect(to: "/v1/auth/\(providerID)/pages" + (request.uri.query.map { "?\($0)" } ?? ""))
        }
        guard let redirectProvider = provider as? any RedirectLoginProvider else {
            throw GatehouseError.unsupported(
                "Provider '\(providerID)' does not sign in by redirect; use its \(provider.loginStyle.rawValue) endpoint.")
        }
        if let reporting = provider as? any ReadinessReporting, case .notReady(let reason) = await reporting.readiness {
            // The operator's clue (OIDC discovery failing, …): the client only learns "try again".
            context.logger.warning("login refused: provider not ready", metadata: ["provider": "\(providerID)", "reason": "\(reason)"])
            throw GatehouseError(code: .providerUnavailable, status: 503, detail: "Provider '\(providerID)' is not ready: \(reason)", retryAfter: 5)
        }
        let query = request.uri.queryDictionary
        // A step-up (`acr_values`, `max_age`) of a browser replaces its session: found only when one is asked.
        // (A key-bound token in a cookie is refused everywhere: no session to replace, the login goes on.)
        let current = query["acr_values"] != nil || query["max_age"] != nil ? try? await resolver.cookieSession(in: request.headers) : nil
        let started = try flow.start(
            query: query, rawQuery: request.uri.query, providerID: providerID, provider: provider, channel: .callback, current: current)
        try await flow.persist(started.transaction)
        return JSONResponse.redirect(to: try redirectProvider.authorizationURL(for: started.transaction), headers: started.headers)
    }

    private func callback(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let providerID = try context.parameters.require("provider")
        guard let provider = try providers.require(providerID) as? any RedirectLoginProvider else {
            throw GatehouseError.unsupported("Provider '\(providerID)' has no callback.")
        }
        let parameters = request.uri.queryDictionary
        let transaction = try await flow.resume(state: parameters["state"], providerID: providerID)
        // Checked before the code is redeemed; the transaction is spent either way.
        if let refusal = flow.refusal(request, for: transaction, .callback, logger: context.logger) { return refusal }
        let result: LoginResult
        do {
            result = try await provider.completeLogin(callback: parameters, transaction: transaction)
        } catch let error as ProviderError {
            return try flow.fail(ErrorMapping.loginFailure(error, at: .callback), transaction: transaction, .callback, logger: context.logger)
        }
        return try await flow.finish(result, transaction: transaction, .callback, logger: context.logger)
    }

    private struct AssertionBody: Decodable {
        var assertion: String
        var audience: String
    }

    private struct TokenBody: Decodable {
        var token: String
    }

    private func assertion(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let providerID = try context.parameters.require("provider")
        guard let provider = try providers.require(providerID) as? any AssertionLoginProvider else {
            throw GatehouseError.unsupported("Provider '\(providerID)' does not accept assertions.")
        }
        let body = try await RequestBodyReader.json(AssertionBody.self, from: request, limit: maxBodyBytes)
        let binding = try await bindingForSignIn(request)
        return try await withNonce(
            flow.signIn(provider: providerID, dpopThumbprint: binding, logger: context.logger) {
                try await provider.verifyAssertion(body.assertion, audience: body.audience)
            })
    }

    private func token(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let providerID = try context.parameters.require("provider")
        guard let provider = try providers.require(providerID) as? any TokenLoginProvider else {
            throw GatehouseError.unsupported("Provider '\(providerID)' does not accept captured tokens.")
        }
        let body = try await RequestBodyReader.json(TokenBody.self, from: request, limit: maxBodyBytes)
        let binding = try await bindingForSignIn(request)
        return try await withNonce(
            flow.signIn(provider: providerID, dpopThumbprint: binding, logger: context.logger) {
                try await provider.validateToken(body.token)
            })
    }

    /// The key a sign-in binds its session to (its DPoP proof), checked before the credential is.
    private func bindingForSignIn(_ request: Request) async throws -> String? {
        try await dpop.bindingForSignIn(
            proofs: request.headers[values: DPoPVerifier.proofField], target: dpop.target(method: "POST", path: Substring(request.uri.path)))
    }

    /// The answer with the nonce for the client's next proof, when nonces are required.
    private func withNonce(_ response: Response) -> Response {
        var response = response
        if let nonce = dpop.freshNonce() { response.headers[DPoPVerifier.nonceField] = nonce }
        return response
    }
}

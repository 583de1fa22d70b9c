import Foundation
import GatehouseCore
import Prometheus
import HTTPTypes
import Hummingbird
import Logging

/// `/v1/auth/{provider}/…`: starting logins, provider callbacks, posted assertions and tokens.
struct AuthController: Sendable {
    let gateway: Gateway

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("/v1/auth/:provider/login") { request, context in try await login(request, context) }
        router.get("/v1/auth/:provider/callback") { request, context in try await callback(request, context) }
        router.post("/v1/auth/:provider/assertion") { request, context in try await assertion(request, context) }
        router.post("/v1/auth/:provider/token") { request, context in try await token(request, context) }
    }

    // MARK: Login

    private func login(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let providerID = try context.parameters.require("provider")
        let provider = try gateway.provider(providerID)
        if provider is any LoginPageProvider {
            // Gateway-served login pages (acs, capture): same query, the login-page proxy takes over.
            return JSONResponse.redirect(to: "/v1/auth/\(providerID)/pages" + (request.uri.query.map { "?\($0)" } ?? ""))
        }
        guard let redirectProvider = provider as? any RedirectLoginProvider else {
            throw GatehouseError.unsupported("Provider '\(providerID)' does not sign in by redirect; use its \(provider.loginStyle.rawValue) endpoint.")
        }
        if let reporting = provider as? any ReadinessReporting, case .notReady(let reason) = await reporting.readiness {
            throw GatehouseError(code: "provider_unavailable", status: 503, detail: "Provider '\(providerID)' is not ready: \(reason)", retryAfter: 5)
        }
        let (transaction, bindingSecret) = try newTransaction(request, providerID: providerID, provider: provider)
        let record = PendingRecord(
            keyHash: RandomToken.hash(transaction.state), purpose: .loginTransaction, provider: providerID,
            payload: try gateway.sessions.sealer.seal(json: transaction),
            expiresAt: transaction.createdAt.addingTimeInterval(gateway.settings.loginTransactionLifetime))
        try await gateway.store.insertPending(record)
        var headers = HTTPFields()
        if let bindingSecret {
            headers[.setCookie] = binding.setting(bindingSecret, loginID: transaction.state, scope: .callback(provider: providerID))
        }
        return JSONResponse.redirect(to: try redirectProvider.authorizationURL(for: transaction), headers: headers)
    }

    private var binding: LoginBinding { LoginBinding(settings: gateway.settings) }

    /// A login transaction from the client's query: native (`redirect_uri`, PKCE) or browser (`return_to`).
    /// A browser login also gets the secret of its ``LoginBinding`` cookie. Shared with the login-page proxy.
    func newTransaction(_ request: Request, providerID: String, provider: any AuthProvider) throws -> (LoginTransaction, bindingSecret: String?) {
        let query = request.uri.queryParameters
        let now = gateway.clock.now()
        var transaction = LoginTransaction(
            provider: providerID, state: RandomToken.make(), codeVerifier: PKCE.makeVerifier(), nonce: RandomToken.make(byteCount: 16),
            callbackURL: "\(gateway.settings.publicURL)/v1/auth/\(providerID)/callback", createdAt: now)

        if let redirectURI = query["redirect_uri"].map(String.init) {
            // Native app (RFC 8252): exact redirect URI, the client's own PKCE.
            let policy = RedirectURIPolicy(allowed: gateway.settings.allowedRedirectURIs + provider.descriptor.redirectURIs)
            guard policy.allows(redirectURI) else {
                throw GatehouseError.invalidRequest("redirect_uri is not on the allow-list of provider '\(providerID)'.")
            }
            guard let challenge = query["code_challenge"].map(String.init), !challenge.isEmpty else {
                throw GatehouseError.invalidRequest("code_challenge is required (PKCE, S256).")
            }
            guard query["code_challenge_method"] == "S256" else {
                throw GatehouseError.invalidRequest("code_challenge_method must be S256.")
            }
            guard PKCE.isValidChallenge(challenge) else {
                throw GatehouseError.invalidRequest("code_challenge is not an S256 challenge (43 base64url characters).")
            }
            transaction.clientRedirectURI = redirectURI
            transaction.clientCodeChallenge = challenge
            transaction.clientState = query["state"].map(String.init)
        } else {
            // Browser: the session becomes a cookie; only a same-origin path to come back to.
            let returnTo = query["return_to"].map(String.init) ?? "/"
            guard ReturnToPolicy.isSafe(returnTo) else {
                throw GatehouseError.invalidRequest("return_to must be a path on this gateway.")
            }
            transaction.returnTo = returnTo
            let (secret, digest) = LoginBinding.make()
            transaction.browserBinding = digest
            return (transaction, secret)
        }
        return (transaction, nil)
    }

    // MARK: Callback

    private func callback(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let providerID = try context.parameters.require("provider")
        let provider = try gateway.provider(providerID)
        guard let redirectProvider = provider as? any RedirectLoginProvider else {
            throw GatehouseError.unsupported("Provider '\(providerID)' has no callback.")
        }
        var parameters: [String: String] = [:]
        for (key, value) in request.uri.queryParameters { parameters[String(key)] = String(value) }
        guard let state = parameters["state"], !state.isEmpty else {
            throw GatehouseError.invalidRequest("The callback has no state.")
        }
        let consumption = try await gateway.store.consumePending(keyHash: RandomToken.hash(state), purpose: .loginTransaction, now: gateway.clock.now())
        guard case .first(let record) = consumption else {
            gateway.metrics.loginFailures.increment()
            throw GatehouseError.invalidRequest("Unknown, expired or already used state.")
        }
        let transaction = try gateway.sessions.sealer.open(json: LoginTransaction.self, from: record.payload)
        // Mix-up defence (RFC 9700 §4.4): the callback must be the one of the provider the login went to.
        guard transaction.provider == providerID, record.provider == providerID else {
            gateway.metrics.loginFailures.increment()
            throw GatehouseError.invalidRequest("This state belongs to a login at another provider.")
        }
        // Login CSRF (RFC 9700 §4.7): a browser login ends only in the browser that started it, checked
        // before the code is redeemed. The transaction is spent either way.
        let scope = LoginBinding.Scope.callback(provider: providerID)
        if transaction.clientRedirectURI == nil, !binding.isBound(request, loginID: transaction.state, digest: transaction.browserBinding) {
            gateway.metrics.loginFailures.increment()
            context.logger.notice("login refused: not bound to this browser", metadata: ["provider": "\(providerID)"])
            return binding.refusal(loginID: transaction.state, scope: scope)
        }

        let result: LoginResult
        do {
            result = try await redirectProvider.completeLogin(callback: parameters, transaction: transaction)
        } catch let error as ProviderError {
            gateway.metrics.loginFailures.increment()
            context.logger.info("login failed at callback", metadata: ["provider": "\(providerID)", "error": "\(Self.summary(error))"])
            return try failure(error, transaction: transaction)
        }

        var response = try await finishLogin(providerID: providerID, result: result, transaction: transaction)
        if transaction.browserBinding != nil {
            response.headers.append(HTTPField(name: .setCookie, value: binding.clearing(loginID: transaction.state, scope: scope)))
        }
        return response
    }

    /// The end of every interactive login (redirect callbacks, gateway-served login pages): a one-time
    /// handoff code for a native client, a cookie session for a browser.
    func finishLogin(providerID: String, result: LoginResult, transaction: LoginTransaction) async throws -> Response {
        if let clientRedirectURI = transaction.clientRedirectURI, let challenge = transaction.clientCodeChallenge {
            let code = RandomToken.make()
            let now = gateway.clock.now()
            let payload = HandoffPayload(
                provider: providerID, clientRedirectURI: clientRedirectURI, clientCodeChallenge: challenge, result: result,
                expiresAt: now.addingTimeInterval(gateway.settings.handoffLifetime))
            // The record outlives the code's validity so that a late replay still revokes the session (RFC 6749 §4.1.2).
            try await gateway.store.insertPending(
                PendingRecord(
                    keyHash: RandomToken.hash(code), purpose: .handoffCode, provider: providerID,
                    payload: try gateway.sessions.sealer.seal(json: payload),
                    expiresAt: now.addingTimeInterval(max(gateway.settings.handoffLifetime, gateway.settings.loginTransactionLifetime))))
            var fields = [("code", code)]
            if let clientState = transaction.clientState { fields.append(("state", clientState)) }
            return JSONResponse.redirect(to: FormEncoding.appending(fields, to: clientRedirectURI))
        }

        let (token, _) = try await gateway.sessions.create(provider: providerID, result: result)
        gateway.metrics.logins.increment()
        var headers = HTTPFields()
        headers[.setCookie] = SessionCookie(settings: gateway.settings).setting(token)
        return JSONResponse.redirect(to: transaction.returnTo ?? "/", status: .seeOther, headers: headers)
    }

    /// After the provider answered, a native client waits at its redirect URI: tell it there.
    private func failure(_ error: ProviderError, transaction: LoginTransaction) throws -> Response {
        let code: String
        let description: String
        switch error {
        case .rejected(let providerCode, let text), .identityVoid(let providerCode, let text):
            // Authorization errors the user or provider chose (access_denied, …) pass through.
            let passThrough: Set<String> = ["access_denied", "invalid_scope", "unauthorized_client", "unsupported_response_type", "interaction_required", "login_required", "consent_required"]
            code = passThrough.contains(providerCode) ? providerCode : "server_error"
            description = passThrough.contains(providerCode) ? text : "The provider refused the sign-in (\(providerCode))."
        case .unavailable:
            code = "temporarily_unavailable"
            description = "The provider could not be reached; try again."
        case .invalidGrant:
            code = "server_error"
            description = "The provider refused the authorization code."
        case .invalidResponse(let reason):
            code = "server_error"
            description = "The provider's answer was not understood: \(reason)"
        }
        guard let clientRedirectURI = transaction.clientRedirectURI else {
            let status = code == "temporarily_unavailable" ? 503 : (code == "server_error" ? 502 : 400)
            throw GatehouseError(code: code, status: status, detail: description, retryAfter: status == 503 ? 5 : nil)
        }
        var fields = [("error", code), ("error_description", description)]
        if let clientState = transaction.clientState { fields.append(("state", clientState)) }
        return JSONResponse.redirect(to: FormEncoding.appending(fields, to: clientRedirectURI))
    }

    private static func summary(_ error: ProviderError) -> String {
        switch error {
        case .invalidGrant: "invalid_grant"
        case .unavailable: "unavailable"
        case .rejected(let code, _), .identityVoid(let code, _): code
        case .invalidResponse(let reason): "invalid_response: \(reason)"
        }
    }

    // MARK: Assertion and token logins

    private struct AssertionBody: Decodable {
        var assertion: String
        var audience: String
    }

    private struct TokenBody: Decodable {
        var token: String
    }

    private func assertion(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let providerID = try context.parameters.require("provider")
        guard let provider = try gateway.provider(providerID) as? any AssertionLoginProvider else {
            throw GatehouseError.unsupported("Provider '\(providerID)' does not accept assertions.")
        }
        let body = try await RequestBodyReader.json(AssertionBody.self, from: request, limit: gateway.settings.maxBodyBytes)
        let result = try await verified { try await provider.verifyAssertion(body.assertion, audience: body.audience) }
        return try await SessionController(gateway: gateway).created(provider: providerID, result: result)
    }

    private func token(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let providerID = try context.parameters.require("provider")
        guard let provider = try gateway.provider(providerID) as? any TokenLoginProvider else {
            throw GatehouseError.unsupported("Provider '\(providerID)' does not accept captured tokens.")
        }
        let body = try await RequestBodyReader.json(TokenBody.self, from: request, limit: gateway.settings.maxBodyBytes)
        let result = try await verified { try await provider.validateToken(body.token) }
        return try await SessionController(gateway: gateway).created(provider: providerID, result: result)
    }

    /// Maps a verification failure to a client error.
    private func verified(_ body: () async throws -> LoginResult) async throws -> LoginResult {
        do {
            return try await body()
        } catch let error as ProviderError {
            gateway.metrics.loginFailures.increment()
            switch error {
            case .unavailable: throw GatehouseError.upstreamUnavailable("The provider could not be reached.")
            case .rejected(let code, let reason), .identityVoid(let code, let reason):
                // The adapter's own stable code (e.g. `assertion_expired`, `audience_mismatch`).
                throw GatehouseError(code: code, status: 401, detail: reason)
            case .invalidGrant(let reason), .invalidResponse(let reason):
                throw GatehouseError(code: "invalid_credential", status: 401, detail: reason)
            }
        }
    }
}

import Foundation
import GatehouseCore
import Prometheus
import HTTPTypes
import Hummingbird
import Logging

/// `/v1/session`: redeeming handoff codes, viewing, refreshing and ending sessions.
struct SessionController: Sendable {
    let gateway: Gateway

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.post("/v1/session") { request, _ in try await exchange(request) }
        router.get("/v1/session") { request, _ in try await show(request) }
        router.post("/v1/session/refresh") { request, _ in try await refresh(request) }
        router.delete("/v1/session") { request, _ in try await logout(request) }
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

    private struct CreatedBody: Encodable {
        var sessionToken: String
        var tokenType = "Bearer"
        var expiresIn: Int
        var session: SessionView
        enum CodingKeys: String, CodingKey {
            case session
            case sessionToken = "session_token"
            case tokenType = "token_type"
            case expiresIn = "expires_in"
        }
    }

    /// Redeems a handoff code: single use, bound to the client's PKCE challenge and redirect URI.
    private func exchange(_ request: Request) async throws -> Response {
        let body = try await RequestBodyReader.json(ExchangeBody.self, from: request, limit: 64 * 1024)
        guard body.grantType == "authorization_code" else {
            throw GatehouseError(code: "unsupported_grant_type", status: 400, detail: "grant_type must be authorization_code.")
        }
        let consumption = try await gateway.store.consumePending(keyHash: RandomToken.hash(body.code), purpose: .handoffCode, now: gateway.clock.now())
        switch consumption {
        case .unknown:
            throw GatehouseError.invalidGrant("The code is unknown or expired.")
        case .replayed(let record):
            // RFC 6749 §4.1.2: a code used twice revokes what it produced.
            if let sessionID = record.sessionID {
                try await gateway.sessions.end(sessionID)
                gateway.signer.forget(sessionID: sessionID)
            }
            throw GatehouseError.invalidGrant("The code was already used; the session it created is revoked.")
        case .first(let record):
            let payload = try gateway.sessions.sealer.open(json: HandoffPayload.self, from: record.payload)
            guard payload.expiresAt > gateway.clock.now() else {
                throw GatehouseError.invalidGrant("The code has expired.")
            }
            guard payload.clientRedirectURI == body.redirectURI else {
                throw GatehouseError.invalidGrant("redirect_uri does not match the one of the login.")
            }
            guard PKCE.verify(body.codeVerifier, against: payload.clientCodeChallenge) else {
                throw GatehouseError.invalidGrant("code_verifier does not match the code_challenge.")
            }
            let sessionID = RandomToken.make(byteCount: 16)
            // Attach first, so a replay racing this request can always find the session to revoke.
            try await gateway.store.attachSession(sessionID, toPending: record.keyHash)
            return try await created(provider: payload.provider, result: payload.result, sessionID: sessionID)
        }
    }

    /// 201 with the session token and view.
    func created(provider: String, result: LoginResult, sessionID: String = RandomToken.make(byteCount: 16)) async throws -> Response {
        let (token, session) = try await gateway.sessions.create(provider: provider, result: result, id: sessionID)
        gateway.metrics.logins.increment()
        let expiresIn = Int(session.record.expiresAt.timeIntervalSince(session.record.createdAt))
        let body = CreatedBody(sessionToken: token, expiresIn: expiresIn, session: SessionView(session))
        return try JSONResponse.make(body, status: .created)
    }

    private func authenticated(_ request: Request) async throws -> ActiveSession {
        let token = try SessionAuthenticator(cookieName: gateway.settings.cookie.name).token(of: request)
        return try await gateway.sessions.authenticate(token: token)
    }

    private func show(_ request: Request) async throws -> Response {
        try JSONResponse.make(SessionView(try await authenticated(request)))
    }

    private func refresh(_ request: Request) async throws -> Response {
        let session = try await authenticated(request)
        guard let provider = try gateway.provider(session.provider) as? any RefreshingProvider, session.credential.isRefreshable else {
            throw GatehouseError(code: "not_refreshable", status: 409, detail: "This session's credential cannot be refreshed.")
        }
        let refreshed = try await gateway.refresher.refresh(session, provider: provider, force: true)
        return try JSONResponse.make(SessionView(refreshed))
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

    /// Ends the session everywhere (it is deleted from the shared store) and revokes upstream, best effort:
    /// a failing provider logout is logged and reported, and the gateway session ends all the same.
    private func logout(_ request: Request) async throws -> Response {
        let session = try await authenticated(request)
        try await gateway.sessions.end(session.id)
        gateway.signer.forget(sessionID: session.id)
        gateway.metrics.logouts.increment()
        let provider = gateway.providers.provider(session.provider)
        var outcome = "not_supported"
        if let revoking = provider as? any RevokingProvider, revoking.capabilities.revocation {
            do {
                try await revoking.revoke(session.credential)
                outcome = "revoked"
            } catch {
                outcome = "failed"
                gateway.logger.warning("upstream logout failed; the gateway session ended anyway", metadata: ["provider": "\(session.provider)"])
            }
        }
        var headers = HTTPFields()
        var browserLogoutURL: String?
        if request.cookies[gateway.settings.cookie.name] != nil {
            headers[.setCookie] = SessionCookie(settings: gateway.settings).clearing()
            browserLogoutURL = (provider as? any BrowserLogoutProvider)?.browserLogoutURL(for: session.credential, returnTo: gateway.settings.publicURL + "/")
        }
        return try JSONResponse.make(LogoutBody(providerLogout: outcome, browserLogoutURL: browserLogoutURL), headers: headers)
    }
}

import Crypto
import Foundation
import GatehouseCore
import Hummingbird
import Synchronization

extension StandInOIDCProvider {
    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.get("/.well-known/openid-configuration") { _, _ in
            let available = self.state.withLock { state -> Bool in
                state.discoveryFetches += 1
                return state.discoveryAvailable
            }
            return available ? Response.json(self.discoveryDocument) : Response.temporarilyUnavailable()
        }
        router.get("/jwks") { _, _ in
            self.state.withLock { $0.jwksFetches += 1 }
            return Response.json(self.jwks)
        }
        router.get("/authorize") { request, _ in
            let fields = StandInOAuthServer.firstValues(FormEncoding.decode(request.uri.query ?? ""))
            let hidden = fields.map { "<input type=\"hidden\" name=\"\(HTMLEscaping.escape($0.key))\" value=\"\(HTMLEscaping.escape($0.value))\">" }
            return Response.html(
                "<!doctype html><title>Stand-in OIDC</title><form method=\"post\">\(hidden.joined())"
                    + "<input name=\"username\"><input name=\"password\" type=\"password\"><button>Sign in</button></form>")
        }
        router.post("/authorize") { request, _ in self.authorize(try await StandInOAuthServer.form(of: request)) }
        router.post("/token") { request, _ in self.token(try await StandInOAuthServer.form(of: request)) }
        router.get("/userinfo") { request, _ in
            guard let token = StandInOAuthServer.accessToken(in: request), let user = self.state.withLock({ $0.accessTokens[token] }) else {
                return Response.json(["error": .string("invalid_token")], status: .unauthorized)
            }
            return Response.json(Self.profile(of: user))
        }
        router.post("/revoke") { request, _ in
            let fields = try await StandInOAuthServer.form(of: request)
            self.state.withLock { state in
                state.revocations += 1
                if let token = fields["token"] {
                    state.refreshTokens[token] = nil
                    state.accessTokens[token] = nil
                }
            }
            return Response(status: .ok)
        }
        router.get("/logout") { request, _ in
            let fields = StandInOAuthServer.firstValues(FormEncoding.decode(request.uri.query ?? ""))
            self.state.withLock { $0.lastLogoutHint = fields["id_token_hint"] }
            // RP-Initiated Logout §3: the RP's `state` comes back on the redirect.
            if let target = fields["post_logout_redirect_uri"] {
                return Response.found(FormEncoding.appending(fields["state"].map { [("state", $0)] } ?? [], to: target))
            }
            return Response.html("<!doctype html><title>Signed out</title><p>Signed out.</p>")
        }
        return router
    }

    private func authorize(_ fields: [String: String]) -> Response {
        guard fields["client_id"] == clientID, let redirectURI = fields["redirect_uri"] else {
            return Response.html("<p>unknown client or redirect_uri</p>", status: .badRequest)
        }
        guard let user = fields["username"], !user.isEmpty, fields["password"] == "\(user)-password" else {
            return Response.html("<p>wrong password</p>", status: .unauthorized)
        }
        let code = RandomToken.make()
        let fault = state.withLock { state -> StandInOIDCFault in
            state.codes[code] = .init(user: user, nonce: fields["nonce"], redirectURI: redirectURI, codeChallenge: fields["code_challenge"])
            return state.fault
        }
        var parameters = [("code", code), ("iss", fault == .wrongCallbackIssuer ? "https://evil.example" : issuer)]
        if let state = fields["state"] { parameters.append(("state", state)) }
        return Response.found(FormEncoding.appending(parameters, to: redirectURI))
    }

    private func token(_ fields: [String: String]) -> Response {
        state.withLock { $0.tokenRequests += 1 }
        let grant: StandInOIDCState.Grant?
        switch fields["grant_type"] {
        case "authorization_code":
            grant = state.withLock { state in
                guard let code = fields["code"], let grant = state.codes.removeValue(forKey: code) else { return nil }
                return grant
            }
            guard let grant, grant.redirectURI == fields["redirect_uri"] else { return Self.invalidGrant() }
            if let challenge = grant.codeChallenge {
                let verifier = fields["code_verifier"] ?? ""
                guard Base64URL.encode(Data(SHA256.hash(data: Data(verifier.utf8)))) == challenge else { return Self.invalidGrant() }
            }
        case "refresh_token":
            grant = state.withLock { state in fields["refresh_token"].flatMap { state.refreshTokens.removeValue(forKey: $0) } }
            guard grant != nil else { return Self.invalidGrant() }
        default:
            return Response.json(["error": .string("unsupported_grant_type")], status: .badRequest)
        }
        guard let grant else { return Self.invalidGrant() }
        let accessToken = RandomToken.make()
        let refreshToken = RandomToken.make()
        state.withLock { state in
            state.accessTokens[accessToken] = grant.user
            state.refreshTokens[refreshToken] = grant
        }
        let refreshing = fields["grant_type"] == "refresh_token"
        let idToken = idToken(for: grant.user, nonce: grant.nonce, accessToken: accessToken, refreshing: refreshing)
        return Response.json([
            "access_token": .string(accessToken), "token_type": .string("Bearer"), "expires_in": .number(300),
            "refresh_token": .string(refreshToken), "id_token": .string(idToken), "scope": .string("openid profile email"),
        ])
    }

    private static func invalidGrant() -> Response {
        Response.json(["error": .string("invalid_grant")], status: .badRequest)
    }
}

import AsyncHTTPClient
import Foundation
import GatehouseCore
import GatehouseDemo
import GatehouseServer
import NIOHTTP1
import Testing

/// The `spid` kind over real loopback HTTP against the SPiD stand-in, next to an `oauth2` provider.
@Suite("SPiD end to end")
struct SPiDEndToEndTests {
    static let alice: [(String, String)] = [("email", "alice@example.test"), ("password", "alice-password")]

    /// The provider file an operator would write for the stand-in; its secret comes from ``environment(_:)``.
    static func providerFile(_ spid: StandInSPiDServer) -> (id: String, yaml: String) {
        (
            "spid",
            """
            id: spid
            kind: spid
            name: "SPiD stand-in"
            base_url: "\(spid.baseURL)"
            client_id: "\(spid.configuration.clientID)"
            client_secret: "${SPID_CLIENT_SECRET}"
            scopes: ["profile", "email"]
            """
        )
    }

    /// The environment the provider file's `${SPID_CLIENT_SECRET}` is read from.
    static func environment(_ spid: StandInSPiDServer, secret: String? = nil) -> [String: String] {
        ["SPID_CLIENT_SECRET": secret ?? spid.configuration.clientSecret]
    }

    /// Runs `body` with the OAuth stand-ins, a SPiD stand-in whose clock is `skew` seconds off, and a gateway with both kinds.
    func withSPiD(
        skew: Int = -3600, lifetime: Int = 120, _ body: (GatewayInstance, StandInSPiDServer, StandIns) async throws -> Void
    ) async throws {
        let spid = StandInSPiDServer(configuration: .init(accessTokenLifetime: lifetime, clockSkew: skew))
        _ = try await spid.start()
        do {
            try await StandIns.with { standIns in
                try await GatewayInstance.with(standIns, providerFiles: [Self.providerFile(spid)], providerEnvironment: Self.environment(spid)) {
                    gw in
                    try await body(gw, spid, standIns)
                }
            }
        } catch {
            await spid.stop()
            throw error
        }
        await spid.stop()
    }

    @Test("native login, oauth_token on the API, skewed clock, refresh, logout that kills the token at SPiD")
    func journey() async throws {
        try await withSPiD { gw, spid, _ in
            let (token, created) = try await gw.nativeLogin(provider: "spid", signInFields: Self.alice)
            let session = try #require(created.json?["session"])
            #expect(session["subject"]?.stringValue == "938029")
            #expect(session[path: "identity.email"]?.stringValue == "alice@example.test")
            let skew = try #require(session[path: "credential.clock_skew_seconds"]?.doubleValue)
            #expect(abs(skew + 3600) <= 2)
            // The expiry is 120 s from now on the gateway's clock, not an hour in the past.
            let expiresText = try #require(session[path: "credential.expires_at"]?.stringValue)
            let expiresAt = try Date(expiresText, strategy: .iso8601)
            #expect(abs(expiresAt.timeIntervalSinceNow - 120) <= 5)

            // The token goes as oauth_token; the client's own oauth_token is replaced, not passed on.
            let echo = try await gw.http.send(.GET, gw.url("/v1/proxy/spid/echo/items?oauth_token=forged&page=2"), headers: gw.bearer(token))
            #expect(echo.status == 200, "\(echo.text)")
            #expect(echo.json?[path: "data.token_via"]?.stringValue == "query")
            #expect(echo.json?[path: "data.query"]?.stringValue == "page=2")
            let me = try await gw.http.send(.GET, gw.url("/v1/proxy/spid/me"), headers: gw.bearer(token))
            #expect(me.status == 200)
            #expect(me.json?[path: "data.email"]?.stringValue == "alice@example.test")
            #expect(await spid.stats.refreshTokenRequests == 0)

            // Past the expiry by the gateway's clock: refreshed before proxying.
            gw.clock.advance(by: 200)
            let afterExpiry = try await gw.http.send(.GET, gw.url("/v1/proxy/spid/me"), headers: gw.bearer(token))
            #expect(afterExpiry.status == 200)
            #expect(await spid.stats.refreshTokenRequests == 1)
            gw.clock.advance(by: -200)

            // Logout: SPiD's API logout kills the access token and its refresh token.
            let sessionID = try #require(session["id"]?.stringValue)
            let stored = try #require(try await gw.gateway.store.session(id: sessionID))
            let sealer = try CredentialSealer(keys: [GatewayInstance.sealingKey])
            let credential = try sealer.open(json: Credential.self, from: stored.sealedCredential)
            let logout = try await gw.http.send(.DELETE, gw.url("/v1/session"), headers: gw.bearer(token))
            #expect(logout.status == 200)
            #expect(logout.json?["provider_logout"]?.stringValue == "revoked")
            #expect(await spid.stats.apiLogouts == 1)
            let direct = try await gw.http.send(.GET, spid.meEndpoint + "?oauth_token=" + credential.accessToken)
            #expect(direct.status == 401)
            #expect(await spid.stats.validRefreshTokens == 0)
        }
    }

    @Test("sessions of one provider are refused on the other's proxy routes")
    func twoProviders() async throws {
        try await withSPiD { gw, _, _ in
            let (spidToken, _) = try await gw.nativeLogin(provider: "spid", signInFields: Self.alice)
            let (demoToken, _) = try await gw.nativeLogin(provider: "demo")
            let crossed = try await gw.http.send(.GET, gw.url("/v1/proxy/demo/grades/@me"), headers: gw.bearer(spidToken))
            #expect(crossed.status == 403)
            #expect(crossed.problemCode == "provider_mismatch")
            let crossedBack = try await gw.http.send(.GET, gw.url("/v1/proxy/spid/me"), headers: gw.bearer(demoToken))
            #expect(crossedBack.status == 403)
            let providers = try await gw.http.send(.GET, gw.url("/v1/providers"))
            let kinds = providers.json?["providers"].flatMap { value -> [String]? in
                guard case .array(let items) = value else { return nil }
                return items.compactMap { $0["kind"]?.stringValue }
            }
            #expect(Set(kinds ?? []) == ["oauth2", "spid"])
        }
    }

    @Test("invalid_grant on refresh ends the session; SPiD API errors become problems with a stable code")
    func errors() async throws {
        try await withSPiD { gw, spid, _ in
            let (token, _) = try await gw.nativeLogin(provider: "spid", signInFields: Self.alice)
            let unknown = try await gw.http.send(.GET, gw.url("/v1/proxy/spid/no/such/endpoint"), headers: gw.bearer(token))
            #expect(unknown.status == 404)
            #expect(unknown.headers.first(name: "content-type") == "application/problem+json")
            #expect(unknown.problemCode == "provider_error")
            await spid.expireAllAccessTokens()
            await spid.revokeAllRefreshTokens()
            let refused = try await gw.http.send(.GET, gw.url("/v1/proxy/spid/me"), headers: gw.bearer(token))
            #expect(refused.status == 401)
            #expect(refused.problemCode == "reauthentication_required")
            let gone = try await gw.http.send(.GET, gw.url("/v1/session"), headers: gw.bearer(token))
            #expect(gone.status == 401)
        }
    }

    @Test("a failing SPiD logout is reported, and the gateway session ends anyway")
    func failingLogout() async throws {
        try await withSPiD { gw, spid, _ in
            let (token, _) = try await gw.nativeLogin(provider: "spid", signInFields: Self.alice)
            await spid.setUnavailable(true)
            let logout = try await gw.http.send(.DELETE, gw.url("/v1/session"), headers: gw.bearer(token))
            #expect(logout.status == 200)
            #expect(logout.json?["provider_logout"]?.stringValue == "failed")
            let after = try await gw.http.send(.GET, gw.url("/v1/session"), headers: gw.bearer(token))
            #expect(after.status == 401)
        }
    }

    @Test("a SPiD token-endpoint error at the exchange reaches the client as server_error with SPiD's code")
    func tokenEndpointError() async throws {
        let spid = StandInSPiDServer()
        _ = try await spid.start()
        let file = Self.providerFile(spid)
        do {
            try await StandIns.with { standIns in
                try await GatewayInstance.with(standIns, providerFiles: [file], providerEnvironment: Self.environment(spid, secret: "wrong-secret")) {
                    gw in
                    let login = try await gw.beginNativeLogin(provider: "spid", signInFields: Self.alice)
                    let callback = try await gw.http.send(.GET, login.callbackURL)
                    #expect(callback.status == 302)
                    #expect(callback.locationQuery["error"] == "server_error")
                    #expect(callback.locationQuery["error_description"]?.contains("invalid_client") == true)
                    #expect(callback.locationQuery["state"] == login.clientState)
                }
            }
        } catch {
            await spid.stop()
            throw error
        }
        await spid.stop()
    }

    @Test("a SPiD that is down during the code exchange sends the client temporarily_unavailable")
    func downAtCallback() async throws {
        try await withSPiD { gw, spid, _ in
            let login = try await gw.beginNativeLogin(provider: "spid", signInFields: Self.alice)
            await spid.setUnavailable(true)
            let callback = try await gw.http.send(.GET, login.callbackURL)
            #expect(callback.status == 302)
            #expect(callback.locationQuery["error"] == "temporarily_unavailable")
            #expect(callback.locationQuery["state"] == login.clientState)
            #expect(callback.locationQuery["code"] == nil)
        }
    }

    @Test("a browser logout also offers SPiD's /logout with the registered return URL")
    func browserLogout() async throws {
        try await withSPiD { gw, spid, _ in
            let login = try await gw.http.send(.GET, gw.url("/v1/auth/spid/login?return_to=/"))
            let location = try #require(login.location)
            let callbackURL = try await gw.signIn(at: location, fields: Self.alice)
            let callback = try await gw.http.send(.GET, callbackURL, headers: login.bindingHeaders)
            let cookie = try #require(callback.headers.first(name: "set-cookie")?.split(separator: ";").first.map(String.init))
            let logout = try await gw.http.send(.DELETE, gw.url("/v1/session"), headers: [("Cookie", cookie), ("X-CSRF", "1")])
            #expect(logout.status == 200)
            let url = try #require(logout.json?["browser_logout_url"]?.stringValue)
            #expect(url.hasPrefix(spid.browserLogoutEndpoint + "?client_id=\(spid.configuration.clientID)&redirect_uri="))
            let followed = try await gw.http.send(.GET, url)
            #expect(followed.status == 302)
            #expect(followed.location == gw.baseURL + "/")
            #expect(await spid.stats.browserLogouts == 1)
        }
    }
}

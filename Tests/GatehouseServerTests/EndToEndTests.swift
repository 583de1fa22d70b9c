import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseDemo
import GatehouseServer
import JWTKit
import NIOHTTP1
import Testing

/// The whole data path over real loopback HTTP: thin client → gateway → stand-in OAuth server and echo backend.
@Suite("End to end")
struct EndToEndTests {
    struct AssertionClaims: JWTPayload {
        var iss: IssuerClaim
        var aud: AudienceClaim
        var sub: SubjectClaim
        var email: String?
        var provider: String
        var sid: String
        var iat: IssuedAtClaim
        var exp: ExpirationClaim
        var jti: IDClaim
        func verify(using algorithm: some JWTAlgorithm) async throws { try exp.verifyNotExpired() }
    }

    @Test("native login, backend and provider proxy, transparent refresh, logout")
    func nativeJourney() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns) { gw in
                // Login → handoff → session.
                let (token, created) = try await gw.nativeLogin()
                let session = try #require(created.json?["session"])
                #expect(created.json?["token_type"]?.stringValue == "Bearer")
                #expect(session["provider"]?.stringValue == "demo")
                #expect(session["subject"]?.stringValue == "alice")
                #expect(session[path: "identity.email"]?.stringValue == "alice@example.test")
                #expect(session[path: "credential.refreshable"] == .bool(true))
                #expect(!created.text.contains("access_token") && !created.text.contains("refresh_token"))

                // Backend: identity headers, assertion JWT, client-sent identity and credentials stripped.
                let api = try await gw.http.send(
                    .GET, gw.url("/v1/api/hello/world?x=1"),
                    headers: gw.bearer(token) + [
                        ("X-Gatehouse-Subject", "mallory"), ("X-Gatehouse-Email", "mallory@evil.test"),
                        ("Cookie", "\(gw.gateway.settings.cookie.name)=stolen; theme=dark"),
                    ])
                try #require(api.status == 200, "\(api.text)")
                let echoed = try #require(api.json)
                #expect(echoed["path"]?.stringValue == "/hello/world")
                #expect(echoed["query"]?.stringValue == "x=1")
                let headers = try #require(echoed["headers"])
                #expect(headers["x-gatehouse-subject"]?.stringValue == "alice")
                #expect(headers["x-gatehouse-email"]?.stringValue == "alice@example.test")
                #expect(headers["x-gatehouse-provider"]?.stringValue == "demo")
                #expect(headers["authorization"] == nil)
                #expect(headers["cookie"]?.stringValue == "theme=dark")
                #expect(headers["x-forwarded-for"]?.stringValue == "127.0.0.1")

                let jwt = try #require(headers["x-gatehouse-assertion"]?.stringValue)
                let jwks = try await gw.http.send(.GET, gw.url("/.well-known/jwks.json"))
                let keys = try await JWTKeyCollection().add(jwksJSON: jwks.text)
                let claims = try await keys.verify(jwt, as: AssertionClaims.self)
                #expect(claims.iss.value == gw.baseURL)
                #expect(claims.aud.value == ["backend"])
                #expect(claims.sub.value == "alice")
                #expect(claims.provider == "demo")
                #expect(claims.sid == session["id"]?.stringValue)
                #expect(claims.exp.value.timeIntervalSince(claims.iat.value) <= 60)
                // NumericDates in whole seconds, as JWT libraries expect.
                let payloadJSON = String(decoding: try #require(Base64URL.decode(String(jwt.split(separator: ".")[1]))), as: UTF8.self)
                #expect(payloadJSON.range(of: #""iat":\d+[,}]"#, options: .regularExpression) != nil, "\(payloadJSON)")
                #expect(payloadJSON.range(of: #""exp":\d+[,}]"#, options: .regularExpression) != nil, "\(payloadJSON)")
                // A tampered assertion does not verify.
                var tampered = Array(jwt)
                tampered[tampered.count - 5] = tampered[tampered.count - 5] == "A" ? "B" : "A"
                await #expect(throws: (any Error).self) { try await keys.verify(String(tampered), as: AssertionClaims.self) }

                // Provider API with the provider's token.
                let grades = try await gw.http.send(.GET, gw.url("/v1/proxy/demo/grades/@me"), headers: gw.bearer(token))
                #expect(grades.status == 200, "\(grades.text)")
                #expect(await standIns.oauth.stats.refreshTokenRequests == 0)

                // Reactive: the provider starts refusing the access token → one refresh, one replay (with its body).
                await standIns.oauth.expireAllAccessTokens()
                let replayed = try await gw.http.send(
                    .POST, gw.url("/v1/proxy/demo/echo/upload"), headers: gw.bearer(token), body: Data("hello".utf8))
                #expect(replayed.status == 200, "\(replayed.text)")
                #expect(replayed.json?["body_bytes"]?.doubleValue == 5)
                #expect(await standIns.oauth.stats.refreshTokenRequests == 1)

                // Proactive: the credential is past its expiry by the gateway's clock → refreshed before proxying.
                gw.clock.advance(by: 600)
                let afterExpiry = try await gw.http.send(.GET, gw.url("/v1/proxy/demo/grades/@me"), headers: gw.bearer(token))
                #expect(afterExpiry.status == 200)
                #expect(await standIns.oauth.stats.refreshTokenRequests == 2)
                gw.clock.advance(by: -600)

                // Logout: the session dies, the provider's tokens are revoked.
                let logout = try await gw.http.send(.DELETE, gw.url("/v1/session"), headers: gw.bearer(token))
                #expect(logout.status == 200)
                #expect(logout.json?["provider_logout"]?.stringValue == "revoked")
                #expect(await standIns.oauth.stats.revocationRequests >= 1)
                #expect(await standIns.oauth.stats.validRefreshTokens == 0)
                let after = try await gw.http.send(.GET, gw.url("/v1/session"), headers: gw.bearer(token))
                #expect(after.status == 401)
                #expect(after.problemCode == "invalid_session")
                #expect(after.headers.first(name: "content-type") == "application/problem+json")
                let proxied = try await gw.http.send(.GET, gw.url("/v1/proxy/demo/grades/@me"), headers: gw.bearer(token))
                #expect(proxied.status == 401)
            }
        }
    }

    @Test("100 concurrent calls on an expired credential cause exactly one refresh, and all succeed")
    func singleFlightRefresh() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns) { gw in
                let (token, _) = try await gw.nativeLogin()
                await standIns.oauth.setTokenDelay(.milliseconds(300))
                gw.clock.advance(by: 600)
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<100 {
                        group.addTask { try await gw.http.send(.GET, gw.url("/v1/proxy/demo/grades/@me"), headers: gw.bearer(token)).status }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.count == 100)
                #expect(statuses.allSatisfy { $0 == 200 }, "\(Dictionary(grouping: statuses, by: { $0 }).mapValues(\.count))")
                #expect(await standIns.oauth.stats.refreshTokenRequests == 1)
                // A forced refresh right after still refreshes (only automatic refreshes reuse a fresh result).
                let forced = try await gw.http.send(.POST, gw.url("/v1/session/refresh"), headers: gw.bearer(token))
                #expect(forced.status == 200)
                #expect(await standIns.oauth.stats.refreshTokenRequests == 2)
            }
        }
    }

    @Test("a refresh refused with invalid_grant ends the session: 401 reauthentication_required")
    func invalidGrantEndsSession() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns) { gw in
                let (token, _) = try await gw.nativeLogin()
                await standIns.oauth.revokeAllRefreshTokens()
                gw.clock.advance(by: 600)
                let response = try await gw.http.send(.GET, gw.url("/v1/proxy/demo/grades/@me"), headers: gw.bearer(token))
                #expect(response.status == 401)
                #expect(response.problemCode == "reauthentication_required")
                let session = try await gw.http.send(.GET, gw.url("/v1/session"), headers: gw.bearer(token))
                #expect(session.status == 401)
            }
        }
    }

    @Test("a provider that is down gives 503 with Retry-After and keeps the session")
    func providerDownKeepsSession() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns) { gw in
                let (token, _) = try await gw.nativeLogin()
                await standIns.oauth.setUnavailable(true)
                gw.clock.advance(by: 600)
                let down = try await gw.http.send(.GET, gw.url("/v1/proxy/demo/grades/@me"), headers: gw.bearer(token))
                #expect(down.status == 503)
                #expect(down.problemCode == "upstream_unavailable")
                #expect(down.headers.first(name: "retry-after") != nil)
                await standIns.oauth.setUnavailable(false)
                let back = try await gw.http.send(.GET, gw.url("/v1/proxy/demo/grades/@me"), headers: gw.bearer(token))
                #expect(back.status == 200, "\(back.text)")
            }
        }
    }

    @Test("browser login sets the session cookie and returns to the same-origin path")
    func browserLogin() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns) { gw in
                let token = try await browserLogin(gw, returnTo: "/after")
                let view = try await gw.http.send(.GET, gw.url("/v1/session"), headers: [("Cookie", "\(gw.gateway.settings.cookie.name)=\(token)")])
                #expect(view.status == 200)
                let home = try await gw.http.send(.GET, gw.url("/"), headers: [("Cookie", "\(gw.gateway.settings.cookie.name)=\(token)")])
                #expect(home.text.contains("Signed in as"))
            }
        }
    }

    @Test("a browser login returns to an application origin that access.return_to_origins lists, and to no other")
    func returnToListedOrigins() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns, configure: { $0.access.returnToOrigins = ["https://app.example.test"] }) { gw in
                _ = try await browserLogin(gw, returnTo: "https://app.example.test/orders?page=2")
                _ = try await browserLogin(gw, returnTo: "/after")
                for refused in [
                    "https://evil.example.test/", "https://app.example.test.evil.test/", "https://app.example.test@evil.test/",
                    "http://app.example.test/", "https://app.example.test:8443/", "//app.example.test/", "https:\\\\app.example.test/",
                    "javascript:alert(1)", "https://app.example.test/\u{0A}x",
                ] {
                    let login = try await gw.http.send(.GET, gw.url("/v1/auth/demo/login?return_to=\(FormEncoding.escape(refused))"))
                    #expect(login.status == 400, "\(refused)")
                    #expect(login.problemCode == "invalid_request")
                }
            }
        }
    }

    /// Browser flow: no redirect_uri; the result is a cookie and a 303 to `return_to`.
    func browserLogin(_ gw: GatewayInstance, returnTo: String) async throws -> String {
        let login = try await gw.http.send(.GET, gw.url("/v1/auth/demo/login?return_to=\(FormEncoding.escape(returnTo))"))
        try #require(login.status == 302)
        let callbackURL = try await gw.signIn(at: try #require(login.location))
        let binding = try #require(login.loginBinding, "a browser login sets its binding cookie")
        let callback = try await gw.http.send(.GET, callbackURL, headers: [("Cookie", binding)])
        try #require(callback.status == 303, "\(callback.text)")
        #expect(callback.location == returnTo)
        let setCookie = try #require(callback.headers["set-cookie"].first { $0.hasPrefix(gw.gateway.settings.cookie.name + "=") })
        #expect(setCookie.contains("HttpOnly"))
        #expect(setCookie.contains("SameSite=Lax"))
        let pair = try #require(setCookie.split(separator: ";").first)
        return String(pair.split(separator: "=", maxSplits: 1)[1])
    }
}

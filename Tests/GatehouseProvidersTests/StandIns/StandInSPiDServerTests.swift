import Foundation
import GatehouseCore
import GatehouseDemo
import Testing

/// Smoke tests of the SPiD stand-in over real sockets, driven with the `curl` binary (this target has no
/// HTTP client).
@Suite struct StandInSPiDServerTests {
    static let redirectURI = "http://127.0.0.1:5999/spid/login"
    static let client = ("spid-demo-client", "spid-demo-secret")

    @Test func loginTokenMeAndLogout() async throws {
        let skew = 7200
        let server = StandInSPiDServer(configuration: .init(accessTokenLifetime: 60, clockSkew: skew))
        let port = try await server.start()
        defer { Task { await server.stop() } }
        #expect(server.baseURL == "http://127.0.0.1:\(port)")
        #expect(server.loginEndpoint == server.baseURL + "/flow/login")
        #expect(server.tokenEndpoint == server.baseURL + "/oauth/token")
        #expect(server.meEndpoint == server.baseURL + "/api/2/me")
        #expect(server.logoutEndpoint == server.baseURL + "/api/2/logout")
        #expect(server.browserLogoutEndpoint == server.baseURL + "/logout")

        // Login page; unknown clients get a page, never a redirect.
        let verifier = PKCE.makeVerifier()
        let login = [
            ("client_id", "spid-demo-client"), ("response_type", "code"), ("redirect_uri", Self.redirectURI), ("state", "st4te"),
            ("code_challenge", PKCE.challenge(for: verifier)), ("code_challenge_method", "S256"),
        ]
        let page = try await StandInCurl.run(FormEncoding.appending(login, to: server.loginEndpoint))
        #expect(page.status == 200)
        #expect(page.text.contains(#"<form method="post" action="/flow/login">"#))
        #expect(page.text.contains(#"name="email""#))
        let auth = try await StandInCurl.run(FormEncoding.appending(login, to: server.baseURL + "/flow/auth"))
        #expect(auth.text.contains(#"action="/flow/auth""#))
        let foreign = try await StandInCurl.run(
            FormEncoding.appending([("client_id", "other"), ("response_type", "code"), ("redirect_uri", Self.redirectURI)], to: server.loginEndpoint)
        )
        #expect(foreign.status == 400)
        #expect(foreign.header("location") == nil)

        let wrong = try await StandInCurl.run(server.loginEndpoint, form: login + [("email", "alice@example.test"), ("password", "nope")])
        #expect(wrong.status == 200)
        #expect(wrong.text.contains("Wrong e-mail address or password."))
        let cancelled = try await StandInCurl.run(server.loginEndpoint, form: login + [("cancel", "1")])
        #expect(cancelled.status == 302)
        #expect(cancelled.header("location") == Self.redirectURI + "?error=access_denied&state=st4te")

        let code = try await Self.signIn(server, fields: login)
        #expect(Self.isHex40(code))

        // Token: PKCE checked, client authenticated, SPiD-shaped answer.
        let exchange = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Self.redirectURI), ("scope", ""), ("state", "")]
        let badVerifier = try await StandInCurl.run(
            server.tokenEndpoint, form: exchange + [("code_verifier", PKCE.makeVerifier())], basic: Self.client)
        #expect(badVerifier.status == 400)
        #expect(badVerifier.json?["error"] == .string("invalid_grant"))
        #expect(badVerifier.json?["error_code"] == .number(400))
        #expect(badVerifier.json?["type"] == .string("OAuthException"))
        #expect(badVerifier.json?["error_description"]?.stringValue?.isEmpty == false)
        let badSecret = try await StandInCurl.run(
            server.tokenEndpoint, form: exchange + [("code_verifier", verifier)], basic: ("spid-demo-client", "x"))
        #expect(badSecret.status == 401)
        #expect(badSecret.json?["error"] == .string("invalid_client"))
        #expect(badSecret.json?["error_code"] == .number(401))

        let tokens = try await StandInCurl.run(server.tokenEndpoint, form: exchange + [("code_verifier", verifier)], basic: Self.client)
        #expect(tokens.status == 200)
        #expect(tokens.header("cache-control") == "no-store")
        let body = try #require(tokens.json?.objectValue)
        #expect(Set(body.keys) == ["access_token", "expires_in", "scope", "user_id", "is_admin", "refresh_token", "server_time"])
        #expect(body["token_type"] == nil)
        #expect(body["user_id"] == .string("938029"))
        #expect(body["is_admin"] == .bool(false))
        #expect(body["expires_in"] == .number(60))
        #expect(body["scope"] == .string("profile email"))
        #expect(tokens.text.range(of: #""server_time":[0-9]+[,}]"#, options: .regularExpression) != nil)
        let serverTime = try #require(body["server_time"]?.doubleValue)
        #expect(abs(serverTime - (Date().timeIntervalSince1970 + Double(skew))) <= 2)
        let accessToken = try #require(body["access_token"]?.stringValue)
        let refreshToken = try #require(body["refresh_token"]?.stringValue)
        #expect(Self.isHex40(accessToken) && Self.isHex40(refreshToken))
        #expect(await server.stats.lastClientAuthentication == .basic)

        // A second sign-in without PKCE, redeemed with client_secret_post.
        let plainLogin = [("client_id", "spid-demo-client"), ("response_type", "code"), ("redirect_uri", Self.redirectURI)]
        let secondCode = try await Self.signIn(server, fields: plainLogin)
        let postAuth = [("client_id", Self.client.0), ("client_secret", Self.client.1)]
        let mismatch = try await StandInCurl.run(
            server.tokenEndpoint,
            form: [("grant_type", "authorization_code"), ("code", secondCode), ("redirect_uri", Self.redirectURI + "x")] + postAuth
        )
        #expect(mismatch.json?["error"] == .string("invalid_grant"))
        let second = try await StandInCurl.run(
            server.tokenEndpoint,
            form: [("grant_type", "authorization_code"), ("code", secondCode), ("redirect_uri", Self.redirectURI)] + postAuth
        )
        #expect(second.status == 200)
        #expect(await server.stats.lastClientAuthentication == .post)
        #expect(await server.stats.validAccessTokens == 2)
        // Replaying a code fails and takes down what its first redemption issued.
        let replay = try await StandInCurl.run(
            server.tokenEndpoint,
            form: [("grant_type", "authorization_code"), ("code", secondCode), ("redirect_uri", Self.redirectURI)] + postAuth
        )
        #expect(replay.json?["error"] == .string("invalid_grant"))
        #expect(await server.stats.validAccessTokens == 1)
        #expect(await server.stats.validRefreshTokens == 1)

        // The API: envelope, token from the query or the header, never two different ones.
        let me = try await StandInCurl.run(FormEncoding.appending([("oauth_token", accessToken)], to: server.meEndpoint))
        #expect(me.status == 200)
        let envelope = try #require(me.json)
        #expect(envelope["name"] == .string("SPP Container"))
        #expect(envelope["version"] == .string("0.2"))
        #expect(envelope["api"] == .number(2))
        #expect(envelope["object"] == .string("User"))
        #expect(envelope["type"] == .string("element"))
        #expect(envelope["code"] == .number(200))
        #expect(envelope["error"] == .null)
        #expect(envelope["meta"] == .null)
        #expect(envelope[path: "request.limit"] != nil)
        #expect(envelope[path: "debug.route.url"] == .string("/api/2/me"))
        let user = try #require(envelope["data"])
        #expect(user["userId"] == .string("938029"))
        #expect(user["email"] == .string("alice@example.test"))
        #expect(user[path: "name.formatted"] == .string("Alice Example"))
        #expect(user["displayName"] == .string("Alice Example"))
        #expect(user["preferredUsername"] == .string("alice"))
        #expect(user["emails"] == .array([.object(["value": .string("alice@example.test"), "primary": .bool(true)])]))

        let viaHeader = try await StandInCurl.run(server.meEndpoint + ".json", bearer: accessToken)
        #expect(viaHeader.status == 200)
        let both = try await StandInCurl.run(FormEncoding.appending([("oauth_token", accessToken)], to: server.meEndpoint), bearer: "0123")
        #expect(both.status == 400)
        #expect(both.json?["error"] == .string("invalid_request"))
        #expect(both.json?["name"] == .string("SPP Container"))

        let echo = try await StandInCurl.run(
            server.apiBaseURL + "/echo/a/b?x=1&oauth_token=\(accessToken)&y=2",
            method: "POST",
            body: "hello"
        )
        #expect(echo.status == 200)
        #expect(echo.json?["object"] == .string("Echo"))
        #expect(echo.json?[path: "data.method"] == .string("POST"))
        #expect(echo.json?[path: "data.path"] == .string("/api/2/echo/a/b"))
        #expect(echo.json?[path: "data.query"] == .string("x=1&y=2"))
        #expect(echo.json?[path: "data.body_bytes"] == .number(5))
        #expect(echo.json?[path: "data.token_via"] == .string("query"))
        let echoHeader = try await StandInCurl.run(server.apiBaseURL + "/echo/z", bearer: accessToken)
        #expect(echoHeader.json?[path: "data.token_via"] == .string("header"))

        let unknown = try await StandInCurl.run(server.apiBaseURL + "/nothing/here", bearer: accessToken)
        #expect(unknown.status == 404)
        #expect(unknown.json?[path: "error.code"] == .number(404))
        #expect(unknown.json?[path: "error.type"] == .string("ApiException"))

        // Refresh without rotation repeats the refresh token; old SDKs also send redirect_uri.
        let refreshed = try await StandInCurl.run(
            server.tokenEndpoint,
            form: [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("redirect_uri", Self.redirectURI)],
            basic: Self.client
        )
        #expect(refreshed.status == 200)
        #expect(refreshed.json?["refresh_token"] == .string(refreshToken))
        #expect(refreshed.json?["user_id"] == .string("938029"))
        #expect(await server.stats.validAccessTokens == 2)

        // API logout kills the token and its refresh token.
        let logout = try await StandInCurl.run(FormEncoding.appending([("oauth_token", accessToken)], to: server.logoutEndpoint))
        #expect(logout.status == 200)
        #expect(logout.json?["data"] == .string("OK"))
        #expect(logout.json?["error"] == .null)

        let dead = try await StandInCurl.run(FormEncoding.appending([("oauth_token", accessToken)], to: server.meEndpoint))
        #expect(dead.status == 401)
        #expect(dead.json?["error"] == .string("invalid_token"))
        #expect(dead.json?["error_code"] == .number(401))
        #expect(dead.json?["type"] == .string("OAuthException"))
        #expect(dead.json?["error_description"]?.stringValue?.hasPrefix(#"401 Unauthorized access! Reason: "invalid_token""#) == true)
        #expect(dead.json?["name"] == .string("SPP Container"))
        #expect(dead.json?["code"] == .number(401))
        #expect(dead.json?["data"] == .null)

        let deadRefresh = try await StandInCurl.run(
            server.tokenEndpoint,
            form: [("grant_type", "refresh_token"), ("refresh_token", refreshToken)],
            basic: Self.client
        )
        #expect(deadRefresh.status == 400)
        #expect(deadRefresh.json?.objectValue?.keys.sorted() == ["error", "error_code", "error_description", "type"])
        #expect(deadRefresh.json?["error"] == .string("invalid_grant"))
        #expect(deadRefresh.json?["error_code"] == .number(400))
        #expect(deadRefresh.json?["type"] == .string("OAuthException"))

        // Browser logout: registered redirect URIs only.
        let browserLogout = try await StandInCurl.run(
            FormEncoding.appending(
                [("client_id", "spid-demo-client"), ("redirect_uri", "http://127.0.0.1:5999/bye")], to: server.browserLogoutEndpoint)
        )
        #expect(browserLogout.status == 302)
        #expect(browserLogout.header("location") == "http://127.0.0.1:5999/bye")
        let openRedirect = try await StandInCurl.run(
            FormEncoding.appending([("client_id", "spid-demo-client"), ("redirect_uri", "https://evil.example/")], to: server.browserLogoutEndpoint)
        )
        #expect(openRedirect.status == 400)
        #expect(openRedirect.header("location") == nil)

        let stats = await server.stats
        #expect(stats.logins == 2)
        #expect(stats.authorizationCodeRequests == 6)
        #expect(stats.refreshTokenRequests == 2)
        #expect(stats.apiLogouts == 1)
        #expect(stats.browserLogouts == 1)
        #expect(stats.apiRequests == 6)
        #expect(stats.validAccessTokens == 1)
        #expect(stats.validRefreshTokens == 0)
    }

    @Test func rotationAndTestControls() async throws {
        let server = StandInSPiDServer(configuration: .init(rotateRefreshTokens: true))
        try await server.start()
        defer { Task { await server.stop() } }

        let plainPKCE = try await StandInCurl.run(
            FormEncoding.appending(
                [
                    ("client_id", "spid-demo-client"), ("response_type", "code"), ("redirect_uri", Self.redirectURI), ("state", "s"),
                    ("code_challenge", PKCE.challenge(for: PKCE.makeVerifier())),
                ],
                to: server.loginEndpoint
            )
        )
        #expect(plainPKCE.status == 302)
        #expect(plainPKCE.header("location") == Self.redirectURI + "?error=invalid_request&state=s")

        let code = try await Self.signIn(
            server,
            fields: [("client_id", "spid-demo-client"), ("response_type", "code"), ("redirect_uri", Self.redirectURI)]
        )
        let tokens = try await StandInCurl.run(
            server.tokenEndpoint,
            form: [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Self.redirectURI), ("code_verifier", PKCE.makeVerifier())],
            basic: Self.client
        )
        // A verifier without a challenge is refused (RFC 9700).
        #expect(tokens.json?["error"] == .string("invalid_grant"))
        let secondCode = try await Self.signIn(
            server,
            fields: [("client_id", "spid-demo-client"), ("response_type", "code"), ("redirect_uri", Self.redirectURI)]
        )
        let granted = try await StandInCurl.run(
            server.tokenEndpoint,
            form: [("grant_type", "authorization_code"), ("code", secondCode), ("redirect_uri", Self.redirectURI)],
            basic: Self.client
        )
        #expect(granted.json?["expires_in"] == .number(604_800))
        let accessToken = try #require(granted.json?["access_token"]?.stringValue)
        let refreshToken = try #require(granted.json?["refresh_token"]?.stringValue)

        let rotated = try await StandInCurl.run(
            server.tokenEndpoint,
            form: [("grant_type", "refresh_token"), ("refresh_token", refreshToken)],
            basic: Self.client
        )
        let newRefreshToken = try #require(rotated.json?["refresh_token"]?.stringValue)
        #expect(newRefreshToken != refreshToken)
        let old = try await StandInCurl.run(
            server.tokenEndpoint, form: [("grant_type", "refresh_token"), ("refresh_token", refreshToken)], basic: Self.client)
        #expect(old.json?["error"] == .string("invalid_grant"))

        await server.setUnavailable(true)
        let unavailableToken = try await StandInCurl.run(
            server.tokenEndpoint,
            form: [("grant_type", "refresh_token"), ("refresh_token", newRefreshToken)],
            basic: Self.client
        )
        #expect(unavailableToken.status == 503)
        #expect(unavailableToken.header("retry-after") == "1")
        let unavailableAPI = try await StandInCurl.run(server.meEndpoint, bearer: accessToken)
        #expect(unavailableAPI.status == 503)
        #expect(unavailableAPI.header("retry-after") == "1")
        #expect(unavailableAPI.json?[path: "error.code"] == .number(503))
        await server.setUnavailable(false)

        #expect(try await StandInCurl.run(server.meEndpoint, bearer: accessToken).status == 200)
        await server.expireAllAccessTokens()
        #expect(try await StandInCurl.run(server.meEndpoint, bearer: accessToken).status == 401)
        #expect(await server.stats.validAccessTokens == 0)

        await server.revokeAllRefreshTokens()
        let revoked = try await StandInCurl.run(
            server.tokenEndpoint,
            form: [("grant_type", "refresh_token"), ("refresh_token", newRefreshToken)],
            basic: Self.client
        )
        #expect(revoked.json?["error"] == .string("invalid_grant"))
        #expect(await server.stats.validRefreshTokens == 0)
        #expect(await server.stats.refreshTokenRequests == 4)
    }

    /// Posts alice's credentials with `fields` and returns the code from the redirect.
    static func signIn(_ server: StandInSPiDServer, fields: [(String, String)]) async throws -> String {
        let response = try await StandInCurl.run(
            server.loginEndpoint, form: fields + [("email", "alice@example.test"), ("password", "alice-password")])
        #expect(response.status == 302)
        let location = try #require(response.header("location").flatMap { URLComponents(string: $0) })
        #expect(location.path == "/spid/login")
        let state = fields.first { $0.0 == "state" }?.1
        #expect(location.queryItems?.first { $0.name == "state" }?.value == state)
        return try #require(location.queryItems?.first { $0.name == "code" }?.value)
    }

    static func isHex40(_ text: String) -> Bool {
        text.count == 40 && text.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }
}

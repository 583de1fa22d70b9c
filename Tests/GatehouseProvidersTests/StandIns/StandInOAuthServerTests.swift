import Foundation
import GatehouseCore
import GatehouseDemo
import Testing

/// Smoke tests of the loopback stand-ins over real sockets, driven with the `curl` binary because this
/// target has no HTTP client (URLSession needs FoundationNetworking, which is absent here).
@Suite struct StandInOAuthServerTests {
    static let redirectURI = "http://127.0.0.1:5999/callback"

    @Test func codeFlowRefreshRotationAndRevocation() async throws {
        let server = StandInOAuthServer(configuration: .init(clientSecret: "s3cret"))
        let port = try await server.start()
        #expect(port > 0)
        #expect(server.baseURL == "http://127.0.0.1:\(port)")

        let verifier = PKCE.makeVerifier()
        let authorize = [
            ("response_type", "code"), ("client_id", "demo-client"), ("redirect_uri", Self.redirectURI),
            ("state", "xyz"), ("scope", "grades"), ("code_challenge", PKCE.challenge(for: verifier)),
            ("code_challenge_method", "S256"),
        ]
        let page = try await StandInCurl.run(FormEncoding.appending(authorize, to: server.authorizationEndpoint))
        #expect(page.status == 200)
        #expect(page.text.contains(#"<form method="post" action="/authorize">"#))

        let wrong = try await StandInCurl.run(server.authorizationEndpoint, form: authorize + [("username", "alice"), ("password", "nope")])
        #expect(wrong.status == 200)
        #expect(wrong.text.contains("Wrong username or password."))

        let approved = try await StandInCurl.run(
            server.authorizationEndpoint, form: authorize + [("username", "alice"), ("password", "alice-password")])
        #expect(approved.status == 302)
        let callback = try #require(approved.header("location").flatMap { URLComponents(string: $0) })
        let query = Dictionary(uniqueKeysWithValues: (callback.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(callback.path == "/callback")
        #expect(query["state"] == "xyz")
        #expect(query["iss"] == server.baseURL)
        let code = try #require(query["code"])

        let exchange = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Self.redirectURI)]
        let badVerifier = try await StandInCurl.run(
            server.tokenEndpoint,
            form: exchange + [("code_verifier", PKCE.makeVerifier())],
            basic: ("demo-client", "s3cret")
        )
        #expect(badVerifier.status == 400)
        #expect(badVerifier.json?["error"] == .string("invalid_grant"))

        let tokens = try await StandInCurl.run(server.tokenEndpoint, form: exchange + [("code_verifier", verifier)], basic: ("demo-client", "s3cret"))
        #expect(tokens.status == 200)
        #expect(tokens.header("cache-control") == "no-store")
        #expect(tokens.json?["token_type"] == .string("bearer"))
        #expect(tokens.json?["expires_in"] == .number(60))
        #expect(tokens.json?["scope"] == .string("grades"))
        let accessToken = try #require(tokens.json?["access_token"]?.stringValue)
        let refreshToken = try #require(tokens.json?["refresh_token"]?.stringValue)

        let grades = try await StandInCurl.run(server.apiBaseURL + "/grades/@me", bearer: accessToken)
        #expect(grades.status == 200)
        #expect(grades.json?["id"] == .string("alice"))
        let userinfo = try await StandInCurl.run(server.userinfoEndpoint, bearer: accessToken)
        #expect(userinfo.json?["email"] == .string("alice@example.test"))
        #expect(userinfo.json?["name"] == .string("Alice Example"))

        let refreshed = try await StandInCurl.run(
            server.tokenEndpoint,
            form: [
                ("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", "demo-client"), ("client_secret", "s3cret"),
            ]
        )
        #expect(refreshed.status == 200)
        let newAccessToken = try #require(refreshed.json?["access_token"]?.stringValue)
        let newRefreshToken = try #require(refreshed.json?["refresh_token"]?.stringValue)
        #expect(newRefreshToken != refreshToken)

        let reused = try await StandInCurl.run(
            server.tokenEndpoint,
            form: [("grant_type", "refresh_token"), ("refresh_token", refreshToken)],
            basic: ("demo-client", "s3cret")
        )
        #expect(reused.status == 400)
        #expect(reused.json?["error"] == .string("invalid_grant"))

        let stats = await server.stats
        #expect(stats.authorizationCodeRequests == 2)
        #expect(stats.refreshTokenRequests == 2)
        #expect(stats.lastClientAuthentication == .basic)
        #expect(stats.validAccessTokens == 2)

        await server.expireAllAccessTokens()
        let expired = try await StandInCurl.run(server.apiBaseURL + "/grades/@me", bearer: newAccessToken)
        #expect(expired.status == 401)
        #expect(expired.header("www-authenticate")?.hasPrefix(#"Bearer realm="Resource Server", error="invalid_token""#) == true)

        let revoked = try await StandInCurl.run(
            server.revocationEndpoint,
            form: [("token", newRefreshToken), ("token_type_hint", "refresh_token")],
            basic: ("demo-client", "s3cret")
        )
        #expect(revoked.status == 200)
        let unknown = try await StandInCurl.run(server.revocationEndpoint, form: [("token", "no-such-token")], basic: ("demo-client", "s3cret"))
        #expect(unknown.status == 200)
        let afterRevoke = try await StandInCurl.run(
            server.tokenEndpoint,
            form: [("grant_type", "refresh_token"), ("refresh_token", newRefreshToken)],
            basic: ("demo-client", "s3cret")
        )
        #expect(afterRevoke.json?["error"] == .string("invalid_grant"))
        #expect(await server.stats.validRefreshTokens == 0)
        #expect(await server.stats.revocationRequests == 2)

        await server.stop()
        await #expect(throws: (any Error).self) { try await StandInCurl.run("http://127.0.0.1:\(port)/token") }
    }

    @Test func replayedCodeRevokesItsTokensAndPublicClientRules() async throws {
        let server = StandInOAuthServer(configuration: .init(rotateRefreshTokens: false))
        try await server.start()
        defer { Task { await server.stop() } }
        let verifier = PKCE.makeVerifier()
        let code = try await Self.authorize(server, verifier: verifier)
        let exchange = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Self.redirectURI), ("code_verifier", verifier),
        ]

        let anonymous = try await StandInCurl.run(server.tokenEndpoint, form: exchange)
        #expect(anonymous.status == 401)
        #expect(anonymous.json?["error"] == .string("invalid_client"))
        #expect(anonymous.header("www-authenticate") == #"Basic realm="OAuth Server""#)

        let tokens = try await StandInCurl.run(server.tokenEndpoint, form: exchange + [("client_id", "demo-client")])
        #expect(tokens.status == 200)
        let accessToken = try #require(tokens.json?["access_token"]?.stringValue)
        let refreshToken = try #require(tokens.json?["refresh_token"]?.stringValue)

        // Without rotation the refresh token stays and is not repeated.
        let refreshed = try await StandInCurl.run(
            server.tokenEndpoint,
            form: [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", "demo-client")]
        )
        #expect(refreshed.status == 200)
        #expect(refreshed.json?["refresh_token"] == nil)

        let replay = try await StandInCurl.run(server.tokenEndpoint, form: exchange + [("client_id", "demo-client")])
        #expect(replay.json?["error"] == .string("invalid_grant"))
        #expect(try await StandInCurl.run(server.apiBaseURL + "/grades/@me", bearer: accessToken).status == 401)
        #expect(await server.stats.validRefreshTokens == 0)
    }

    @Test func overlappingRefreshesWithOneRotatingTokenLoseOne() async throws {
        let server = StandInOAuthServer()
        try await server.start()
        defer { Task { await server.stop() } }
        let verifier = PKCE.makeVerifier()
        let code = try await Self.authorize(server, verifier: verifier)
        let tokens = try await StandInCurl.run(
            server.tokenEndpoint,
            form: [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Self.redirectURI), ("code_verifier", verifier),
                ("client_id", "demo-client"),
            ]
        )
        let refreshToken = try #require(tokens.json?["refresh_token"]?.stringValue)

        await server.setTokenDelay(.milliseconds(300))
        let form = [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", "demo-client")]
        async let first = StandInCurl.run(server.tokenEndpoint, form: form)
        async let second = StandInCurl.run(server.tokenEndpoint, form: form)
        let statuses = try await [first.status, second.status].sorted()
        #expect(statuses == [200, 400])
        #expect(await server.stats.refreshTokenRequests == 2)
    }

    @Test func authorizeRefusesBadRequests() async throws {
        let server = StandInOAuthServer()
        try await server.start()
        defer { Task { await server.stop() } }
        let base = [("response_type", "code"), ("client_id", "demo-client"), ("state", "s1")]

        let foreign = try await StandInCurl.run(
            FormEncoding.appending(base + [("redirect_uri", "https://evil.example/cb")], to: server.authorizationEndpoint)
        )
        #expect(foreign.status == 400)
        #expect(foreign.header("location") == nil)

        let noPKCE = try await StandInCurl.run(FormEncoding.appending(base + [("redirect_uri", Self.redirectURI)], to: server.authorizationEndpoint))
        #expect(noPKCE.status == 302)
        #expect(noPKCE.header("location")?.contains("error=invalid_request") == true)
        #expect(noPKCE.header("location")?.contains("state=s1") == true)

        let denied = try await StandInCurl.run(
            server.authorizationEndpoint,
            form: base + [
                ("redirect_uri", Self.redirectURI), ("code_challenge", PKCE.challenge(for: PKCE.makeVerifier())),
                ("code_challenge_method", "S256"), ("deny", "1"),
            ]
        )
        #expect(denied.header("location")?.contains("error=access_denied") == true)
    }

    @Test func unavailableServerAnswers503() async throws {
        let server = StandInOAuthServer()
        try await server.start()
        defer { Task { await server.stop() } }
        await server.setUnavailable(true)
        let token = try await StandInCurl.run(server.tokenEndpoint, form: [("grant_type", "refresh_token"), ("refresh_token", "x")])
        #expect(token.status == 503)
        #expect(token.header("retry-after") == "1")
        #expect(try await StandInCurl.run(server.apiBaseURL + "/echo/a", bearer: "x").status == 503)
        await server.setUnavailable(false)
        #expect(try await StandInCurl.run(server.apiBaseURL + "/echo/a", bearer: "x").status == 401)
    }

    @Test func demoBackendEchoesStreamsAndAnswersStatuses() async throws {
        let backend = DemoBackend()
        try await backend.start()
        defer { Task { await backend.stop() } }

        let body = String(repeating: "gatehouse", count: 1000)
        let echo = try await StandInCurl.run(backend.baseURL + "/some/path?a=1", method: "PUT", body: body, headers: ["X-Test: yes"])
        #expect(echo.status == 200)
        #expect(echo.json?["method"] == .string("PUT"))
        #expect(echo.json?["path"] == .string("/some/path"))
        #expect(echo.json?["query"] == .string("a=1"))
        #expect(echo.json?["headers"]?["x-test"] == .string("yes"))
        #expect(echo.json?["body_bytes"] == .number(9000))
        #expect(echo.json?["body_sha256"] == .string(RandomToken.hash(body)))

        let stream = try await StandInCurl.run(backend.baseURL + "/stream?bytes=100000&chunk=4096")
        #expect(stream.status == 200)
        #expect(stream.body.count == 100_000)
        #expect(stream.body.prefix(3) == Data("abc".utf8))

        #expect(try await StandInCurl.run(backend.baseURL + "/status/418").status == 418)
        #expect(backend.requestCount == 3)
    }

    /// Signs alice in through the login form and returns the code.
    static func authorize(_ server: StandInOAuthServer, verifier: String) async throws -> String {
        let response = try await StandInCurl.run(
            server.authorizationEndpoint,
            form: [
                ("response_type", "code"), ("client_id", "demo-client"), ("redirect_uri", redirectURI), ("state", "s"),
                ("code_challenge", PKCE.challenge(for: verifier)), ("code_challenge_method", "S256"),
                ("username", "alice"), ("password", "alice-password"),
            ]
        )
        let location = try #require(response.header("location").flatMap { URLComponents(string: $0) })
        return try #require(location.queryItems?.first { $0.name == "code" }?.value)
    }
}

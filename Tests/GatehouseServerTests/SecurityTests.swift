import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseDemo
import GatehouseServer
import NIOHTTP1
import Testing

/// Each way a login or a session could be abused is refused, over real HTTP.
@Suite("Security negatives")
struct SecurityTests {
    @Test("a replayed callback state is refused with 400 and no redirect")
    func replayedState() async throws {
        try await withGateway { gw in
            let login = try await gw.beginNativeLogin()
            let first = try await gw.http.send(.GET, login.callbackURL)
            #expect(first.status == 302)
            let replay = try await gw.http.send(.GET, login.callbackURL)
            #expect(replay.status == 400)
            #expect(replay.location == nil)
            #expect(replay.problemCode == "invalid_request")
        }
    }

    @Test("an unknown state is refused with 400 and no redirect")
    func unknownState() async throws {
        try await withGateway { gw in
            let response = try await gw.http.send(.GET, gw.url("/v1/auth/demo/callback?state=forged&code=abc"))
            #expect(response.status == 400)
            #expect(response.location == nil)
        }
    }

    @Test("an expired state is refused with 400 and no redirect")
    func expiredState() async throws {
        try await withGateway { gw in
            let login = try await gw.beginNativeLogin()
            gw.clock.advance(by: 601)
            let response = try await gw.http.send(.GET, login.callbackURL)
            #expect(response.status == 400)
            #expect(response.location == nil)
        }
    }

    @Test("a callback at one provider carrying the state of a login at another is refused (mix-up)")
    func mixUp() async throws {
        try await withGateway { gw in
            let login = try await gw.beginNativeLogin(provider: "other")
            #expect(login.callbackURL.contains("/v1/auth/other/callback"))
            let swapped = login.callbackURL.replacingOccurrences(of: "/v1/auth/other/callback", with: "/v1/auth/demo/callback")
            let response = try await gw.http.send(.GET, swapped)
            #expect(response.status == 400)
            #expect(response.location == nil)
        }
    }

    @Test("a provider iss that does not match the configured issuer is refused (RFC 9207)")
    func wrongIssuer() async throws {
        try await withGateway { gw in
            let login = try await gw.beginNativeLogin()
            let forged = login.callbackURL.replacingOccurrences(of: "iss=", with: "iss=https%3A%2F%2Fevil.example&x=")
            let response = try await gw.http.send(.GET, forged)
            #expect(response.status == 302)
            #expect(response.locationQuery["error"] == "server_error")
            #expect(response.locationQuery["code"] == nil)
        }
    }

    @Test("a replayed handoff code is refused and the session it created is revoked")
    func replayedHandoffCode() async throws {
        try await withGateway { gw in
            let login = try await gw.beginNativeLogin()
            let callback = try await gw.http.send(.GET, login.callbackURL)
            let code = try #require(callback.locationQuery["code"])
            let first = try await gw.exchange(code: code, verifier: login.verifier)
            #expect(first.status == 201)
            let token = try #require(first.json?["session_token"]?.stringValue)
            let replay = try await gw.exchange(code: code, verifier: login.verifier)
            #expect(replay.status == 400)
            #expect(replay.problemCode == "invalid_grant")
            let session = try await gw.http.send(.GET, gw.url("/v1/session"), headers: gw.bearer(token))
            #expect(session.status == 401)
        }
    }

    @Test("a wrong code_verifier or redirect_uri at the exchange is refused with invalid_grant")
    func wrongVerifierOrRedirect() async throws {
        try await withGateway { gw in
            for wrongVerifier in [true, false] {
                let login = try await gw.beginNativeLogin()
                let callback = try await gw.http.send(.GET, login.callbackURL)
                let code = try #require(callback.locationQuery["code"])
                let response =
                    wrongVerifier
                    ? try await gw.exchange(code: code, verifier: PKCE.makeVerifier())
                    : try await gw.exchange(code: code, verifier: login.verifier, redirectURI: "http://127.0.0.1:9/other")
                #expect(response.status == 400)
                #expect(response.problemCode == "invalid_grant")
            }
        }
    }

    @Test("a redirect_uri not on the allow-list is refused with 400 and no redirect; loopback ports may vary")
    func redirectURIAllowList() async throws {
        try await withGateway { gw in
            let challenge = PKCE.challenge(for: PKCE.makeVerifier())
            for (uri, allowed) in [
                ("https://evil.example/callback", false), ("http://127.0.0.1:9/callbackx", false), ("http://localhost:9/callback", false),
                ("http://127.0.0.1:51234/callback", true), ("http://127.0.0.1/callback", true),
            ] {
                let response = try await gw.http.send(
                    .GET,
                    gw.url("/v1/auth/demo/login?")
                        + FormEncoding.encode([("redirect_uri", uri), ("code_challenge", challenge), ("code_challenge_method", "S256")]))
                if allowed {
                    #expect(response.status == 302, "\(uri)")
                } else {
                    #expect(response.status == 400, "\(uri)")
                    #expect(response.location == nil)
                    #expect(response.problemCode == "invalid_request")
                }
            }
        }
    }

    @Test("PKCE from the client must be S256: plain or missing is refused")
    func clientPKCE() async throws {
        try await withGateway { gw in
            let verifier = PKCE.makeVerifier()
            for fields in [
                [("redirect_uri", GatewayInstance.clientRedirectURI), ("code_challenge", verifier), ("code_challenge_method", "plain")],
                [("redirect_uri", GatewayInstance.clientRedirectURI)],
                [("redirect_uri", GatewayInstance.clientRedirectURI), ("code_challenge", PKCE.challenge(for: verifier))],
            ] {
                let response = try await gw.http.send(.GET, gw.url("/v1/auth/demo/login?") + FormEncoding.encode(fields))
                #expect(response.status == 400)
                #expect(response.problemCode == "invalid_request")
            }
        }
    }

    @Test("return_to must be a same-origin path (no open redirect)")
    func openRedirect() async throws {
        try await withGateway { gw in
            for target in ["//evil.example/", "https://evil.example/", "/\\evil.example", "evil", "javascript:alert(1)"] {
                let response = try await gw.http.send(.GET, gw.url("/v1/auth/demo/login?return_to=\(FormEncoding.escape(target))"))
                #expect(response.status == 400, "\(target)")
                #expect(response.location == nil)
            }
        }
    }

    @Test("a session of one provider cannot reach another provider's API")
    func providerMismatch() async throws {
        try await withGateway { gw in
            let (token, _) = try await gw.nativeLogin(provider: "demo")
            let response = try await gw.http.send(.GET, gw.url("/v1/proxy/other/grades/@me"), headers: gw.bearer(token))
            #expect(response.status == 403)
            #expect(response.problemCode == "provider_mismatch")
        }
    }

    @Test("a cookie-session POST without the CSRF header is refused with 403")
    func csrf() async throws {
        try await withGateway { gw in
            let token = try await EndToEndTests().browserLogin(gw, returnTo: "/")
            let cookie = ("Cookie", "\(gw.gateway.settings.cookie.name)=\(token)")
            let without = try await gw.http.send(.POST, gw.url("/v1/session/refresh"), headers: [cookie])
            #expect(without.status == 403)
            #expect(without.problemCode == "csrf_required")
            let proxied = try await gw.http.send(.POST, gw.url("/v1/api/items"), headers: [cookie], body: Data("{}".utf8))
            #expect(proxied.status == 403)
            let with = try await gw.http.send(.POST, gw.url("/v1/session/refresh"), headers: [cookie, ("X-CSRF", "1")])
            #expect(with.status == 200)
        }
    }

    @Test("oversize bodies get 413 and oversize headers 431")
    func oversize() async throws {
        try await withGateway(configure: {
            $0.maxBodyBytes = 1024
            $0.maxHeaderBytes = 4096
        }) { gw in
            let (token, _) = try await gw.nativeLogin()
            let big = try await gw.http.send(.POST, gw.url("/v1/api/upload"), headers: gw.bearer(token), body: Data(count: 4096))
            #expect(big.status == 413)
            #expect(big.problemCode == "payload_too_large")
            let fine = try await gw.http.send(.POST, gw.url("/v1/api/upload"), headers: gw.bearer(token), body: Data(count: 512))
            #expect(fine.status == 200)
            let headers = try await gw.http.send(
                .GET, gw.url("/v1/api/x"), headers: gw.bearer(token) + [("X-Big", String(repeating: "a", count: 5000))])
            #expect(headers.status == 431)
            let exchange = try await gw.http.send(
                .POST, gw.url("/v1/session"), headers: [("Content-Type", "application/json")], body: Data(count: 100_000))
            #expect(exchange.status == 413)
        }
    }

    @Test("proxied paths cannot leave the provider API's base path")
    func pathTraversal() async throws {
        try await withGateway { gw in
            let (token, _) = try await gw.nativeLogin()
            for path in ["/v1/proxy/demo/..%2F..%2Fuserinfo", "/v1/proxy/demo/%2e%2e/%2e%2e/token", "/v1/proxy/demo/a%2Fb"] {
                let response = try await gw.http.send(.GET, gw.url(path), headers: gw.bearer(token))
                #expect(response.status == 400, "\(path): \(response.status)")
            }
        }
    }

    @Test("unknown providers and malformed bodies get problem+json with a stable code")
    func problems() async throws {
        try await withGateway { gw in
            let unknown = try await gw.http.send(.GET, gw.url("/v1/auth/nope/login"))
            #expect(unknown.status == 404)
            #expect(unknown.problemCode == "unknown_provider")
            let malformed = try await gw.http.send(
                .POST, gw.url("/v1/session"), headers: [("Content-Type", "application/json")], body: Data("{".utf8))
            #expect(malformed.status == 400)
            #expect(malformed.problemCode == "invalid_request")
            #expect(malformed.headers.first(name: "content-type") == "application/problem+json")
            let noToken = try await gw.http.send(.GET, gw.url("/v1/api/x"))
            #expect(noToken.status == 401)
            #expect(noToken.problemCode == "invalid_session")
        }
    }

    private func withGateway(configure: (inout ServerSettings) -> Void = { _ in }, _ body: (GatewayInstance) async throws -> Void) async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns, configure: configure) { try await body($0) }
        }
    }
}

@Suite("Security negatives, timing")
struct SecurityTimingTests {
    @Test("an expired handoff code is refused, and a late replay still revokes the session it created")
    func expiredAndLateReplayedHandoffCode() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns) { gw in
                let expired = try await gw.beginNativeLogin()
                let expiredCallback = try await gw.http.send(.GET, expired.callbackURL)
                let expiredCode = try #require(expiredCallback.locationQuery["code"])
                gw.clock.advance(by: 61)
                let late = try await gw.exchange(code: expiredCode, verifier: expired.verifier)
                #expect(late.status == 400)
                #expect(late.problemCode == "invalid_grant")
                gw.clock.advance(by: -61)

                let login = try await gw.beginNativeLogin()
                let callback = try await gw.http.send(.GET, login.callbackURL)
                let code = try #require(callback.locationQuery["code"])
                let first = try await gw.exchange(code: code, verifier: login.verifier)
                let token = try #require(first.json?["session_token"]?.stringValue)
                gw.clock.advance(by: 120)
                let replay = try await gw.exchange(code: code, verifier: login.verifier)
                #expect(replay.status == 400)
                let session = try await gw.http.send(.GET, gw.url("/v1/session"), headers: gw.bearer(token))
                #expect(session.status == 401)
            }
        }
    }

    @Test("CORS headers go only to allowed origins, also on problems; preflights are answered")
    func cors() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns, configure: { $0.corsAllowedOrigins = ["https://app.example", "https://Other.Example:443"] }) {
                gw in
                let allowed = try await gw.http.send(.GET, gw.url("/v1/session"), headers: [("Origin", "https://app.example")])
                #expect(allowed.status == 401)
                #expect(allowed.headers.first(name: "access-control-allow-origin") == "https://app.example")
                #expect(allowed.headers.first(name: "access-control-allow-credentials") == "true")
                // Configured in another spelling of the same origin: matched as the browser sends it.
                let respelled = try await gw.http.send(.GET, gw.url("/v1/session"), headers: [("Origin", "https://other.example")])
                #expect(respelled.headers.first(name: "access-control-allow-origin") == "https://other.example")
                let other = try await gw.http.send(.GET, gw.url("/v1/session"), headers: [("Origin", "https://evil.example")])
                #expect(other.headers.first(name: "access-control-allow-origin") == nil)
                let preflight = try await gw.http.send(
                    .OPTIONS, gw.url("/v1/session"),
                    headers: [
                        ("Origin", "https://app.example"), ("Access-Control-Request-Method", "DELETE"), ("Access-Control-Request-Headers", "x-csrf"),
                    ])
                #expect(preflight.status == 204)
                #expect(preflight.headers.first(name: "access-control-allow-headers")?.contains("X-CSRF") == true)
            }
        }
    }
}

import AsyncHTTPClient
import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseDemo
import GatehouseServer
import NIOHTTP1
import Testing

/// The login-page proxy (`acs`, `capture`) over real loopback HTTP against the stand-ins.
@Suite("Login pages")
struct LoginPageTests {
    static let realm = "urn:gatehouse:test"

    static func files(acs: StandInACS, legacy: StandInLegacySite) -> [(id: String, yaml: String)] {
        [
            (
                "azure",
                """
                id: azure
                kind: acs
                login_url: "\(acs.loginURL)"
                allowed_origins: ["\(acs.baseURL)"]
                realm: "\(realm)"
                issuer: "\(acs.issuer)"
                signing_key: "${ACS_SIGNING_KEY}"
                """
            ),
            (
                "legacy",
                """
                id: legacy
                kind: capture
                login_url: "\(legacy.loginURL)"
                allowed_origins: ["\(legacy.baseURL)"]
                success_url: "\(legacy.baseURL)/welcome*"
                capture: {from: cookie}
                probe: {url: "\(legacy.baseURL)/api/me"}
                """
            ),
            (
                "legacytitle",
                """
                id: legacytitle
                kind: capture
                login_url: "\(legacy.loginURL)"
                allowed_origins: ["\(legacy.baseURL)"]
                success_url: "\(legacy.baseURL)/welcome*"
                capture: {from: title, title_prefix: "Success "}
                probe: {url: "\(legacy.baseURL)/api/me"}
                """
            ),
        ]
    }

    func withPages(
        configure: (inout ServerSettings) -> Void = { _ in }, _ body: (GatewayInstance, StandInACS, StandInLegacySite) async throws -> Void
    ) async throws {
        let acs = StandInACS(realm: Self.realm)
        let legacy = StandInLegacySite()
        _ = try await acs.start()
        _ = try await legacy.start()
        do {
            try await StandIns.with { standIns in
                try await GatewayInstance.with(
                    standIns, providerFiles: Self.files(acs: acs, legacy: legacy), providerEnvironment: ["ACS_SIGNING_KEY": acs.signingKeyBase64],
                    configure: configure
                ) { gw in
                    try await body(gw, acs, legacy)
                }
            }
        } catch {
            await acs.stop()
            await legacy.stop()
            throw error
        }
        await acs.stop()
        await legacy.stop()
    }

    /// The cookies a response sets, but the login binding's (set at the start, cleared at the end).
    func setCookies(_ result: HTTPResult) -> [String] { result.headers["set-cookie"].filter { !$0.contains("gatehouse_login_") } }

    func signIn(_ gw: GatewayInstance, provider: String, query: String) async throws -> (id: String, welcome: HTTPResult) {
        let start = try await gw.http.send(.GET, gw.url("/v1/auth/\(provider)/pages?\(query)"))
        #expect(start.status == 303)
        let bound = start.bindingHeaders
        let loginPath = try #require(start.location)
        let id = String(loginPath.split(separator: "/")[2])
        #expect(loginPath == "/v1/pages/\(id)/0/login")
        let page = try await gw.http.send(.GET, gw.url(loginPath), headers: bound)
        #expect(page.status == 200)
        #expect(page.text.contains("action=\"/v1/pages/\(id)/0/login\""))
        // Links to other origins are left alone: the proxy never fetches them.
        #expect(page.text.contains("href=\"https://elsewhere.example.test/\""))
        let posted = try await gw.http.send(
            .POST, gw.url(loginPath), headers: bound + [("Content-Type", "application/x-www-form-urlencoded")],
            body: Data("user=bob&password=secret".utf8))
        #expect(posted.status == 302)
        #expect(posted.location == "/v1/pages/\(id)/0/welcome")
        #expect(setCookies(posted).isEmpty, "provider cookies stay in the gateway's jar")
        let welcome = try await gw.http.send(.GET, gw.url(try #require(posted.location)), headers: bound)
        return (id, welcome)
    }

    @Test("legacy site by cookie, browser: a cookie session, no provider cookie leaked, the login is single use")
    func legacyCookie() async throws {
        try await withPages { gw, _, _ in
            let (id, welcome) = try await signIn(gw, provider: "legacy", query: "return_to=/")
            #expect(welcome.status == 303)
            #expect(welcome.location == "/")
            let cookies = setCookies(welcome)
            #expect(cookies.count == 1)
            #expect(!cookies.joined().contains("oauth_token"))
            #expect(!cookies.joined().contains("site_session"))
            let sessionCookie = try #require(cookies.first?.split(separator: ";").first.map(String.init))
            let session = try await gw.http.send(.GET, gw.url("/v1/session"), headers: [("Cookie", sessionCookie)])
            #expect(session.status == 200)
            #expect(session.json?["provider"]?.stringValue == "legacy")
            #expect(session.json?["subject"]?.stringValue == "user-bob")
            let again = try await gw.http.send(.GET, gw.url("/v1/pages/\(id)/0/login"))
            #expect(again.status == 404)
            #expect(again.problemCode == "unknown_login")
        }
    }

    @Test("a `Denied error=…` title ends the page login at once: an error page for a browser, the error at a native client's redirect URI")
    func denied() async throws {
        try await withPages { gw, _, _ in
            let start = try await gw.http.send(.GET, gw.url("/v1/auth/legacy/pages?return_to=/"))
            let loginPath = try #require(start.location)
            let bound = start.bindingHeaders
            let wrong = try await gw.http.send(
                .POST, gw.url(loginPath), headers: bound + [("Content-Type", "application/x-www-form-urlencoded")],
                body: Data("user=bob&password=nope".utf8))
            #expect(wrong.status == 403)
            #expect(wrong.text.contains("access_denied"))
            #expect(!wrong.headers["set-cookie"].contains { $0.hasPrefix(gw.gateway.settings.cookie.name + "=") })
            let after = try await gw.http.send(.GET, gw.url(loginPath), headers: bound)
            #expect(after.problemCode == "unknown_login")

            let query = FormEncoding.encode([
                ("redirect_uri", GatewayInstance.clientRedirectURI), ("state", "cs"), ("code_challenge", PKCE.challenge(for: PKCE.makeVerifier())),
                ("code_challenge_method", "S256"),
            ])
            let native = try await gw.http.send(.GET, gw.url("/v1/auth/legacytitle/pages?\(query)"))
            let nativeWrong = try await gw.http.send(
                .POST, gw.url(try #require(native.location)), headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: Data("user=bob&password=nope".utf8))
            #expect(nativeWrong.status == 302)
            #expect(nativeWrong.location?.hasPrefix(GatewayInstance.clientRedirectURI + "?error=access_denied") == true)
            #expect(nativeWrong.locationQuery["state"] == "cs")
        }
    }

    @Test("legacy site by title, native client: a handoff code at its redirect URI, exchanged for a session")
    func legacyTitle() async throws {
        try await withPages { gw, _, _ in
            let verifier = PKCE.makeVerifier()
            let query = FormEncoding.encode([
                ("redirect_uri", GatewayInstance.clientRedirectURI), ("state", "cs"), ("code_challenge", PKCE.challenge(for: verifier)),
                ("code_challenge_method", "S256"),
            ])
            let (_, welcome) = try await signIn(gw, provider: "legacytitle", query: query)
            #expect(welcome.status == 302)
            #expect(welcome.location?.hasPrefix(GatewayInstance.clientRedirectURI) == true)
            #expect(welcome.locationQuery["state"] == "cs")
            let created = try await gw.exchange(code: try #require(welcome.locationQuery["code"]), verifier: verifier)
            #expect(created.status == 201)
            #expect(created.json?[path: "session.subject"]?.stringValue == "user-bob")
        }
    }

    @Test("ACS: the Notify shim goes before the page's first script, and the Notify payload ends in a session")
    func acs() async throws {
        try await withPages { gw, acs, _ in
            let start = try await gw.http.send(.GET, gw.url("/v1/auth/azure/pages?return_to=/"))
            let loginPath = try #require(start.location)
            let id = String(loginPath.split(separator: "/")[2])
            let bound = start.bindingHeaders
            let posted = try await gw.http.send(
                .POST, gw.url(loginPath), headers: bound + [("Content-Type", "application/x-www-form-urlencoded")],
                body: Data("email=carol%40acs.demo.test".utf8))
            #expect(posted.location == "/v1/pages/\(id)/0/result")
            #expect(setCookies(posted).isEmpty)
            let result = try await gw.http.send(.GET, gw.url(try #require(posted.location)), headers: bound)
            #expect(result.status == 200)
            #expect(result.headers.first(name: "content-security-policy")?.hasPrefix("sandbox") == true)
            let shim = try #require(result.text.range(of: "/v1/pages/\(id)/capture"))
            let pageScript = try #require(result.text.range(of: "window.external.Notify('"))
            #expect(shim.lowerBound < pageScript.lowerBound)
            let notified = try await gw.http.send(
                .POST, gw.url("/v1/pages/\(id)/capture"), headers: bound + [("Content-Type", "text/plain")],
                body: Data(acs.notifyJSON(email: "carol@acs.demo.test").utf8))
            #expect(notified.status == 200)
            #expect(notified.json?["location"]?.stringValue == "/")
            let sessionCookie = try #require(setCookies(notified).first?.split(separator: ";").first.map(String.init))
            let session = try await gw.http.send(.GET, gw.url("/v1/session"), headers: [("Cookie", sessionCookie)])
            #expect(session.json?[path: "identity.email"]?.stringValue == "carol@acs.demo.test")
        }
    }

    @Test("ACS: the shim's form navigation to the capture endpoint ends the login with the redirect itself")
    func acsForm() async throws {
        try await withPages { gw, acs, _ in
            let start = try await gw.http.send(.GET, gw.url("/v1/auth/azure/pages?return_to=/done"))
            let id = String(try #require(start.location).split(separator: "/")[2])
            let bound = start.bindingHeaders
            let body = FormEncoding.encode([("payload", acs.notifyJSON(email: "frank@acs.demo.test"))])
            let finished = try await gw.http.send(
                .POST, gw.url("/v1/pages/\(id)/capture"), headers: bound + [("Content-Type", "application/x-www-form-urlencoded")],
                body: Data(body.utf8))
            #expect(finished.status == 303)
            #expect(finished.location == "/done")
            #expect(setCookies(finished).count == 1)
            let replay = try await gw.http.send(
                .POST, gw.url("/v1/pages/\(id)/capture"), headers: bound + [("Content-Type", "application/x-www-form-urlencoded")],
                body: Data(body.utf8))
            #expect(replay.problemCode == "unknown_login")
        }
    }

    @Test("refusals: unknown login, origin index off the list, a bad Notify token, pages of a redirect provider")
    func refusals() async throws {
        try await withPages { gw, _, _ in
            let unknown = try await gw.http.send(.GET, gw.url("/v1/pages/nope/0/login"))
            #expect(unknown.status == 404)
            #expect(unknown.problemCode == "unknown_login")
            let start = try await gw.http.send(.GET, gw.url("/v1/auth/azure/pages?return_to=/"))
            let id = String(try #require(start.location).split(separator: "/")[2])
            let binding = try #require(start.loginBinding)
            let bound = [("Cookie", binding)]
            let other = try await gw.http.send(.GET, gw.url("/v1/pages/\(id)/1/login"), headers: bound)
            #expect(other.status == 403)
            #expect(other.problemCode == "origin_not_allowed")
            // The browser's own cookies never reach the provider: only the gateway's jar is sent.
            let forged = try await gw.http.send(
                .GET, gw.url("/v1/pages/\(id)/0/result"), headers: [("Cookie", "acs_session=mallory%40evil.test; \(binding)")])
            #expect(forged.status == 401)
            #expect(!forged.text.contains("Notify('"))
            let escape = try await gw.http.send(.GET, gw.url("/v1/pages/\(id)/0/..%2F..%2Fetc"), headers: bound)
            #expect(escape.status == 400)
            let bad = try await gw.http.send(
                .POST, gw.url("/v1/pages/\(id)/capture"), headers: bound + [("Content-Type", "text/plain")],
                body: Data("{\"securityToken\":\"a=b\"}".utf8))
            #expect(bad.status == 401)
            #expect(bad.problemCode == "missing_signature")
            let redirectKind = try await gw.http.send(.GET, gw.url("/v1/auth/demo/pages?return_to=/"))
            #expect(redirectKind.status >= 400)
            // The ordinary login URL of a page provider leads to its pages.
            let viaLogin = try await gw.http.send(.GET, gw.url("/v1/auth/legacy/login?return_to=/x"))
            #expect(viaLogin.location == "/v1/auth/legacy/pages?return_to=/x")
            // A native client whose captured token is refused hears it at its redirect URI.
            let verifier = PKCE.makeVerifier()
            let query = FormEncoding.encode([
                ("redirect_uri", GatewayInstance.clientRedirectURI), ("state", "cs"), ("code_challenge", PKCE.challenge(for: verifier)),
                ("code_challenge_method", "S256"),
            ])
            let native = try await gw.http.send(.GET, gw.url("/v1/auth/azure/pages?\(query)"))
            let nativeID = String(try #require(native.location).split(separator: "/")[2])
            let refused = try await gw.http.send(
                .POST, gw.url("/v1/pages/\(nativeID)/capture"), headers: [("Content-Type", "text/plain")], body: Data("garbage".utf8))
            #expect(refused.status == 200)
            let location = try #require(refused.json?["location"]?.stringValue)
            #expect(location.hasPrefix(GatewayInstance.clientRedirectURI + "?error=access_denied"))
            #expect(location.hasSuffix("&state=cs"))
        }
    }

    @Test("POST /v1/auth/{id}/token: a token the client captured itself, validated by the probe / the SWT rules")
    func postedTokens() async throws {
        try await withPages { gw, acs, legacy in
            let created = try await gw.http.json(.POST, gw.url("/v1/auth/legacy/token"), ["token": legacy.issueToken(user: "dave")])
            #expect(created.status == 201)
            #expect(created.json?[path: "session.subject"]?.stringValue == "user-dave")
            let refused = try await gw.http.json(.POST, gw.url("/v1/auth/legacy/token"), ["token": "forged"])
            #expect(refused.status == 401)
            #expect(refused.problemCode == "invalid_token")
            let swt = try await gw.http.json(.POST, gw.url("/v1/auth/azure/token"), ["token": acs.token(email: "erin@acs.demo.test")])
            #expect(swt.status == 201)
            let expired = try await gw.http.json(
                .POST, gw.url("/v1/auth/azure/token"), ["token": acs.token(email: "erin@acs.demo.test", expiresOn: Date().addingTimeInterval(-600))])
            #expect(expired.problemCode == "token_expired")
        }
    }

    @Test("one client cannot use up the page logins: past its own limit it gets 429 too_many_logins, and a finished login frees a slot")
    func perClientLimit() async throws {
        try await withPages(configure: { $0.pageLoginsPerClient = 3 }) { gw, _, _ in
            var started: [HTTPResult] = []
            for _ in 0..<3 {
                let login = try await gw.http.send(.GET, gw.url("/v1/auth/legacy/pages?return_to=/"))
                #expect(login.status == 303)
                started.append(login)
            }
            let refused = try await gw.http.send(.GET, gw.url("/v1/auth/legacy/pages?return_to=/"))
            #expect(refused.status == 429)
            #expect(refused.problemCode == "too_many_logins")
            #expect(refused.headers.first(name: "retry-after") != nil)
            // A site's refusal ends one of them; the client may start another.
            let id = String(try #require(started[0].location).split(separator: "/")[2])
            let ended = try await gw.http.send(
                .POST, gw.url("/v1/pages/\(id)/0/login"),
                headers: started[0].bindingHeaders + [("Content-Type", "application/x-www-form-urlencoded")],
                body: Data("user=bob&password=wrong".utf8))
            #expect(ended.text.contains(#"content="access_denied""#), "\(ended.status) \(ended.text)")
            let again = try await gw.http.send(.GET, gw.url("/v1/auth/legacy/pages?return_to=/"))
            #expect(again.status == 303, "\(again.status) \(again.text)")
        }
    }
}

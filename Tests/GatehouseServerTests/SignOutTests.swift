import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseDemo
import NIOHTTP1
import Testing

@testable import GatehouseServer

/// Signing out from a page (`GET`/`POST /v1/sign-out`, `GET /v1/sign-out/done`) through a real gateway over
/// loopback: the `oauth2` stand-in (no browser logout) and the OIDC stand-in (RP-initiated logout).
@Suite struct SignOutTests {
    // MARK: The page

    @Test("the page is a form posting to /v1/sign-out with return_to escaped, and signs no one out")
    func pageHoldsTheFormAndEscapesReturnTo() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns) { gw in
                let cookie = try await Self.browserLogin(gw)
                let returnTo = "/after?q=\"><script>alert('x')</script>&b=1"
                let page = try await gw.http.send(.GET, gw.url("/v1/sign-out?return_to=\(FormEncoding.escape(returnTo))"), headers: [cookie])
                #expect(page.status == 200)
                #expect(page.headers.first(name: "content-type")?.hasPrefix("text/html") == true)
                #expect(page.headers.first(name: "cache-control") == "no-store")
                #expect(page.text.contains("<form method=\"post\" action=\"/v1/sign-out\">"))
                #expect(
                    page.text.contains(
                        "name=\"return_to\" value=\"/after?q=&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;b=1\""))
                #expect(!page.text.contains("<script>"))
                #expect(page.text.components(separatedBy: "<button").count == 2, "one button")
                let view = try await gw.http.send(.GET, gw.url("/v1/session"), headers: [cookie])
                #expect(view.status == 200, "the page changes nothing")
            }
        }
    }

    @Test("a return_to on a foreign origin is 400 on the page and on the post, never a redirect; the session stays")
    func foreignReturnToIsRefused() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns, configure: { $0.access.returnToOrigins = ["https://app.example.test"] }) { gw in
                let cookie = try await Self.browserLogin(gw)
                for refused in ["https://evil.example.test/", "//evil.example.test/", "https://app.example.test.evil.test/", "javascript:alert(1)"] {
                    let page = try await gw.http.send(.GET, gw.url("/v1/sign-out?return_to=\(FormEncoding.escape(refused))"))
                    #expect(page.status == 400, "\(refused)")
                    #expect(page.problemCode == "invalid_request")
                    let post = try await Self.signOut(gw, returnTo: refused, headers: [cookie, ("Origin", gw.baseURL)])
                    #expect(post.status == 400, "\(refused)")
                    #expect(post.location == nil)
                    #expect(post.problemCode == "invalid_request")
                }
                let view = try await gw.http.send(.GET, gw.url("/v1/session"), headers: [cookie])
                #expect(view.status == 200, "a refused sign-out ends nothing")
                // A listed application origin is accepted.
                let listed = try await Self.signOut(gw, returnTo: "https://app.example.test/bye", headers: [cookie, ("Origin", gw.baseURL)])
                #expect(listed.status == 303)
                #expect(listed.location == "https://app.example.test/bye")
            }
        }
    }

    // MARK: The origin check

    @Test("a post without Origin is 403 and the session still works")
    func postWithoutOriginIsRefused() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns) { gw in
                let cookie = try await Self.browserLogin(gw)
                let refused = try await Self.signOut(gw, returnTo: "/after", headers: [cookie])
                #expect(refused.status == 403)
                #expect(refused.problemCode == "csrf_required")
                #expect(refused.location == nil)
                #expect(refused.headers["set-cookie"].isEmpty)
                let view = try await gw.http.send(.GET, gw.url("/v1/session"), headers: [cookie])
                #expect(view.status == 200)
                #expect(await standIns.oauth.stats.revocationRequests == 0)
            }
        }
    }

    @Test("a post from another origin (or Origin: null, or a cross-site fetch) is 403 and the session still works")
    func crossOriginPostIsRefused() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns, configure: { $0.access.returnToOrigins = ["https://app.example.test"] }) { gw in
                let cookie = try await Self.browserLogin(gw)
                let port = URLComponents(string: gw.baseURL)?.port ?? 0
                for headers in [
                    [("Origin", "https://evil.example.test")], [("Origin", "null")], [("Origin", "http://127.0.0.1:\(port + 1)")],
                    [("Origin", "https://app.example.test.evil.test")], [("Sec-Fetch-Site", "cross-site")], [("Sec-Fetch-Site", "same-site")],
                    [("Origin", "https://evil.example.test"), ("Sec-Fetch-Site", "same-origin")],
                ] {
                    let refused = try await Self.signOut(gw, returnTo: "/after", headers: [cookie] + headers)
                    #expect(refused.status == 403, "\(headers)")
                    #expect(refused.problemCode == "csrf_required")
                }
                let view = try await gw.http.send(.GET, gw.url("/v1/session"), headers: [cookie])
                #expect(view.status == 200)
            }
        }
    }

    @Test("Sec-Fetch-Site: same-origin without Origin is accepted and signs out")
    func sameOriginFetchMetadataIsAccepted() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns) { gw in
                let cookie = try await Self.browserLogin(gw)
                let signedOut = try await Self.signOut(gw, returnTo: "/after", headers: [cookie, ("Sec-Fetch-Site", "same-origin")])
                #expect(signedOut.status == 303)
                #expect(signedOut.location == "/after")
                let view = try await gw.http.send(.GET, gw.url("/v1/session"), headers: [cookie])
                #expect(view.status == 401)
            }
        }
    }

    // MARK: Signing out

    @Test("a post ends the session, revokes at the provider, clears the cookie with the same attributes and 303s to return_to")
    func postEndsTheSessionAndClearsTheCookie() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns, configure: { $0.cookie.secure = true }) { gw in
                let (cookie, setCookie) = try await Self.browserLoginSettingCookie(gw)
                let signedOut = try await Self.signOut(gw, returnTo: "/after", headers: [cookie, ("Origin", gw.baseURL)])
                #expect(signedOut.status == 303)
                #expect(signedOut.location == "/after", "the oauth2 provider has no browser logout")
                #expect(signedOut.headers.first(name: "cache-control") == "no-store")
                let cleared = try #require(signedOut.headers["set-cookie"].first { $0.hasPrefix(gw.gateway.settings.cookie.name + "=") })
                let clearedAttributes = Self.attributes(cleared)
                #expect(cleared.hasPrefix(gw.gateway.settings.cookie.name + "=;"))
                #expect(clearedAttributes["max-age"] == "0")
                var setAttributes = Self.attributes(setCookie)
                setAttributes["max-age"] = "0"
                #expect(clearedAttributes == setAttributes, "same name, Path, Secure, HttpOnly, SameSite; Max-Age=0")
                #expect(clearedAttributes["secure"] != nil && clearedAttributes["path"] == "/")

                let view = try await gw.http.send(.GET, gw.url("/v1/session"), headers: [cookie])
                #expect(view.status == 401)
                #expect(view.problemCode == "invalid_session")
                #expect(await standIns.oauth.stats.revocationRequests >= 1)

                // Again with the old cookie: no session, so it only redirects.
                let again = try await Self.signOut(gw, returnTo: "/later", headers: [cookie, ("Origin", gw.baseURL)])
                #expect(again.status == 303)
                #expect(again.location == "/later")
                #expect(again.headers["set-cookie"].isEmpty)
            }
        }
    }

    @Test("posted from a listed application origin, a path return_to is made absolute on that origin")
    func applicationOriginMakesThePathAbsolute() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns, configure: { $0.access.returnToOrigins = ["https://app.example.test"] }) { gw in
                let cookie = try await Self.browserLogin(gw)
                let signedOut = try await Self.signOut(gw, returnTo: "/", headers: [cookie, ("Origin", "https://app.example.test")])
                #expect(signedOut.status == 303)
                #expect(signedOut.location == "https://app.example.test/")
                let view = try await gw.http.send(.GET, gw.url("/v1/session"), headers: [cookie])
                #expect(view.status == 401)
            }
        }
    }

    @Test("the cookie of a key-bound (DPoP) session does not end it")
    func boundSessionIsNotEndedThroughTheCookie() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns) { gw in
                let (token, _) = try await gw.gateway.sessions.create(
                    provider: "demo",
                    result: LoginResult(identity: Identity(subject: "alice"), credential: Credential(accessToken: "t", issuedAt: Date())),
                    dpopThumbprint: "bound-key-thumbprint")
                let refused = try await Self.signOut(
                    gw, returnTo: "/after", headers: [("Cookie", "\(gw.gateway.settings.cookie.name)=\(token)"), ("Origin", gw.baseURL)])
                #expect(refused.status == 401)
                #expect(refused.problemCode == "invalid_token")
                #expect(refused.location == nil)
                _ = try await gw.gateway.sessions.authenticate(token: token)
            }
        }
    }

    // MARK: OIDC: through the provider's logout and back

    @Test("OIDC: 303 to end_session_endpoint with id_token_hint, client_id, post_logout_redirect_uri and state; back at /done to return_to")
    func oidcRoundTripThroughEndSession() async throws {
        try await OIDCEndToEndTests.withGateway { gw, idp in
            let cookie = try await Self.browserLogin(gw, provider: "oidc")
            let signedOut = try await Self.signOut(gw, returnTo: "/after?x=1", headers: [cookie, ("Origin", gw.baseURL)])
            try #require(signedOut.status == 303, "\(signedOut.text)")
            let location = try #require(signedOut.location)
            #expect(location.hasPrefix(idp.issuer + "/logout?"))
            let query = signedOut.locationQuery
            let hint = try #require(query["id_token_hint"])
            #expect(hint.split(separator: ".").count == 3)
            #expect(query["client_id"] == idp.clientID)
            #expect(query["post_logout_redirect_uri"] == gw.url("/v1/sign-out/done"))
            let state = try #require(query["state"])
            #expect(!state.contains("after"), "return_to is sealed, not readable")
            #expect(signedOut.headers["set-cookie"].contains { $0.hasPrefix(gw.gateway.settings.cookie.name + "=;") && $0.contains("Max-Age=0") })
            #expect(try await gw.http.send(.GET, gw.url("/v1/session"), headers: [cookie]).status == 401)

            // The provider ends its own session and sends the browser back with the state.
            let provider = try await gw.http.send(.GET, location)
            #expect(provider.status == 302)
            #expect(idp.lastLogoutHint == hint)
            let back = try #require(provider.location)
            #expect(back == gw.url("/v1/sign-out/done?state=") + FormEncoding.escape(state))
            let done = try await gw.http.send(.GET, back)
            #expect(done.status == 303)
            #expect(done.location == "/after?x=1")
            #expect(done.headers.first(name: "cache-control") == "no-store")
        }
    }

    @Test("/v1/sign-out/done refuses a missing, forged, altered or expired state with 400 and no redirect")
    func doneRefusesBadStates() async throws {
        try await OIDCEndToEndTests.withGateway { gw, _ in
            let cookie = try await Self.browserLogin(gw, provider: "oidc")
            let signedOut = try await Self.signOut(gw, returnTo: "/after", headers: [cookie, ("Origin", gw.baseURL)])
            let state = try #require(signedOut.locationQuery["state"])
            // One character changed in the middle: the seal no longer opens.
            var altered = Array(state)
            let middle = altered.count / 2
            altered[middle] = altered[middle] == "A" ? "B" : "A"
            // Sealed with another key: well-formed, not the gateway's.
            let foreign = try SignOutState(returnTo: "https://evil.example.test/", expiresAt: Date().addingTimeInterval(600))
                .sealed(with: CredentialSealer(keys: [.init(id: "k1", bytes: Data(repeating: 9, count: 32))]))
            for bad in [nil, "", "forged", String(altered), String(state.dropLast(2)), foreign] {
                let query = bad.map { "?state=" + FormEncoding.escape($0) } ?? ""
                let done = try await gw.http.send(.GET, gw.url("/v1/sign-out/done" + query))
                #expect(done.status == 400, "\(bad ?? "nil")")
                #expect(done.location == nil)
                #expect(done.problemCode == "invalid_request")
            }
            // Still good now; expired once its lifetime has passed.
            #expect(try await gw.http.send(.GET, gw.url("/v1/sign-out/done?state=" + FormEncoding.escape(state))).status == 303)
            gw.clock.advance(by: SignOutController.stateLifetime(gw.gateway.settings) + 1)
            let expired = try await gw.http.send(.GET, gw.url("/v1/sign-out/done?state=" + FormEncoding.escape(state)))
            #expect(expired.status == 400)
            #expect(expired.location == nil)
        }
    }

    // MARK: Helpers

    private static func signOut(_ gw: GatewayInstance, returnTo: String, headers: [(String, String)]) async throws -> HTTPResult {
        try await gw.http.send(
            .POST, gw.url("/v1/sign-out"), headers: headers + [("Content-Type", "application/x-www-form-urlencoded")],
            body: Data(FormEncoding.encode([("return_to", returnTo)]).utf8))
    }

    /// A browser login; returns the `Cookie` header carrying the session.
    private static func browserLogin(_ gw: GatewayInstance, provider: String = "demo") async throws -> (String, String) {
        try await browserLoginSettingCookie(gw, provider: provider).cookie
    }

    /// A browser login; returns the `Cookie` header and the `Set-Cookie` value that set it.
    private static func browserLoginSettingCookie(
        _ gw: GatewayInstance, provider: String = "demo"
    ) async throws -> (cookie: (String, String), setCookie: String) {
        let login = try await gw.http.send(.GET, gw.url("/v1/auth/\(provider)/login?return_to=%2F"))
        try #require(login.status == 302, "\(login.text)")
        let callbackURL = try await gw.signIn(at: try #require(login.location))
        let callback = try await gw.http.send(.GET, callbackURL, headers: [("Cookie", try #require(login.loginBinding))])
        try #require(callback.status == 303, "\(callback.text)")
        let setCookie = try #require(callback.headers["set-cookie"].first { $0.hasPrefix(gw.gateway.settings.cookie.name + "=") })
        let pair = try #require(setCookie.split(separator: ";").first)
        return (("Cookie", String(pair)), setCookie)
    }

    /// A `Set-Cookie` value's attributes, names lowercased (the name=value pair left out).
    private static func attributes(_ setCookie: String) -> [String: String] {
        var attributes: [String: String] = [:]
        for part in setCookie.split(separator: ";").dropFirst() {
            let pieces = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            attributes[pieces[0].lowercased()] = pieces.count > 1 ? String(pieces[1]) : ""
        }
        return attributes
    }
}

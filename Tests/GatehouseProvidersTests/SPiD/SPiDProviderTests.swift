import Foundation
import GatehouseCore
import Testing

@testable import GatehouseProviders

/// The `spid` adapter against a scripted SPiD: its token fields, clock skew, envelope, logout and errors.
@Suite("SPiD adapter")
struct SPiDProviderTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    static let base = "https://identity-pre.example.test"

    static func provider(_ replies: [FakeTransport.Reply], extra: [(String, String)] = []) throws -> (SPiDProvider, FakeTransport) {
        let transport = FakeTransport(replies)
        let context = ProviderContext(transport: transport, clock: TimeSource { now }, publicURL: "https://gate.example.test")
        let map = try ConfigMap(
            Nodes.scalars(
                [("id", "spid"), ("kind", "spid"), ("base_url", base), ("client_id", "cid"), ("client_secret", "${SPID_CLIENT_SECRET}")] + extra),
            environment: ["SPID_CLIENT_SECRET": "csecret"])
        _ = try map.string("id")
        _ = try map.string("kind")
        let descriptor = ProviderDescriptor(id: "spid", kind: "spid", claims: SPiDKind.defaultClaims)
        let provider = try #require(try SPiDKind.make(descriptor: descriptor, settings: map, context: context) as? SPiDProvider)
        return (provider, transport)
    }

    static func transaction() -> LoginTransaction {
        LoginTransaction(
            provider: "spid", state: "st", codeVerifier: PKCE.makeVerifier(), nonce: "n",
            callbackURL: "https://gate.example.test/v1/auth/spid/callback", createdAt: now)
    }

    /// SPiD's documented token response, with its clock `skew` seconds ahead of ours.
    static func tokenResponse(skew: Int = 0, expiresIn: Int = 604_800, refresh: Bool = true) -> FakeTransport.Reply {
        let refreshMember = refresh ? #","refresh_token":"818518449498eb3e5d228e016461f1f148e91002""# : ""
        return .json(
            #"{"access_token":"322c4c33a0bb327ea6a06d05fa37bf3613190499","expires_in":\#(expiresIn),"scope":"profile email","user_id":"938029","is_admin":false\#(refreshMember),"server_time":\#(1_700_000_000 + skew)}"#
        )
    }

    static let me: FakeTransport.Reply = .json(
        #"{"name":"SPP Container","version":"0.2","api":2,"object":"User","type":"element","code":200,"error":null,"meta":null,"data":{"userId":"938029","email":"alice@example.test","displayName":"Alice Example","name":{"formatted":"Alice Example"}}}"#
    )

    @Test("the defaults of base_url: SPiD's paths, oauth_token on the API, client secret in the body")
    func defaultsFromBaseURL() throws {
        let (provider, _) = try Self.provider([])
        #expect(provider.configuration.oauth2.authorizationEndpoint == Self.base + "/flow/login")
        #expect(provider.configuration.oauth2.tokenEndpoint == Self.base + "/oauth/token")
        #expect(provider.configuration.oauth2.userinfoEndpoint == Self.base + "/api/2/me")
        #expect(provider.configuration.logoutEndpoint == Self.base + "/api/2/logout")
        #expect(provider.configuration.oauth2.clientAuthentication == .clientSecretPost)
        #expect(provider.descriptor.api == ProviderAPI(url: Self.base + "/api/2", authentication: .query(parameter: "oauth_token")))
        #expect(
            provider.capabilities == ProviderCapabilities(refresh: true, revocation: true, expiryKnown: true, userinfo: true, legacyCapture: false))
    }

    @Test("without base_url the endpoints are required")
    func endpointsRequiredWithoutBase() throws {
        let map = try ConfigMap(Nodes.scalars([("client_id", "cid")]), environment: [:])
        #expect(throws: ConfigError.self) { try SPiDProvider.Configuration(map) }
    }

    @Test("login: the exchange carries client_id and client_secret in the body; user_id is the subject; /api/2/me adds the profile")
    func login() async throws {
        let (provider, transport) = try Self.provider([Self.tokenResponse(), Self.me])
        let result = try await provider.completeLogin(callback: ["code": "c0de", "state": "st"], transaction: Self.transaction())
        #expect(result.identity.subject == "938029")
        #expect(result.identity.email == "alice@example.test")
        #expect(result.identity.name == "Alice Example")
        #expect(result.identity.claims["is_admin"] == "false")
        #expect(result.credential.refreshToken == "818518449498eb3e5d228e016461f1f148e91002")
        #expect(result.credential.scope == ["profile", "email"])
        let exchange = transport.requests[0].form
        #expect(exchange["grant_type"] == "authorization_code")
        #expect(exchange["client_id"] == "cid")
        #expect(exchange["client_secret"] == "csecret")
        #expect(exchange["redirect_uri"] == "https://gate.example.test/v1/auth/spid/callback")
        let me = transport.requests[1]
        #expect(me.url.hasPrefix(Self.base + "/api/2/me?oauth_token=322c4c33"))
        #expect(!me.headers.contains { $0.name.lowercased() == "authorization" })
    }

    @Test("server_time gives the clock skew: the expiry is counted on SPiD's clock and shown as skew", arguments: [-3600, 0, 900])
    func clockSkew(skew: Int) async throws {
        let (provider, _) = try Self.provider([Self.tokenResponse(skew: skew, expiresIn: 600), Self.me])
        let result = try await provider.completeLogin(callback: ["code": "c"], transaction: Self.transaction())
        #expect(result.credential.clockSkewSeconds == skew)
        // 600 s of SPiD time from SPiD's now is 600 s from ours, whatever the skew.
        #expect(result.credential.expiresAt == Self.now.addingTimeInterval(600))
    }

    @Test("refresh keeps the refresh token when SPiD returns none, and re-measures the skew")
    func refresh() async throws {
        let (provider, transport) = try Self.provider([Self.tokenResponse(skew: 30, refresh: false)])
        let old = Credential(accessToken: "old", refreshToken: "r1", issuedAt: Self.now)
        let renewed = try await provider.refresh(old)
        #expect(renewed.refreshToken == "r1")
        #expect(renewed.accessToken == "322c4c33a0bb327ea6a06d05fa37bf3613190499")
        #expect(renewed.clockSkewSeconds == 30)
        #expect(transport.requests[0].form["grant_type"] == "refresh_token")
    }

    @Test("invalid_grant on refresh is reported as such (the gateway ends the session)")
    func refreshInvalidGrant() async throws {
        let (provider, _) = try Self.provider([
            .json(#"{"error":"invalid_grant","error_code":400,"type":"OAuthException","error_description":"refresh token revoked"}"#, status: 400)
        ])
        await #expect(throws: ProviderError.invalidGrant("refresh token revoked")) {
            _ = try await provider.refresh(Credential(accessToken: "a", refreshToken: "r", issuedAt: Self.now))
        }
    }

    @Test("logout calls /api/2/logout with the token as oauth_token; a SPiD error is reported")
    func logout() async throws {
        let (provider, transport) = try Self.provider([
            .json(#"{"name":"SPP Container","code":200,"error":null,"data":"OK"}"#),
            .json(#"{"error":"invalid_token","error_code":401,"type":"OAuthException","error_description":"401 Unauthorized access!"}"#, status: 401),
        ])
        let credential = Credential(accessToken: "tok", refreshToken: "r", issuedAt: Self.now)
        try await provider.revoke(credential)
        #expect(transport.requests[0].url == Self.base + "/api/2/logout?oauth_token=tok")
        await #expect(throws: ProviderError.rejected(code: "invalid_token", description: "401 Unauthorized access!")) {
            try await provider.revoke(credential)
        }
    }

    @Test("browser logout goes to SPiD's /logout with the client id and the registered return URL")
    func browserLogout() throws {
        let (provider, _) = try Self.provider([])
        let url = provider.browserLogoutURL(for: Credential(accessToken: "t", issuedAt: Self.now), returnTo: "https://gate.example.test/")
        #expect(url == Self.base + "/logout?client_id=cid&redirect_uri=https%3A%2F%2Fgate.example.test%2F")
    }

    @Test("a browser logout's state travels in redirect_uri's query (SPiD has no state of its own)")
    func browserLogoutState() throws {
        let (provider, _) = try Self.provider([])
        let url = provider.browserLogoutURL(
            for: Credential(accessToken: "t", issuedAt: Self.now), returnTo: "https://gate.example.test/v1/sign-out/done", state: "s-1")
        #expect(url == Self.base + "/logout?client_id=cid&redirect_uri=https%3A%2F%2Fgate.example.test%2Fv1%2Fsign-out%2Fdone%3Fstate%3Ds-1")
    }

    @Test("a client-sent oauth_token is replaced, and the token goes in one place only")
    func attachReplacesClientToken() throws {
        let (provider, _) = try Self.provider([])
        var request = OutgoingRequest(url: Self.base + "/api/2/me?oauth_token=evil&x=1")
        provider.attach(Credential(accessToken: "good", issuedAt: Self.now), to: &request)
        #expect(request.url == Self.base + "/api/2/me?x=1&oauth_token=good")
        #expect(request.headers.isEmpty)
    }

    @Test("SPiD API errors become problems with a stable code")
    func apiErrors() throws {
        let (provider, _) = try Self.provider([])
        let invalid = provider.problem(
            forAPIStatus: 401, body: Data(#"{"error":"invalid_token","error_code":401,"type":"OAuthException","error_description":"x"}"#.utf8))
        #expect(invalid?.code == .providerTokenRejected)
        #expect(invalid?.status == 401)
        let limited = provider.problem(
            forAPIStatus: 420,
            body: Data(
                #"{"name":"SPP Container","code":420,"error":{"code":420,"type":"ApiException","description":"Request Ratelimit exceeded"},"data":null}"#
                    .utf8))
        #expect(limited?.code == .providerError)
        #expect(limited?.status == 429)
        #expect(provider.problem(forAPIStatus: 404, body: Data("<html>".utf8)) == nil)
    }

    @Test("signed responses verify with the documented vector (SPiD's published signed-response example) and fail when tampered")
    func signedResponse() throws {
        let data =
            "eyJvYmplY3QiOiJvcmRlciIsImVudHJ5IjpbeyJvcmRlcl9pZCI6IjMwMDAxNCIsImNoYW5nZWRfZmllbGRzIjoic3RhdHVzIiwidGltZSI6IjIwMTItMDktMzAgMTM6MjE6NDMifSx7Im9yZGVyX2lkIjoiMzAwMDE2IiwiY2hhbmdlZF9maWVsZHMiOiJzdGF0dXMiLCJ0aW1lIjoiMjAxMi0wOS0zMCAxMzoyMTo0MyJ9XX0"
        let payload = try #require(SPPContainer.verifiedData(data: data, signature: "GTUVPjN1LzdyU1qwHjnMKS2oNxckfGzXWA6WOGHVOOg", secret: "a274de"))
        #expect(payload["object"]?.stringValue == "order")
        #expect(SPPContainer.verifiedData(data: data, signature: "GTUVPjN1LzdyU1qwHjnMKS2oNxckfGzXWA6WOGHVOPg", secret: "a274de") == nil)
        #expect(SPPContainer.verifiedData(data: data, signature: "GTUVPjN1LzdyU1qwHjnMKS2oNxckfGzXWA6WOGHVOOg", secret: "other") == nil)
    }
}

import Foundation
import GatehouseCore
import GatehouseDemo
import GatehouseProviders
import Testing

@Suite struct OIDCValidationTests {
    @Test("a valid login: identity from the ID token merged with userinfo, nonce sent, id_token kept")
    func validLogin() async throws {
        let fixture = OIDCFixture()
        let result = try await fixture.login()
        #expect(result.identity.subject == "user-alice")
        #expect(result.identity.email == "alice@example.org")
        #expect(result.credential.extras["id_token"] != nil)
        let urls = fixture.transport.requests.map(\.url)
        #expect(urls.first == fixture.idp.issuer + "/.well-known/openid-configuration")
        #expect(urls.contains(fixture.idp.issuer + "/jwks"))
        let url = try fixture.provider.authorizationURL(for: fixture.transaction)
        #expect(url.contains("nonce=\(OIDCFixture.nonce)"))
        #expect(url.contains("scope=openid%20profile%20email") || url.contains("scope=openid+profile+email"))
    }

    @Test("a bad signature is refused") func badSignature() async {
        #expect(await OIDCFixture().refusal(fault: .wrongSignature) == "invalid_id_token_signature")
    }

    @Test("alg none is refused") func algNone() async {
        #expect(await OIDCFixture().refusal(fault: .algNone) == "id_token_alg_not_allowed")
    }

    @Test("HS256 signed with the provider's public key is refused") func hmacWithPublicKey() async {
        #expect(await OIDCFixture().refusal(fault: .hmacWithPublicKey) == "id_token_alg_not_allowed")
    }

    @Test("HS256 with the public key is refused even when client-secret HMAC is allowed") func hmacAllowedStillRefusesPublicKey() async {
        #expect(
            await OIDCFixture {
                $0.allowHMACIDTokens = true
                $0.clientSecret = String(repeating: "k", count: 64)
            }.refusal(fault: .hmacWithPublicKey) == "invalid_id_token_signature")
    }

    @Test("a wrong iss is refused") func wrongIssuer() async {
        #expect(await OIDCFixture().refusal(fault: .wrongIssuer) == "id_token_issuer_mismatch")
    }

    @Test("a wrong aud is refused") func wrongAudience() async {
        #expect(await OIDCFixture().refusal(fault: .wrongAudience) == "id_token_audience_mismatch")
    }

    @Test("an expired ID token is refused") func expired() async {
        #expect(await OIDCFixture().refusal(fault: .expired) == "id_token_expired")
    }

    @Test("a wrong nonce is refused") func wrongNonce() async {
        #expect(await OIDCFixture().refusal(fault: .wrongNonce) == "nonce_mismatch")
    }

    @Test("a missing nonce is refused") func missingNonce() async {
        #expect(await OIDCFixture().refusal(fault: .missingNonce) == "nonce_mismatch")
    }

    @Test("a wrong iss in the authorization response is refused (RFC 9207)") func wrongCallbackIssuer() async {
        let fixture = OIDCFixture()
        var callback = fixture.callback
        callback["iss"] = "https://evil.example"
        #expect(await fixture.refusal(callback: callback) == "invalid_issuer")
    }

    @Test("a missing iss is refused when the provider advertises it (RFC 9207)") func missingCallbackIssuer() async {
        let fixture = OIDCFixture()
        var callback = fixture.callback
        callback["iss"] = nil
        #expect(await fixture.refusal(callback: callback) == "invalid_issuer")
    }

    @Test("a discovery document naming another issuer is refused, and the provider is not ready")
    func discoveryIssuerMismatch() async {
        let fixture = OIDCFixture()
        fixture.idp.setDiscoveryIssuer("https://other.example")
        #expect(await fixture.refusal() == "discovery_issuer_mismatch")
        let fresh = OIDCFixture()
        fresh.idp.setDiscoveryIssuer("https://other.example")
        fresh.transport.enqueue(fresh.discovery())
        guard case .notReady(let reason) = await fresh.provider.readiness else {
            Issue.record("expected not ready")
            return
        }
        #expect(reason.contains("discovery_issuer_mismatch"))
    }

    @Test("discovery falls back to RFC 8414 oauth-authorization-server")
    func discoveryFallback() async {
        let fixture = OIDCFixture()
        fixture.transport.enqueue(.json("{}", status: 404))
        fixture.transport.enqueue(fixture.discovery())
        #expect(await fixture.provider.readiness == .ready)
        #expect(fixture.transport.requests.last?.url == fixture.idp.issuer + "/.well-known/oauth-authorization-server")
    }

    @Test("a subject that changes on refresh is refused") func subjectChangedOnRefresh() async throws {
        let fixture = OIDCFixture()
        let result = try await fixture.login()
        fixture.idp.setFault(.changedSubjectOnRefresh)
        fixture.transport.enqueue(
            fixture.tokenResponse(idToken: fixture.idp.idToken(for: "alice", nonce: nil, refreshing: true), accessToken: "at-2"))
        await #expect(throws: ProviderError.identityVoid(code: "subject_changed", description: "The refreshed ID token names another user.")) {
            _ = try await fixture.provider.refresh(result.credential)
        }
    }

    @Test("a refreshed ID token for the same subject is accepted") func refreshSameSubject() async throws {
        let fixture = OIDCFixture()
        let result = try await fixture.login()
        let newToken = fixture.idp.idToken(for: "alice", nonce: nil)
        fixture.transport.enqueue(fixture.tokenResponse(idToken: newToken, accessToken: "at-2"))
        let renewed = try await fixture.provider.refresh(result.credential)
        #expect(renewed.accessToken == "at-2")
        #expect(renewed.extras["id_token"] == newToken)
    }

    @Test("an unknown kid refetches the JWKS once, then not again within the interval")
    func unknownKidRateLimited() async throws {
        let fixture = OIDCFixture()
        _ = try await fixture.login()
        for _ in 0..<3 {
            fixture.idp.setFault(.unknownKid)
            let token = fixture.idp.idToken(for: "alice", nonce: OIDCFixture.nonce)
            fixture.transport.enqueue(fixture.tokenResponse(idToken: token))
            fixture.transport.enqueue(fixture.jwks())
            await #expect(throws: ProviderError.self) {
                _ = try await fixture.provider.completeLogin(callback: fixture.callback, transaction: fixture.transaction)
            }
            // drop an unused scripted JWKS reply, if any, by counting requests instead
        }
        let jwksFetches = fixture.transport.requests.filter { $0.url.hasSuffix("/jwks") }.count
        #expect(jwksFetches == 2)
    }

    @Test("a rotated signing key is accepted by the next login, without a new provider")
    func rotatedSigningKey() async throws {
        let fixture = OIDCFixture()
        _ = try await fixture.login()
        fixture.idp.rotateSigningKey()
        let token = fixture.idp.idToken(for: "alice", nonce: OIDCFixture.nonce)
        for reply in [fixture.tokenResponse(idToken: token), fixture.jwks(), fixture.userinfo()] { fixture.transport.enqueue(reply) }
        let result = try await fixture.provider.completeLogin(callback: fixture.callback, transaction: fixture.transaction)
        #expect(result.identity.subject == "user-alice")
        #expect(fixture.transport.requests.filter { $0.url.hasSuffix("/jwks") }.count == 2)
    }

    @Test("RP-initiated logout carries id_token_hint and post_logout_redirect_uri")
    func browserLogout() async throws {
        let fixture = OIDCFixture()
        let result = try await fixture.login()
        let url = try #require(fixture.provider.browserLogoutURL(for: result.credential, returnTo: "http://gateway.test/"))
        #expect(url.hasPrefix(fixture.idp.issuer + "/logout?"))
        #expect(url.contains("id_token_hint="))
        #expect(url.contains("post_logout_redirect_uri=http%3A%2F%2Fgateway.test%2F"))
        #expect(!url.contains("state="))
        let withState = try #require(
            fixture.provider.browserLogoutURL(for: result.credential, returnTo: "http://gateway.test/v1/sign-out/done", state: "s-1"))
        #expect(withState.hasSuffix("&post_logout_redirect_uri=http%3A%2F%2Fgateway.test%2Fv1%2Fsign-out%2Fdone&client_id=gatehouse&state=s-1"))
    }

    @Test("userinfo about another subject is refused (OIDC Core 5.3.4)") func userinfoSubjectMismatch() async {
        let fixture = OIDCFixture()
        #expect(await fixture.refusal(userinfoReply: fixture.userinfo(user: "mallory")) == "userinfo_subject_mismatch")
    }

    @Test("require_verified_email refuses an unverified email and accepts a verified one")
    func requireVerifiedEmail() async throws {
        let strict = OIDCFixture { $0.requireVerifiedEmail = true }
        var profile = StandInOIDCProvider.profile(of: "alice")
        profile["email_verified"] = .bool(false)
        #expect(await strict.refusal(userinfoReply: .json(OIDCFixture.json(profile))) == "email_not_verified")
        profile["email_verified"] = .string("false")
        #expect(await OIDCFixture { $0.requireVerifiedEmail = true }.refusal(userinfoReply: .json(OIDCFixture.json(profile))) == "email_not_verified")
        #expect(try await OIDCFixture { $0.requireVerifiedEmail = true }.login().identity.email == "alice@example.org")
        profile["email_verified"] = .bool(false)
        #expect(
            try await OIDCFixture().login(userinfoReply: .json(OIDCFixture.json(profile))).identity.subject == "user-alice",
            "without the setting an unverified email is no refusal")
    }

    @Test("logout revokes the refresh and access tokens at the advertised revocation endpoint")
    func revocation() async throws {
        let fixture = OIDCFixture()
        let result = try await fixture.login()
        fixture.transport.enqueue(.json("{}"))
        fixture.transport.enqueue(.json("{}"))
        try await fixture.provider.revoke(result.credential)
        let revocations = fixture.transport.requests.filter { $0.url == fixture.idp.issuer + "/revoke" }
        #expect(revocations.count == 2)
        let bodies = revocations.map { String(decoding: $0.body ?? Data(), as: UTF8.self) }
        #expect(bodies.first?.contains("token=rt-1") == true && bodies.first?.contains("token_type_hint=refresh_token") == true)
        #expect(bodies.last?.contains("token=at-1") == true && bodies.last?.contains("token_type_hint=access_token") == true)
    }

    @Test("kind oidc is registered") func registered() {
        #expect(ProviderRegistry.kinds["oidc"] != nil)
    }
}

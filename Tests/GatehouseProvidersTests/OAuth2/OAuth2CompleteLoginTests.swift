import Foundation
import GatehouseCore
import GatehouseProviders
import Testing

@Suite struct OAuth2CompleteLoginTests {
    // MARK: The code exchange

    @Test("the code exchange posts grant_type=authorization_code with code, redirect_uri and code_verifier to the token endpoint")
    func exchangeFields() async throws {
        let fixture = OAuth2Fixture(replies: [OAuth2Fixture.tokenResponse])
        _ = try await fixture.login(code: "SplxlOBeZQQYbYS6WxSbIA")
        let request = try #require(fixture.transport.requests.first)
        #expect(fixture.transport.requests.count == 1)
        #expect(request.method == "POST")
        #expect(request.url == OAuth2Fixture.tokenEndpoint)
        #expect(request.header("Content-Type") == "application/x-www-form-urlencoded")
        let form = request.form
        #expect(form["grant_type"] == "authorization_code")
        #expect(form["code"] == "SplxlOBeZQQYbYS6WxSbIA")
        #expect(form["redirect_uri"] == "https://gate.example.test/v1/auth/example/callback")
        #expect(form["code_verifier"] == fixture.transaction.codeVerifier)
    }

    @Test("client_secret_basic sends Authorization: Basic base64(urlenc(id):urlenc(secret)) and no secret in the body")
    func clientSecretBasic() async throws {
        let fixture = OAuth2Fixture(
            clientID: "client:one", clientSecret: "s3cr@t/+=", clientAuthentication: .clientSecretBasic,
            replies: [OAuth2Fixture.tokenResponse])
        _ = try await fixture.login()
        let request = try #require(fixture.transport.requests.first)
        let expected = "Basic " + Data("client%3Aone:s3cr%40t%2F%2B%3D".utf8).base64EncodedString()
        #expect(request.header("Authorization") == expected)
        #expect(request.form["client_secret"] == nil)
        #expect(!request.bodyText.contains("s3cr"))
    }

    @Test("a client secret without an explicit method defaults to client_secret_basic")
    func defaultIsBasic() async throws {
        let fixture = OAuth2Fixture(clientSecret: "s3cret", replies: [OAuth2Fixture.tokenResponse])
        #expect(fixture.provider.configuration.clientAuthentication == .clientSecretBasic)
        _ = try await fixture.login()
        let request = try #require(fixture.transport.requests.first)
        #expect(request.header("Authorization") == "Basic " + Data("demo-client:s3cret".utf8).base64EncodedString())
    }

    @Test("client_secret_post sends client_id and client_secret in the body and no Authorization header")
    func clientSecretPost() async throws {
        let fixture = OAuth2Fixture(clientSecret: "s3cr@t", clientAuthentication: .clientSecretPost, replies: [OAuth2Fixture.tokenResponse])
        _ = try await fixture.login()
        let request = try #require(fixture.transport.requests.first)
        #expect(request.header("Authorization") == nil)
        #expect(request.form["client_id"] == "demo-client")
        #expect(request.form["client_secret"] == "s3cr@t")
    }

    @Test("a public client (none) sends client_id only")
    func publicClient() async throws {
        let fixture = OAuth2Fixture(clientSecret: nil, replies: [OAuth2Fixture.tokenResponse])
        #expect(fixture.provider.configuration.clientAuthentication == .none)
        _ = try await fixture.login()
        let request = try #require(fixture.transport.requests.first)
        #expect(request.header("Authorization") == nil)
        #expect(request.form["client_id"] == "demo-client")
        #expect(request.form["client_secret"] == nil)
    }

    // MARK: The credential

    @Test("a lowercase token_type bearer is accepted")
    func lowercaseBearer() async throws {
        let fixture = OAuth2Fixture(replies: [.json(#"{"access_token":"at-1","token_type":"bearer","sub":"u"}"#)])
        let result = try await fixture.login()
        #expect(result.credential.accessToken == "at-1")
        #expect(result.credential.tokenType.lowercased() == "bearer")
    }

    @Test("expires_in gives expiresAt = now + n on the injected clock, and issuedAt = now")
    func expiresIn() async throws {
        let fixture = OAuth2Fixture(replies: [OAuth2Fixture.tokenResponse])
        let credential = try await fixture.login().credential
        #expect(credential.issuedAt == OAuth2Fixture.now)
        #expect(credential.expiresAt == OAuth2Fixture.now.addingTimeInterval(3600))
        #expect(credential.refreshToken == "rt-1")
        #expect(credential.isRefreshable)
    }

    @Test("expires_in given as a string is read too; no expires_in means no expiry")
    func expiresInVariants() async throws {
        let asString = OAuth2Fixture(replies: [.json(#"{"access_token":"a","token_type":"Bearer","expires_in":"120","sub":"u"}"#)])
        #expect(try await asString.login().credential.expiresAt == OAuth2Fixture.now.addingTimeInterval(120))
        let absent = OAuth2Fixture(replies: [.json(#"{"access_token":"a","token_type":"Bearer","sub":"u"}"#)])
        #expect(try await absent.login().credential.expiresAt == nil)
    }

    @Test("a returned scope is split on spaces; without one the requested scopes are kept")
    func scope() async throws {
        let returned = OAuth2Fixture(
            scopes: ["read", "write"], replies: [.json(#"{"access_token":"a","token_type":"Bearer","scope":"read profile","sub":"u"}"#)])
        #expect(try await returned.login().credential.scope == ["read", "profile"])
        let absent = OAuth2Fixture(scopes: ["read", "write"], replies: [.json(#"{"access_token":"a","token_type":"Bearer","sub":"u"}"#)])
        #expect(try await absent.login().credential.scope == ["read", "write"])
    }

    @Test("a 200 without access_token is an invalid response")
    func missingAccessToken() async throws {
        let fixture = OAuth2Fixture(replies: [.json(#"{"token_type":"Bearer","sub":"u"}"#)])
        await expectProviderError(.invalidResponse) { try await fixture.login() }
    }

    // MARK: Identity

    @Test("with a userinfo endpoint the identity comes from userinfo, fetched with the new access token as Bearer")
    func identityFromUserinfo() async throws {
        let fixture = OAuth2Fixture(
            userinfo: true,
            replies: [
                .json(#"{"access_token":"at-fresh","token_type":"Bearer","expires_in":3600}"#),
                .json(#"{"sub":"alice","email":"alice@example.com","name":"Alice","groups":["staff"]}"#),
            ])
        let result = try await fixture.login()
        #expect(result.identity.subject == "alice")
        #expect(result.identity.email == "alice@example.com")
        #expect(result.identity.name == "Alice")
        #expect(result.identity.groups == ["staff"])

        let requests = fixture.transport.requests
        try #require(requests.count == 2)
        #expect(requests[1].method == "GET")
        #expect(requests[1].url == OAuth2Fixture.userinfoEndpoint)
        #expect(requests[1].header("Authorization") == "Bearer at-fresh")
        #expect(requests[1].body == nil || requests[1].body?.isEmpty == true)
    }

    @Test("userinfo wins over id_token claims when both are present")
    func userinfoWinsOverIDToken() async throws {
        let idToken = OAuth2Fixture.idToken(#"{"sub":"from-id-token","email":"old@example.com","iss":"https://auth.example.test"}"#)
        let fixture = OAuth2Fixture(
            userinfo: true,
            replies: [
                .json(#"{"access_token":"at","token_type":"Bearer","id_token":"\#(idToken)"}"#),
                .json(#"{"sub":"from-userinfo","email":"new@example.com"}"#),
            ])
        let identity = try await fixture.login().identity
        #expect(identity.subject == "from-userinfo")
        #expect(identity.email == "new@example.com")
    }

    @Test("a userinfo endpoint that fails makes the login fail: 5xx unavailable, 401 invalid response")
    func userinfoFailures() async throws {
        let down = OAuth2Fixture(userinfo: true, replies: [OAuth2Fixture.tokenResponse, .text("oops", status: 502)])
        await expectProviderError(.unavailable) { try await down.login() }
        let refused = OAuth2Fixture(userinfo: true, replies: [OAuth2Fixture.tokenResponse, .json(#"{"error":"invalid_token"}"#, status: 401)])
        await expectProviderError(.invalidResponse) { try await refused.login() }
        let unreachable = OAuth2Fixture(userinfo: true, replies: [OAuth2Fixture.tokenResponse, .failure(TransportError("timeout"))])
        await expectProviderError(.unavailable) { try await unreachable.login() }
    }

    @Test("without userinfo the identity comes from the id_token payload claims")
    func identityFromIDToken() async throws {
        let idToken = OAuth2Fixture.idToken(#"{"sub":"248289761001","email":"janedoe@example.com","name":"Jane Doe","aud":"demo-client"}"#)
        let fixture = OAuth2Fixture(replies: [.json(#"{"access_token":"at","token_type":"Bearer","id_token":"\#(idToken)"}"#)])
        let result = try await fixture.login()
        #expect(result.identity.subject == "248289761001")
        #expect(result.identity.email == "janedoe@example.com")
        #expect(result.identity.name == "Jane Doe")
        #expect(fixture.transport.requests.count == 1)
    }

    @Test("without userinfo or id_token the identity comes from the token response's own fields, numbers as text")
    func identityFromTokenResponse() async throws {
        let fixture = OAuth2Fixture(
            claims: ClaimMapping(subject: "user_id"),
            replies: [.json(#"{"access_token":"at","token_type":"Bearer","user_id":938029,"email":"ola@example.no"}"#)])
        let identity = try await fixture.login().identity
        #expect(identity.subject == "938029")
        #expect(identity.email == "ola@example.no")
    }

    @Test("tokens in the token response never become identity claims")
    func tokensAreNotClaims() async throws {
        let idToken = OAuth2Fixture.idToken(#"{"sub":"u"}"#)
        let fixture = OAuth2Fixture(replies: [
            .json(
                #"{"access_token":"at-secret","refresh_token":"rt-secret","token_type":"Bearer","id_token":"\#(idToken)","expires_in":60,"scope":"read"}"#
            )
        ])
        let identity = try await fixture.login().identity
        for key in ["access_token", "refresh_token", "id_token", "token_type", "expires_in", "scope"] {
            #expect(identity.claims[key] == nil, "\(key)")
        }
        #expect(!identity.claims.values.contains("at-secret"))
        #expect(!identity.claims.values.contains("rt-secret"))
    }

    @Test("a custom claim mapping reads the subject from username and email from mail")
    func customClaimMapping() async throws {
        let fixture = OAuth2Fixture(
            userinfo: true, claims: ClaimMapping(subject: "username", email: "mail"),
            replies: [OAuth2Fixture.tokenResponse, .json(#"{"username":"fkooman","mail":"fkooman@example.org","sub":"other"}"#)])
        let identity = try await fixture.login().identity
        #expect(identity.subject == "fkooman")
        #expect(identity.email == "fkooman@example.org")
    }

    @Test("no subject anywhere is an invalid response")
    func noSubject() async throws {
        let fixture = OAuth2Fixture(replies: [.json(#"{"access_token":"at","token_type":"Bearer","email":"x@example.com"}"#)])
        await expectProviderError(.invalidResponse) { try await fixture.login() }
        let mapped = OAuth2Fixture(
            claims: ClaimMapping(subject: "username"), replies: [.json(#"{"access_token":"at","token_type":"Bearer","sub":"u"}"#)])
        await expectProviderError(.invalidResponse) { try await mapped.login() }
    }

    @Test("an id_token that is not a JWS is ignored rather than trusted")
    func malformedIDToken() async throws {
        let fixture = OAuth2Fixture(replies: [.json(#"{"access_token":"at","token_type":"Bearer","id_token":"not-a-jwt"}"#)])
        await expectProviderError(.invalidResponse) { try await fixture.login() }
    }

    // MARK: The callback

    @Test("a callback with error=access_denied is rejected with that code and description, and nothing is sent")
    func accessDenied() async throws {
        let fixture = OAuth2Fixture()
        let callback = ["error": "access_denied", "error_description": "The user said no", "state": fixture.transaction.state]
        let error = try await #require(throws: ProviderError.self) {
            try await fixture.provider.completeLogin(callback: callback, transaction: fixture.transaction)
        }
        #expect(error == .rejected(code: "access_denied", description: "The user said no"))
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test("a callback error without description is still rejected with its code")
    func errorWithoutDescription() async throws {
        let fixture = OAuth2Fixture()
        await expectProviderError(.rejected("temporarily_unavailable")) {
            try await fixture.provider.completeLogin(callback: ["error": "temporarily_unavailable"], transaction: fixture.transaction)
        }
    }

    @Test("a callback iss that differs from the configured issuer is rejected before the code is exchanged (RFC 9207)")
    func issuerMismatch() async throws {
        let fixture = OAuth2Fixture(issuer: OAuth2Fixture.issuer, replies: [OAuth2Fixture.tokenResponse])
        let callback = ["code": "c", "state": fixture.transaction.state, "iss": "https://evil.example.test"]
        let error = try await #require(throws: ProviderError.self) {
            try await fixture.provider.completeLogin(callback: callback, transaction: fixture.transaction)
        }
        guard case .rejected = error else {
            Issue.record("expected .rejected, got \(error)")
            return
        }
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test("a callback iss equal to the configured issuer is accepted")
    func issuerMatch() async throws {
        let fixture = OAuth2Fixture(issuer: OAuth2Fixture.issuer, replies: [OAuth2Fixture.tokenResponse])
        let callback = ["code": "c", "state": fixture.transaction.state, "iss": OAuth2Fixture.issuer]
        let result = try await fixture.provider.completeLogin(callback: callback, transaction: fixture.transaction)
        #expect(result.identity.subject == "u-42")
        #expect(result.credential.accessToken == "at-1")
    }

    @Test("a callback without code (or with an empty one) is an invalid response and nothing is sent")
    func missingCode() async throws {
        let fixture = OAuth2Fixture()
        await expectProviderError(.invalidResponse) {
            try await fixture.provider.completeLogin(callback: ["state": fixture.transaction.state], transaction: fixture.transaction)
        }
        await expectProviderError(.invalidResponse) {
            try await fixture.provider.completeLogin(callback: ["code": "", "state": fixture.transaction.state], transaction: fixture.transaction)
        }
        #expect(fixture.transport.requests.isEmpty)
    }
}

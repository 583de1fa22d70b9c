import Foundation
import GatehouseCore
import GatehouseProviders
import Testing

@Suite struct OAuth2RefreshTests {
    @Test("refresh posts grant_type=refresh_token with the refresh token to the token endpoint, with client authentication")
    func refreshRequest() async throws {
        let fixture = OAuth2Fixture(replies: [.json(#"{"access_token":"at-new","token_type":"Bearer","expires_in":600}"#)])
        _ = try await fixture.provider.refresh(OAuth2Fixture.credential())
        let request = try #require(fixture.transport.requests.first)
        #expect(fixture.transport.requests.count == 1)
        #expect(request.method == "POST")
        #expect(request.url == OAuth2Fixture.tokenEndpoint)
        #expect(request.form["grant_type"] == "refresh_token")
        #expect(request.form["refresh_token"] == "rt-old")
        #expect(request.form["code"] == nil)
        #expect(request.header("Authorization") == "Basic " + Data("demo-client:s3cret".utf8).base64EncodedString())
    }

    @Test("a public client's refresh carries client_id in the body")
    func publicClientRefresh() async throws {
        let fixture = OAuth2Fixture(clientSecret: nil, replies: [.json(#"{"access_token":"at-new","token_type":"Bearer"}"#)])
        _ = try await fixture.provider.refresh(OAuth2Fixture.credential())
        let request = try #require(fixture.transport.requests.first)
        #expect(request.form["client_id"] == "demo-client")
        #expect(request.header("Authorization") == nil)
    }

    @Test("the old refresh token is kept when none is returned")
    func keepsOldRefreshToken() async throws {
        let fixture = OAuth2Fixture(replies: [.json(#"{"access_token":"at-new","token_type":"Bearer","expires_in":600}"#)])
        let credential = try await fixture.provider.refresh(OAuth2Fixture.credential())
        #expect(credential.accessToken == "at-new")
        #expect(credential.refreshToken == "rt-old")
        #expect(credential.issuedAt == OAuth2Fixture.now)
        #expect(credential.expiresAt == OAuth2Fixture.now.addingTimeInterval(600))
    }

    @Test("a rotated refresh token replaces the old one")
    func storesRotatedRefreshToken() async throws {
        let fixture = OAuth2Fixture(replies: [.json(#"{"access_token":"at-new","token_type":"Bearer","refresh_token":"rt-rotated"}"#)])
        let credential = try await fixture.provider.refresh(OAuth2Fixture.credential())
        #expect(credential.refreshToken == "rt-rotated")
    }

    @Test("the previous scope and extras are kept unless the response says otherwise")
    func keepsScopeAndExtras() async throws {
        let kept = OAuth2Fixture(replies: [.json(#"{"access_token":"at-new","token_type":"Bearer"}"#)])
        let refreshed = try await kept.provider.refresh(OAuth2Fixture.credential(scope: ["read"]))
        #expect(refreshed.scope == ["read"])
        #expect(refreshed.extras["user_id"] == "u-42")

        let narrowed = OAuth2Fixture(replies: [.json(#"{"access_token":"at-new","token_type":"Bearer","scope":"profile"}"#)])
        #expect(try await narrowed.provider.refresh(OAuth2Fixture.credential(scope: ["read"])).scope == ["profile"])
    }

    @Test("refresh tokens are never kept among the credential's extras")
    func refreshTokenNotInExtras() async throws {
        let fixture = OAuth2Fixture(replies: [.json(#"{"access_token":"at-new","token_type":"Bearer","refresh_token":"rt-rotated"}"#)])
        let credential = try await fixture.provider.refresh(OAuth2Fixture.credential())
        #expect(!credential.extras.values.contains("rt-rotated"))
        #expect(!credential.extras.values.contains("at-new"))
    }

    @Test("a credential without a refresh token cannot be refreshed: invalidGrant, nothing sent")
    func noRefreshToken() async throws {
        let fixture = OAuth2Fixture()
        await expectProviderError(.invalidGrant) { try await fixture.provider.refresh(OAuth2Fixture.credential(refreshToken: nil)) }
        #expect(fixture.transport.requests.isEmpty)
    }
}

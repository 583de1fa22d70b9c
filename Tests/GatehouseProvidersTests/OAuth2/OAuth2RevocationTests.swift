import Foundation
import GatehouseCore
import GatehouseProviders
import Testing

@Suite struct OAuth2RevocationTests {
    @Test("revoke posts the refresh token, then the access token, with RFC 7009 token_type_hint, to the revocation endpoint")
    func revokesBothTokens() async throws {
        let fixture = OAuth2Fixture(revocation: true, replies: [.text("", status: 200), .text("", status: 200)])
        try await fixture.provider.revoke(OAuth2Fixture.credential())
        let requests = fixture.transport.requests
        try #require(requests.count == 2)
        #expect(requests.allSatisfy { $0.method == "POST" && $0.url == OAuth2Fixture.revocationEndpoint })
        #expect(requests[0].form["token"] == "rt-old")
        #expect(requests[0].form["token_type_hint"] == "refresh_token")
        #expect(requests[1].form["token"] == "at-old")
        #expect(requests[1].form["token_type_hint"] == "access_token")
        #expect(requests.allSatisfy { $0.header("Content-Type") == "application/x-www-form-urlencoded" })
    }

    @Test("revocation authenticates the client as at the token endpoint")
    func revocationAuthenticatesClient() async throws {
        let basic = OAuth2Fixture(revocation: true, replies: [.text("", status: 200), .text("", status: 200)])
        try await basic.provider.revoke(OAuth2Fixture.credential())
        #expect(
            basic.transport.requests.allSatisfy { $0.header("Authorization") == "Basic " + Data("demo-client:s3cret".utf8).base64EncodedString() })

        let post = OAuth2Fixture(
            clientAuthentication: .clientSecretPost, revocation: true, replies: [.text("", status: 200), .text("", status: 200)])
        try await post.provider.revoke(OAuth2Fixture.credential())
        #expect(post.transport.requests.allSatisfy { $0.form["client_id"] == "demo-client" && $0.form["client_secret"] == "s3cret" })
    }

    @Test("a credential without a refresh token revokes only the access token")
    func accessTokenOnly() async throws {
        let fixture = OAuth2Fixture(revocation: true, replies: [.text("", status: 200)])
        try await fixture.provider.revoke(OAuth2Fixture.credential(refreshToken: nil))
        let requests = fixture.transport.requests
        try #require(requests.count == 1)
        #expect(requests[0].form["token"] == "at-old")
        #expect(requests[0].form["token_type_hint"] == "access_token")
    }

    @Test("without a revocation endpoint nothing is sent")
    func noEndpoint() async throws {
        let fixture = OAuth2Fixture(revocation: false)
        try await fixture.provider.revoke(OAuth2Fixture.credential())
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test("503 from the revocation endpoint is reported as unavailable (the token is still valid)")
    func unavailable() async {
        let fixture = OAuth2Fixture(revocation: true, replies: [.text("", status: 503)])
        await expectProviderError(.unavailable) { try await fixture.provider.revoke(OAuth2Fixture.credential()) }
    }
}

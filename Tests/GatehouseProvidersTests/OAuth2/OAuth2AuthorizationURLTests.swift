import Foundation
import GatehouseCore
import GatehouseProviders
import Testing

@Suite struct OAuth2AuthorizationURLTests {
    static func query(of url: String) throws -> [String: String] {
        let components = try #require(URLComponents(string: url))
        let pairs = FormEncoding.decode(components.percentEncodedQuery ?? "")
        return Dictionary(pairs, uniquingKeysWith: { first, _ in first })
    }

    @Test("the authorization URL is built on the configured endpoint")
    func builtOnEndpoint() throws {
        let fixture = OAuth2Fixture()
        let url = try fixture.provider.authorizationURL(for: fixture.transaction)
        #expect(url.hasPrefix(OAuth2Fixture.authorizationEndpoint + "?"))
        let components = try #require(URLComponents(string: url))
        #expect(components.scheme == "https")
        #expect(components.host == "auth.example.test")
        #expect(components.path == "/oauth/authorize")
    }

    @Test("it carries response_type=code, client_id, the callback redirect_uri, state and scope")
    func carriesParameters() throws {
        let fixture = OAuth2Fixture(scopes: ["read", "write"])
        let query = try Self.query(of: fixture.provider.authorizationURL(for: fixture.transaction))
        #expect(query["response_type"] == "code")
        #expect(query["client_id"] == "demo-client")
        #expect(query["redirect_uri"] == "https://gate.example.test/v1/auth/example/callback")
        #expect(query["redirect_uri"] == fixture.transaction.callbackURL)
        #expect(query["state"] == fixture.transaction.state)
        #expect(query["scope"] == "read write")
    }

    @Test("it carries the S256 challenge of the transaction's verifier")
    func carriesS256Challenge() throws {
        let fixture = OAuth2Fixture()
        let query = try Self.query(of: fixture.provider.authorizationURL(for: fixture.transaction))
        #expect(query["code_challenge_method"] == "S256")
        #expect(query["code_challenge"] == PKCE.challenge(for: fixture.transaction.codeVerifier))
        let challenge = try #require(query["code_challenge"])
        #expect(PKCE.verify(fixture.transaction.codeVerifier, against: challenge))
    }

    @Test("it never carries the verifier, a client secret or a nonce-less secret value")
    func carriesNoSecrets() throws {
        let fixture = OAuth2Fixture(clientSecret: "very-s3cret")
        let url = try fixture.provider.authorizationURL(for: fixture.transaction)
        #expect(!url.contains(fixture.transaction.codeVerifier))
        #expect(!url.contains("very-s3cret"))
        #expect(!url.contains("client_secret"))
    }

    @Test("without configured scopes no scope parameter is sent")
    func noScope() throws {
        let fixture = OAuth2Fixture(scopes: [])
        let query = try Self.query(of: fixture.provider.authorizationURL(for: fixture.transaction))
        #expect(query["scope"] == nil)
    }

    @Test("an endpoint that already has a query keeps it and continues with &")
    func endpointWithQuery() throws {
        let fixture = OAuth2Fixture(authorizationEndpoint: "https://auth.example.test/oauth/authorize?tenant=t1")
        let url = try fixture.provider.authorizationURL(for: fixture.transaction)
        #expect(url.hasPrefix("https://auth.example.test/oauth/authorize?tenant=t1&"))
        let query = try Self.query(of: url)
        #expect(query["tenant"] == "t1")
        #expect(query["response_type"] == "code")
    }

    @Test("extra authorization parameters are appended")
    func extraParameters() throws {
        let transport = FakeTransport()
        let configuration = OAuth2Provider.Configuration(
            authorizationEndpoint: OAuth2Fixture.authorizationEndpoint, tokenEndpoint: OAuth2Fixture.tokenEndpoint,
            clientID: "c", extraAuthorizationParameters: [("force", "1")])
        let provider = OAuth2Provider(
            descriptor: ProviderDescriptor(id: "spid", kind: "oauth2"), configuration: configuration,
            context: ProviderContext(transport: transport, publicURL: OAuth2Fixture.publicURL))
        let fixture = OAuth2Fixture()
        let query = try Self.query(of: provider.authorizationURL(for: fixture.transaction))
        #expect(query["force"] == "1")
        #expect(transport.requests.isEmpty)
    }
}

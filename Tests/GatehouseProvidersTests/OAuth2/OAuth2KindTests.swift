import Foundation
import GatehouseCore
import GatehouseProviders
import Testing

@Suite struct OAuth2KindTests {
    static let descriptor = ProviderDescriptor(id: "example", kind: "oauth2")
    static let context = ProviderContext(transport: FakeTransport(), clock: TimeSource { OAuth2Fixture.now }, publicURL: OAuth2Fixture.publicURL)

    /// The `oauth2` keys of a provider file, one per line from line 5 (the common keys come first).
    static let complete: [(String, String)] = [
        ("authorization_endpoint", OAuth2Fixture.authorizationEndpoint),
        ("token_endpoint", OAuth2Fixture.tokenEndpoint),
        ("client_id", "demo-client"),
        ("client_secret", "${CLIENT_SECRET}"),
    ]

    /// Where ``complete``'s `${CLIENT_SECRET}` is read from.
    static let secrets = ["CLIENT_SECRET": "s3cret"]

    static func settings(_ pairs: [(String, String)], environment: [String: String] = secrets) throws -> ConfigMap {
        try ConfigMap(Nodes.scalars(pairs, firstLine: 5), environment: environment)
    }

    static func make(_ pairs: [(String, String)], environment: [String: String] = secrets) throws -> any AuthProvider {
        try OAuth2Kind.make(descriptor: descriptor, settings: settings(pairs, environment: environment), context: context)
    }

    static func configuration(_ pairs: [(String, String)], environment: [String: String] = secrets) throws -> OAuth2Provider.Configuration {
        let provider = try #require(try make(pairs, environment: environment) as? OAuth2Provider)
        return provider.configuration
    }

    @Test("the registry knows kind oauth2")
    func registry() throws {
        let kind = try #require(ProviderRegistry.kinds["oauth2"])
        #expect(kind.kind == "oauth2")
        #expect(ObjectIdentifier(kind) == ObjectIdentifier(OAuth2Kind.self))
        #expect(OAuth2Kind.defaultAPIAuthentication == .bearer)
    }

    @Test("a complete file makes an OAuth2Provider with those settings")
    func makesProvider() throws {
        let provider = try #require(try Self.make(Self.complete + [("scopes", "grades")]) as? OAuth2Provider)
        let configuration = provider.configuration
        #expect(provider.descriptor == Self.descriptor)
        #expect(configuration.authorizationEndpoint == OAuth2Fixture.authorizationEndpoint)
        #expect(configuration.tokenEndpoint == OAuth2Fixture.tokenEndpoint)
        #expect(configuration.clientID == "demo-client")
        #expect(configuration.clientSecret == "s3cret")
        #expect(configuration.clientAuthentication == .clientSecretBasic)
        #expect(configuration.scopes == ["grades"])
        #expect(configuration.userinfoEndpoint == nil)
        #expect(configuration.revocationEndpoint == nil)
        #expect(configuration.issuer == nil)
    }

    @Test("optional endpoints, issuer, scopes list and auth method are read")
    func optionalKeys() throws {
        let node = Nodes.mapping([
            ("authorization_endpoint", 1, Nodes.scalar(OAuth2Fixture.authorizationEndpoint, line: 1)),
            ("token_endpoint", 2, Nodes.scalar(OAuth2Fixture.tokenEndpoint, line: 2)),
            ("userinfo_endpoint", 3, Nodes.scalar(OAuth2Fixture.userinfoEndpoint, line: 3)),
            ("revocation_endpoint", 4, Nodes.scalar(OAuth2Fixture.revocationEndpoint, line: 4)),
            ("issuer", 5, Nodes.scalar(OAuth2Fixture.issuer, line: 5)),
            ("client_id", 6, Nodes.scalar("demo-client", line: 6)),
            ("client_secret", 7, Nodes.scalar("${CLIENT_SECRET}", line: 7)),
            ("token_endpoint_auth_method", 8, Nodes.scalar("client_secret_post", line: 8)),
            ("scopes", 9, Nodes.sequence(["openid", "profile"], line: 9)),
        ])
        let settings = try ConfigMap(node, environment: ["CLIENT_SECRET": "from-env"])
        let provider = try #require(try OAuth2Kind.make(descriptor: Self.descriptor, settings: settings, context: Self.context) as? OAuth2Provider)
        let configuration = provider.configuration
        #expect(configuration.userinfoEndpoint == OAuth2Fixture.userinfoEndpoint)
        #expect(configuration.revocationEndpoint == OAuth2Fixture.revocationEndpoint)
        #expect(configuration.issuer == OAuth2Fixture.issuer)
        #expect(configuration.clientSecret == "from-env")
        #expect(configuration.clientAuthentication == .clientSecretPost)
        #expect(configuration.scopes == ["openid", "profile"])
    }

    @Test("without a client secret the client is public (none)")
    func publicClientDefault() throws {
        let configuration = try Self.configuration(Array(Self.complete.prefix(3)))
        #expect(configuration.clientSecret == nil)
        #expect(configuration.clientAuthentication == .none)
    }

    @Test(
        "a missing required key is a ConfigError naming it",
        arguments: ["authorization_endpoint", "token_endpoint", "client_id"])
    func requiredKeyMissing(key: String) throws {
        let pairs = Self.complete.filter { $0.0 != key }
        let error = try #require(throws: ConfigError.self) { try Self.make(pairs) }
        #expect(error.file == Nodes.file)
        #expect(error.message.contains("'\(key)'"))
        #expect(error.message.contains("required"))
    }

    @Test("client_secret_basic without client_secret is an error at the method's line")
    func basicWithoutSecret() throws {
        let pairs = Array(Self.complete.prefix(3)) + [("token_endpoint_auth_method", "client_secret_basic")]
        let error = try #require(throws: ConfigError.self) { try Self.make(pairs) }
        #expect(error.line == 8)
        #expect(error.message.contains("token_endpoint_auth_method"))
        #expect(error.message.contains("client_secret"))
    }

    @Test("client_secret_post without client_secret is an error too; none without one is fine")
    func postWithoutSecret() throws {
        #expect(throws: ConfigError.self) {
            try Self.make(Array(Self.complete.prefix(3)) + [("token_endpoint_auth_method", "client_secret_post")])
        }
        let configuration = try Self.configuration(Array(Self.complete.prefix(3)) + [("token_endpoint_auth_method", "none")])
        #expect(configuration.clientAuthentication == .none)
    }

    @Test("an unsupported token_endpoint_auth_method is refused")
    func unsupportedMethod() throws {
        let error = try #require(throws: ConfigError.self) {
            try Self.make(Self.complete + [("token_endpoint_auth_method", "private_key_jwt")])
        }
        #expect(error.line == 9)
    }

    @Test("an unknown key is an error naming the key and its line")
    func unknownKey() throws {
        let error = try #require(throws: ConfigError.self) { try Self.make(Self.complete + [("client_secert", "typo")]) }
        #expect(error.file == Nodes.file)
        #expect(error.line == 9)
        #expect(error.message.contains("client_secert"))
    }

    @Test("an endpoint that is not an absolute http(s) URL is refused")
    func badEndpoint() throws {
        var pairs = Self.complete
        pairs[1] = ("token_endpoint", "/oauth/token")
        let error = try #require(throws: ConfigError.self) { try Self.make(pairs) }
        #expect(error.line == 6)
        #expect(error.message.contains("token_endpoint"))
    }

    @Test("capabilities: refresh, expiry known, no legacy capture; revocation only with a revocation endpoint; login by redirect")
    func capabilities() throws {
        let plain = try Self.make(Self.complete)
        #expect(plain.loginStyle == .redirect)
        #expect(
            plain.capabilities == ProviderCapabilities(refresh: true, revocation: false, expiryKnown: true, userinfo: false, legacyCapture: false))

        let full = try Self.make(
            Self.complete + [
                ("revocation_endpoint", OAuth2Fixture.revocationEndpoint), ("userinfo_endpoint", OAuth2Fixture.userinfoEndpoint),
            ])
        #expect(full.loginStyle == .redirect)
        #expect(full.capabilities == ProviderCapabilities(refresh: true, revocation: true, expiryKnown: true, userinfo: true, legacyCapture: false))
        #expect(full.features == ProviderFeatures(revocation: true, expiryKnown: true, userinfo: true))
    }

    @Test("the provider attaches credentials per its descriptor's api authentication")
    func attachUsesDescriptorAPI() throws {
        let descriptor = ProviderDescriptor(id: "example", kind: "oauth2", api: ProviderAPI(url: "https://api.example.test", authentication: .bearer))
        let provider = try OAuth2Kind.make(descriptor: descriptor, settings: Self.settings(Self.complete), context: Self.context)
        var request = OutgoingRequest(url: "https://api.example.test/me")
        provider.attach(Credential(accessToken: "at", issuedAt: OAuth2Fixture.now), to: &request)
        #expect(request.headers.first?.value == "Bearer at")

        let bare = try Self.make(Self.complete)
        var untouched = OutgoingRequest(url: "https://api.example.test/me")
        bare.attach(Credential(accessToken: "at", issuedAt: OAuth2Fixture.now), to: &untouched)
        #expect(untouched.headers.isEmpty)
    }
}

import Foundation
import GatehouseCore
import GatehouseProviders
import Testing

/// A configured `oauth2` provider over a ``FakeTransport`` with a frozen clock.
struct OAuth2Fixture {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    static let publicURL = "https://gate.example.test"
    static let providerID = "example"
    static let authorizationEndpoint = "https://auth.example.test/oauth/authorize"
    static let tokenEndpoint = "https://auth.example.test/oauth/token"
    static let userinfoEndpoint = "https://auth.example.test/oauth/userinfo"
    static let revocationEndpoint = "https://auth.example.test/oauth/revoke"
    static let issuer = "https://auth.example.test"

    let transport: FakeTransport
    let provider: OAuth2Provider
    let transaction: LoginTransaction

    init(
        clientID: String = "demo-client",
        clientSecret: String? = "s3cret",
        clientAuthentication: OAuth2Provider.ClientAuthentication? = nil,
        authorizationEndpoint: String = Self.authorizationEndpoint,
        userinfo: Bool = false,
        revocation: Bool = false,
        issuer: String? = nil,
        issParameterSupported: Bool = false,
        scopes: [String] = ["read", "write"],
        claims: ClaimMapping = ClaimMapping(),
        replies: [FakeTransport.Reply] = []
    ) {
        let transport = FakeTransport(replies)
        let context = ProviderContext(transport: transport, clock: TimeSource { Self.now }, publicURL: Self.publicURL)
        let configuration = OAuth2Provider.Configuration(
            authorizationEndpoint: authorizationEndpoint,
            tokenEndpoint: Self.tokenEndpoint,
            userinfoEndpoint: userinfo ? Self.userinfoEndpoint : nil,
            revocationEndpoint: revocation ? Self.revocationEndpoint : nil,
            issuer: issuer,
            issParameterSupported: issParameterSupported,
            clientID: clientID,
            clientSecret: clientSecret,
            clientAuthentication: clientAuthentication,
            scopes: scopes)
        self.transport = transport
        self.provider = OAuth2Provider(
            descriptor: ProviderDescriptor(id: Self.providerID, kind: "oauth2", claims: claims),
            configuration: configuration, context: context)
        self.transaction = LoginTransaction(
            provider: Self.providerID, state: RandomToken.make(), codeVerifier: PKCE.makeVerifier(), nonce: RandomToken.make(),
            callbackURL: context.callbackURL(for: Self.providerID), createdAt: Self.now)
    }

    /// A compact JWS with the given payload and a dummy signature (the `oauth2` kind does not verify it).
    static func idToken(_ payload: String) -> String {
        let header = Base64URL.encode(Data(#"{"alg":"RS256","typ":"JWT"}"#.utf8))
        return "\(header).\(Base64URL.encode(Data(payload.utf8))).c2lnbmF0dXJl"
    }

    /// A minimal successful token response.
    static let tokenResponse = FakeTransport.Reply.json(
        #"{"access_token":"at-1","token_type":"Bearer","expires_in":3600,"refresh_token":"rt-1","sub":"u-42"}"#)

    /// Runs a login with a code.
    func login(code: String = "code-1") async throws -> LoginResult {
        try await provider.completeLogin(callback: ["code": code, "state": transaction.state], transaction: transaction)
    }

    /// A credential as a previous login would have stored it.
    static func credential(refreshToken: String? = "rt-old", scope: [String] = ["read"]) -> Credential {
        Credential(
            accessToken: "at-old", tokenType: "Bearer", refreshToken: refreshToken,
            expiresAt: now.addingTimeInterval(-10), issuedAt: now.addingTimeInterval(-3610), scope: scope,
            extras: ["user_id": "u-42"])
    }
}

/// Checks a thrown error against an expected ``ProviderError`` case, ignoring messages.
enum ProviderErrorCase: Sendable, CustomStringConvertible {
    case invalidGrant, unavailable, invalidResponse
    case rejected(String)

    func matches(_ error: any Error) -> Bool {
        switch (self, error as? ProviderError) {
        case (.invalidGrant, .invalidGrant?), (.unavailable, .unavailable?), (.invalidResponse, .invalidResponse?): return true
        case (.rejected(let expected), .rejected(let code, _)?): return expected == code
        default: return false
        }
    }

    var description: String {
        switch self {
        case .invalidGrant: "invalidGrant"
        case .unavailable: "unavailable"
        case .invalidResponse: "invalidResponse"
        case .rejected(let code): "rejected(\(code))"
        }
    }
}

/// Runs `body` and checks that it throws the expected ``ProviderError`` case.
func expectProviderError<T>(
    _ expected: ProviderErrorCase, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T
) async {
    do {
        _ = try await body()
        Issue.record("expected \(expected), nothing was thrown", sourceLocation: sourceLocation)
    } catch {
        #expect(expected.matches(error), "expected \(expected), got \(error)", sourceLocation: sourceLocation)
    }
}

import Foundation
public import GatehouseCore
import Hummingbird
public import Logging
import Synchronization

/// An OpenID Connect provider on loopback, for `gatehouse demo` and the tests: discovery, an ES256 JWKS
/// with a key that can be rotated, the authorization-code flow with PKCE and `nonce`, ID tokens on login
/// and refresh, userinfo, RFC 7009 revocation and RP-initiated logout, and switches that make it mint
/// bad ID tokens.
///
/// ```swift
/// let idp = StandInOIDCProvider()
/// try await idp.start()
/// idp.rotateSigningKey()
/// idp.setFault(.expired)
/// ```
///
/// Endpoints: `GET /.well-known/openid-configuration`, `GET /jwks`, `GET`/`POST /authorize` (users sign in
/// with password `<user>-password`), `POST /token`, `GET /userinfo`, `POST /revoke`, `GET /logout`.
public final class StandInOIDCProvider: Sendable {
    /// The client the stand-in knows (any secret is accepted).
    public let clientID: String
    let state = Mutex(StandInOIDCState())
    let logger: Logger
    private let listener = LoopbackListener()
    private let requestedPort: Int

    /// Creates a stopped provider.
    public init(clientID: String = "gatehouse", port: Int = 0, logger: Logger? = nil) {
        self.clientID = clientID
        self.requestedPort = port
        self.logger = logger ?? .standInQuiet(label: "gatehouse.demo.oidc")
    }

    /// Starts listening on 127.0.0.1 and returns the bound port.
    @discardableResult
    public func start() async throws -> Int {
        try await listener.start(port: requestedPort, responder: makeRouter().buildResponder(), logger: logger)
    }

    /// Stops listening.
    public func stop() async {
        await listener.stop()
    }

    /// `http://127.0.0.1:<port>`: the issuer.
    public var issuer: String { "http://\(listener.host):\(listener.port ?? requestedPort)" }

    // MARK: Test controls

    /// Replaces the signing key; the old one stays in the JWKS unless `keepingOld` is false.
    public func rotateSigningKey(keepingOld: Bool = false) {
        state.withLock { state in
            state.retiredKeys = keepingOld ? [state.signingKey] + state.retiredKeys : []
            state.signingKey = StandInOIDCSigningKey()
        }
    }

    /// The `kid` ID tokens are signed with now.
    public var currentKeyID: String { state.withLock { $0.signingKey.kid } }

    /// Makes the provider mint bad ID tokens (or a bad `iss` on redirects) until set back to `.none`.
    public func setFault(_ fault: StandInOIDCFault) {
        state.withLock { $0.fault = fault }
    }

    /// Makes the discovery document name another issuer (nil: the real one).
    public func setDiscoveryIssuer(_ issuer: String?) {
        state.withLock { $0.discoveryIssuer = issuer }
    }

    /// While false, discovery answers 503.
    public func setDiscoveryAvailable(_ available: Bool) {
        state.withLock { $0.discoveryAvailable = available }
    }

    /// How often discovery and the JWKS were fetched, tokens requested, tokens revoked.
    public var counters: (discovery: Int, jwks: Int, token: Int, revocations: Int) {
        state.withLock { ($0.discoveryFetches, $0.jwksFetches, $0.tokenRequests, $0.revocations) }
    }

    /// The `id_token_hint` of the last RP-initiated logout.
    public var lastLogoutHint: String? { state.withLock { $0.lastLogoutHint } }

    /// The discovery document.
    public var discoveryDocument: [String: JSONValue] {
        let named = state.withLock { $0.discoveryIssuer } ?? issuer
        return [
            "issuer": .string(named),
            "authorization_endpoint": .string(issuer + "/authorize"),
            "token_endpoint": .string(issuer + "/token"),
            "userinfo_endpoint": .string(issuer + "/userinfo"),
            "jwks_uri": .string(issuer + "/jwks"),
            "revocation_endpoint": .string(issuer + "/revoke"),
            "end_session_endpoint": .string(issuer + "/logout"),
            "response_types_supported": .array([.string("code")]),
            "subject_types_supported": .array([.string("public")]),
            "id_token_signing_alg_values_supported": .array([.string("ES256")]),
            "code_challenge_methods_supported": .array([.string("S256")]),
            "authorization_response_iss_parameter_supported": .bool(true),
        ]
    }

    /// The published key set: the current key and any retired ones kept.
    public var jwks: [String: JSONValue] {
        state.withLock { state in
            .init(uniqueKeysWithValues: [("keys", JSONValue.array(([state.signingKey] + state.retiredKeys).map { .object($0.jwk) }))])
        }
    }

    /// The claims the stand-in tells about a user.
    public static func profile(of user: String) -> [String: JSONValue] {
        ["sub": .string("user-\(user)"), "email": .string("\(user)@example.org"), "email_verified": .bool(true), "name": .string(user.capitalized)]
    }

    /// `claims` signed with the current key (`header` merged into the JWS header): logout tokens, odd tokens.
    public func signed(_ claims: [String: JSONValue], header: [String: JSONValue] = [:]) -> String {
        state.withLock { $0.signingKey }.sign(claims, header: header)
    }

    /// `claims` as HS256 with the public JWK as the secret: the algorithm-confusion attack.
    public func signedWithPublicKeyAsHMACSecret(_ claims: [String: JSONValue]) -> String {
        let key = state.withLock { $0.signingKey }
        return StandInOIDCHMAC.sign(claims, hmacKey: StandInOIDCSigningKey.jwkJSON(key.jwk), kid: key.kid)
    }

    /// An ID token for `user` as the current fault says (also usable without starting the server).
    public func idToken(for user: String, nonce: String?, accessToken: String? = nil, refreshing: Bool = false) -> String {
        let (key, fault) = state.withLock { ($0.signingKey, $0.fault) }
        let now = Date().timeIntervalSince1970
        var claims: [String: JSONValue] = [
            "iss": .string(issuer), "aud": .string(clientID), "sub": Self.profile(of: user)["sub"] ?? .null,
            "iat": .number(now.rounded()), "exp": .number((now + 300).rounded()), "auth_time": .number(now.rounded()),
            "email": .string("\(user)@example.org"), "email_verified": .bool(true), "name": .string(user.capitalized),
            // Each sign-in is a session of its own at the stand-in, as back-channel logout names them.
            "sid": .string("sid-" + UUID().uuidString.lowercased()),
        ]
        if let nonce { claims["nonce"] = .string(nonce) }
        switch fault {
        case .wrongIssuer: claims["iss"] = .string("https://evil.example")
        case .wrongAudience: claims["aud"] = .string("someone-else")
        case .expired:
            claims["exp"] = .number((now - 3600).rounded())
            claims["iat"] = .number((now - 7200).rounded())
        case .wrongNonce: claims["nonce"] = .string("not-the-nonce")
        case .missingNonce: claims["nonce"] = nil
        case .changedSubjectOnRefresh where refreshing: claims["sub"] = .string("user-mallory")
        case .textDate(let claim, let text): claims[claim] = .string(text)
        default: break
        }
        switch fault {
        case .wrongSignature:
            let signed = key.sign(claims)
            let other = StandInOIDCSigningKey(kid: key.kid).sign(claims)
            return String(signed.split(separator: ".")[0...1].joined(separator: ".")) + "." + String(other.split(separator: ".")[2])
        case .unknownKid:
            return StandInOIDCSigningKey().sign(claims)
        case .algNone:
            return StandInOIDCSigningKey.encode(["alg": .string("none"), "typ": .string("JWT")]) + "." + StandInOIDCSigningKey.encode(claims) + "."
        case .hmacWithPublicKey:
            return StandInOIDCHMAC.sign(claims, hmacKey: StandInOIDCSigningKey.jwkJSON(key.jwk), kid: key.kid)
        default:
            return key.sign(claims)
        }
    }
}

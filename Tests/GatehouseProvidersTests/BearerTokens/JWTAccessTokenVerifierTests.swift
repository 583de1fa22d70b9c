import Crypto
import Foundation
import GatehouseCore
import GatehouseProviders
import Testing

/// `bearer_tokens:` JWT access tokens, through an `oauth2` provider with `issuer` and `jwks_url`: the
/// accepted token and every refusal, with keys made here.
@Suite struct JWTAccessTokenVerifierTests {
    static let issuer = "https://idp.example.com"
    static let jwksURL = "https://idp.example.com/jwks"
    let key = ES256TestKey(kid: "k1")
    let clock = TestClock(Date(timeIntervalSince1970: 1_700_000_000))
    let transport = FakeTransport()

    func provider(requiredScopes: [String] = ["api"]) -> OAuth2Provider {
        var configuration = OAuth2Provider.Configuration(
            authorizationEndpoint: "https://idp.example.com/authorize", tokenEndpoint: "https://idp.example.com/token",
            issuer: Self.issuer, clientID: "gateway", clientSecret: "secret")
        configuration.jwksURL = Self.jwksURL
        configuration.bearerTokens = BearerTokenSettings(accept: true, audiences: ["https://api.example.com"], requiredScopes: requiredScopes)
        transport.enqueue(ES256TestKey.jwksReply([key]))
        return OAuth2Provider(
            descriptor: ProviderDescriptor(id: "idp", kind: "oauth2"), configuration: configuration,
            context: ProviderContext(transport: transport, clock: clock.source, publicURL: "https://gateway.example.com"))
    }

    /// Claims of a good token, changed by `edit`.
    func claims(_ edit: (inout [String: Any]) -> Void = { _ in }) -> [String: Any] {
        let now = Int(clock.now.timeIntervalSince1970)
        var claims: [String: Any] = [
            "iss": Self.issuer, "sub": "svc-1", "aud": ["https://api.example.com"], "exp": now + 300, "iat": now - 5,
            "scope": "api read", "client_id": "ci-job",
        ]
        edit(&claims)
        return claims
    }

    /// A compact JWS with this header, signed with `key` (ES256), HMAC (HS256 with `hmacSecret`) or nothing (none).
    func token(header: [String: Any], claims: [String: Any], signer: ES256TestKey? = nil, hmacSecret: String? = nil) throws -> String {
        let head = Base64URL.encode(try JSONSerialization.data(withJSONObject: header))
        let body = Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
        let input = Data("\(head).\(body)".utf8)
        if let hmacSecret {
            let mac = HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: Data(hmacSecret.utf8)))
            return "\(head).\(body).\(Base64URL.encode(Data(mac)))"
        }
        guard let signer else { return "\(head).\(body)." }
        return "\(head).\(body).\(Base64URL.encode(try signer.privateKey.signature(for: input).rawRepresentation))"
    }

    func signed(typ: String? = "at+jwt", _ edit: (inout [String: Any]) -> Void = { _ in }) throws -> String {
        var header: [String: Any] = ["alg": "ES256", "kid": "k1"]
        if let typ { header["typ"] = typ }
        return try token(header: header, claims: claims(edit), signer: key)
    }

    func refusal(_ token: String, provider: OAuth2Provider? = nil) async -> String? {
        if case .refused(let reason) = await (provider ?? self.provider()).verifyBearerJWT(token) { return reason }
        return nil
    }

    @Test("a good at+jwt is accepted: identity from sub, scopes, exp")
    func accepted() async throws {
        let verdict = await provider().verifyBearerJWT(try signed())
        guard case .accepted(let grant) = verdict else {
            Issue.record("refused: \(verdict)")
            return
        }
        #expect(grant.identity.subject == "svc-1")
        #expect(grant.scope == ["api", "read"])
        #expect(grant.expiresAt == clock.now.addingTimeInterval(300))
    }

    @Test("a plain JWT typ is accepted; without sub the subject is client_id, and scp lists scopes")
    func plainJWTWithClientID() async throws {
        let token = try signed(typ: "JWT") { claims in
            claims["sub"] = nil
            claims["scope"] = nil
            claims["scp"] = ["api"]
        }
        guard case .accepted(let grant) = await provider().verifyBearerJWT(token) else {
            Issue.record("refused")
            return
        }
        #expect(grant.identity.subject == "ci-job")
    }

    @Test("a bad signature is refused") func badSignature() async throws {
        let other = ES256TestKey(kid: "k1")
        let token = try token(header: ["alg": "ES256", "kid": "k1", "typ": "at+jwt"], claims: claims(), signer: other)
        #expect(await refusal(token)?.contains("signature") == true)
    }

    @Test("alg none is refused") func none() async throws {
        #expect(await refusal(try token(header: ["alg": "none", "typ": "at+jwt"], claims: claims()))?.contains("algorithm") == true)
    }

    @Test("HS256, even with the provider's public key as the secret, is refused") func hmac() async throws {
        let token = try token(header: ["alg": "HS256", "kid": "k1", "typ": "at+jwt"], claims: claims(), hmacSecret: key.jwk)
        #expect(await refusal(token)?.contains("algorithm") == true)
    }

    @Test("a wrong iss is refused") func wrongIssuer() async throws {
        #expect(await refusal(try signed { $0["iss"] = "https://evil.example.com" })?.contains("iss") == true)
    }

    @Test("a wrong aud is refused, and so is none") func wrongAudience() async throws {
        #expect(await refusal(try signed { $0["aud"] = "https://other.example.com" })?.contains("aud") == true)
        #expect(await refusal(try signed { $0["aud"] = nil })?.contains("aud") == true)
    }

    @Test("an expired token is refused, past the skew") func expired() async throws {
        #expect(await refusal(try signed { $0["exp"] = Int(clock.now.timeIntervalSince1970) - 61 })?.contains("expired") == true)
    }

    @Test("a token without exp is refused") func noExpiry() async throws {
        #expect(await refusal(try signed { $0["exp"] = nil })?.contains("exp") == true)
    }

    @Test("nbf in the future is refused") func notYetValid() async throws {
        #expect(await refusal(try signed { $0["nbf"] = Int(clock.now.timeIntervalSince1970) + 120 })?.contains("nbf") == true)
    }

    @Test("iat in the future is refused") func issuedInFuture() async throws {
        #expect(await refusal(try signed { $0["iat"] = Int(clock.now.timeIntervalSince1970) + 120 })?.contains("iat") == true)
    }

    @Test(
        "exp, iat, nbf or auth_time given as a JSON string is refused",
        arguments: [("exp", "9999999999"), ("exp", "inf"), ("iat", "1700000000"), ("nbf", "0"), ("auth_time", "1700000000")])
    func textDate(claim: String, text: String) async throws {
        #expect(await refusal(try signed { $0[claim] = text })?.contains("not a JSON number") == true)
    }

    @Test("exp, iat, nbf and auth_time as JSON numbers are accepted") func numericDates() async throws {
        let now = Int(clock.now.timeIntervalSince1970)
        let token = try signed {
            $0["nbf"] = now - 5
            $0["auth_time"] = now - 60
        }
        guard case .accepted = await provider().verifyBearerJWT(token) else {
            Issue.record("refused")
            return
        }
    }

    @Test("a valid token without a required scope is insufficient_scope, naming every required scope") func missingScope() async throws {
        #expect(await provider().verifyBearerJWT(try signed { $0["scope"] = "read" }) == .insufficientScope(required: ["api"]))
        #expect(await provider(requiredScopes: ["api", "write"]).verifyBearerJWT(try signed()) == .insufficientScope(required: ["api", "write"]))
    }

    @Test("a token that is invalid in another way is refused, scope or not") func invalidBeforeScope() async throws {
        #expect(
            await refusal(
                try signed {
                    $0["scope"] = "read"
                    $0["aud"] = "https://other.example.com"
                })?.contains("aud") == true)
        let expired = try signed {
            $0["scope"] = "read"
            $0["exp"] = Int(clock.now.timeIntervalSince1970) - 61
        }
        #expect(await refusal(expired)?.contains("expired") == true)
    }

    @Test("a sender-constrained token (cnf) is refused") func senderConstrained() async throws {
        #expect(await refusal(try signed { $0["cnf"] = ["jkt": "abc"] })?.contains("cnf") == true)
    }

    @Test("a wrong typ, or none, is refused") func wrongType() async throws {
        #expect(await refusal(try signed(typ: "dpop+jwt"))?.contains("typ") == true)
        #expect(await refusal(try signed(typ: nil))?.contains("typ") == true)
    }

    @Test("an unreachable JWKS is unavailable, not a refusal") func keysUnreachable() async throws {
        let provider = provider()
        let fresh = OAuth2Provider(
            descriptor: provider.descriptor, configuration: provider.configuration,
            context: ProviderContext(transport: FakeTransport(), clock: clock.source, publicURL: "https://gateway.example.com"))
        guard case .unavailable = await fresh.verifyBearerJWT(try signed()) else {
            Issue.record("not unavailable")
            return
        }
    }
}

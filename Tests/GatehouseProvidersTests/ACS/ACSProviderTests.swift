import Crypto
import Foundation
import GatehouseCore
import Testing

@testable import GatehouseProviders

@Suite struct ACSProviderTests {
    static let descriptor = ProviderDescriptor(id: "azure", kind: "acs", claims: ACSKind.defaultClaims)

    static func settings(_ extra: [(String, String)] = []) -> [(String, String)] {
        [
            ("login_url", "https://ns.accesscontrol.windows.net/v2/wsfederation?wa=wsignin1.0"), ("realm", ACSVectors.audience),
            ("issuer", ACSVectors.issuer), ("signing_key", "${ACS_SIGNING_KEY}"),
        ] + extra
    }

    /// Where the settings' `${…}` secrets are read from: the vectors' key, and one that is not base64.
    static let secrets = ["ACS_SIGNING_KEY": ACSVectors.keyBase64, "NOT_BASE64": "not base64!"]

    static func make(_ pairs: [(String, String)], transport: FakeTransport = FakeTransport(), now: Date = ACSVectors.before) throws -> ACSProvider {
        try make(pairs, transport: transport, clock: TimeSource { now })
    }

    static func make(_ pairs: [(String, String)], transport: FakeTransport, clock: TimeSource) throws -> ACSProvider {
        var entries = pairs.enumerated().map { ($1.0, $0 + 2, Nodes.scalar($1.1, line: $0 + 2)) }
        entries.append(("allowed_origins", 40, Nodes.sequence(["https://ns.accesscontrol.windows.net"], line: 40)))
        let context = ProviderContext(transport: transport, clock: clock, publicURL: "https://gate.example.test")
        return try #require(
            try ACSKind.make(descriptor: descriptor, settings: ConfigMap(Nodes.mapping(entries), environment: secrets), context: context)
                as? ACSProvider)
    }

    @Test("registry, login style token, legacy_capture, WRAP by default")
    func registry() throws {
        #expect(ProviderRegistry.kinds["acs"] != nil)
        let provider = try Self.make(Self.settings())
        #expect(provider.loginStyle == .token)
        #expect(provider.capabilities.legacyCapture)
        // The Notify shim is the kind's own page script: both spellings, posting to the capture URL.
        let script = provider.pageScript(captureURL: "/v1/pages/L/capture")
        #expect(script.contains("Notify:notify") && script.contains("notify:notify") && script.contains("f.action='/v1/pages/L/capture'"))
        #expect(provider.capturedToken(fromPost: "payload=a%3Db&x=1", isForm: true) == "a=b")
        #expect(provider.capturedToken(fromPost: "x=1", isForm: true) == nil)
        #expect(provider.capturedToken(fromPost: #"{"t":1}"#, isForm: false) == #"{"t":1}"#)
        #expect(ACSKind.defaultAPIAuthentication == .wrap)
        var request = OutgoingRequest(url: "https://api.example.test/x")
        APIAuthentication.wrap.attach(Credential(accessToken: "T", issuedAt: Date()), to: &request)
        #expect(request.headers.first?.value == "WRAP access_token=\"T\"")
    }

    @Test("a posted Notify JSON, bare SWT or securityToken all give the identity from the claims")
    func validates() async throws {
        let provider = try Self.make(Self.settings())
        for input in [ACSVectors.notify(ACSVectors.token), ACSVectors.token] {
            let result = try await provider.validateToken(input)
            #expect(result.identity.subject == "alice@example.com")
            #expect(result.identity.email == "alice@example.com")
            #expect(result.credential.accessToken == ACSVectors.token)
            #expect(result.credential.expiresAt == Date(timeIntervalSince1970: 1_700_000_000))
        }
    }

    @Test("refusals surface as ProviderError.rejected with the stable code")
    func rejected() async throws {
        let expired = try Self.make(Self.settings(), now: ACSVectors.after)
        await #expect(throws: ProviderError.rejected(code: "token_expired", description: "the token expired at 1700000000")) {
            try await expired.validateToken(ACSVectors.notify(ACSVectors.token))
        }
    }

    @Test("configuration errors name the key")
    func configuration() {
        func message(_ pairs: [(String, String)]) -> String {
            do {
                _ = try Self.make(pairs)
                return "accepted"
            } catch { return "\(error)" }
        }
        #expect(message(Self.settings().filter { $0.0 != "signing_key" }).contains("signing_key"))
        #expect(message(Self.settings().filter { $0.0 != "realm" }).contains("realm"))
        #expect(message(Self.settings([("signing_key", "${NOT_BASE64}")]).filter { $0.1 != "${ACS_SIGNING_KEY}" }).contains("base64 key"))
        #expect(
            message(Self.settings([("signing_key", ACSVectors.keyBase64)]).filter { $0.1 != "${ACS_SIGNING_KEY}" }).contains(
                "must not be written inline"))
        #expect(message(Self.settings([("token_format", "jwt")]).filter { $0.0 != "signing_key" }).contains("jwks_url"))
        #expect(message(Self.settings([("token_format", "jwt"), ("jwks_url", "https://ns.accesscontrol.windows.net/jwks")])).contains("exclude"))
        #expect(message(Self.settings([("surprise", "1")])).contains("surprise"))
    }

    @Test("JWT tokens verify with the configured JWKS (ES256)")
    func jwt() async throws {
        let key = ES256TestKey(kid: "k1")
        let transport = FakeTransport([.json(ES256TestKey.jwks([key]))])
        let provider = try Self.make(Self.jwksSettings, transport: transport)
        func jwt(_ claims: String) throws -> String { try key.sign(claims) }
        let good = try jwt("{\"sub\":\"u-1\",\"aud\":\"\(ACSVectors.audience)\",\"iss\":\"\(ACSVectors.issuer)\",\"exp\":1700000000}")
        let result = try await provider.validate(good)
        #expect(result.identity.subject == "u-1")
        await #expect(throws: ACSFailure.self) { try await provider.validate(String(good.dropLast(4)) + "AAAA") }
        let wrongAudience = try jwt("{\"sub\":\"u-1\",\"aud\":\"http://other/\",\"iss\":\"\(ACSVectors.issuer)\",\"exp\":1700000000}")
        do {
            _ = try await provider.validate(wrongAudience)
            Issue.record("accepted")
        } catch let failure as ACSFailure { #expect(failure.code == "audience_mismatch") }
        // Algorithm confusion: an HS256 token against the asymmetric key set is refused before any key is used.
        let hs = Self.hs256(
            "{\"sub\":\"u-1\",\"aud\":\"\(ACSVectors.audience)\",\"iss\":\"\(ACSVectors.issuer)\",\"exp\":1700000000}", key: Data(key.jwk.utf8))
        do {
            _ = try await provider.validate(hs)
            Issue.record("accepted")
        } catch let failure as ACSFailure { #expect(failure.code == "invalid_signature") }
    }

    static let jwksURL = "https://ns.accesscontrol.windows.net/jwks"

    /// `token_format: jwt` with `jwks_url` (and no `signing_key`).
    static var jwksSettings: [(String, String)] {
        settings([("token_format", "jwt"), ("jwks_url", jwksURL)]).filter { $0.0 != "signing_key" }
    }

    static func hs256(_ claims: String, key: Data) -> String {
        let header = Base64URL.encode(Data("{\"alg\":\"HS256\",\"typ\":\"JWT\"}".utf8))
        let body = Base64URL.encode(Data(claims.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(header).\(body)".utf8), using: SymmetricKey(data: key))
        return "\(header).\(body).\(Base64URL.encode(Data(mac)))"
    }

    @Test("JWT tokens with an HS256 signing_key; another key or an expired token is refused")
    func jwtHS256() async throws {
        let provider = try Self.make(Self.settings([("token_format", "jwt")]))
        let claims = "{\"sub\":\"u-2\",\"aud\":[\"\(ACSVectors.audience)\"],\"iss\":\"\(ACSVectors.issuer)\",\"exp\":1700000000}"
        #expect(try await provider.validate(Self.hs256(claims, key: ACSVectors.key)).identity.subject == "u-2")
        do {
            _ = try await provider.validate(Self.hs256(claims, key: Data(repeating: 1, count: 32)))
            Issue.record("accepted")
        } catch let failure as ACSFailure { #expect(failure.code == "invalid_signature") }
        let late = try Self.make(Self.settings([("token_format", "jwt")]), now: ACSVectors.after)
        do {
            _ = try await late.validate(Self.hs256(claims, key: ACSVectors.key))
            Issue.record("accepted")
        } catch let failure as ACSFailure { #expect(failure.code == "token_expired") }
        // An SWT is refused by a JWT relying party.
        do {
            _ = try await provider.validate(ACSVectors.token)
            Issue.record("accepted")
        } catch let failure as ACSFailure { #expect(failure.code == "unsupported_token_type") }
    }
}

@Suite struct ACSDiscoveryTests {
    @Test("identity_providers_url: the first LoginUrl on an allowed origin is where the page login starts")
    func discovery() async throws {
        let list =
            "[{\"Name\":\"Google\",\"LoginUrl\":\"https://ns.accesscontrol.windows.net/v2/openid?x=1\",\"LogoutUrl\":\"\",\"ImageUrl\":\"\",\"EmailAddressSuffixes\":[]}]"
        let transport = FakeTransport([.json(list), .json("[{\"LoginUrl\":\"https://evil.example.test/\"}]")])
        var settings = ACSProviderTests.settings().filter { $0.0 != "login_url" }
        settings.append(("identity_providers_url", "https://ns.accesscontrol.windows.net/v2/metadata/IdentityProviders.js?protocol=javascriptnotify"))
        let provider = try ACSProviderTests.make(settings, transport: transport)
        #expect(try await provider.loginStartURL() == "https://ns.accesscontrol.windows.net/v2/openid?x=1")
        await #expect(throws: ProviderError.self) { try await provider.loginStartURL() }
    }
}

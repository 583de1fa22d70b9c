import Foundation
import GatehouseCore
import GatehouseProviders
import Testing

/// RFC 7662 answers carry `exp`, `iat` and `nbf` as integer timestamps. An answer with one of them as a JSON
/// string (`"exp": "inf"` would never expire if read as text) is refused; numbers are accepted.
@Suite struct TokenIntrospectionNumericDateTests {
    static let introspection = "https://idp.example.com/introspect"
    let clock = TestClock(Date(timeIntervalSince1970: 1_700_000_000))
    let transport = FakeTransport()

    func provider() -> OAuth2Provider {
        var configuration = OAuth2Provider.Configuration(
            authorizationEndpoint: "https://idp.example.com/authorize", tokenEndpoint: "https://idp.example.com/token",
            issuer: "https://idp.example.com", clientID: "gateway", clientSecret: "secret")
        configuration.bearerTokens = BearerTokenSettings(
            accept: true, audiences: ["https://api.example.com"], introspectionEndpoint: Self.introspection)
        return OAuth2Provider(
            descriptor: ProviderDescriptor(id: "idp", kind: "oauth2"), configuration: configuration,
            context: ProviderContext(transport: transport, clock: clock.source, publicURL: "https://gateway.example.com"))
    }

    /// The verdict on an answer of `active: true`, `sub` and the members `dates` (JSON text of each value).
    func verdict(_ dates: [String: String]) async -> BearerTokenVerdict? {
        let members = [#""active":true"#, #""sub":"svc-1""#] + dates.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }
        transport.enqueue(.json("{" + members.joined(separator: ",") + "}"))
        return await provider().introspectBearerToken("opaque-token")
    }

    @Test(
        "exp, iat or nbf given as a JSON string is refused",
        arguments: [("exp", #""9999999999""#), ("exp", #""inf""#), ("iat", #""1700000000""#), ("nbf", #""0""#)])
    func textDate(claim: String, json: String) async {
        guard case .refused(let reason)? = await verdict([claim: json]) else {
            Issue.record("not refused")
            return
        }
        #expect(reason.contains("not a JSON number"))
    }

    @Test("exp, iat and nbf as numbers are accepted, exp becomes the grant's end") func numbers() async {
        let now = Int(clock.now.timeIntervalSince1970)
        guard case .accepted(let grant)? = await verdict(["exp": "\(now + 300)", "iat": "\(now - 5)", "nbf": "\(now - 5)"]) else {
            Issue.record("not accepted")
            return
        }
        #expect(grant.expiresAt == clock.now.addingTimeInterval(300))
    }

    @Test("an expired exp is refused") func expired() async {
        guard case .refused(let reason)? = await verdict(["exp": "\(Int(clock.now.timeIntervalSince1970) - 1)"]) else {
            Issue.record("not refused")
            return
        }
        #expect(reason.contains("expired"))
    }
}

import Foundation
import GatehouseCore
import GatehouseProviders
import Testing

/// One person, one subject: an introspection answer without `sub` gets the person's claims from userinfo, asked
/// with the token; what the token may do stays the introspection answer's.
@Suite struct TokenIntrospectionUserinfoTests {
    let clock = TestClock(Date(timeIntervalSince1970: 1_700_000_000))
    let transport = FakeTransport()

    func provider(userinfo: String? = "https://idp.example.com/userinfo") -> OAuth2Provider {
        var configuration = OAuth2Provider.Configuration(
            authorizationEndpoint: "https://idp.example.com/authorize", tokenEndpoint: "https://idp.example.com/token",
            userinfoEndpoint: userinfo, issuer: "https://idp.example.com", clientID: "gateway", clientSecret: "secret")
        configuration.bearerTokens = BearerTokenSettings(
            accept: true, audiences: ["https://api.example.com"], requiredScopes: ["read"],
            introspectionEndpoint: "https://idp.example.com/introspect")
        return OAuth2Provider(
            descriptor: ProviderDescriptor(id: "idp", kind: "oauth2"), configuration: configuration,
            context: ProviderContext(transport: transport, clock: clock.source, publicURL: "https://gateway.example.com"))
    }

    static let answer = #"{"active":true,"username":"alice","scope":"read openid","client_id":"app"}"#

    @Test("without sub: the subject and email come from userinfo, asked with the token; the scope from the answer")
    func fromUserinfo() async throws {
        transport.enqueue(.json(Self.answer))
        // A userinfo that tries to widen the grant: its scope and aud are not taken.
        transport.enqueue(.json(#"{"sub":"1","email":"alice@example.com","scope":"admin","aud":"elsewhere"}"#))
        guard case .accepted(let grant)? = await provider().introspectBearerToken("opaque") else {
            Issue.record("not accepted")
            return
        }
        #expect(grant.identity.subject == "1")
        #expect(grant.identity.email == "alice@example.com")
        #expect(grant.scope == ["read", "openid"])
        let asked = try #require(transport.requests.last)
        #expect(asked.url == "https://idp.example.com/userinfo")
        #expect(asked.headers.contains { $0.name == "Authorization" && $0.value == "Bearer opaque" })
    }

    @Test("a userinfo that refuses the token (a client's own): the answer's own subject", arguments: [401, 403])
    func refusedByUserinfo(status: Int) async {
        transport.enqueue(.json(Self.answer))
        transport.enqueue(.json(#"{"error":"insufficient_scope"}"#, status: status))
        guard case .accepted(let grant)? = await provider().introspectBearerToken("opaque") else {
            Issue.record("not accepted")
            return
        }
        #expect(grant.identity.subject == "alice")
    }

    @Test("a userinfo that fails: no verdict yet (503), never a subject in other words")
    func userinfoDown() async {
        transport.enqueue(.json(Self.answer))
        transport.enqueue(.json("{}", status: 502))
        guard case .unavailable? = await provider().introspectBearerToken("opaque") else {
            Issue.record("a verdict without the person's subject")
            return
        }
    }

    @Test("an answer with sub, or a provider without userinfo: no userinfo call")
    func noCall() async {
        transport.enqueue(.json(#"{"active":true,"sub":"1","scope":"read"}"#))
        _ = await provider().introspectBearerToken("opaque")
        transport.enqueue(.json(Self.answer))
        guard case .accepted(let grant)? = await provider(userinfo: nil).introspectBearerToken("opaque") else {
            Issue.record("not accepted")
            return
        }
        #expect(grant.identity.subject == "alice")
        #expect(transport.requests.count == 2)
    }
}

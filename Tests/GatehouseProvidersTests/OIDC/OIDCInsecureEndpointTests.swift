import Foundation
import GatehouseCore
import GatehouseDemo
import GatehouseProviders
import Testing

/// No secrets in clear at runtime: the endpoints a discovery document names go by ``InsecureHTTPPolicy`` too.
@Suite struct OIDCInsecureEndpointTests {
    /// A fixture whose discovery document names `url` as `member`.
    static func fixture(_ member: String, _ url: String, allowInsecureHTTP: Bool = false) -> OIDCFixture {
        OIDCFixture(configure: { $0.allowInsecureHTTP = allowInsecureHTTP }, editDiscovery: { $0[member] = .string(url) })
    }

    @Test(
        "a discovered http endpoint on a non-loopback host is refused (insecure_endpoint) before anything is sent to it",
        arguments: ["token_endpoint", "userinfo_endpoint", "revocation_endpoint", "jwks_uri"])
    func discoveredHTTPRefused(member: String) async throws {
        let fixture = Self.fixture(member, "http://idp.example.test/\(member)")
        #expect(await fixture.refusal() == "insecure_endpoint")
        #expect(fixture.transport.requests.map(\.url) == [fixture.idp.issuer + "/.well-known/openid-configuration"])
        guard case .notReady(let reason) = await fixture.provider.readiness else {
            Issue.record("the provider must not be ready")
            return
        }
        #expect(reason.contains("insecure_endpoint"))
        #expect(reason.contains(member))
    }

    @Test("a discovered http endpoint on a loopback host, or any with allow_insecure_http, is used")
    func loopbackOrAllowedUsed() async throws {
        let loopback = Self.fixture("token_endpoint", "http://localhost:9/token")
        _ = try await loopback.login()
        #expect(loopback.transport.requests.contains { $0.url == "http://localhost:9/token" })
        let allowed = Self.fixture("token_endpoint", "http://idp.example.test/token", allowInsecureHTTP: true)
        _ = try await allowed.login()
        #expect(allowed.transport.requests.contains { $0.url == "http://idp.example.test/token" })
    }

    @Test("allow_insecure_http is read from the oidc provider file")
    func fileKeyRead() throws {
        let settings = try ConfigMap(Nodes.scalars([("issuer", "http://idp.example.test"), ("client_id", "c"), ("allow_insecure_http", "true")]))
        let provider = try #require(
            try OIDCKind.make(
                descriptor: ProviderDescriptor(id: "example", kind: "oidc"), settings: settings,
                context: ProviderContext(transport: FakeTransport(), publicURL: "https://gate.example.test")) as? OIDCProvider)
        #expect(provider.configuration.allowInsecureHTTP)
    }
}

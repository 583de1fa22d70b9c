import Foundation
import GatehouseCore
import Testing

@testable import GatehouseServer

@Suite("Provider call span names")
struct ProviderCallOperationTests {
    @Test("each provider call is named from its path and form, never from a token")
    func names() {
        #expect(ProviderCallOperation.of(TransportRequest(url: "https://idp/.well-known/openid-configuration")) == "discovery")
        #expect(ProviderCallOperation.of(TransportRequest(url: "https://idp/oauth2/v3/certs")) == "jwks")
        #expect(ProviderCallOperation.of(.form(url: "https://idp/token", [("grant_type", "authorization_code"), ("code", "c")])) == "token")
        #expect(ProviderCallOperation.of(.form(url: "https://idp/token", [("grant_type", "refresh_token"), ("refresh_token", "r")])) == "refresh")
        #expect(ProviderCallOperation.of(.form(url: "https://idp/revoke", [("token", "t")])) == "revocation")
        #expect(ProviderCallOperation.of(.form(url: "https://idp/oauth/introspect", [("token", "t")])) == "introspection")
        #expect(ProviderCallOperation.of(TransportRequest(url: "https://idp/userinfo?oauth_token=secret")) == "userinfo")
        #expect(ProviderCallOperation.of(TransportRequest(url: "https://spid/api/2/me?oauth_token=secret")) == "userinfo")
        #expect(ProviderCallOperation.of(TransportRequest(url: "https://site/probe")) == "call")
    }

    @Test("the host attribute has no user, port, path or query")
    func host() {
        #expect(ProviderCallOperation.host(of: "https://user:pw@idp.example:8443/token?x=1") == "idp.example")
        #expect(ProviderCallOperation.host(of: "http://[::1]:9000/jwks") == "[::1]")
        #expect(ProviderCallOperation.host(of: "http://127.0.0.1?oauth_token=t") == "127.0.0.1")
    }
}

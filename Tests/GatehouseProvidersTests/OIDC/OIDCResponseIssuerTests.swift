import Foundation
import GatehouseCore
import GatehouseDemo
import GatehouseProviders
import Testing

/// The `oidc` kind applies the `oauth2` RFC 9207 rules, with the discovered issuer and its advertised support.
@Suite struct OIDCResponseIssuerTests {
    /// A provider whose discovery document does not say `authorization_response_iss_parameter_supported`.
    static func silentProvider() -> OIDCFixture {
        OIDCFixture(editDiscovery: { $0["authorization_response_iss_parameter_supported"] = nil })
    }

    static func callback(_ fixture: OIDCFixture, iss: String?) -> [String: String] {
        var callback = fixture.callback
        callback["iss"] = iss
        return callback
    }

    @Test("a provider that does not advertise iss may leave it out")
    func notAdvertisedMayOmit() async throws {
        let fixture = Self.silentProvider()
        let result = try await fixture.login(callback: Self.callback(fixture, iss: nil))
        #expect(result.identity.subject == "user-alice")
    }

    @Test("once a callback carried the issuer's iss, one without iss is refused before the code is exchanged")
    func missingAfterSeenRefused() async throws {
        let fixture = Self.silentProvider()
        _ = try await fixture.login()
        let sent = fixture.transport.requests.count
        let error = try await #require(throws: ProviderError.self) {
            try await fixture.provider.completeLogin(callback: Self.callback(fixture, iss: nil), transaction: fixture.transaction)
        }
        guard case .rejected(let code, _) = error else {
            Issue.record("expected invalid_issuer, got \(error)")
            return
        }
        #expect(code == "invalid_issuer")
        #expect(fixture.transport.requests.count == sent)
    }
}

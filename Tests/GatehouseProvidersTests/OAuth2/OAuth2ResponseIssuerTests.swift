import Foundation
import GatehouseCore
import GatehouseProviders
import Testing

/// RFC 9207 / RFC 9700 §4.4: the `iss` of an `oauth2` authorization response (the mix-up defence).
@Suite struct OAuth2ResponseIssuerTests {
    static let otherServer = "https://evil.example.test"

    /// A fixture whose provider may advertise `iss` (`authorization_response_iss_parameter_supported`).
    static func fixture(issuer: String? = OAuth2Fixture.issuer, advertised: Bool = false, logins: Int = 1) -> OAuth2Fixture {
        OAuth2Fixture(issuer: issuer, issParameterSupported: advertised, replies: Array(repeating: OAuth2Fixture.tokenResponse, count: logins))
    }

    /// A callback with a code and, when given, an `iss`.
    static func callback(_ fixture: OAuth2Fixture, iss: String?) -> [String: String] {
        var callback = ["code": "c", "state": fixture.transaction.state]
        callback["iss"] = iss
        return callback
    }

    /// The refusal of a callback: its code and description; nil when the login succeeded.
    static func refusal(_ fixture: OAuth2Fixture, iss: String?) async -> (code: String, description: String)? {
        do {
            _ = try await fixture.provider.completeLogin(callback: callback(fixture, iss: iss), transaction: fixture.transaction)
            return nil
        } catch ProviderError.rejected(let code, let description) {
            return (code, description)
        } catch {
            return ("unexpected", "\(error)")
        }
    }

    // MARK: With a configured issuer

    @Test("a mix-up: the iss of another server is refused as invalid_issuer before the code is exchanged")
    func mixUpRefused() async {
        let fixture = Self.fixture()
        let refusal = await Self.refusal(fixture, iss: Self.otherServer)
        #expect(refusal?.code == "invalid_issuer")
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test("the configured issuer's iss is accepted; without iss a provider not known to send it is accepted too")
    func normalCasesPass() async {
        let withIss = Self.fixture()
        #expect(await Self.refusal(withIss, iss: OAuth2Fixture.issuer) == nil)
        let withoutIss = Self.fixture()
        #expect(await Self.refusal(withoutIss, iss: nil) == nil)
        #expect(withoutIss.transport.requests.count == 1)
    }

    @Test("once a callback carried the issuer's iss, a callback without iss is refused")
    func missingAfterSeenRefused() async {
        let fixture = Self.fixture(logins: 2)
        #expect(await Self.refusal(fixture, iss: OAuth2Fixture.issuer) == nil)
        let refusal = await Self.refusal(fixture, iss: nil)
        #expect(refusal?.code == "invalid_issuer")
        #expect(refusal?.description.contains("lacks the iss") == true)
        #expect(fixture.transport.requests.count == 1, "the second code must not be exchanged")
        // The issuer's iss is still accepted afterwards.
        #expect(await Self.refusal(fixture, iss: OAuth2Fixture.issuer) == nil)
    }

    @Test("a refused iss of another server is not remembered as the provider sending iss")
    func wrongIssNotRemembered() async {
        let fixture = Self.fixture()
        #expect(await Self.refusal(fixture, iss: Self.otherServer)?.code == "invalid_issuer")
        #expect(await Self.refusal(fixture, iss: nil) == nil)
    }

    @Test("with authorization_response_iss_parameter_supported, the first callback without iss is refused")
    func missingWithMetadataFlagRefused() async {
        let fixture = Self.fixture(advertised: true)
        #expect(await Self.refusal(fixture, iss: nil)?.code == "invalid_issuer")
        #expect(fixture.transport.requests.isEmpty)
        let passing = Self.fixture(advertised: true)
        #expect(await Self.refusal(passing, iss: OAuth2Fixture.issuer) == nil)
    }

    @Test("an error response keeps its own error code even without iss from a provider known to send it")
    func errorResponseKeepsItsCode() async throws {
        let fixture = Self.fixture(advertised: true)
        let error = try await #require(throws: ProviderError.self) {
            try await fixture.provider.completeLogin(
                callback: ["error": "access_denied", "state": fixture.transaction.state], transaction: fixture.transaction)
        }
        #expect(error == .rejected(code: "access_denied", description: "The provider refused the sign-in."))
    }

    @Test("copies of a provider share what it has seen; concurrent callbacks are safe")
    func memoryIsShared() async {
        let fixture = Self.fixture(logins: 9)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { #expect(await Self.refusal(fixture, iss: OAuth2Fixture.issuer) == nil) }
            }
        }
        let copy = fixture  // a copy of the provider value: what was seen lives in the instance it shares
        #expect(await Self.refusal(copy, iss: nil)?.code == "invalid_issuer")
        #expect(fixture.transport.requests.count == 8)
    }

    // MARK: Without a configured issuer

    @Test("without a configured issuer, a callback carrying iss is refused and the description says to set issuer")
    func issWithoutIssuerRefused() async {
        let fixture = Self.fixture(issuer: nil)
        let refusal = await Self.refusal(fixture, iss: OAuth2Fixture.issuer)
        #expect(refusal?.code == "invalid_issuer")
        #expect(refusal?.description.contains("'issuer'") == true)
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test("without a configured issuer and without iss, the login goes through")
    func noIssuerNoIssPasses() async {
        #expect(await Self.refusal(Self.fixture(issuer: nil), iss: nil) == nil)
    }

    // MARK: The provider file

    static func make(_ pairs: [(String, String)]) throws -> OAuth2Provider {
        let settings = try ConfigMap(Nodes.scalars(OAuth2KindTests.complete + pairs, firstLine: 5), environment: OAuth2KindTests.secrets)
        return try #require(
            try OAuth2Kind.make(descriptor: OAuth2KindTests.descriptor, settings: settings, context: OAuth2KindTests.context) as? OAuth2Provider)
    }

    @Test("authorization_response_iss_parameter_supported without issuer is an error at its line")
    func flagWithoutIssuerIsAConfigError() throws {
        let error = try #require(throws: ConfigError.self) {
            try Self.make([("authorization_response_iss_parameter_supported", "true")])
        }
        #expect(error.description.hasPrefix("\(Nodes.file):9: 'authorization_response_iss_parameter_supported' needs 'issuer'"))
    }

    @Test("authorization_response_iss_parameter_supported with issuer is read; absent it is false")
    func flagIsRead() throws {
        let flagged = try Self.make([("issuer", OAuth2Fixture.issuer), ("authorization_response_iss_parameter_supported", "true")])
        #expect(flagged.configuration.issParameterSupported)
        #expect(flagged.configuration.issuer == OAuth2Fixture.issuer)
        #expect(try !Self.make([("issuer", OAuth2Fixture.issuer)]).configuration.issParameterSupported)
    }
}

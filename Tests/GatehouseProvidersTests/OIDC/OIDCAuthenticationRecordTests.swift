import Foundation
import GatehouseCore
import Testing

@testable import GatehouseProviders

/// What an `oidc` login records of the provider's session and of the authentication (for back-channel logout and step-up).
@Suite struct OIDCAuthenticationRecordTests {
    @Test("a login records the ID token's sid and auth_time on the identity; acr and amr when given")
    func loginRecordsTheProvidersSession() async throws {
        let result = try await OIDCFixture().login()
        #expect(result.identity.providerSessionID?.hasPrefix("sid-") == true)
        #expect(result.identity.authTime.map { abs($0.timeIntervalSinceNow) < 60 } == true)
        var identity = Identity(subject: "alice")
        let loginTime = Date(timeIntervalSince1970: 1_800_000_000)
        OIDCProvider.recordAuthentication(
            from: ["sid": .string("s-1"), "acr": .string("urn:example:mfa"), "amr": .array([.string("pwd"), .string("otp")])], in: &identity,
            loginTime: loginTime)
        #expect(identity.providerSessionID == "s-1" && identity.acr == "urn:example:mfa" && identity.amr == ["pwd", "otp"])
        #expect(identity.authTime == loginTime)
        OIDCProvider.recordAuthentication(from: ["auth_time": .number(1_700_000_000)], in: &identity, loginTime: loginTime)
        #expect(identity.authTime == Date(timeIntervalSince1970: 1_700_000_000))
    }

    @Test("a step-up login asks for acr_values and max_age in place of the file's own, with the nonce last")
    func stepUpParameters() {
        var transaction = LoginTransaction(
            provider: "idp", state: "s", codeVerifier: "v", nonce: "n", callbackURL: "https://g/cb", createdAt: Date())
        let configured = [("acr_values", "urn:x:pwd"), ("prompt", "login")]
        #expect(
            OIDCProvider.authorizationParameters(configured, for: transaction).map { "\($0.0)=\($0.1)" } == [
                "acr_values=urn:x:pwd", "prompt=login", "nonce=n",
            ])
        transaction.acrValues = ["urn:x:mfa", "urn:x:hw"]
        transaction.maxAge = 300
        #expect(
            OIDCProvider.authorizationParameters(configured, for: transaction).map { "\($0.0)=\($0.1)" } == [
                "prompt=login", "acr_values=urn:x:mfa urn:x:hw", "max_age=300", "nonce=n",
            ])
    }
}

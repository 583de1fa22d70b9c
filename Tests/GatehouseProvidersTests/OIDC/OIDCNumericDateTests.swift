import GatehouseCore
import GatehouseDemo
import GatehouseProviders
import Testing

/// NumericDate claims (RFC 7519 §2) of an ID token are JSON numbers: the same instant written as a string, or
/// `"inf"`, is refused, not read as text (`Double("inf")` would be a token that never expires).
@Suite struct OIDCNumericDateTests {
    @Test(
        "exp, iat, nbf or auth_time given as a JSON string is refused",
        arguments: [("exp", "9999999999"), ("exp", "inf"), ("iat", "1700000000"), ("nbf", "0"), ("auth_time", "1700000000")])
    func textDateRefused(claim: String, text: String) async {
        #expect(await OIDCFixture().refusal(fault: .textDate(claim: claim, text: text)) == "id_token_malformed")
    }

    @Test("the same claims as numbers are accepted") func numbersAccepted() async throws {
        // The stand-in writes exp, iat and auth_time as JSON numbers.
        #expect(try await OIDCFixture().login().identity.subject == "user-alice")
    }
}

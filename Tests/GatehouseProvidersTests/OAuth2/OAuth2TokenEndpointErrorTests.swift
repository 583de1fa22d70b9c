import Foundation
import GatehouseCore
import GatehouseProviders
import Testing

@Suite struct OAuth2TokenEndpointErrorTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var reply: FakeTransport.Reply
        var expected: ProviderErrorCase
        var testDescription: String
    }

    static let cases: [Case] = [
        Case(
            reply: .json(#"{"error":"invalid_grant","error_description":"Code expired"}"#, status: 400), expected: .invalidGrant,
            testDescription: "400 invalid_grant → invalidGrant"),
        Case(
            reply: .json(#"{"error":"invalid_client"}"#, status: 401), expected: .rejected("invalid_client"),
            testDescription: "401 invalid_client → rejected(invalid_client)"),
        Case(
            reply: .json(#"{"error":"unauthorized_client"}"#, status: 400), expected: .rejected("unauthorized_client"),
            testDescription: "400 unauthorized_client → rejected"),
        Case(
            reply: .text("<h1>Bad Request</h1>", status: 400), expected: .rejected("http_400"), testDescription: "400 non-JSON → rejected(http_400)"),
        Case(reply: .text("Service Unavailable", status: 503), expected: .unavailable, testDescription: "503 → unavailable"),
        Case(reply: .json(#"{"error":"server_error"}"#, status: 500), expected: .unavailable, testDescription: "500 → unavailable"),
        Case(reply: .json(#"{"error":"slow_down"}"#, status: 429), expected: .unavailable, testDescription: "429 → unavailable"),
        Case(reply: .failure(TransportError("connection refused")), expected: .unavailable, testDescription: "transport throws → unavailable"),
        Case(reply: .text("<html>login</html>", status: 200), expected: .invalidResponse, testDescription: "200 non-JSON → invalidResponse"),
        Case(reply: .json(#"["access_token"]"#), expected: .invalidResponse, testDescription: "200 JSON array → invalidResponse"),
        Case(reply: .json(#"{"access_token":""}"#), expected: .invalidResponse, testDescription: "200 empty access_token → invalidResponse"),
    ]

    @Test("code exchange failures map to ProviderError", arguments: cases)
    func codeExchange(testCase: Case) async {
        let fixture = OAuth2Fixture(replies: [testCase.reply])
        await expectProviderError(testCase.expected) { try await fixture.login() }
        #expect(fixture.transport.requests.count == 1)
    }

    @Test("refresh failures map to ProviderError the same way", arguments: cases)
    func refresh(testCase: Case) async {
        let fixture = OAuth2Fixture(replies: [testCase.reply])
        await expectProviderError(testCase.expected) { try await fixture.provider.refresh(OAuth2Fixture.credential()) }
    }

    @Test("the error_description of 400 invalid_grant is carried")
    func invalidGrantDescription() async throws {
        let fixture = OAuth2Fixture(replies: [.json(#"{"error":"invalid_grant","error_description":"Code expired"}"#, status: 400)])
        let error = try await #require(throws: ProviderError.self) { try await fixture.login() }
        #expect(error == .invalidGrant("Code expired"))
    }

    @Test("401 invalid_client is rejected with its code and description")
    func invalidClientDescription() async throws {
        let fixture = OAuth2Fixture(replies: [.json(#"{"error":"invalid_client","error_description":"Client authentication failed"}"#, status: 401)])
        let error = try await #require(throws: ProviderError.self) { try await fixture.login() }
        #expect(error == .rejected(code: "invalid_client", description: "Client authentication failed"))
    }
}

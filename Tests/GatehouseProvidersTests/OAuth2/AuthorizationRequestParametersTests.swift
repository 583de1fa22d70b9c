import Foundation
import GatehouseCore
import GatehouseProviders
import Testing

/// `authorization_params` of `oauth2` and `oidc` provider files.
@Suite struct AuthorizationRequestParametersTests {
    static func file(_ params: [(String, String)]) -> ConfigNode {
        let entries = OAuth2KindTests.complete.enumerated().map { ($0.element.0, $0.offset + 1, Nodes.scalar($0.element.1, line: $0.offset + 1)) }
        let nested = Nodes.mapping(
            params.enumerated().map { ($0.element.0, 11 + $0.offset, Nodes.scalar($0.element.1, line: 11 + $0.offset)) }, line: 10)
        return Nodes.mapping(entries + [("authorization_params", 10, nested)])
    }

    static func provider(_ params: [(String, String)]) throws -> OAuth2Provider {
        let settings = try ConfigMap(file(params), environment: OAuth2KindTests.secrets)
        return try #require(
            try OAuth2Kind.make(descriptor: OAuth2KindTests.descriptor, settings: settings, context: OAuth2KindTests.context) as? OAuth2Provider)
    }

    @Test("Google's access_type=offline and prompt=consent reach the authorization request, after the gateway's own")
    func appended() throws {
        let provider = try Self.provider([("access_type", "offline"), ("prompt", "consent"), ("hd", "example.org")])
        let fixture = OAuth2Fixture()
        let url = try provider.authorizationURL(for: fixture.transaction)
        let pairs = FormEncoding.decode(try #require(URLComponents(string: url)?.percentEncodedQuery))
        #expect(Array(pairs.suffix(3).map(\.0)) == ["access_type", "prompt", "hd"])
        let query = Dictionary(pairs, uniquingKeysWith: { first, _ in first })
        #expect(query["access_type"] == "offline" && query["prompt"] == "consent" && query["hd"] == "example.org")
        // The protections are untouched and sent once.
        #expect(pairs.filter { $0.0 == "state" }.map(\.1) == [fixture.transaction.state])
        #expect(pairs.filter { $0.0 == "code_challenge" }.count == 1)
        #expect(query["redirect_uri"] == fixture.transaction.callbackURL)
    }

    @Test(
        "the parameters that carry the login's protections cannot be set, each named at its line",
        arguments: [
            "state", "redirect_uri", "client_id", "response_type", "code_challenge", "code_challenge_method",
            "nonce", "response_mode", "request", "request_uri", "scope",
        ])
    func reservedRefused(name: String) throws {
        let error = try #require(throws: ConfigError.self) { try Self.provider([("prompt", "login"), (name, "attacker")]) }
        #expect(error.line == 12)
        #expect(error.message.contains("'authorization_params.\(name)' cannot be set"), "\(error.message)")
        if name == "scope" { #expect(error.message.contains("scopes")) }
    }

    @Test("every reserved name of a file is reported at once when the configuration collects its problems")
    func collected() throws {
        let problems = ConfigProblems()
        let settings = try ConfigMap(
            Self.file([("state", "x"), ("prompt", "consent"), ("redirect_uri", "https://evil.example/cb")]),
            environment: OAuth2KindTests.secrets, problems: problems)
        _ = try OAuth2Provider.Configuration(settings)
        try settings.finish()
        #expect(problems.errors.map(\.line) == [11, 13])
        #expect(problems.errors.allSatisfy { $0.message.contains("cannot be set") })
    }

    @Test("absent, the request carries only the gateway's parameters")
    func absent() throws {
        let configuration = try OAuth2KindTests.configuration(OAuth2KindTests.complete)
        #expect(configuration.extraAuthorizationParameters.isEmpty)
    }

    @Test("oidc: the configured parameters and the nonce")
    func oidc() async throws {
        let fixture = OIDCFixture { $0.authorizationParameters = [("prompt", "select_account")] }
        _ = try await fixture.login()
        let url = try fixture.provider.authorizationURL(for: fixture.transaction)
        let query = Dictionary(
            FormEncoding.decode(try #require(URLComponents(string: url)?.percentEncodedQuery)), uniquingKeysWith: { first, _ in first })
        #expect(query["prompt"] == "select_account")
        #expect(query["nonce"] == OIDCFixture.nonce)
    }

    @Test("oidc: read from the file like oauth2's")
    func oidcFile() throws {
        let node = Nodes.mapping([
            ("issuer", 1, Nodes.scalar("https://idp.example.test", line: 1)),
            ("client_id", 2, Nodes.scalar("c", line: 2)),
            ("authorization_params", 3, Nodes.mapping([("acr_values", 4, Nodes.scalar("mfa", line: 4))], line: 3)),
        ])
        let configuration = try OIDCProvider.Configuration(try ConfigMap(node))
        #expect(configuration.authorizationParameters.map(\.0) == ["acr_values"])
        #expect(configuration.authorizationParameters.map(\.1) == ["mfa"])
    }
}

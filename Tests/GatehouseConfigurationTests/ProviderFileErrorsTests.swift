import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseProviders
import Testing

/// One run reports every problem of a provider file, each at its line, in line order: not one per run.
@Suite("All problems of a provider file")
struct ProviderFileErrorsTests {
    /// The problems of `p.yaml` (and the other files) as printed, loaded with the real provider kinds.
    static func errors(_ files: [String: String], environment: [String: String] = [:]) throws -> (directory: String, lines: [String]) {
        let directory = try TemporaryDirectory()
        for (name, text) in files { try directory.write(name, text) }
        do {
            _ = try ProviderCatalog.load(
                directory: directory.path, kinds: ProviderRegistry.kinds, context: Fixtures.context, environment: environment)
            Issue.record("expected problems")
            return (directory.path, [])
        } catch let errors as ConfigurationErrors {
            return (directory.path, errors.lines)
        }
    }

    @Test("a misspelled key, a missing required key and a number for a string: exactly those three, each at its line")
    func threeProblems() throws {
        let yaml = """
            # Providers/p.yaml
            id: p
            kind: oauth2
            authorization_endpoint: https://idp.example.com/authorize
            userinfo_endpont: https://idp.example.com/userinfo
            client_id: 42
            scopes: [read]

            """
        let (directory, lines) = try Self.errors(["p.yaml": yaml])
        #expect(
            lines == [
                "\(directory)/p.yaml:2: 'token_endpoint' is required",
                "\(directory)/p.yaml:5: unknown key 'userinfo_endpont': did you mean 'userinfo_endpoint'?",
                "\(directory)/p.yaml:6: 'client_id' must be a string, and 42 is a number: write it quoted, \"42\"",
            ])
    }

    static let kinds: [FileErrorCase] = [
        FileErrorCase(
            "oauth2",
            "id: p\nkind: oauth2\nauthorization_endpoint: https://idp.example.com/authorize\ntoken_endpoint: https://idp.example.com/token\nclient_id: 42\nscopez: [read]\n",
            ["5: 'client_id' must be a string, and 42 is a number: write it quoted, \"42\"", "6: unknown key 'scopez': did you mean 'scopes'?"]),
        FileErrorCase(
            "oidc", "id: p\nkind: oidc\nclient_id: c\nclock_skew_seconds: 9999\n",
            ["1: 'issuer' is required", "4: 'clock_skew_seconds' must be between 0 and 600, not 9999"]),
        // A wrong base_url leaves every endpoint without its default: those are its follow-ons, not reported.
        FileErrorCase(
            "spid", "id: p\nkind: spid\nbase_url: not a url\nclient_id: c\nclient_secret: s3cret\n",
            [
                "3: 'base_url' must be an absolute http(s) URL, not 'not a url'",
                "5: 'client_secret' must not be written inline: use client_secret: \"${ENV_VAR}\" or client_secret_file: path",
            ]),
        FileErrorCase(
            "acs",
            """
            id: p
            kind: acs
            login_url: https://ns.accesscontrol.windows.net/v2/wsfederation
            allowed_origins: ["https://ns.accesscontrol.windows.net"]
            issuer: https://ns.accesscontrol.windows.net/
            token_format: xml
            signing_key: "${ACS_SIGNING_KEY}"

            """,
            ["1: 'realm' is required", "6: 'token_format' must be one of swt, jwt, not 'xml'"],
            environment: ["ACS_SIGNING_KEY": "N4QeKa3c062VBjnVK6fb+rnwURkcwGXh7EoNK34n0uM="]),
        FileErrorCase(
            "capture",
            """
            id: p
            kind: capture
            login_url: https://other.example/login
            allowed_origins: ["https://legacy.example"]
            success_url: https://legacy.example/welcome*
            capture: {from: page}
            probe: {url: "https://legacy.example/api/me"}

            """,
            [
                "4: 'allowed_origins' must contain the origin of 'https://other.example/login'",
                "6: 'capture.from' must be one of cookie, title, not 'page'",
            ]),
        FileErrorCase(
            "browserid", "id: p\nkind: browserid\naudiences: [\"https://rp.example\"]\nverifier: remote\nsession_lifetime_seconds: 5\n",
            [
                "4: 'remote_verifier_url' is required when verifier is remote",
                "5: 'session_lifetime_seconds' must be between 60 and 31536000, not 5",
            ]),
    ]

    @Test("every kind reports both problems of its file", arguments: kinds)
    func twoProblemsPerKind(_ errorCase: FileErrorCase) throws {
        let (directory, lines) = try Self.errors(["p.yaml": errorCase.yaml], environment: errorCase.environment)
        #expect(lines == errorCase.expected.map { "\(directory)/p.yaml:\($0)" })
    }

    @Test("the problems of every file are reported together, each file's in line order")
    func severalFiles() throws {
        let (directory, lines) = try Self.errors([
            "a.yaml": "id: a\nkind: oidc\nissuer: https://idp.example.com\nclient_id: [c]\ncolour: blue\n",
            "b.yaml": "id: b\nkind: oauth2\ntoken_endpoint: https://idp.example.com/token\nclient_id: c\nclient_secret: inline\n",
        ])
        #expect(
            lines == [
                "\(directory)/a.yaml:4: 'client_id' must be a string",
                "\(directory)/a.yaml:5: unknown key 'colour'",
                "\(directory)/b.yaml:1: 'authorization_endpoint' is required",
                "\(directory)/b.yaml:5: 'client_secret' must not be written inline: use client_secret: \"${ENV_VAR}\" or client_secret_file: path",
            ])
    }

    @Test("a problem in a common key does not hide the kind's own: a wrong id and an unknown key are both reported")
    func commonAndKindProblems() throws {
        let (directory, lines) = try Self.errors([
            "p.yaml":
                "id: q\nkind: oauth2\nauthorization_endpoint: https://idp.example.com/authorize\ntoken_endpoint: https://idp.example.com/token\nclient_id: c\napi: {url: https://api.example.com, auth: query}\ncolour: blue\n"
        ])
        #expect(
            lines == [
                "\(directory)/p.yaml:1: 'id' must equal the file name 'p', not 'q'",
                "\(directory)/p.yaml:6: 'api.parameter' is required when auth is query",
                "\(directory)/p.yaml:7: unknown key 'colour'",
            ])
    }

    @Test("an unknown kind's other keys are neither read nor refused")
    func unknownKindAlone() throws {
        let (directory, lines) = try Self.errors(["p.yaml": "id: p\nkind: saml\nentity_id: x\nname: [n]\n"])
        #expect(
            lines == [
                "\(directory)/p.yaml:2: unknown kind 'saml' (known: acs, browserid, capture, oauth2, oidc, spid)",
                "\(directory)/p.yaml:4: 'name' must be a string",
            ])
    }
}

import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseProviders
import Testing

struct ProviderCatalogTests {
    static let valid = """
        id: demo
        kind: oauth2
        authorization_endpoint: https://idp.example.com/authorize
        token_endpoint: https://idp.example.com/token
        client_id: gatehouse

        """

    @Test func missingDirectoryMeansNoProviders() throws {
        let directory = try TemporaryDirectory()
        let providers = try ProviderCatalog.load(
            directory: directory.appending("Providers"), kinds: Fixtures.kinds, context: Fixtures.context, environment: [:])
        #expect(providers.isEmpty)
    }

    @Test func loadsEveryYAMLFileSortedByIDAndSkipsOthers() throws {
        let directory = try TemporaryDirectory()
        try directory.write("zeta.yaml", "id: zeta\nkind: static\n")
        try directory.write("alpha.yml", "id: alpha\nkind: static\nname: Alpha\n")
        try directory.write("mid.yaml", Self.valid.replacingOccurrences(of: "id: demo", with: "id: mid"))
        try directory.write("README.md", "not a provider")
        try directory.write(".hidden.yaml", "garbage: [")
        let providers = try ProviderCatalog.load(
            directory: directory.path, kinds: Fixtures.kinds, context: Fixtures.context, environment: [:])
        #expect(providers.map(\.descriptor.id) == ["alpha", "mid", "zeta"])
        #expect(providers.map(\.descriptor.name) == ["Alpha", "mid", "zeta"])
        #expect(providers.map(\.descriptor.kind) == ["static", "oauth2", "static"])
    }

    @Test func readsTheCommonKeysAndHandsTheRestToTheKind() throws {
        let directory = try TemporaryDirectory()
        try directory.write("client-secret", "s3cret\n")
        try directory.write(
            "demo.yaml",
            Self.valid + """
                name: Demo IdP
                client_secret_file: client-secret
                scopes: [openid, email]
                issuer: "${ISSUER}"
                redirect_uris: ["com.example.app:/cb"]
                claims: {subject: user_id, email: mail}
                api:
                  url: https://api.example.com/v1
                """)
        let providers = try ProviderCatalog.load(
            directory: directory.path, kinds: Fixtures.kinds, context: Fixtures.context,
            environment: ["ISSUER": "https://idp.example.com"])
        let provider = try #require(providers.first as? TestProvider)
        #expect(
            provider.descriptor
                == ProviderDescriptor(
                    id: "demo", kind: "oauth2", name: "Demo IdP", redirectURIs: ["com.example.app:/cb"],
                    claims: ClaimMapping(subject: "user_id", email: "mail"),
                    api: ProviderAPI(url: "https://api.example.com/v1", authentication: .bearer)))
        #expect(provider.settings["client_secret"] == "s3cret")
        #expect(provider.settings["issuer"] == "https://idp.example.com")
        #expect(provider.settings["scopes"] == "openid email")
    }

    @Test func apiAuthenticationDefaultsToTheKindsDefault() throws {
        let directory = try TemporaryDirectory()
        try directory.write("legacy.yaml", "id: legacy\nkind: static\ntoken: \"${TOKEN}\"\napi: {url: \"https://api.example.com\"}\n")
        let providers = try ProviderCatalog.load(
            directory: directory.path, kinds: Fixtures.kinds, context: Fixtures.context, environment: ["TOKEN": "t"])
        #expect(providers.first?.descriptor.api?.authentication == .query(parameter: "oauth_token"))
        #expect((providers.first as? TestProvider)?.settings["token"] == "t")
    }

    @Test func shippedSurfnetProviderParses() throws {
        let providers = try ProviderCatalog.load(
            files: ["\(Fixtures.packageRoot)/Providers/surfnet.yaml"], kinds: Fixtures.kinds, context: Fixtures.context,
            environment: [:])
        let provider = try #require(providers.first as? TestProvider)
        #expect(provider.descriptor.id == "surfnet")
        #expect(provider.descriptor.kind == "oauth2")
        #expect(provider.descriptor.redirectURIs == ["oauth-mobile-app://callback"])
        #expect(
            provider.descriptor.api
                == ProviderAPI(url: "https://frko.surfnetlabs.nl/workshop/php-oauth-grades-rs/api.php", authentication: .bearer))
        #expect(provider.settings["authorization_endpoint"] == "https://frko.surfnetlabs.nl/workshop/php-oauth/authorize.php")
        #expect(provider.settings["token_endpoint"] == "https://frko.surfnetlabs.nl/workshop/php-oauth/token.php")
        #expect(provider.settings["client_id"] == "oauth-mobile-app")
        #expect(provider.settings["client_secret"] == nil)
        #expect(provider.settings["token_endpoint_auth_method"] == "none")
        #expect(provider.settings["scopes"] == "grades")
    }

    @Test func shippedProvidersDirectoryHoldsSurfnet() throws {
        let files = try ProviderCatalog.providerFiles(in: "\(Fixtures.packageRoot)/Providers")
        #expect(files.contains { $0.hasSuffix("/surfnet.yaml") })
    }

    @Test func loadsOneDocument() throws {
        let document = try YAMLDocument(text: Self.valid, file: "Providers/demo.yaml")
        let provider = try ProviderCatalog.provider(from: document, kinds: Fixtures.kinds, context: Fixtures.context, environment: [:])
        #expect(provider.descriptor.id == "demo")
    }

    // MARK: Errors

    static let cases: [ErrorCase] = [
        ErrorCase("kind: static\n", "1: 'id' is required"),
        ErrorCase("id: other\nkind: static\n", "1: 'id' must equal the file name 'demo', not 'other'"),
        ErrorCase("id: demo\n", "1: 'kind' is required"),
        ErrorCase("id: demo\nkind: oauth3\n", "2: unknown kind 'oauth3' (known: oauth2, static)"),
        ErrorCase("id: demo\nkind: [oauth2]\n", "2: 'kind' must be a string"),
        ErrorCase("id: demo\nkind: static\nname: [a]\n", "3: 'name' must be a string"),
        ErrorCase(
            "id: demo\nkind: static\nredirect_uris:\n  - app:/cb\n  - /relative\n",
            "5: 'redirect_uris' entry '/relative' must be an absolute URI without a fragment"),
        ErrorCase("id: demo\nkind: static\nclaims:\n  mail: email\n", "4: unknown key 'claims.mail': did you mean 'claims.email'?"),
        ErrorCase("id: demo\nkind: static\nclaims: sub\n", "3: 'claims' must be a mapping"),
        ErrorCase("id: demo\nkind: static\napi:\n  auth: bearer\n", "3: 'api.url' is required"),
        ErrorCase(
            "id: demo\nkind: oauth2\napi:\n  url: https://api.example.com\n  auth: query\n" + String(Self.valid.dropFirst(22)),
            "3: 'api.parameter' is required when auth is query"),
        ErrorCase(
            "id: demo\nkind: static\napi: {url: \"https://a.example\", auth: cookie}\n",
            "3: 'api.auth' must be one of bearer, query, none, not 'cookie'"),
        ErrorCase("id: demo\nkind: static\ntokn: x\n", "3: unknown key 'tokn': did you mean 'token'?"),
        ErrorCase("id: demo\nkind: static\ntoken: \"${TOKEN}\"\n", "3: 'token': environment variable TOKEN is not set"),
        ErrorCase(
            "id: demo\nkind: static\ntoken_file: no-such-token\n", "3: 'token_file': cannot read file 'no-such-token'"),
        ErrorCase("id: demo\nkind: oauth2\nclient_id: c\ntoken_endpoint: https://a.example/token\n", "1: 'authorization_endpoint' is required"),
        ErrorCase(Self.valid + "client_secrets: x\n", "6: unknown key 'client_secrets': did you mean 'client_secret'?"),
        ErrorCase("id: demo\nkind: static\nid: demo\n", "3: duplicate key 'id'"),
        ErrorCase(
            "id: demo\nkind: static\nname: \"unterminated\n",
            "4: invalid YAML: found unexpected end of stream (while scanning a quoted scalar at line 3)"),
        ErrorCase("just text\n", "1: 'document' must be a mapping"),
    ]

    @Test(arguments: cases)
    func reportsProblemWithFileAndLine(_ errorCase: ErrorCase) throws {
        let (directory, lines) = try Fixtures.providerErrors(["demo.yaml": errorCase.yaml], environment: errorCase.environment)
        #expect(lines == ["\(directory)/demo.yaml:\(errorCase.expected)"])
    }

    @Test func idMayOnlyUseURLSafeCharacters() throws {
        let (directory, lines) = try Fixtures.providerErrors(["my idp.yaml": "id: my idp\nkind: static\n"])
        #expect(lines == ["\(directory)/my idp.yaml:1: 'id' may only contain letters, digits, '-', '_' and '.', not 'my idp'"])
    }

    @Test func duplicateIDsAreRefused() throws {
        let (directory, lines) = try Fixtures.providerErrors([
            "demo.yaml": "id: demo\nkind: static\n",
            "demo.yml": "# the same provider again\nid: demo\nkind: static\n",
        ])
        #expect(lines == ["\(directory)/demo.yml:2: duplicate provider id 'demo' (also in \(directory)/demo.yaml)"])
    }

    @Test func collectsProblemsAcrossAllFiles() throws {
        let (directory, lines) = try Fixtures.providerErrors([
            "a.yaml": "id: a\nkind: nope\n",
            "b.yaml": "id: b\nkind: static\n",
            "c.yaml": "id: wrong\nkind: static\nbogus: 1\n",
            "d.yaml": "id: d\nkind: oauth2\nclient_id: x\n",
            "e.yaml": "id: [e\n",
        ])
        #expect(
            lines == [
                "\(directory)/a.yaml:2: unknown kind 'nope' (known: oauth2, static)",
                "\(directory)/c.yaml:1: 'id' must equal the file name 'c', not 'wrong'",
                "\(directory)/c.yaml:3: unknown key 'bogus'",
                "\(directory)/d.yaml:1: 'authorization_endpoint' is required",
                "\(directory)/d.yaml:1: 'token_endpoint' is required",
                "\(directory)/e.yaml:2: invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence at line 1)",
            ])
    }

    @Test func errorsPrintOnePerLine() {
        let errors = ConfigurationErrors([
            ConfigError(file: "a.yaml", line: 1, message: "one"), ConfigError(file: "b.yaml", line: 2, message: "two"),
        ])
        #expect(errors.description == "a.yaml:1: one\nb.yaml:2: two")
    }

    @Test func fileThatIsNotADirectoryIsRefused() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("Providers", "")
        #expect {
            try ProviderCatalog.load(directory: file, kinds: Fixtures.kinds, context: Fixtures.context, environment: [:])
        } throws: { error in
            (error as? ConfigurationErrors)?.lines == ["\(file):1: providers_dir is not a readable directory"]
        }
    }
}

/// The example files in `Providers/` load with the real provider kinds.
@Suite("Shipped provider examples")
struct ShippedProviderExamplesTests {
    @Test("every file in Providers/ loads with the registered kinds")
    func everyExampleLoads() throws {
        let providers = try ProviderCatalog.load(
            directory: "\(Fixtures.packageRoot)/Providers", kinds: ProviderRegistry.kinds, context: Fixtures.context,
            environment: [
                "SPID_CLIENT_ID": "1234", "SPID_CLIENT_SECRET": "example-secret", "OIDC_CLIENT_ID": "gatehouse",
                "OIDC_CLIENT_SECRET": "example-secret", "ACS_SIGNING_KEY": "N4QeKa3c062VBjnVK6fb+rnwURkcwGXh7EoNK34n0uM=",
            ])
        let kinds = Set(providers.map(\.descriptor.kind))
        #expect(kinds.isSuperset(of: ["oauth2", "spid"]))
        let spid = try #require(providers.first { $0.descriptor.id == "spid" })
        #expect(spid.descriptor.redirectURIs == ["spidmobile-1234://login"])
    }
}

/// `optional: true`: an example provider whose secrets are not in the environment is left out with a warning,
/// so a fresh clone checks clean and serves; anything else wrong with it is still an error.
struct OptionalProviderTests {
    static let secretive = """
        id: sso
        kind: oauth2
        optional: true
        authorization_endpoint: https://idp.example.com/authorize
        token_endpoint: https://idp.example.com/token
        # set ${SSO_UNUSED} too? No: a comment names no variable.
        client_id: "${SSO_CLIENT_ID}"
        client_secret: "${SSO_CLIENT_SECRET}"
        scopes: ["a", "${SSO_SCOPE}"]

        """

    @Test func anOptionalProviderWithoutItsEnvironmentIsSkippedNamingEveryVariable() throws {
        let directory = try TemporaryDirectory()
        try directory.write("sso.yaml", Self.secretive)
        try directory.write("open.yaml", "id: open\nkind: static\n")
        let loaded = try ProviderCatalog.loadReporting(directory: directory.path, kinds: Fixtures.kinds, context: Fixtures.context, environment: [:])
        #expect(loaded.providers.map(\.descriptor.id) == ["open"])
        let warning = try #require(loaded.skipped.first)
        #expect(loaded.skipped.count == 1)
        #expect(warning.file.hasSuffix("sso.yaml"))
        #expect(warning.message.hasSuffix("environment variable(s) SSO_CLIENT_ID, SSO_CLIENT_SECRET, SSO_SCOPE not set"), "\(warning.message)")
    }

    @Test func withItsEnvironmentTheOptionalProviderLoads() throws {
        let directory = try TemporaryDirectory()
        try directory.write("sso.yaml", Self.secretive)
        let loaded = try ProviderCatalog.loadReporting(
            directory: directory.path, kinds: Fixtures.kinds, context: Fixtures.context,
            environment: ["SSO_CLIENT_ID": "id", "SSO_CLIENT_SECRET": "secret", "SSO_SCOPE": "b"])
        #expect(loaded.providers.map(\.descriptor.id) == ["sso"])
        #expect(loaded.skipped.isEmpty)
    }

    @Test func withoutOptionalAnUnsetVariableIsAnError() throws {
        let directory = try TemporaryDirectory()
        try directory.write("sso.yaml", Self.secretive.replacingOccurrences(of: "optional: true\n", with: ""))
        #expect(throws: ConfigurationErrors.self) {
            try ProviderCatalog.loadReporting(directory: directory.path, kinds: Fixtures.kinds, context: Fixtures.context, environment: [:])
        }
    }

    @Test func anOptionalProviderWithAnotherMistakeIsStillAnError() throws {
        let directory = try TemporaryDirectory()
        try directory.write("sso.yaml", Self.secretive.replacingOccurrences(of: "https://idp.example.com/token", with: "not a url"))
        let errors = try #require(throws: ConfigurationErrors.self) {
            try ProviderCatalog.loadReporting(directory: directory.path, kinds: Fixtures.kinds, context: Fixtures.context, environment: [:])
        }
        #expect(errors.lines.contains { $0.contains("token_endpoint") })
    }
}

import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseProviders
import Testing

/// Secrets are never written in a configuration file: `key: "${ENV_VAR}"` or `key_file: path`. An inline value
/// is refused at its line, and the message never repeats it.
@Suite("Inline secrets")
struct InlineSecretTests {
    static let cases: [SecretCase] = [
        SecretCase(
            kind: "oauth2", key: "client_secret",
            file:
                "id: p\nkind: oauth2\nauthorization_endpoint: https://idp.example.com/authorize\ntoken_endpoint: https://idp.example.com/token\nclient_id: c\n",
            value: "s3cret-oauth2"),
        SecretCase(
            kind: "oidc", key: "client_secret", file: "id: p\nkind: oidc\nissuer: https://idp.example.com\nclient_id: c\n", value: "s3cret-oidc"),
        SecretCase(
            kind: "spid", key: "client_secret", file: "id: p\nkind: spid\nbase_url: https://spid.example.com\nclient_id: c\n", value: "s3cret-spid"),
        SecretCase(
            kind: "acs", key: "signing_key",
            file: """
                id: p
                kind: acs
                login_url: https://ns.accesscontrol.windows.net/v2/wsfederation
                allowed_origins: ["https://ns.accesscontrol.windows.net"]
                realm: urn:gatehouse
                issuer: https://ns.accesscontrol.windows.net/

                """,
            value: "N4QeKa3c062VBjnVK6fb+rnwURkcwGXh7EoNK34n0uM="),
    ]

    /// Loads `p.yaml` (and any other files) with the real provider kinds.
    static func load(
        _ files: [String: String], environment: [String: String] = [:]
    ) throws -> (directory: TemporaryDirectory, result: Result<[any AuthProvider], ConfigurationErrors>) {
        let directory = try TemporaryDirectory()
        for (name, text) in files { try directory.write(name, text) }
        do {
            let providers = try ProviderCatalog.load(
                directory: directory.path, kinds: ProviderRegistry.kinds, context: Fixtures.context, environment: environment)
            return (directory, .success(providers))
        } catch let errors as ConfigurationErrors {
            return (directory, .failure(errors))
        }
    }

    @Test("an inline secret is refused at its line, naming both forms to use, without the value", arguments: cases)
    func inlineIsRefused(_ secret: SecretCase) throws {
        let (text, line) = secret.with("\(secret.key): \"\(secret.value)\"")
        let (directory, result) = try Self.load(["p.yaml": text])
        guard case .failure(let errors) = result else {
            Issue.record("an inline \(secret.key) was accepted")
            return
        }
        #expect(
            errors.lines == [
                "\(directory.path)/p.yaml:\(line): '\(secret.key)' must not be written inline: use \(secret.key): \"${ENV_VAR}\" or \(secret.key)_file: path"
            ])
        #expect(!errors.description.contains(secret.value))
    }

    @Test("an unquoted inline secret that YAML reads as a number is refused the same way, not echoed as a number", arguments: cases)
    func inlineNumberIsRefused(_ secret: SecretCase) throws {
        let (text, line) = secret.with("\(secret.key): 739164028")
        let (directory, result) = try Self.load(["p.yaml": text])
        guard case .failure(let errors) = result else {
            Issue.record("an inline \(secret.key) was accepted")
            return
        }
        #expect(errors.lines.count == 1)
        #expect(errors.lines.first?.hasPrefix("\(directory.path)/p.yaml:\(line): '\(secret.key)' must not be written inline") == true)
        #expect(!errors.description.contains("739164028"))
    }

    @Test("${ENV_VAR} is accepted", arguments: cases)
    func environmentIsAccepted(_ secret: SecretCase) throws {
        let (text, _) = secret.with("\(secret.key): \"${THE_SECRET}\"")
        let (_, result) = try Self.load(["p.yaml": text], environment: ["THE_SECRET": secret.value])
        #expect(try result.get().map(\.descriptor.kind) == [secret.kind])
    }

    @Test("<key>_file is accepted", arguments: cases)
    func fileIsAccepted(_ secret: SecretCase) throws {
        let (text, _) = secret.with("\(secret.key)_file: secrets/the-secret")
        let (_, result) = try Self.load(["p.yaml": text, "secrets/the-secret": secret.value + "\n"])
        #expect(try result.get().map(\.descriptor.kind) == [secret.kind])
    }

    // MARK: gatehouse.yaml

    @Test("store.password inline is refused at its line without the value; ${ENV_VAR} and password_file are accepted")
    func storePassword() throws {
        let yaml = "store:\n  kind: postgres\n  host: db.internal\n  user: gatehouse\n"
        let (file, lines) = try Fixtures.gatewayErrors(yaml + "  password: \"hunter2-db\"\n")
        #expect(lines == ["\(file):5: 'store.password' must not be written inline: use password: \"${ENV_VAR}\" or password_file: path"])

        let directory = try TemporaryDirectory()
        try directory.write("db-password", "hunter2-db\n")
        let fromEnvironment = try GatewayConfiguration.parse(
            yaml + "  password: \"${DB_PASSWORD}\"\n", file: directory.appending("gatehouse.yaml"), environment: ["DB_PASSWORD": "hunter2-db"])
        #expect(fromEnvironment.store.url == "postgres://gatehouse:hunter2-db@db.internal")
        let fromFile = try GatewayConfiguration.parse(
            yaml + "  password_file: db-password\n", file: directory.appending("gatehouse.yaml"), environment: [:])
        #expect(fromFile.store.url == "postgres://gatehouse:hunter2-db@db.internal")
    }

    @Test(
        "store.url inline is refused when it carries a password, without echoing it",
        arguments: [
            "postgres://gate:hunter2-db@db/gh", "postgresql://gate:hunter2-db@db:5432/gh?sslmode=require", "postgres://gate:pa/hunter2-db@db/gh",
        ])
    func storeURLWithPassword(url: String) throws {
        let (file, lines) = try Fixtures.gatewayErrors("store:\n  kind: postgres\n  url: \"\(url)\"\n")
        #expect(
            lines == [
                "\(file):3: 'store.url' must not be written inline with a password (a URL without one may be): use url: \"${ENV_VAR}\" or url_file: path"
            ])
        #expect(!lines.joined().contains("hunter2-db"))
    }

    @Test(
        "store.url without a password, or with the password as one ${NAME}, may be written inline",
        arguments: [
            ("postgres://gate@db/gh", "postgres://gate@db/gh"),
            ("postgres://db.internal:5432/gh?sslmode=verify-full", "postgres://db.internal:5432/gh?sslmode=verify-full"),
            ("postgres://gate:${DB_PASSWORD}@db/gh", "postgres://gate:pw@db/gh"),
        ])
    func storeURLWithoutPassword(url: String, expected: String) throws {
        let directory = try TemporaryDirectory()
        let configuration = try GatewayConfiguration.parse(
            "store:\n  kind: postgres\n  url: \"\(url)\"\n", file: directory.appending("gatehouse.yaml"), environment: ["DB_PASSWORD": "pw"])
        #expect(configuration.store.url == expected)
    }

    @Test(
        "while the store is not postgres, its password and a URL with a password are still refused inline (unread, not echoed)",
        arguments: ["sqlite", "memory"])
    func unusedPostgresSecrets(kind: String) throws {
        let (file, lines) = try Fixtures.gatewayErrors(
            "store:\n  kind: \(kind)\n  password: hunter2-db\n  url: \"postgres://gate:hunter2-url@db/gh\"\n")
        #expect(
            lines == [
                "\(file):3: 'store.password' must not be written inline: use password: \"${ENV_VAR}\" or password_file: path",
                "\(file):4: 'store.url' must not be written inline with a password (a URL without one may be): use url: \"${ENV_VAR}\" or url_file: path",
            ])
        #expect(!lines.joined().contains("hunter2"))
        // Unused references and files stay unread: an unset variable or a missing file is no error.
        let directory = try TemporaryDirectory()
        let configuration = try GatewayConfiguration.parse(
            "store:\n  kind: \(kind)\n  password: \"${UNSET_DB_PASSWORD}\"\n  url_file: missing-file\n  host: db\n",
            file: directory.appending("gatehouse.yaml"), environment: [:])
        #expect(configuration.store.url == nil)
    }

    @Test("store.url from ${ENV_VAR} or url_file may carry a password")
    func storeURLFromEnvironmentOrFile() throws {
        let directory = try TemporaryDirectory()
        try directory.write("db-url", "postgres://gate:pw@db/gh\n")
        let file = directory.appending("gatehouse.yaml")
        let fromEnvironment = try GatewayConfiguration.parse(
            "store:\n  kind: postgres\n  url: \"${DATABASE_URL}\"\n", file: file, environment: ["DATABASE_URL": "postgres://gate:pw@db/gh"])
        #expect(fromEnvironment.store.url == "postgres://gate:pw@db/gh")
        let fromFile = try GatewayConfiguration.parse("store:\n  kind: postgres\n  url_file: db-url\n", file: file, environment: [:])
        #expect(fromFile.store.url == "postgres://gate:pw@db/gh")
    }
}

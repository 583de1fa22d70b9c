import Foundation
import GatehouseConfiguration
import GatehouseCore
import Testing

/// `GATEHOUSE_*` variables over `gatehouse.yaml`: every scalar key and list of strings, the environment winning,
/// problems named by the variable, warnings for names that are no setting, secrets never echoed.
struct EnvironmentConfigurationTests {
    /// A secret that must never appear in a message.
    static let secret = "s3cr3t-Pa55word"

    /// Parses `yaml` (a file in a fresh directory) with `environment` over it.
    private func load(_ yaml: String, _ environment: [String: String]) throws -> GatewayConfiguration {
        let directory = try TemporaryDirectory()
        return try GatewayConfiguration.load(path: directory.write("gatehouse.yaml", yaml), environment: environment)
    }

    /// Parses an empty file with `environment` over it.
    private func load(_ environment: [String: String]) throws -> GatewayConfiguration {
        try load("", environment)
    }

    // MARK: Values

    @Test func stringFromTheEnvironment() throws {
        let configuration = try load(["GATEHOUSE_BACKEND_AUDIENCE": "orders-api", "GATEHOUSE_PUBLIC_URL": "https://auth.example.com/"])
        #expect(configuration.backend.audience == "orders-api")
        #expect(configuration.publicURL == "https://auth.example.com")
        #expect(configuration.publicURLIsExplicit)
        #expect(configuration.environmentVariables == ["GATEHOUSE_PUBLIC_URL", "GATEHOUSE_BACKEND_AUDIENCE"])
    }

    @Test("backend.timeout_seconds from the environment; upstreams stay in the file")
    func backendTimeoutAndUpstreams() throws {
        #expect(try load(["GATEHOUSE_BACKEND_TIMEOUT_SECONDS": "7"]).backend.timeoutSeconds == 7)
        #expect(throws: (any Error).self) { try load(["GATEHOUSE_BACKEND_TIMEOUT_SECONDS": "0"]) }
        let warnings = EnvironmentSettings.warnings(environment: ["GATEHOUSE_UPSTREAMS": "x"])
        #expect(warnings.contains { $0.contains("GATEHOUSE_UPSTREAMS") && $0.contains("file") }, "\(warnings)")
    }

    @Test("a string key takes digits as given: a variable has no quotes to ask for")
    func numericTextForAStringKey() throws {
        #expect(try load(["GATEHOUSE_BACKEND_AUDIENCE": "42"]).backend.audience == "42")
    }

    @Test func boolAndNestedKeys() throws {
        let configuration = try load(
            [
                "GATEHOUSE_SESSIONS_COOKIE_NAME": "gh_session", "GATEHOUSE_SESSIONS_COOKIE_SECURE": "false",
                "GATEHOUSE_SESSIONS_COOKIE_SAME_SITE": "Strict", "GATEHOUSE_BACKEND_FORWARD_ACCESS_TOKEN": "true",
            ])
        #expect(configuration.sessions.cookie.name == "gh_session")
        #expect(configuration.sessions.cookie.secure == false)
        #expect(configuration.sessions.cookie.sameSite.rawValue == "Strict")
        #expect(configuration.backend.forwardAccessToken == true)
    }

    @Test("keys with '_' in their names map by the schema, not by splitting the name")
    func integersOfKeysWithUnderscores() throws {
        let configuration = try load(
            [
                "GATEHOUSE_LIMITS_MAX_BODY_BYTES": "2048", "GATEHOUSE_SESSIONS_IDLE_TIMEOUT_SECONDS": "600",
                "GATEHOUSE_STORE_SESSION_CACHE_SECONDS": "0",
            ])
        #expect(configuration.limits.maxBodyBytes == 2048)
        #expect(configuration.sessions.idleTimeoutSeconds == 600)
        #expect(configuration.store.sessionCacheSeconds == 0)
    }

    @Test func listsAsJSON() throws {
        let configuration = try load(
            [
                "GATEHOUSE_TRUSTED_PROXIES": #"["10.0.0.0/8", "127.0.0.1"]"#,
                "GATEHOUSE_CORS_ALLOWED_ORIGINS": #"["https://app.example.com"]"#,
                "GATEHOUSE_ALLOWED_REDIRECT_URIS": "[]",
            ])
        #expect(configuration.trustedProxies == (try TrustedProxies(["10.0.0.0/8", "127.0.0.1"])))
        #expect(configuration.cors.allowedOrigins == ["https://app.example.com"])
        #expect(configuration.allowedRedirectURIs.isEmpty)
    }

    @Test func environmentWinsOverTheFile() throws {
        let yaml = """
            listen: "127.0.0.1:8080"
            store:
              kind: sqlite
            cors:
              allowed_origins: ["https://old.example.com"]
            logging:
              level: info
            """
        let configuration = try load(
            yaml,
            [
                "GATEHOUSE_LISTEN": "127.0.0.1:9123", "GATEHOUSE_STORE_KIND": "memory",
                "GATEHOUSE_CORS_ALLOWED_ORIGINS": #"["https://new.example.com"]"#,
            ])
        #expect(configuration.listen == ListenAddress(host: "127.0.0.1", port: 9123))
        #expect(configuration.publicURL == "http://127.0.0.1:9123")
        #expect(configuration.store.kind == .memory)
        #expect(configuration.cors.allowedOrigins == ["https://new.example.com"])
        #expect(configuration.logging.level.rawValue == "info")
    }

    @Test("a section the file leaves empty (store:) takes the environment's keys")
    func emptySectionOfTheFile() throws {
        #expect(try load("store:\n", ["GATEHOUSE_STORE_KIND": "memory"]).store.kind == .memory)
    }

    @Test("an empty value, like YAML's null, is the key's default, whatever the file says")
    func emptyValueIsTheDefault() throws {
        #expect(try load("store:\n  kind: memory\n", ["GATEHOUSE_STORE_KIND": ""]).store.kind == .sqlite)
    }

    @Test("a value from the environment is literal: no ${NAME} expansion")
    func noExpansionOfEnvironmentValues() throws {
        #expect(try load(["GATEHOUSE_BACKEND_AUDIENCE": "${NOT_SET_ANYWHERE}"]).backend.audience == "${NOT_SET_ANYWHERE}")
    }

    @Test func worksWithoutAFile() throws {
        try #require(!FileManager.default.fileExists(atPath: GatewayConfiguration.defaultFile))
        let configuration = try GatewayConfiguration.load(
            path: nil, environment: ["GATEHOUSE_STORE_KIND": "memory", "GATEHOUSE_LISTEN": "127.0.0.1:9124"])
        #expect(configuration.file == nil)
        #expect(configuration.store.kind == .memory)
        #expect(configuration.listenPort == 9124)
        #expect(configuration.environmentVariables == ["GATEHOUSE_LISTEN", "GATEHOUSE_STORE_KIND"])
        #expect(
            throws: ConfigurationErrors([
                ConfigError(variable: "GATEHOUSE_LISTEN", message: "'listen' must be host:port (e.g. 127.0.0.1:8080), not 'nowhere'")
            ])
        ) {
            try GatewayConfiguration.load(path: nil, environment: ["GATEHOUSE_LISTEN": "nowhere"])
        }
    }

    // MARK: Problems

    @Test func badValueNamesTheVariableAndTheKey() throws {
        let (_, lines) = try Fixtures.gatewayErrors("", environment: ["GATEHOUSE_STORE_KIND": "bogus"])
        #expect(lines == ["GATEHOUSE_STORE_KIND: 'store.kind' must be one of sqlite, memory, postgres, not 'bogus'"])
    }

    @Test(
        arguments: [
            ["GATEHOUSE_LIMITS_MAX_BODY_BYTES": "big"]: "GATEHOUSE_LIMITS_MAX_BODY_BYTES: 'limits.max_body_bytes' must be a whole number, not 'big'",
            ["GATEHOUSE_BACKEND_ASSERTION": "maybe"]: "GATEHOUSE_BACKEND_ASSERTION: 'backend.assertion' must be true or false, not 'maybe'",
            ["GATEHOUSE_SESSIONS_COOKIE_SECURE": "false"]:
                "GATEHOUSE_SESSIONS_COOKIE_SECURE: 'sessions.cookie.secure' must be true for a '__Host-' cookie",
            ["GATEHOUSE_TRUSTED_PROXIES": #"["nope"]"#]:
                "GATEHOUSE_TRUSTED_PROXIES: 'trusted_proxies' lists IP addresses and CIDR ranges (10.0.0.0/8, fd00::/8), not 'nope'",
            ["GATEHOUSE_CORS_ALLOWED_ORIGINS": #"["app.example.com"]"#]:
                "GATEHOUSE_CORS_ALLOWED_ORIGINS: 'cors.allowed_origins' entry 'app.example.com' must be an origin like https://app.example.com",
            ["GATEHOUSE_STORE_KIND": "postgres"]:
                "GATEHOUSE_STORE_KIND: 'store.url' (or 'store.url_file', or 'store.host') is required when store.kind is postgres",
        ])
    func problemsAreNamedByTheVariable(_ environment: [String: String], _ expected: String) throws {
        let (_, lines) = try Fixtures.gatewayErrors("", environment: environment)
        #expect(lines == [expected])
    }

    @Test(arguments: [#"["10.0.0.0/8""#, "10.0.0.0/8", #"[1, 2]"#, #"{"a": "b"}"#])
    func malformedJSONList(_ text: String) throws {
        let (_, lines) = try Fixtures.gatewayErrors(
            "trusted_proxies: [\"127.0.0.1\"]\n", environment: ["GATEHOUSE_TRUSTED_PROXIES": text])
        #expect(
            lines == [
                #"GATEHOUSE_TRUSTED_PROXIES: 'trusted_proxies' is a list: write it as a JSON array of strings, like ["first", "second"]"#
            ])
    }

    @Test func fileAndEnvironmentProblemsAreReportedTogether() throws {
        let yaml = """
            limits:
              max_body_bytes: big
            extra: 1
            """
        let (file, lines) = try Fixtures.gatewayErrors(
            yaml, environment: ["GATEHOUSE_STORE_KIND": "bogus", "GATEHOUSE_TRUSTED_PROXIES": "[", "GATEHOUSE_LOGGING_LEVEL": "loud"])
        // The environment's problems first (they have no line), then the file's, top to bottom.
        #expect(
            lines == [
                #"GATEHOUSE_TRUSTED_PROXIES: 'trusted_proxies' is a list: write it as a JSON array of strings, like ["first", "second"]"#,
                "GATEHOUSE_STORE_KIND: 'store.kind' must be one of sqlite, memory, postgres, not 'bogus'",
                "GATEHOUSE_LOGGING_LEVEL: 'logging.level' must be one of trace, debug, info, notice, warning, error, critical, not 'loud'",
                "\(file):2: 'limits.max_body_bytes' must be a whole number, not 'big'",
                "\(file):3: unknown key 'extra'",
            ])
    }

    // MARK: Secrets

    @Test("a secret from the environment is accepted: it is not written inline in a file")
    func secretFromTheEnvironmentIsAccepted() throws {
        let url = "postgres://gatehouse:\(Self.secret)@db.internal:5432/gatehouse"
        let configuration = try load(["GATEHOUSE_STORE_KIND": "postgres", "GATEHOUSE_STORE_URL": url])
        #expect(configuration.store.url == url)
        #expect(!configuration.store.description.contains(Self.secret))
        let fields = try load(
            "store:\n  kind: postgres\n  host: db.internal\n  user: gatehouse\n",
            ["GATEHOUSE_STORE_PASSWORD": Self.secret])
        #expect(fields.store.url?.contains(Self.secret) == true)
        // Unused (sqlite) and given by the environment: no refusal either.
        #expect(try load(["GATEHOUSE_STORE_URL": url]).store.kind == .sqlite)
    }

    @Test(
        "a secret given by the environment is never in a message",
        arguments: [
            ["GATEHOUSE_STORE_KIND": "postgres", "GATEHOUSE_STORE_URL": "mysql://u:\(EnvironmentConfigurationTests.secret)@db/gh"],
            [
                "GATEHOUSE_STORE_KIND": "postgres", "GATEHOUSE_STORE_URL": "postgres://u:\(EnvironmentConfigurationTests.secret)@db/gh",
                "GATEHOUSE_STORE_HOST": "db",
            ],
            [
                "GATEHOUSE_STORE_KIND": "postgres", "GATEHOUSE_STORE_HOST": "db", "GATEHOUSE_STORE_PASSWORD": EnvironmentConfigurationTests.secret,
                "GATEHOUSE_STORE_PORT": "0",
            ],
            [
                "GATEHOUSE_STORE_KIND": "postgres", "GATEHOUSE_STORE_URL": "postgres://u:\(EnvironmentConfigurationTests.secret)@db/gh",
                "GATEHOUSE_STORE_URL_FILE": "x",
            ],
            [
                "GATEHOUSE_STORE_KIND": "postgres", "GATEHOUSE_STORE_PASSWORD": EnvironmentConfigurationTests.secret,
                "GATEHOUSE_STORE_URL": "postgres://db/gh",
            ],
        ])
    func secretsAreNeverEchoed(_ environment: [String: String]) throws {
        let (_, lines) = try Fixtures.gatewayErrors("store:\n  pool_size: 0\n", environment: environment)
        #expect(!lines.isEmpty)
        #expect(lines.contains { $0.hasPrefix("GATEHOUSE_STORE_") })
        for line in lines { #expect(!line.contains(Self.secret), "\(line)") }
    }

    @Test func warningsNeverCarryValues() {
        let warnings = EnvironmentSettings.warnings(environment: ["GATEHOUSE_STORE_PASWORD": Self.secret])
        #expect(warnings == ["GATEHOUSE_STORE_PASWORD is not a setting; did you mean GATEHOUSE_STORE_PASSWORD (store.password)?"])
    }

    // MARK: Warnings

    @Test func unknownNameIsAWarningWithTheLikelySetting() {
        #expect(
            EnvironmentSettings.warnings(environment: ["GATEHOUSE_STORE_KINDD": "memory", "HOME": "/root"])
                == ["GATEHOUSE_STORE_KINDD is not a setting; did you mean GATEHOUSE_STORE_KIND (store.kind)?"])
        #expect(
            EnvironmentSettings.warnings(environment: ["GATEHOUSE_LISTN": "x"])
                == ["GATEHOUSE_LISTN is not a setting; did you mean GATEHOUSE_LISTEN (listen)?"])
        #expect(
            EnvironmentSettings.warnings(environment: ["GATEHOUSE_SESSIONS_IDLE_TIMEOUT": "600"])
                == [
                    "GATEHOUSE_SESSIONS_IDLE_TIMEOUT is not a setting; did you mean GATEHOUSE_SESSIONS_IDLE_TIMEOUT_SECONDS (sessions.idle_timeout_seconds)?"
                ])
        #expect(
            EnvironmentSettings.warnings(environment: ["GATEHOUSE_FROBNICATE": "1"])
                == [
                    "GATEHOUSE_FROBNICATE is not a setting (a setting is GATEHOUSE_ and a key's path in upper snake case, e.g. GATEHOUSE_STORE_KIND for store.kind)"
                ])
        #expect(
            EnvironmentSettings.warnings(environment: ["GATEHOUSE_ACCESS_RULES": "[]"])
                == [
                    "GATEHOUSE_ACCESS_RULES is not a setting: 'access.rules' is written in the file only (the environment sets single values and lists of strings)"
                ])
    }

    @Test("settings, the allow-list, the test switches and the files' own ${NAME}s are not warned about")
    func namesThatAreNotWarnedAbout() throws {
        let environment = [
            "GATEHOUSE_STORE_KIND": "memory", "GATEHOUSE_BIN": "/x/gatehouse", "GATEHOUSE_TEST_REQUIRE_ALL": "1",
            "GATEHOUSE_DATABASE_URL": "postgres://db/gh", "GATEHOUSE_HEALTH_PATH": "/readyz", "GATEHOUSE_OIDC_SECRET": "x",
            "GATEHOUSE_CLIENT_SECRET": "y", "gatehouse_store_kindd": "z",
        ]
        let directory = try TemporaryDirectory()
        let file = try directory.write("gatehouse.yaml", "backend:\n  audience: \"${GATEHOUSE_OIDC_SECRET}\"\n")
        try directory.write("Providers/dex.yaml", "id: dex\nclient_secret: \"${GATEHOUSE_CLIENT_SECRET}\"\n")
        let providers = directory.appending("Providers")
        #expect(GatewayConfiguration.environmentWarnings(file: file, providersDirectory: providers, environment: environment).isEmpty)
        #expect(
            GatewayConfiguration.environmentWarnings(file: nil, providersDirectory: providers, environment: environment)
                == [
                    "GATEHOUSE_OIDC_SECRET is not a setting (a setting is GATEHOUSE_ and a key's path in upper snake case, e.g. GATEHOUSE_STORE_KIND for store.kind)"
                ])
    }

    // MARK: The schema

    @Test("every setting is a key the reader knows: written with empty values, a file has no problem")
    func everySettingIsAKnownKey() throws {
        var tree: [String: Any] = [:]
        func insert(_ keys: ArraySlice<String>, into node: inout [String: Any]) {
            guard let key = keys.first else { return }
            if keys.count == 1 {
                node[key] = NSNull()
            } else {
                var child = node[key] as? [String: Any] ?? [:]
                insert(keys.dropFirst(), into: &child)
                node[key] = child
            }
        }
        for setting in EnvironmentSettings.all { insert(setting.keys[...], into: &tree) }
        func yaml(_ node: [String: Any], indent: String = "") -> String {
            node.keys.sorted().map { key in
                if let child = node[key] as? [String: Any] { return "\(indent)\(key):\n" + yaml(child, indent: indent + "  ") }
                return "\(indent)\(key):\n"
            }.joined()
        }
        let text = yaml(tree)
        #expect(text.contains("    same_site:\n"))
        let configuration = try GatewayConfiguration.parse(text, file: "all.yaml", environment: [:])
        #expect(configuration.store.kind == .sqlite)
    }

    @Test("every scalar key and list of strings of gatehouse.example.yaml has a variable")
    func exampleKeysHaveVariables() throws {
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("gatehouse.example.yaml").path
        let document = try YAMLDocument(contentsOfFile: example)
        var paths: [String] = []
        func walk(_ node: ConfigNode, _ path: String) {
            switch node.value {
            case .mapping(let entries): for entry in entries { walk(entry.value, path.isEmpty ? entry.key : "\(path).\(entry.key)") }
            case .sequence(let items) where items.contains(where: { if case .mapping = $0.value { true } else { false } }): break
            default: paths.append(path)
            }
        }
        walk(document.root, "")
        #expect(paths.count > 30)
        let known = Set(EnvironmentSettings.all.map(\.path))
        #expect(paths.filter { !known.contains($0) } == [])
    }

    @Test func variablesAreUniqueAndSpelledFromThePath() {
        let variables = EnvironmentSettings.all.map(\.variable)
        #expect(Set(variables).count == variables.count)
        #expect(EnvironmentSettings.setting(named: "GATEHOUSE_SESSIONS_COOKIE_SECURE")?.path == "sessions.cookie.secure")
        #expect(EnvironmentSettings.setting(named: "GATEHOUSE_STORE_URL")?.path == "store.url")
        #expect(EnvironmentSettings.setting(named: "GATEHOUSE_TRUSTED_PROXIES")?.shape == .list)
        #expect(EnvironmentSettings.setting(named: "GATEHOUSE_SESSIONS_IDLE_TIMEOUT") == nil)
    }
}

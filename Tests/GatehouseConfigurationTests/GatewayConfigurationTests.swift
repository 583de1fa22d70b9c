import Foundation
import GatehouseConfiguration
import GatehouseCore
import Testing

struct GatewayConfigurationTests {
    @Test func defaultsMatchTheSpecification() throws {
        let configuration = GatewayConfiguration.defaults(baseDirectory: "/srv/gatehouse")
        #expect(configuration.listen == ListenAddress(host: "127.0.0.1", port: 8080))
        #expect(configuration.listenHost == "127.0.0.1")
        #expect(configuration.listenPort == 8080)
        #expect(configuration.publicURL == "http://127.0.0.1:8080")
        #expect(configuration.providersDirectory == "/srv/gatehouse/Providers")
        #expect(configuration.store == .init(kind: .sqlite, path: "/srv/gatehouse/data/gatehouse.sqlite3", url: nil, poolSize: 20))
        // Sessions are looked up in memory on the default store; its change feed keeps other processes honest.
        #expect(configuration.store.sessionCacheSeconds == 30)
        #expect(configuration.sessions.idleTimeoutSeconds == 3600)
        #expect(configuration.sessions.absoluteLifetimeSeconds == 86400)
        #expect(configuration.sessions.cookie == .init(name: "__Host-gatehouse_session", secure: true, sameSite: .lax))
        #expect(configuration.refresh == .init(skewSeconds: 30, replayLimitBytes: 1_048_576))
        #expect(configuration.keys.sealing.isEmpty && configuration.keys.signing.isEmpty)
        #expect(
            configuration.backend
                == .init(
                    url: "http://127.0.0.1:9000", audience: "backend", identityHeaders: true, assertion: true,
                    forwardAccessToken: false))
        #expect(configuration.allowedRedirectURIs.isEmpty)
        #expect(configuration.cors.allowedOrigins.isEmpty)
        #expect(configuration.limits == .init(maxBodyBytes: 10_485_760, maxHeaderBytes: 16384, upstreamTimeoutSeconds: 30))
        #expect(configuration.logging == .init(level: .info, format: .text))
        #expect(configuration.file == nil)
        #expect(configuration.baseDirectory == "/srv/gatehouse")
    }

    @Test func sessionCacheDefaultsPerStoreKind() throws {
        let directory = try TemporaryDirectory()
        func cacheSeconds(_ store: String) throws -> Int {
            let file = try directory.write("gatehouse.yaml", "store:\n" + store)
            return try GatewayConfiguration.load(path: file, environment: [:]).store.sessionCacheSeconds
        }
        #expect(try cacheSeconds("  kind: sqlite\n") == 30)
        #expect(try cacheSeconds("  kind: memory\n") == 30)
        #expect(try cacheSeconds("  kind: sqlite\n  session_cache_seconds: 0\n") == 0)
        #expect(try cacheSeconds("  kind: sqlite\n  session_cache_seconds: 5\n") == 5)
        #expect(try cacheSeconds("  kind: postgres\n  url: postgres://h/db\n") == 0)
    }

    @Test func noPathAndNoDefaultFileGivesDefaultsInTheCurrentDirectory() throws {
        let current = FileManager.default.currentDirectoryPath
        guard !FileManager.default.fileExists(atPath: GatewayConfiguration.defaultFile) else { return }
        let configuration = try GatewayConfiguration.load(path: nil, environment: [:])
        #expect(configuration == GatewayConfiguration.defaults(baseDirectory: current))
        #expect(configuration.providersDirectory == URL(fileURLWithPath: current).appendingPathComponent("Providers").path)
    }

    @Test func emptyFileGivesDefaults() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("gatehouse.yaml", "# nothing set\n")
        let configuration = try GatewayConfiguration.load(path: file, environment: [:])
        var expected = GatewayConfiguration.defaults(baseDirectory: directory.path)
        expected.file = file
        // Not written: problems with the data directory are reported at the top of the file.
        expected.dataDirectoryLocation = ConfigLocation(file: file, line: 1)
        expected.storePathLocation = expected.dataDirectoryLocation
        #expect(configuration == expected)
    }

    @Test("data_dir moves the generated keys and the default SQLite store; GATEHOUSE_DATA_DIR sets it without a file")
    func dataDirectoryMovesStateAndIsLocated() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("gatehouse.yaml", "listen: \"127.0.0.1:8080\"\ndata_dir: \"state\"\n")
        let configuration = try GatewayConfiguration.load(path: file, environment: [:])
        #expect(configuration.dataDirectory == directory.path + "/state")
        #expect(configuration.store.path == directory.path + "/state/gatehouse.sqlite3")
        #expect(configuration.dataDirectoryLocation == ConfigLocation(file: file, line: 2))
        #expect(configuration.storePathLocation == configuration.dataDirectoryLocation)

        let written = try directory.write("written.yaml", "data_dir: \"state\"\nstore:\n  path: \"db/gh.sqlite3\"\n")
        let explicit = try GatewayConfiguration.load(path: written, environment: [:])
        #expect(explicit.store.path == directory.path + "/db/gh.sqlite3")
        #expect(explicit.storePathLocation == ConfigLocation(file: written, line: 3))

        let fromEnvironment = try GatewayConfiguration.load(path: file, environment: ["GATEHOUSE_DATA_DIR": "/srv/gatehouse"])
        #expect(fromEnvironment.dataDirectory == "/srv/gatehouse")
        #expect(fromEnvironment.store.path == "/srv/gatehouse/gatehouse.sqlite3")
        #expect(fromEnvironment.dataDirectoryLocation == ConfigLocation(file: "GATEHOUSE_DATA_DIR", line: 0))
        #expect(fromEnvironment.environmentVariables == ["GATEHOUSE_DATA_DIR"])

        #expect(throws: ConfigurationErrors([ConfigError(file: file, line: 1, message: "'data_dir' must not be empty")])) {
            try GatewayConfiguration.parse("data_dir: \"\"\n", file: file, environment: [:])
        }
    }

    @Test func readsEveryKey() throws {
        let directory = try TemporaryDirectory()
        try directory.write("db-url.txt", "postgres://gate:pw@db:5432/gatehouse\n")
        let file = try directory.write(
            "gatehouse.yaml",
            """
            listen: "0.0.0.0:9443"
            public_url: "https://auth.example.com/"
            providers_dir: providers
            store:
              kind: postgres
              path: ignored.sqlite3
              url_file: db-url.txt
              pool_size: 5
              session_cache_seconds: 2
            sessions:
              idle_timeout_seconds: 600
              absolute_lifetime_seconds: 7200
              cookie: {name: "gh", secure: false, same_site: "Strict"}
            refresh:
              skew_seconds: 0
              replay_limit_bytes: 2048
            keys:
              sealing: [{id: "k2", file: "secrets/k2.key"}, {id: "k1", file: "/etc/gatehouse/k1.key"}]
              signing:
                - id: s1
                  file: secrets/s1.pem
            backend:
              url: "http://backend:9000/"
              audience: "${AUDIENCE}"
              identity_headers: false
              assertion: no
              forward_access_token: true
            allowed_redirect_uris: ["com.example.app:/callback", "http://127.0.0.1/cb"]
            cors: {allowed_origins: ["https://app.example.com"]}
            limits: {max_body_bytes: 100, max_header_bytes: 200, upstream_timeout_seconds: 3}
            logging: {level: "debug", format: "json"}
            """)
        let configuration = try GatewayConfiguration.load(path: file, environment: ["AUDIENCE": "orders-api"])
        let base = directory.path
        #expect(configuration.listen == ListenAddress(host: "0.0.0.0", port: 9443))
        #expect(configuration.publicURL == "https://auth.example.com")
        #expect(configuration.providersDirectory == "\(base)/providers")
        #expect(configuration.store.kind == .postgres)
        #expect(configuration.store.url == "postgres://gate:pw@db:5432/gatehouse")
        #expect(configuration.store.poolSize == 5)
        #expect(configuration.store.sessionCacheSeconds == 2)
        #expect(configuration.sessions.idleTimeoutSeconds == 600)
        #expect(configuration.sessions.absoluteLifetimeSeconds == 7200)
        #expect(configuration.sessions.cookie == .init(name: "gh", secure: false, sameSite: .strict))
        #expect(configuration.refresh == .init(skewSeconds: 0, replayLimitBytes: 2048))
        #expect(configuration.keys.sealing.map(\.id) == ["k2", "k1"])
        #expect(configuration.keys.sealing.map(\.file) == ["\(base)/secrets/k2.key", "/etc/gatehouse/k1.key"])
        #expect(configuration.keys.sealing.map(\.sourceLine) == [18, 18])
        #expect(configuration.keys.signing.map(\.file) == ["\(base)/secrets/s1.pem"])
        #expect(configuration.keys.signing.first?.sourceLine == 20)
        #expect(configuration.keys.signing.first?.error("bad key").description == "\(file):20: bad key")
        #expect(configuration.backend.url == "http://backend:9000")
        #expect(configuration.backend.audience == "orders-api")
        #expect(!configuration.backend.identityHeaders && !configuration.backend.assertion)
        #expect(configuration.backend.forwardAccessToken)
        #expect(configuration.allowedRedirectURIs == ["com.example.app:/callback", "http://127.0.0.1/cb"])
        #expect(configuration.cors.allowedOrigins == ["https://app.example.com"])
        #expect(configuration.limits == .init(maxBodyBytes: 100, maxHeaderBytes: 200, upstreamTimeoutSeconds: 3))
        #expect(configuration.logging == .init(level: .debug, format: .json))
        #expect(configuration.file == file)
    }

    @Test func environmentVariablesAreExpanded() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(
            "gatehouse.yaml",
            """
            public_url: "https://${HOST}:${PORT}"
            store:
              kind: postgres
              url: "${GATEHOUSE_DATABASE_URL}"
            """)
        let configuration = try GatewayConfiguration.load(
            path: file,
            environment: ["HOST": "auth.example.com", "PORT": "8443", "GATEHOUSE_DATABASE_URL": "postgresql://u:p@db/gh"])
        #expect(configuration.publicURL == "https://auth.example.com:8443")
        #expect(configuration.store.url == "postgresql://u:p@db/gh")
    }

    @Test func postgresFieldsBecomeOneEncodedURL() throws {
        let directory = try TemporaryDirectory()
        try directory.write("secrets/db-password", "p@ss/w:rd\n")
        let file = try directory.write(
            "gatehouse.yaml",
            """
            store:
              kind: postgres
              host: db.internal
              port: 6543
              user: "gate keeper"
              password_file: secrets/db-password
              database: gatehouse
              tls: verify-full
            """)
        let configuration = try GatewayConfiguration.load(path: file, environment: [:])
        let url = try #require(configuration.store.url)
        let components = try #require(URLComponents(string: url))
        #expect(components.scheme == "postgres")
        #expect(components.host == "db.internal")
        #expect(components.port == 6543)
        #expect(components.user == "gate keeper")
        #expect(components.password == "p@ss/w:rd")
        #expect(components.path == "/gatehouse")
        #expect(components.queryItems == [URLQueryItem(name: "sslmode", value: "verify-full")])
        #expect(!configuration.store.description.contains("p@ss"))
    }

    @Test func postgresHostAloneUsesTheDefaults() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("gatehouse.yaml", "store:\n  kind: postgres\n  host: \"${DB_HOST}\"\n")
        let configuration = try GatewayConfiguration.load(path: file, environment: ["DB_HOST": "127.0.0.1"])
        #expect(configuration.store.url == "postgres://127.0.0.1")
    }

    @Test func tlsReplacesTheSSLModeOfAURL() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(
            "gatehouse.yaml", "store:\n  kind: postgres\n  url: \"${DATABASE_URL}\"\n  tls: require\n")
        let configuration = try GatewayConfiguration.load(
            path: file, environment: ["DATABASE_URL": "postgres://u:p@db/gh?sslmode=disable&application_name=x"])
        #expect(configuration.store.url == "postgres://u:p@db/gh?application_name=x&sslmode=require")
    }

    @Test func unsetEnvironmentVariableIsAnError() throws {
        let (file, lines) = try Fixtures.gatewayErrors("backend:\n  audience: \"${AUDIENCE}\"\n")
        #expect(lines == ["\(file):2: 'backend.audience': environment variable AUDIENCE is not set"])
    }

    @Test func secretFileLosesItsTrailingNewline() throws {
        let directory = try TemporaryDirectory()
        try directory.write("secrets/db-url", "postgres://u:p@db/gh\r\n\n")
        let file = try directory.write("conf/gatehouse.yaml", "store:\n  kind: postgres\n  url_file: ../secrets/db-url\n")
        let configuration = try GatewayConfiguration.load(path: file, environment: [:])
        #expect(configuration.store.url == "postgres://u:p@db/gh")
    }

    @Test func postgresSettingsAreNotReadForOtherStores() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("gatehouse.yaml", "store:\n  kind: memory\n  url: \"${UNSET}\"\n")
        let configuration = try GatewayConfiguration.load(path: file, environment: [:])
        #expect(configuration.store.kind == .memory)
        #expect(configuration.store.url == nil)
    }

    @Test func relativePathsResolveAgainstTheFilesDirectory() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(
            "etc/gatehouse.yaml",
            """
            providers_dir: ./Providers
            store: {path: "../var/db.sqlite3"}
            keys: {sealing: [{id: k1, file: "secrets/k1.key"}]}
            """)
        let configuration = try GatewayConfiguration.load(path: file, environment: [:])
        #expect(configuration.baseDirectory == "\(directory.path)/etc")
        #expect(configuration.providersDirectory == "\(directory.path)/etc/Providers")
        #expect(configuration.store.path == "\(directory.path)/var/db.sqlite3")
        #expect(configuration.keys.sealing.first?.file == "\(directory.path)/etc/secrets/k1.key")
    }

    @Test func relativeConfigurationPathResolvesAgainstTheCurrentDirectory() throws {
        let directory = try TemporaryDirectory()
        let absolute = try directory.write("gatehouse.yaml", "providers_dir: p\n")
        let current = FileManager.default.currentDirectoryPath
        // Express the same file relative to the current directory.
        let relative = String(repeating: "../", count: current.split(separator: "/").count) + String(absolute.dropFirst())
        let configuration = try GatewayConfiguration.load(path: relative, environment: [:])
        #expect(configuration.providersDirectory == "\(directory.path)/p")
        #expect(configuration.file == relative)
    }

    @Test func listenAddressesAndOverride() throws {
        #expect(ListenAddress("[::1]:8443") == ListenAddress(host: "::1", port: 8443))
        #expect(ListenAddress("[::1]:8443")?.description == "[::1]:8443")
        #expect(ListenAddress("localhost:0") == ListenAddress(host: "localhost", port: 0))
        #expect(ListenAddress("::1:80") == nil)
        #expect(ListenAddress(":80") == nil)
        #expect(ListenAddress("host:") == nil)
        #expect(ListenAddress("host:+80") == nil)
        var configuration = GatewayConfiguration()
        try configuration.overrideListen("0.0.0.0:9000")
        #expect(configuration.listenHost == "0.0.0.0")
        #expect(configuration.listenPort == 9000)
    }

    @Test func storeDescriptionNeverShowsTheDatabaseURL() {
        let store = GatewayConfiguration.Store(kind: .postgres, url: "postgres://u:secret@db/gh")
        #expect(!store.description.contains("secret"))
        #expect(store.description.contains("<redacted>"))
    }

    @Test func shippedExampleParses() throws {
        let example = "\(Fixtures.packageRoot)/gatehouse.example.yaml"
        let configuration = try GatewayConfiguration.load(
            path: example, environment: ["GATEHOUSE_DATABASE_URL": "postgres://u:p@localhost:5432/gatehouse"])
        #expect(
            configuration
                == {
                    var expected = GatewayConfiguration.defaults(baseDirectory: Fixtures.packageRoot)
                    expected.file = example
                    expected.publicURLIsExplicit = true
                    expected.keys = configuration.keys
                    expected.allowedRedirectURIs = ["com.example.app:/callback"]
                    let lines = (try? String(contentsOfFile: example, encoding: .utf8))?.components(separatedBy: "\n") ?? []
                    let line = { (prefix: String) in (lines.firstIndex { $0.hasPrefix(prefix) } ?? -1) + 1 }
                    expected.dataDirectoryLocation = ConfigLocation(file: example, line: line("data_dir:"))
                    expected.storePathLocation = ConfigLocation(file: example, line: line("  path:"))
                    return expected
                }())
        // Its `keys` are commented out, so that the copy passes `gatehouse check` as it is (keys generated at start).
        #expect(configuration.keys.sealing.isEmpty && configuration.keys.signing.isEmpty)
    }
}

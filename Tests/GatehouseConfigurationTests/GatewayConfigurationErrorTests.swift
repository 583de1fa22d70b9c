import Foundation
import GatehouseConfiguration
import GatehouseCore
import Testing

/// One case per message `gatehouse.yaml` can produce, asserted as printed (`file:line: message`).
struct GatewayConfigurationErrorTests {
    static let cases: [ErrorCase] = [
        // Unknown keys, at every level.
        ErrorCase("listen: \"127.0.0.1:8080\"\nlisen: \"x\"\n", "2: unknown key 'lisen': did you mean 'listen'?"),
        ErrorCase("store:\n  kind: sqlite\n  pth: x\n", "3: unknown key 'store.pth': did you mean 'store.path'?"),
        ErrorCase("sessions:\n  cookie:\n    nme: x\n", "3: unknown key 'sessions.cookie.nme': did you mean 'sessions.cookie.name'?"),
        ErrorCase("keys:\n  sealing:\n    - id: k1\n      file: a.key\n      kind: aes\n", "5: unknown key 'keys.sealing[0].kind'"),
        ErrorCase("cors:\n  origins: []\n", "2: unknown key 'cors.origins'"),
        // Wrong types.
        ErrorCase("listen: [a, b]\n", "1: 'listen' must be a string"),
        ErrorCase("store: sqlite\n", "1: 'store' must be a mapping"),
        ErrorCase("- a\n- b\n", "1: 'document' must be a mapping"),
        ErrorCase("limits:\n  max_body_bytes: big\n", "2: 'limits.max_body_bytes' must be a whole number, not 'big'"),
        ErrorCase("backend:\n  assertion: maybe\n", "2: 'backend.assertion' must be true or false, not 'maybe'"),
        ErrorCase("keys:\n  signing: {id: s1}\n", "2: 'keys.signing' must be a list"),
        ErrorCase("allowed_redirect_uris: {a: b}\n", "1: 'allowed_redirect_uris' must be a list of strings"),
        // Values.
        ErrorCase("listen: localhost\n", "1: 'listen' must be host:port (e.g. 127.0.0.1:8080), not 'localhost'"),
        ErrorCase("listen: \"127.0.0.1:99999\"\n", "1: 'listen' must be host:port (e.g. 127.0.0.1:8080), not '127.0.0.1:99999'"),
        ErrorCase("public_url: example.com\n", "1: 'public_url' must be an absolute http(s) URL, not 'example.com'"),
        ErrorCase("public_url: \"ftp://example.com\"\n", "1: 'public_url' must be an absolute http(s) URL, not 'ftp://example.com'"),
        ErrorCase(
            "public_url: \"https://example.com/?a=1\"\n",
            "1: 'public_url' must not have a query or fragment, not 'https://example.com/?a=1'"),
        ErrorCase("providers_dir: \"\"\n", "1: 'providers_dir' must not be empty"),
        ErrorCase("store:\n  kind: mysql\n", "2: 'store.kind' must be one of sqlite, memory, postgres, not 'mysql'"),
        ErrorCase(
            "store:\n  kind: postgres\n",
            "2: 'store.url' (or 'store.url_file', or 'store.host') is required when store.kind is postgres"),
        ErrorCase(
            "store:\n  kind: postgres\n  url: postgres://h/db\n  host: h\n",
            "3: give either 'store.url' or 'store.host' (with port, user, password, database), not both"),
        ErrorCase(
            "store:\n  kind: postgres\n  url: postgres://h/db\n  user: u\n",
            "4: 'store.user' needs 'store.host'; with 'store.url' put it in the URL"),
        ErrorCase("store:\n  kind: postgres\n  host: h\n  port: 70000\n", "4: 'store.port' must be between 1 and 65535, not 70000"),
        ErrorCase(
            "store:\n  kind: postgres\n  host: h\n  tls: verify-ca\n",
            "4: 'store.tls' must be one of disable, prefer, require, verify-full, not 'verify-ca'"),
        ErrorCase(
            "store:\n  kind: postgres\n  host: h\n  password: \"${DB_PASSWORD}\"\n",
            "4: 'store.password': environment variable DB_PASSWORD is not set"),
        ErrorCase("store:\n  kind: postgres\n  url: \"mysql://h/db\"\n", "3: 'store.url' must be a postgres:// URL"),
        ErrorCase(
            "store:\n  kind: postgres\n  url: \"${GATEHOUSE_DATABASE_URL}\"\n",
            "3: 'store.url': environment variable GATEHOUSE_DATABASE_URL is not set"),
        ErrorCase(
            "store:\n  kind: postgres\n  url: \"${GATEHOUSE_DATABASE_URL\"\n", "3: 'store.url': unterminated '${'"),
        ErrorCase(
            "store:\n  kind: postgres\n  url: postgres://h/db\n  url_file: db.txt\n",
            "4: give either 'store.url' or 'store.url_file', not both"),
        ErrorCase(
            "store:\n  kind: postgres\n  url_file: missing-db-url.txt\n",
            "3: 'store.url_file': cannot read file 'missing-db-url.txt'"),
        ErrorCase("store:\n  pool_size: 0\n", "2: 'store.pool_size' must be a positive number of connections, not 0"),
        ErrorCase(
            "store:\n  kind: postgres\n  url: postgres://h/db\n  pool_size: 1\n  session_cache_seconds: 5\n",
            "5: 'store.session_cache_seconds' needs a pool_size of 2 or more (the change feed holds one connection)"),
        ErrorCase(
            "store:\n  session_cache_seconds: 7200\n",
            "2: 'store.session_cache_seconds' must be between 0 and 3600, not 7200"),
        ErrorCase(
            "sessions:\n  idle_timeout_seconds: 0\n",
            "2: 'sessions.idle_timeout_seconds' must be a positive number of seconds, not 0"),
        ErrorCase(
            "sessions:\n  absolute_lifetime_seconds: -5\n",
            "2: 'sessions.absolute_lifetime_seconds' must be a positive number of seconds, not -5"),
        ErrorCase(
            "sessions:\n  cookie: {same_site: lax}\n",
            "2: 'sessions.cookie.same_site' must be one of Strict, Lax, None, not 'lax'"),
        ErrorCase(
            "sessions:\n  cookie:\n    secure: false\n", "3: 'sessions.cookie.secure' must be true for a '__Host-' cookie"),
        ErrorCase(
            "sessions:\n  cookie:\n    name: __Secure-s\n    secure: false\n",
            "4: 'sessions.cookie.secure' must be true for a '__Secure-' cookie"),
        ErrorCase(
            "sessions:\n  cookie:\n    name: s\n    secure: false\n    same_site: None\n",
            "5: 'sessions.cookie.same_site' None requires secure: true"),
        ErrorCase(
            "sessions:\n  cookie:\n    name: \"my session\"\n",
            "3: 'sessions.cookie.name' must be a cookie name (letters, digits and !#$%&'*+-.^_`|~), not 'my session'"),
        ErrorCase(
            "refresh:\n  skew_seconds: -1\n", "2: 'refresh.skew_seconds' must be zero or a positive number of seconds, not -1"),
        ErrorCase(
            "refresh:\n  replay_limit_bytes: -1\n",
            "2: 'refresh.replay_limit_bytes' must be zero or a positive number of bytes, not -1"),
        ErrorCase("keys:\n  sealing:\n    - file: a.key\n", "3: 'keys.sealing[0].id' is required"),
        ErrorCase("keys:\n  sealing:\n    - id: k1\n", "3: 'keys.sealing[0].file' is required"),
        ErrorCase(
            "keys:\n  signing:\n    - {id: s1, file: a.pem}\n    - {id: s1, file: b.pem}\n",
            "4: 'keys.signing[1].id': duplicate key id 's1' in 'keys.signing'"),
        ErrorCase("backend:\n  url: \"/api\"\n", "2: 'backend.url' must be an absolute http(s) URL, not '/api'"),
        ErrorCase("backend:\n  audience: \"\"\n", "2: 'backend.audience' must not be empty"),
        ErrorCase(
            "allowed_redirect_uris:\n  - \"com.example.app:/callback\"\n  - callback\n",
            "3: 'allowed_redirect_uris' entry 'callback' must be an absolute URI without a fragment"),
        ErrorCase(
            "allowed_redirect_uris: [\"https://app.example.com/cb#frag\"]\n",
            "1: 'allowed_redirect_uris' entry 'https://app.example.com/cb#frag' must be an absolute URI without a fragment"),
        ErrorCase(
            "cors:\n  allowed_origins:\n    - https://app.example.com/path\n",
            "3: 'cors.allowed_origins' entry 'https://app.example.com/path' must be an origin like https://app.example.com"),
        ErrorCase(
            "limits:\n  upstream_timeout_seconds: 0\n",
            "2: 'limits.upstream_timeout_seconds' must be a positive number of seconds, not 0"),
        ErrorCase("limits: {max_header_bytes: 0}\n", "1: 'limits.max_header_bytes' must be a positive number of bytes, not 0"),
        ErrorCase(
            "limits: {upstream_idle_connections: -1}\n", "1: 'limits.upstream_idle_connections' must be between 0 and 65536, not -1"),
        ErrorCase(
            "logging:\n  level: verbose\n",
            "2: 'logging.level' must be one of trace, debug, info, notice, warning, error, critical, not 'verbose'"),
        ErrorCase("logging:\n  format: xml\n", "2: 'logging.format' must be one of text, json, not 'xml'"),
        // Duplicate keys: reported where the repetition is written.
        ErrorCase("listen: \"127.0.0.1:8080\"\n# comment\nlisten: \"127.0.0.1:8081\"\n", "3: duplicate key 'listen'"),
        ErrorCase("store:\n  kind: sqlite\n  path: a\n  kind: memory\n", "4: duplicate key 'store.kind'"),
        ErrorCase("logging: {level: info, level: debug}\n", "1: duplicate key 'logging.level'"),
    ]

    @Test(arguments: cases)
    func reportsProblemWithFileAndLine(_ errorCase: ErrorCase) throws {
        let (file, lines) = try Fixtures.gatewayErrors(errorCase.yaml, environment: errorCase.environment)
        #expect(lines == ["\(file):\(errorCase.expected)"])
    }

    @Test("a duplicate key is one problem among the file's others, which are still read")
    func duplicateKeyIsOneProblemAmongOthers() throws {
        let yaml = """
            listen: "127.0.0.1:8080"
            store:
              kind: memory
              kind: sqlite
            sessions:
              idle_timeout_seconds: 0
            logging: {level: info, level: debug, format: xml}
            colour: blue
            listen: "127.0.0.1:8081"
            """
        let (file, lines) = try Fixtures.gatewayErrors(yaml)
        #expect(
            lines == [
                "\(file):4: duplicate key 'store.kind'",
                "\(file):6: 'sessions.idle_timeout_seconds' must be a positive number of seconds, not 0",
                "\(file):7: duplicate key 'logging.level'",
                "\(file):7: 'logging.format' must be one of text, json, not 'xml'",
                "\(file):8: unknown key 'colour'",
                "\(file):9: duplicate key 'listen'",
            ])
    }

    @Test("read: the configuration as far as it could be read comes with the problems, so key files are still found")
    func readKeepsWhatItCouldRead() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(
            "gatehouse.yaml", "providers_dir: \"elsewhere\"\nsessions: {idle_timeout_seconds: 0}\nkeys:\n  signing: [{id: s9, file: s9.pem}]\n")
        let (configuration, problems) = GatewayConfiguration.read(path: file, environment: [:])
        #expect(problems.map(\.line) == [2])
        #expect(configuration?.keys.signing.map(\.id) == ["s9"])
        #expect(configuration?.keys.signing.first?.sourceLine == 4)
        #expect(configuration?.providersDirectory.hasSuffix("/elsewhere") == true)
    }

    @Test("an https public_url with sessions.cookie.secure false is a warning at the secure line, not an error")
    func insecureCookieBehindHTTPSIsAWarning() throws {
        let yaml = "public_url: \"https://gate.example.test\"\nsessions:\n  cookie:\n    name: gh\n    secure: false\n"
        let configuration = try GatewayConfiguration.parse(yaml, file: "/c/gatehouse.yaml", environment: [:])
        #expect(configuration.warnings.map(\.description).count == 1)
        #expect(
            configuration.warnings.first?.description.hasPrefix("/c/gatehouse.yaml:5: 'sessions.cookie.secure' is false while 'public_url' is https")
                == true)
        let plain = try GatewayConfiguration.parse(
            yaml.replacingOccurrences(of: "https:", with: "http:"), file: "/c/gatehouse.yaml", environment: [:])
        #expect(plain.warnings.isEmpty)
        let fromEnvironment = try GatewayConfiguration.parse(
            "sessions: {cookie: {name: gh}}\n", file: "/c/gatehouse.yaml",
            environment: ["GATEHOUSE_PUBLIC_URL": "https://a.example", "GATEHOUSE_SESSIONS_COOKIE_SECURE": "false"])
        #expect(fromEnvironment.warnings.first?.description.hasPrefix("GATEHOUSE_SESSIONS_COOKIE_SECURE: ") == true)
    }

    @Test func syntaxErrorNamesItsLine() throws {
        let (file, lines) = try Fixtures.gatewayErrors("listen: \"127.0.0.1:8080\"\nstore:\n  kind: [sqlite\nlogging: {}\n")
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("\(file):4: invalid YAML: ") == true)
    }

    @Test func syntaxErrorMessageIsExact() throws {
        let (file, lines) = try Fixtures.gatewayErrors("listen: a\n  store: b\n")
        #expect(lines == ["\(file):2: invalid YAML: mapping values are not allowed in this context"])
    }

    @Test func missingExplicitFileIsRefused() throws {
        let directory = try TemporaryDirectory()
        let file = directory.appending("nope.yaml")
        #expect {
            try GatewayConfiguration.load(path: file, environment: [:])
        } throws: { error in
            (error as? ConfigurationErrors)?.lines == ["\(file):1: cannot read file: No such file or directory"]
        }
    }

    @Test func collectsEveryProblemOfTheFileInLineOrder() throws {
        let yaml = """
            logging:
              format: xml
            listen: nowhere
            sessions:
              idle_timeout_seconds: 0
            extra: 1
            """
        let (file, lines) = try Fixtures.gatewayErrors(yaml)
        #expect(
            lines == [
                "\(file):2: 'logging.format' must be one of text, json, not 'xml'",
                "\(file):3: 'listen' must be host:port (e.g. 127.0.0.1:8080), not 'nowhere'",
                "\(file):5: 'sessions.idle_timeout_seconds' must be a positive number of seconds, not 0",
                "\(file):6: unknown key 'extra'",
            ])
    }

    @Test("several problems inside one section of gatehouse.yaml are all reported, each at its line")
    func everyProblemOfOneSection() throws {
        let yaml = """
            limits:
              max_body_bytes: -1
              upstream_timeout_seconds: "soon"
              max_header_byte: 100
            sessions:
              idle_timeout_seconds: 0
              dpop: {mode: "on", max_age_seconds: 0}
            """
        let (file, lines) = try Fixtures.gatewayErrors(yaml)
        #expect(
            lines == [
                "\(file):2: 'limits.max_body_bytes' must be a positive number of bytes, not -1",
                "\(file):3: 'limits.upstream_timeout_seconds' must be a whole number, not 'soon'",
                "\(file):4: unknown key 'limits.max_header_byte': did you mean 'limits.max_header_bytes'?",
                "\(file):6: 'sessions.idle_timeout_seconds' must be a positive number of seconds, not 0",
                "\(file):7: 'sessions.dpop.mode' must be one of optional, required, off, not 'on'",
                "\(file):7: 'sessions.dpop.max_age_seconds' must be between 1 and 3600, not 0",
            ])
    }

    @Test func accessSectionReportsEveryProblemAtItsLine() throws {
        let yaml = """
            access:
              login:
                - {email_domain: "@example.com"}
              rules:
                - name: "a"
                  paths: ["admin/**"]
                  allow: "anyone"
                - name: "b"
                  paths: ["/x"]
                  allow: "everybody"
                - name: "a"
                  paths: ["/y/**"]
                  methods: ["GET", "P0ST"]
                  allow: [{}]
                - paths: ["/z"]
                  allow: "authenticated"
                  alow: 1
              default: "maybe"
              return_to_origins: ["https://app.example.com/path"]
            """
        let (file, lines) = try Fixtures.gatewayErrors(yaml)
        #expect(
            lines == [
                "\(file):3: 'access.login[0].email_domain' entry '@example.com' must be a domain like example.com (matched exactly)",
                "\(file):6: 'access.rules[0].paths' pattern 'admin/**' must start with '/'",
                "\(file):10: 'access.rules[1].allow' must be \"anyone\", \"authenticated\" or a list of conditions",
                "\(file):13: 'access.rules[2].methods' entry 'P0ST' is not an HTTP method",
                "\(file):14: 'access.rules[2].allow[0]' is empty: a condition needs at least one of provider, subject, email, email_domain, email_verified, group, claim",
                "\(file):15: 'access.rules[3].name' is required",
                "\(file):17: unknown key 'access.rules[3].alow': did you mean 'access.rules[3].allow'?",
                "\(file):18: 'access.default' must be one of deny, authenticated, not 'maybe'",
                "\(file):19: 'access.return_to_origins' entry 'https://app.example.com/path' must be an origin like https://app.example.com",
            ])
    }

    @Test func everyProblemOfARuleWrittenOnOneLineIsReportedInOneRun() throws {
        let yaml = """
            access:
              rules:
                - {name: "a", paths: ["admin/**"], methods: ["G T"], allow: "anyon", methodz: ["GET"]}
            """
        let (file, lines) = try Fixtures.gatewayErrors(yaml)
        #expect(
            lines == [
                "\(file):3: 'access.rules[0].paths' pattern 'admin/**' must start with '/'",
                "\(file):3: 'access.rules[0].methods' entry 'G T' is not an HTTP method",
                "\(file):3: 'access.rules[0].allow' must be \"anyone\", \"authenticated\" or a list of conditions",
                "\(file):3: unknown key 'access.rules[0].methodz': did you mean 'access.rules[0].methods'?",
            ])
    }

    @Test func accessSectionIsRead() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(
            "gatehouse.yaml",
            """
            access:
              login:
                - {email_domain: "example.com", email_verified: true}
                - {provider: "spid"}
              rules:
                - name: "admin"
                  paths: ["/admin/**"]
                  methods: ["get", "POST"]
                  allow:
                    - {email: ["alice@example.com"]}
                    - {group: "admins", provider: "oidc", claim: {tier: ["gold", "silver"]}}
                - name: "rest"
                  paths: ["/**"]
                  allow: "authenticated"
              default: "deny"
            """)
        let access = try GatewayConfiguration.load(path: file, environment: [:]).access
        #expect(access.login == [AccessCondition(emailDomains: ["example.com"], emailVerified: true), AccessCondition(providers: ["spid"])])
        #expect(access.rules.map(\.name) == ["admin", "rest"])
        // A rule about GET is one about HEAD too (RFC 9110 §9.3.2).
        #expect(access.rules[0].methods == ["GET", "POST", "HEAD"])
        #expect(
            access.rules[0].allow
                == .conditions([
                    AccessCondition(emails: ["alice@example.com"]),
                    AccessCondition(providers: ["oidc"], groups: ["admins"], claims: ["tier": ["gold", "silver"]]),
                ]))
        #expect(access.fallback == .deny)
    }

    @Test func overrideListenRefusesTextThatIsNotHostPort() throws {
        var configuration = GatewayConfiguration()
        #expect(throws: ListenAddressError(value: "8080")) { try configuration.overrideListen("8080") }
        #expect(
            ListenAddressError(value: "8080").description
                == "listen address must be host:port (e.g. 127.0.0.1:8080), not '8080'")
    }
}

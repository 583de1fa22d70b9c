import ArgumentParser
import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseDemo
import GatehouseProviders
import GatehouseServer
import Logging

/// `gatehouse demo`: loopback stand-ins for the providers and a demo backend, with a gateway in front.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo", abstract: "Run a gateway with local stand-in providers and an echo backend, and print what to try.")

    @Option(help: "HOST:PORT of the demo gateway.") var listen = "127.0.0.1:8080"
    @Option(help: "Backend URL to put behind the gateway instead of the demo echo backend (e.g. for benchmarks).") var backend: String?
    @Option(help: "Access-token lifetime of the stand-in OAuth server, in seconds (short, to show refresh).") var tokenLifetime = 30
    @Flag(inversion: .prefixedNo, help: "One log line per request (logging.access_log).") var accessLog = true

    func run() async throws {
        var logger = Logger(label: "gatehouse-demo")
        logger.logLevel = .notice
        let oauth = StandInOAuthServer(configuration: .init(accessTokenLifetime: tokenLifetime), logger: logger)
        _ = try await oauth.start()
        // SPiD with its clock two minutes behind, so the session view shows the measured skew.
        let spid = StandInSPiDServer(configuration: .init(accessTokenLifetime: tokenLifetime, clockSkew: -120), logger: logger)
        _ = try await spid.start()
        // A BrowserID IdP for browserid.demo.test; the gateway pins its support document (no network).
        let issuerKey = BrowserIDSigningKey.dsa128(seed: "browserid.demo.test")
        let userKey = BrowserIDSigningKey.dsa128(seed: "demo-user")
        let idp = StandInBrowserIDIdP(
            issuerKey: .init(algorithm: issuerKey.algorithm, publicKey: issuerKey.publicKey, sign: { issuerKey.sign($0) }),
            userKey: .init(algorithm: userKey.algorithm, publicKey: userKey.publicKey, sign: { userKey.sign($0) }), logger: logger)
        _ = try await idp.start()
        let echo = DemoBackend(logger: logger)
        _ = try await echo.start()
        // Login-page kinds: an ACS-like sign-in whose result page calls window.external.Notify, and a legacy site.
        let acs = StandInACS(realm: "urn:gatehouse:demo", logger: logger)
        _ = try await acs.start()
        // An OpenID Connect provider: discovery, JWKS, ES256 ID tokens.
        let oidc = StandInOIDCProvider(logger: logger)
        _ = try await oidc.start()
        let legacy = StandInLegacySite(logger: logger)
        _ = try await legacy.start()

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-demo-\(ProcessInfo.processInfo.processIdentifier)")
            .path
        var configuration = GatewayConfiguration.defaults(baseDirectory: directory)
        try configuration.overrideListen(listen)
        configuration.publicURL = "http://\(listen)"
        configuration.store = .init(kind: .memory)
        configuration.backend.url = backend ?? echo.baseURL
        configuration.allowedRedirectURIs = ["http://127.0.0.1/callback", "com.example.app:/callback"]
        // Plain http on loopback: browsers accept Secure cookies only from https or localhost.
        configuration.sessions.cookie = .init(name: "gatehouse_session", secure: false, sameSite: .lax)
        configuration.logging.accessLog = accessLog

        let publicURL = configuration.publicURL
        let endpoints = (
            authorize: oauth.authorizationEndpoint, token: oauth.tokenEndpoint, revoke: oauth.revocationEndpoint,
            userinfo: oauth.userinfoEndpoint, api: oauth.apiBaseURL, clientID: oauth.configuration.clientID,
            issuer: oauth.baseURL
        )
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let supportDocument = (directory as NSString).appendingPathComponent("\(idp.domain).json")
        try Data(idp.supportDocument.utf8).write(to: URL(fileURLWithPath: supportDocument))
        let browserIDYAML = """
            id: browserid
            kind: browserid
            name: "BrowserID stand-in (\(idp.domain))"
            audiences: ["\(configuration.publicURL)"]
            fetch_support_documents: false
            issuers:
              - domain: "\(idp.domain)"
                support_document_file: "\(supportDocument)"
            """
        // Only issuer, client id and secret: the rest comes from discovery.
        let oidcYAML = """
            id: oidc
            kind: oidc
            name: "OpenID Connect stand-in"
            issuer: "\(oidc.issuer)"
            client_id: "\(oidc.clientID)"
            client_secret: "${DEMO_OIDC_CLIENT_SECRET}"
            """
        let spidYAML = """
            id: spid
            kind: spid
            name: "SPiD stand-in (Schibsted account)"
            base_url: "\(spid.baseURL)"
            client_id: "\(spid.configuration.clientID)"
            client_secret: "${DEMO_SPID_CLIENT_SECRET}"
            scopes: ["profile", "email"]
            """
        // Secrets are never written in a provider file, not even the stand-ins': they come from this environment.
        let secrets = [
            "DEMO_OIDC_CLIENT_SECRET": "demo-secret", "DEMO_SPID_CLIENT_SECRET": spid.configuration.clientSecret,
            "DEMO_ACS_SIGNING_KEY": acs.signingKeyBase64,
        ]
        let makeProviders: @Sendable (any HTTPTransport) throws -> [any AuthProvider] = { transport in
            let context = ProviderContext(transport: transport, publicURL: publicURL)
            let descriptor = ProviderDescriptor(
                id: "demo", kind: "oauth2", name: "Demo OAuth 2.0 server", api: ProviderAPI(url: endpoints.api))
            let oauth2 = OAuth2Provider.Configuration(
                authorizationEndpoint: endpoints.authorize, tokenEndpoint: endpoints.token, userinfoEndpoint: endpoints.userinfo,
                revocationEndpoint: endpoints.revoke, issuer: endpoints.issuer, clientID: endpoints.clientID, scopes: ["grades"])
            // The SPiD provider goes through the same file loader as Providers/*.yaml.
            let spidFile = try YAMLDocument(text: spidYAML, file: "Providers/spid.yaml")
            let spidProvider = try ProviderCatalog.provider(from: spidFile, kinds: ProviderRegistry.kinds, context: context, environment: secrets)
            let browserIDFile = try YAMLDocument(text: browserIDYAML, file: "Providers/browserid.yaml")
            let browserID = try ProviderCatalog.provider(from: browserIDFile, kinds: ProviderRegistry.kinds, context: context, environment: secrets)
            let pageProviders = try [
                (
                    "azure",
                    "id: azure\nkind: acs\nname: \"ACS stand-in (Notify)\"\nlogin_url: \"\(acs.loginURL)\"\nallowed_origins: [\"\(acs.baseURL)\"]\nrealm: \"\(acs.realm)\"\nissuer: \"\(acs.issuer)\"\nsigning_key: \"${DEMO_ACS_SIGNING_KEY}\"\n"
                ),
                (
                    "legacy",
                    "id: legacy\nkind: capture\nname: \"Legacy site (cookie)\"\nlogin_url: \"\(legacy.loginURL)\"\nallowed_origins: [\"\(legacy.baseURL)\"]\nsuccess_url: \"\(legacy.baseURL)/welcome*\"\ncapture: {from: cookie}\nprobe: {url: \"\(legacy.baseURL)/api/me\"}\n"
                ),
                (
                    "legacytitle",
                    "id: legacytitle\nkind: capture\nname: \"Legacy site (title)\"\nlogin_url: \"\(legacy.loginURL)\"\nallowed_origins: [\"\(legacy.baseURL)\"]\nsuccess_url: \"\(legacy.baseURL)/welcome*\"\ncapture: {from: title}\nprobe: {url: \"\(legacy.baseURL)/api/me\"}\n"
                ),
            ].map { id, yaml in
                try ProviderCatalog.provider(
                    from: YAMLDocument(text: yaml, file: "Providers/\(id).yaml"), kinds: ProviderRegistry.kinds, context: context,
                    environment: secrets)
            }
            let oidcFile = try YAMLDocument(text: oidcYAML, file: "Providers/oidc.yaml")
            let oidcProvider = try ProviderCatalog.provider(from: oidcFile, kinds: ProviderRegistry.kinds, context: context, environment: secrets)
            return [OAuth2Provider(descriptor: descriptor, configuration: oauth2, context: context), spidProvider, browserID, oidcProvider]
                + pageProviders
        }
        // Written straight to the file handle: the banner must show even when stdout is a pipe.
        let banner =
            ("""
            Gatehouse demo
              gateway            \(publicURL)/   (open it in a browser; sign in as alice / alice-password)
              stand-in OAuth 2.0 \(oauth.baseURL)   (provider "demo"; access tokens live \(tokenLifetime) s, refresh tokens rotate)
              stand-in SPiD      \(spid.baseURL)   (provider "spid"; alice@example.test / alice-password; clock 120 s behind)
              OpenID Connect     \(oidc.issuer)   (provider "oidc"; alice / alice-password)
              BrowserID IdP      \(idp.baseURL)   (provider "browserid"; any address @\(idp.domain))
              ACS stand-in       \(acs.baseURL)   (provider "azure"; \(publicURL)/v1/auth/azure/pages?return_to=/)
              legacy site        \(legacy.baseURL)   (providers "legacy", "legacytitle"; bob / secret; \(publicURL)/v1/auth/legacy/pages?return_to=/)
              backend            \(configuration.backend.url)

            Native flow with curl:
              verifier=$(head -c32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
              challenge=$(printf %s "$verifier" | openssl dgst -sha256 -binary | base64 | tr '+/' '-_' | tr -d '=')
              curl -si "\(publicURL)/v1/auth/demo/login?redirect_uri=http://127.0.0.1:9/callback&state=xyz&code_challenge=$challenge&code_challenge_method=S256"
              # open the Location in a browser, sign in; you land on http://127.0.0.1:9/callback?code=…&state=xyz
              curl -s -X POST \(publicURL)/v1/session -H 'Content-Type: application/json' \\
                -d '{"grant_type":"authorization_code","code":"<code>","code_verifier":"'$verifier'","redirect_uri":"http://127.0.0.1:9/callback"}'
              curl -s \(publicURL)/v1/api/hello -H "Authorization: Bearer <session_token>"
              curl -s \(publicURL)/v1/proxy/demo/grades/@me -H "Authorization: Bearer <session_token>"
            BrowserID: mint an assertion at the stand-in IdP and post it:
              assertion=$(curl -s "\(idp.baseURL)/assertion?email=alice@\(idp.domain)&audience=\(publicURL)" | sed 's/.*"assertion":"\\([^"]*\\)".*/\\1/')
              curl -s -X POST \(publicURL)/v1/auth/browserid/assertion -H 'Content-Type: application/json' \\
                -d '{"assertion":"'$assertion'","audience":"\(publicURL)"}'
            Ctrl-C stops everything.

            """)
        FileHandle.standardOutput.write(Data(banner.utf8))
        let stopStandIns = {
            await oauth.stop()
            await spid.stop()
            await idp.stop()
            await echo.stop()
            await acs.stop()
            await legacy.stop()
            await oidc.stop()
        }
        // The access log is written at `info`; the stand-ins stay at `notice`.
        var gatewayLogger = logger
        if accessLog { gatewayLogger.logLevel = .info }
        do {
            try await GatewayLauncher.run(configuration, logger: gatewayLogger, makeProviders: makeProviders)
        } catch {
            await stopStandIns()
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        await stopStandIns()
        // The BrowserID support document lived only for this run.
        try? FileManager.default.removeItem(atPath: directory)
    }
}

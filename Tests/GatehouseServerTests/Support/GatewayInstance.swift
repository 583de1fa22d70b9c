import AsyncHTTPClient
import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseDemo
import GatehouseProviders
import GatehouseServer
import GatehouseStore
import Hummingbird
import Logging
import NIOHTTP1
import ServiceLifecycle
import Testing

/// A real gateway on a loopback port, in front of the stand-ins, with providers `demo` and `other`.
struct GatewayInstance: Sendable {
    let gateway: Gateway
    let baseURL: String
    let clock: TestClock
    let http: TestHTTPClient
    private let upstream: HTTPClient
    private let testClient: HTTPClient
    private let server: Task<Void, any Error>
    private let group: ServiceGroup

    /// Fixed keys, so a second instance (a restart) can open the first one's sessions.
    static let sealingKey = CredentialSealer.Key(id: "k1", bytes: Data(repeating: 7, count: 32))
    static let signingKeyPEM = KeyMaterial.newSigningKey()

    static let clientRedirectURI = "http://127.0.0.1:9/callback"

    /// The server did not come up on the port it was given (another process took it meanwhile), and why.
    private struct NotListening: Error {
        let port: Int
        let reason: String
    }

    static func start(
        _ standIns: StandIns, store: any SessionStore = MemorySessionStore(), clock: TestClock = TestClock(),
        providerFiles: [(id: String, yaml: String)] = [], providerEnvironment: [String: String] = [:],
        configure: (inout ServerSettings) -> Void = { _ in }
    ) async throws -> GatewayInstance {
        // The port is chosen before the gateway listens (its public URL names it), so another process may
        // take it in between: then try another one instead of waiting forever.
        for _ in 1..<5 {
            do {
                return try await start(
                    on: FreePort.next(), standIns, store: store, clock: clock, providerFiles: providerFiles, providerEnvironment: providerEnvironment,
                    configure: configure)
            } catch let error as NotListening {
                Issue.record(Comment(rawValue: "not listening on \(error.port): \(error.reason); another port"), severity: .warning)
                continue
            }
        }
        return try await start(
            on: FreePort.next(), standIns, store: store, clock: clock, providerFiles: providerFiles, providerEnvironment: providerEnvironment,
            configure: configure)
    }

    private static func start(
        on port: Int, _ standIns: StandIns, store: any SessionStore, clock: TestClock,
        providerFiles: [(id: String, yaml: String)], providerEnvironment: [String: String], configure: (inout ServerSettings) -> Void
    ) async throws -> GatewayInstance {
        let baseURL = "http://127.0.0.1:\(port)"
        var settings = ServerSettings(publicURL: baseURL)
        settings.backend.url = standIns.backend.baseURL
        settings.allowedRedirectURIs = ["http://127.0.0.1/callback"]
        settings.cookie.secure = false
        configure(&settings)

        var redirects = HTTPClient.Configuration()
        redirects.redirectConfiguration = .disallow
        let upstream = HTTPClient(eventLoopGroupProvider: .singleton, configuration: GatewayLauncher.upstreamClientConfiguration())
        let testClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: redirects)
        let context = ProviderContext(
            transport: Gateway.providerTransport(client: upstream, timeout: settings.upstreamTimeout, logger: Logger(label: "gatehouse-test")),
            clock: clock.source,
            publicURL: baseURL)
        let oauth = standIns.oauth
        var providers: [any AuthProvider] = ["demo", "other"].map { id in
            OAuth2Provider(
                descriptor: ProviderDescriptor(id: id, kind: "oauth2", api: ProviderAPI(url: oauth.apiBaseURL)),
                configuration: .init(
                    authorizationEndpoint: oauth.authorizationEndpoint, tokenEndpoint: oauth.tokenEndpoint,
                    userinfoEndpoint: oauth.userinfoEndpoint, revocationEndpoint: oauth.revocationEndpoint,
                    issuer: oauth.baseURL, clientID: oauth.configuration.clientID, scopes: ["grades"]),
                context: context)
        }
        // Further providers as operators write them: through the real provider-file loader, secrets from
        // `providerEnvironment` (a provider file never holds one inline).
        for file in providerFiles {
            let document = try YAMLDocument(text: file.yaml, file: "Providers/\(file.id).yaml")
            providers.append(
                try ProviderCatalog.provider(from: document, kinds: ProviderRegistry.kinds, context: context, environment: providerEnvironment))
        }
        try await store.migrate()
        var logger = Logger(label: "gatehouse-test")
        logger.logLevel = .warning
        let gateway = try await Gateway(
            settings: settings, providers: ProviderSet(providers), store: store, sealingKeys: [sealingKey],
            signingKeysPEM: [("s1", signingKeyPEM)], httpClient: upstream, clock: clock.source, logger: logger)
        let (ready, readyContinuation) = AsyncStream<Void>.makeStream()
        let app = buildApplication(gateway: gateway, host: "127.0.0.1", port: port) { _ in readyContinuation.yield() }
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let server = Task {
            defer { readyContinuation.finish() }
            try await group.run()
        }
        var listening = false
        for await _ in ready {
            listening = true
            break
        }
        guard listening else {
            let ended = await server.result
            try? await testClient.shutdown()
            try? await upstream.shutdown()
            throw NotListening(port: port, reason: (try? ended.get()).map { "ended without an error" } ?? "\(ended)")
        }
        return GatewayInstance(
            gateway: gateway, baseURL: baseURL, clock: clock, http: TestHTTPClient(client: testClient), upstream: upstream,
            testClient: testClient, server: server, group: group)
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = await server.result
        try? await testClient.shutdown()
        try? await upstream.shutdown()
    }

    /// Runs `body` with a gateway, stopping it afterwards whatever happens.
    static func with<T: Sendable>(
        _ standIns: StandIns, store: any SessionStore = MemorySessionStore(), clock: TestClock = TestClock(),
        providerFiles: [(id: String, yaml: String)] = [], providerEnvironment: [String: String] = [:],
        configure: (inout ServerSettings) -> Void = { _ in }, _ body: (GatewayInstance) async throws -> T
    ) async throws -> T {
        let instance = try await start(
            standIns, store: store, clock: clock, providerFiles: providerFiles, providerEnvironment: providerEnvironment, configure: configure)
        do {
            let result = try await body(instance)
            await instance.stop()
            return result
        } catch {
            await instance.stop()
            throw error
        }
    }

    func url(_ path: String) -> String { baseURL + path }

    func bearer(_ token: String) -> [(String, String)] { [("Authorization", "Bearer \(token)")] }
}

public import AsyncHTTPClient
public import Foundation
import GatehouseConfiguration
public import GatehouseCore
import JWTKit
public import Logging

/// Everything a running gateway shares across requests: settings, providers, store, keys, clients.
/// It wires the parts once; each route gets only the parts it uses.
public struct Gateway: Sendable {
    public let settings: ServerSettings
    public let providers: ProviderSet
    public let store: any SessionStore
    public let clock: TimeSource
    public let logger: Logger
    let sessions: SessionManager
    let signer: AssertionSigner
    let refresher: RefreshCoordinator
    let metrics: GatewayMetrics
    let httpClient: HTTPClient
    let refreshPolicy: RefreshPolicy
    let loginFlow: LoginFlow
    let resolver: SessionResolver
    /// DPoP proofs and session binding (RFC 9449).
    let dpop: DPoPVerifier
    let upstream: UpstreamClient
    /// `access:`, `backend`, `upstreams:` and `forward_auth.apps:`, replaced together on SIGHUP.
    let policy: CurrentPolicy
    /// One line and one count per answered request (router and relay).
    let accessLog: AccessLog
    /// What outbound calls trust (`outbound_tls`, providers' `tls.ca_file`), replaced on SIGHUP.
    let trust: OutboundTrust
    /// Wrong user codes per browser on the device page (this instance).
    let deviceAttempts = DeviceAttemptLimiter()
    /// The tracer when `tracing:` is on (the launcher sets it); nil: no spans, and trace context passes through untouched.
    var tracing: GatewayTracing? = nil

    /// - Parameters:
    ///   - sealingKeys: 32-byte AES keys with ids; the first seals.
    ///   - signingKeysPEM: ES256 private keys (PEM) with ids; the first signs.
    ///   - httpClient: shared upstream client; its owner shuts it down.
    public init(
        settings: ServerSettings, providers: ProviderSet, store: any SessionStore,
        sealingKeys: [CredentialSealer.Key], signingKeysPEM: [(id: String, pem: String)],
        httpClient: HTTPClient, clock: TimeSource = .system, logger: Logger = Logger(label: "gatehouse")
    ) async throws {
        try await self.init(
            settings: settings, providers: providers, store: store, sealingKeys: sealingKeys, signingKeysPEM: signingKeysPEM,
            httpClient: httpClient, clock: clock, logger: logger, metrics: GatewayMetrics(),
            trust: OutboundTrust(OutboundTLS(settings.outboundTLS)))
    }

    /// The same, counting into `metrics` (which the launcher also gave the store's ``InstrumentedSessionStore``).
    init(
        settings: ServerSettings, providers: ProviderSet, store: any SessionStore,
        sealingKeys: [CredentialSealer.Key], signingKeysPEM: [(id: String, pem: String)],
        httpClient: HTTPClient, clock: TimeSource, logger: Logger, metrics: GatewayMetrics, trust: OutboundTrust,
        serverNames: ServerNameClients? = nil
    ) async throws {
        self.trust = trust
        self.settings = settings
        self.providers = providers
        self.store = store
        self.clock = clock
        self.logger = logger
        self.httpClient = httpClient
        policy = CurrentPolicy(
            PolicySnapshot(
                access: settings.access, upstreams: UpstreamTable(settings: settings, outbound: trust.outbound),
                providerGeneration: providers.generation))
        let sealer = try CredentialSealer(keys: sealingKeys)
        let signer = try await AssertionSigner(
            signingKeys: signingKeysPEM.map { .init(id: $0.id, key: try .init(pem: $0.pem)) },
            issuer: settings.publicURL, audience: settings.backend.audience)
        self.signer = signer
        sessions = SessionManager(store: store, sealer: sealer, clock: clock, settings: settings, onEnd: { signer.forget(sessionID: $0) })
        self.metrics = metrics
        accessLog = AccessLog(logger: logger, metrics: metrics, enabled: settings.accessLog, format: settings.logFormat)
        refresher = RefreshCoordinator(sessions: sessions, upstreamTimeout: settings.upstreamTimeout, metrics: metrics, logger: logger)
        refreshPolicy = RefreshPolicy(skew: settings.refreshSkew)
        loginFlow = LoginFlow(settings: settings, sessions: sessions, metrics: metrics, policy: policy)
        let dpop = DPoPVerifier(policy: settings.dpop, publicURL: settings.publicURL, store: store, clock: clock, sealingKeys: sealingKeys)
        self.dpop = dpop
        resolver = SessionResolver(
            cookieName: settings.cookie.name, sessions: sessions, dpop: dpop,
            providerTokens: ProviderTokenAuthenticator(providers: providers, clock: clock))
        upstream = UpstreamClient(
            httpClient: httpClient, settings: settings, metrics: metrics, trust: trust,
            serverNames: serverNames ?? ServerNameClients(configuration: GatewayLauncher.upstreamClientConfiguration()))
    }
}

extension Gateway {
    /// The transport adapters use to reach their providers: the shared client, buffered, with the upstream timeout.
    /// A call that fails is logged to `logger` with its technical cause.
    public static func providerTransport(client: HTTPClient, timeout: TimeInterval, logger: Logger) -> any HTTPTransport {
        AsyncHTTPTransport(client: client, timeout: timeout, logger: logger)
    }

    /// The same with the trust in force: `outbound_tls`, and `caFile` (a provider's `tls.ca_file`) when given.
    static func providerTransport(
        client: HTTPClient, timeout: TimeInterval, logger: Logger, trust: OutboundTrust, caFile: String? = nil,
        outages: ProviderOutageReporter? = nil
    ) -> AsyncHTTPTransport {
        AsyncHTTPTransport(client: client, timeout: timeout, logger: logger, trust: trust, caFile: caFile, outages: outages)
    }
}

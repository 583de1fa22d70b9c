public import AsyncHTTPClient
import Foundation
public import GatehouseConfiguration
public import GatehouseCore
import GatehouseProviders
import GatehouseStore
import Hummingbird
public import Logging
import ServiceLifecycle
import UnixSignals

/// Turns a validated ``GatewayConfiguration`` into a running gateway: store, keys, providers, server
/// and its services (upstream client, session sweeper, SIGHUP reload). What `gatehouse serve` runs.
public enum GatewayLauncher {
    /// The server settings of a configuration.
    public static func settings(from configuration: GatewayConfiguration) -> ServerSettings {
        ServerSettings(configuration: configuration)
    }

    /// The configured session store (not yet migrated).
    ///
    /// A `postgres` store has a connection pool that must run: use it inside ``withRunningStore(_:_:)``.
    public static func makeStore(_ configuration: GatewayConfiguration, logger: Logger = Logger(label: "gatehouse.store")) throws -> any SessionStore
    {
        switch configuration.store.kind {
        case .memory: return MemorySessionStore()
        case .sqlite: return try SQLiteSessionStore(path: configuration.store.path)
        case .postgres:
            guard let url = configuration.store.url else {
                throw GatehouseError(code: .invalidConfiguration, status: 500, detail: "store.url is required when store.kind is postgres.")
            }
            return try PostgresSessionStore(url: url, poolSize: configuration.store.poolSize, logger: logger)
        }
    }

    /// Runs `body` while the store's connection pool (if it has one) runs; the pool stops when `body` returns.
    public static func withRunningStore<T: Sendable>(_ store: any SessionStore, _ body: () async throws -> T) async throws -> T {
        guard let postgres = store as? PostgresSessionStore else { return try await body() }
        // Wait until the pool task has begun: a lease asked for before `run()` is entered is served, but
        // PostgresNIO logs a warning for it.
        let (begun, signal) = AsyncStream<Void>.makeStream()
        let pool = Task {
            signal.finish()
            try await postgres.run()
        }
        defer { pool.cancel() }
        for await _ in begun {}
        return try await body()
    }

    /// Migrates the store before serving. A store that cannot be reached (PostgreSQL down) does not stop
    /// the start: the gateway serves 503 `store_unavailable` (and `/readyz` fails) behind a
    /// ``MigrationGatedStore`` while a ``StoreMigrator`` service retries, so an instance started before
    /// its database recovers by itself, as one started after it does. Any other error stops the start.
    static func migrateAtStart(_ store: any SessionStore, logger: Logger) async throws -> (any SessionStore, [any Service]) {
        do {
            try await store.migrate()
            return (store, [])
        } catch let error as StoreUnavailableError {
            logger.warning(
                "session store unreachable at start-up: serving 503 store_unavailable until it answers",
                metadata: ["error": "\(error)"])
            let gated = MigrationGatedStore(base: store)
            return (gated, [StoreMigrator(store: gated, logger: logger)])
        }
    }

    /// The in-memory session cache of `store.session_cache_seconds`, with the service that keeps it current.
    /// A copy lives at most the configured time and at most a tenth of the idle timeout (the slack the idle
    /// check already has from recording activity coarsely).
    static func sessionCache(
        _ configuration: GatewayConfiguration, over store: any SessionStore, feed: any SessionStore, logger: Logger
    ) -> (store: CachingSessionStore, synchronizer: any Service)? {
        guard configuration.store.sessionCacheSeconds > 0, let feed = feed as? any SessionChangeFeed else { return nil }
        let timeToLive = min(TimeInterval(configuration.store.sessionCacheSeconds), TimeInterval(configuration.sessions.idleTimeoutSeconds) / 10)
        let cache = CachingSessionStore(base: store, timeToLive: timeToLive)
        return (cache, SessionCacheSynchronizer(cache: cache, feed: feed, logger: logger))
    }

    /// Logs every provider that is not ready (its reason: e.g. the OIDC discovery document cannot be fetched).
    static func reportUnready(_ providers: ProviderSet, logger: Logger) async {
        for case let provider as any ReadinessReporting in providers.all {
            if case .notReady(let reason) = await provider.readiness {
                logger.warning(
                    "provider not ready: its logins answer 503 until it is",
                    metadata: ["provider": "\(provider.descriptor.id)", "reason": "\(reason)"])
            }
        }
    }

    /// Logs, at `notice`, every ready provider whose sign-outs cannot revoke its tokens (no revocation endpoint in
    /// its file, nor in its discovery document). Not a warning: many OpenID providers have none (Microsoft Entra ID),
    /// and an operator could not silence it; `gatehouse check` warns where the files alone tell.
    static func reportRevocationGaps(_ providers: ProviderSet, logger: Logger) async {
        for case let provider as any RevokingProvider in providers.all {
            if let reporting = provider as? any ReadinessReporting, case .notReady = await reporting.readiness { continue }
            if let gap = provider.revocationWarning { logger.notice("\(gap)", metadata: ["provider": "\(provider.descriptor.id)"]) }
        }
    }

    /// Loads and validates the provider files; the optional ones whose environment is not set are skipped.
    /// - Parameters:
    ///   - trusting: the transport of a provider with its own `tls.ca_file`; nil: `transport` for every provider.
    public static func loadProviderFiles(
        _ configuration: GatewayConfiguration, transport: any HTTPTransport,
        trusting: (@Sendable (_ caFile: String) throws -> any HTTPTransport)? = nil
    ) throws -> ProviderCatalog.Loaded {
        let context = ProviderContext(transport: transport, publicURL: configuration.publicURL, trustingTransport: trusting)
        return try ProviderCatalog.loadReporting(directory: configuration.providersDirectory, kinds: ProviderRegistry.kinds, context: context)
    }

    /// Loads and validates the provider files, logging each optional provider that was skipped.
    public static func loadProviders(
        _ configuration: GatewayConfiguration, transport: any HTTPTransport, logger: Logger,
        trusting: (@Sendable (_ caFile: String) throws -> any HTTPTransport)? = nil
    ) throws -> [any AuthProvider] {
        let loaded = try loadProviderFiles(configuration, transport: transport, trusting: trusting)
        for line in loaded.skipped { logger.warning("\(line)") }
        return loaded.providers
    }

    /// The keys of a configuration, generated under `data_dir` when none are configured.
    public static func keys(_ configuration: GatewayConfiguration) throws -> KeyMaterial {
        let problems = KeyMaterial.problems(in: configuration.keys)
        guard problems.isEmpty else { throw ConfigurationErrors(problems) }
        return try KeyMaterial.load(
            sealing: configuration.keys.sealing.map { ($0.id, $0.file) },
            signing: configuration.keys.signing.map { ($0.id, $0.file) },
            dataDirectory: configuration.dataDirectory)
    }

    /// Reads the configuration file again (SIGHUP), with the environment's settings over it as at start-up;
    /// `nil` without a file.
    static func configurationLoader(_ configuration: GatewayConfiguration) -> (@Sendable () throws -> GatewayConfiguration)? {
        guard let file = configuration.file else { return nil }
        return { @Sendable () throws -> GatewayConfiguration in try GatewayConfiguration.load(path: file) }
    }

    /// Runs the gateway until SIGTERM or SIGINT.
    /// - Parameters:
    ///   - makeProviders: builds the providers instead of reading `providers_dir` (`gatehouse demo`).
    public static func run(
        _ configuration: GatewayConfiguration, logger: Logger,
        makeProviders: (@Sendable (any HTTPTransport) throws -> [any AuthProvider])? = nil,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        // Before anything is created: a data directory this user cannot write is one line that names it.
        let directories = StateDirectories.problems(in: configuration)
        guard directories.isEmpty else { throw ConfigurationErrors(directories) }
        // What every outbound call trusts (`outbound_tls`, SSL_CERT_FILE, SSL_CERT_DIR): the shared client's own.
        let trust = try OutboundTrust(OutboundTLS(configuration.outboundTLS))
        var clientConfiguration = upstreamClientConfiguration()
        clientConfiguration.tlsConfiguration = trust.clientConfiguration
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        let serverNames = ServerNameClients(configuration: clientConfiguration)
        do {
            let timeout = TimeInterval(configuration.limits.upstreamTimeoutSeconds)
            // One account of each provider host's outages, whichever provider's call fails.
            let outages = ProviderOutageReporter(logger: logger)
            let transport = Gateway.providerTransport(client: client, timeout: timeout, logger: logger, trust: trust, outages: outages)
            // A provider file's `tls.ca_file`, read again at every load (start-up, SIGHUP).
            let trusting: @Sendable (String) throws -> any HTTPTransport = { caFile in
                try trust.reload(caFile: caFile)
                return Gateway.providerTransport(
                    client: client, timeout: timeout, logger: logger, trust: trust, caFile: caFile, outages: outages)
            }
            let load: @Sendable () throws -> [any AuthProvider] = {
                try makeProviders?(transport) ?? loadProviders(configuration, transport: transport, logger: logger, trusting: trusting)
            }
            let providers = ProviderSet(try load())
            if providers.all.isEmpty {
                logger.warning(
                    "no provider is configured: nobody can sign in, and /readyz answers 503 no_providers until a provider file is added",
                    metadata: ["providers_dir": "\(configuration.providersDirectory)"])
            }
            let configuredStore = try makeStore(configuration, logger: logger)
            try await withRunningStore(configuredStore) {
                let metrics = GatewayMetrics()
                // Timed below the session cache: the store's own latency, not the cache's.
                var (store, storeServices) = try await migrateAtStart(
                    InstrumentedSessionStore(base: configuredStore, metrics: metrics, outages: StoreOutageReporter(logger: logger)), logger: logger)
                if let cache = sessionCache(configuration, over: store, feed: configuredStore, logger: logger) {
                    store = cache.store
                    storeServices.append(cache.synchronizer)
                }
                let keys = try keys(configuration)
                var gateway = try await Gateway(
                    settings: settings(from: configuration), providers: providers, store: store,
                    sealingKeys: keys.sealing, signingKeysPEM: keys.signing, httpClient: client, clock: .system, logger: logger, metrics: metrics,
                    trust: trust, serverNames: serverNames)
                let tracing = try GatewayTracing.make(configuration.tracing, logger: logger)
                gateway.tracing = tracing?.0
                let services: [any Service] =
                    storeServices + [
                        HTTPClientService(client: client, serverNames: serverNames),
                        SessionSweeper(
                            store: store, clock: gateway.clock, idleTimeout: gateway.settings.idleTimeout, logger: logger,
                            counting: (configuredStore as? any SessionListing).map { ($0, metrics) }),
                    ]
                let providerReloader = ProviderReloader(
                    providers: providers, load: load, policy: gateway.policy,
                    upstreamTimeout: gateway.settings.upstreamTimeout, loadConfiguration: configurationLoader(configuration), trust: trust,
                    logger: logger)
                let metricsServices: [any Service] =
                    configuration.metricsListen.map { address in
                        [buildMetricsApplication(metrics: gateway.metrics, host: address.host, port: address.port, logger: logger)]
                    } ?? []
                let (tls, tlsReloader, tlsServices) = try tlsListener(configuration, metrics: gateway.metrics, logger: logger)
                let hangup = HangupReloader(reloads: [providerReloader.reload] + (tlsReloader.map { [$0.reload] } ?? []))
                // Say at once which providers cannot take logins (OIDC discovery failing, …), rather than at the
                // first login; `/readyz` reports them as `degraded` meanwhile.
                Task {
                    await reportUnready(providers, logger: logger)
                    await reportRevocationGaps(providers, logger: logger)
                }
                let app = buildApplication(
                    gateway: gateway, host: configuration.listenHost, port: configuration.listenPort, tls: tls,
                    services: services + [hangup] + metricsServices + tlsServices,
                    onServerRunning: onServerRunning)
                // The notice is shut down first (services stop in reverse order), so it is logged before the listener closes.
                let group = ServiceGroup(
                    configuration: .init(
                        // The exporter stops last: the spans of the last answers are sent before it ends.
                        services: (tracing.map { [$0.1] } ?? []) + [app, ShutdownNotice(logger: logger)],
                        gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
                // Lines of the last answers may still be in the access log's batch.
                defer { gateway.accessLog.flush() }
                try await group.run()
            }
        } catch {
            await serverNames.shutdown()
            try? await client.shutdown()
            throw error
        }
    }

    /// With `tls:`, the listener's TLS contexts, their SIGHUP reload and the `redirect_http_listen` listener.
    static func tlsListener(
        _ configuration: GatewayConfiguration, metrics: GatewayMetrics, logger: Logger
    ) throws -> (TLSContextStore?, TLSCertificateReloader?, [any Service]) {
        guard let tls = configuration.tls else { return (nil, nil, []) }
        let contexts = try TLSContextStore(configuration: tls, metrics: metrics)
        if let warning = tls.expiryWarning() { logger.warning("\(warning)") }
        var services: [any Service] = []
        if let redirect = configuration.redirectHTTPListen {
            services.append(HTTPSRedirect.application(publicURL: configuration.publicURL, host: redirect.host, port: redirect.port, logger: logger))
        }
        return (contexts, TLSCertificateReloader(contexts: contexts, logger: logger), services)
    }

    /// Upstream pool and timeouts: connections are reused, redirects are passed to the client, never followed.
    public static func upstreamClientConfiguration() -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        configuration.timeout.connect = .seconds(5)
        // A refused connection is an answer (502 at once), not something to retry until the deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }
}

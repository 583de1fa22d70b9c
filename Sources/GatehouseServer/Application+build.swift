import GatehouseConfiguration
public import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
public import ServiceLifecycle

/// Builds the gateway's router: every route of the v1 API, with problem+json errors and limits.
public func buildRouter(gateway: Gateway) -> Router<GatehouseRequestContext> {
    let router = Router(context: GatehouseRequestContext.self)
    // Outermost first: the request id and the access log see every answer; CORS headers also go on problems.
    router.add(
        middleware: AccessLogMiddleware(log: gateway.accessLog, trustedProxies: gateway.settings.trustedProxies, tracing: gateway.tracing))
    if !gateway.settings.corsAllowedOrigins.isEmpty {
        router.add(middleware: CORSPolicyMiddleware(allowedOrigins: gateway.settings.corsAllowedOrigins))
    }
    router.add(middleware: ProblemMiddleware())
    router.add(middleware: RequestHeadMiddleware(maxHeaderBytes: gateway.settings.maxHeaderBytes, maxURLBytes: gateway.settings.maxURLBytes))
    HealthController(
        store: gateway.store, providers: gateway.providers, metrics: gateway.metrics, signer: gateway.signer,
        metricsOnOwnListener: gateway.settings.metricsOnOwnListener
    ).addRoutes(to: router)
    ProvidersController(providers: gateway.providers).addRoutes(to: router)
    OpenAPIController(providers: gateway.providers).addRoutes(to: router)
    AuthController(
        providers: gateway.providers, flow: gateway.loginFlow, dpop: gateway.dpop, maxBodyBytes: gateway.settings.maxBodyBytes,
        resolver: gateway.resolver
    ).addRoutes(to: router)
    BackChannelLogoutController(providers: gateway.providers, sessions: gateway.sessions, clock: gateway.clock).addRoutes(to: router)
    SessionController(
        flow: gateway.loginFlow, sessions: gateway.sessions, providers: gateway.providers, refresher: gateway.refresher,
        resolver: gateway.resolver, dpop: gateway.dpop, metrics: gateway.metrics, settings: gateway.settings
    ).addRoutes(to: router)
    SignOutController(
        sessions: gateway.sessions, resolver: gateway.resolver, providers: gateway.providers, policy: gateway.policy, metrics: gateway.metrics,
        settings: gateway.settings
    ).addRoutes(to: router)
    ProxyController(
        providers: gateway.providers, trustedProxies: gateway.settings.trustedProxies,
        resolver: gateway.resolver, refresher: gateway.refresher,
        refreshPolicy: gateway.refreshPolicy, signer: gateway.signer, clock: gateway.clock, upstream: gateway.upstream,
        policy: gateway.policy, metrics: gateway.metrics, publicURL: gateway.settings.publicURL
    ).addRoutes(to: router)
    AuthzController(
        resolver: gateway.resolver, policy: gateway.policy, signer: gateway.signer,
        providers: gateway.providers, refresher: gateway.refresher, refreshPolicy: gateway.refreshPolicy, clock: gateway.clock,
        metrics: gateway.metrics, publicURL: gateway.settings.publicURL
    ).addRoutes(to: router)
    let loginPages = LoginPageController(
        providers: gateway.providers, flow: gateway.loginFlow,
        transport: { [gateway] caFile in
            Gateway.providerTransport(
                client: gateway.httpClient, timeout: gateway.settings.upstreamTimeout, logger: gateway.logger, trust: gateway.trust, caFile: caFile)
        },
        clock: gateway.clock, loginLifetime: gateway.settings.loginTransactionLifetime,
        jars: LoginPageJars(
            store: gateway.sessions.store, sealer: gateway.sessions.sealer, capacity: gateway.settings.pageLogins,
            perClient: gateway.settings.pageLoginsPerClient)
    )
    loginPages.addRoutes(to: router)
    DeviceController(
        providers: gateway.providers, flow: gateway.loginFlow, pages: loginPages, dpop: gateway.dpop, settings: gateway.settings,
        limiter: gateway.deviceAttempts
    ).addRoutes(to: router)
    HomePage(providers: gateway.providers, resolver: gateway.resolver, policy: gateway.policy).addRoutes(to: router)
    return router
}

/// Builds the gateway application listening on `host:port` (port 0 picks a free one).
///
/// - Parameters:
///   - onServerRunning: called with the bound port once the server listens.
public func buildApplication(
    gateway: Gateway, host: String, port: Int, services: [any Service] = [],
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) -> GatewayApplication {
    buildApplication(gateway: gateway, host: host, port: port, tls: nil, services: services, onServerRunning: onServerRunning)
}

/// Builds the gateway application listening on `host:port`, speaking HTTPS (and HTTP/2) with `tls`'s current
/// pair when it is given.
func buildApplication(
    gateway: Gateway, host: String, port: Int, tls: TLSContextStore?, services: [any Service] = [],
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) -> GatewayApplication {
    let relay = APIRelay(gateway: gateway)
    let settings = gateway.settings
    let client = ClientLimits(
        idleTimeout: .milliseconds(Int64(settings.clientIdleTimeout * 1000)), bodyTimeout: .milliseconds(Int64(settings.clientBodyTimeout * 1000)),
        sendTimeout: .milliseconds(Int64(settings.clientSendTimeout * 1000)),
        maxURLBytes: settings.maxURLBytes,
        connections: settings.maxConnectionsPerClient > 0 ? ClientConnectionLimiter(maxPerClient: settings.maxConnectionsPerClient) : nil)
    return GatewayApplication(
        router: buildRouter(gateway: gateway).buildResponder(),
        connection: { responder in
            let http1 = GatewayHTTPChannel(
                responder: responder, relay: relay, client: client, secure: tls != nil, hstsSeconds: tls?.configuration.hstsSeconds ?? 0)
            guard let tls else { return { try http1.serve(channel: $0, logger: $1) } }
            let https = GatewayTLSChannel(
                http1: http1, contexts: tls, maxHeaderListSize: GatewayTLSChannel.http2HeaderListBound(maxHeaderBytes: settings.maxHeaderBytes))
            return { try https.serve(channel: $0, logger: $1) }
        },
        host: host, port: port,
        // Services stop in the reverse order: the listener, which waits for the open connections, first, while
        // everything they may still need (the pools, the store, the HTTP client) runs.
        services: services + (relay.map { [RelayPoolService(pools: $0.pools)] } ?? []),
        onServerRunning: onServerRunning,
        logger: gateway.logger
    )
}

/// The listener of `metrics_listen`: `GET /metrics` and nothing else, for a scraper on an address the public
/// cannot reach.
func buildMetricsApplication(metrics: GatewayMetrics, host: String, port: Int, logger: Logger) -> some ApplicationProtocol & Service {
    let router = Router()
    HealthController.addMetricsRoute(to: router, metrics: metrics)
    return Application(router: router, configuration: .init(address: .hostname(host, port: port), serverName: "gatehouse"), logger: logger)
}

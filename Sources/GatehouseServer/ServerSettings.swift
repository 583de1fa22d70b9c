public import Foundation
public import GatehouseConfiguration
public import GatehouseCore

/// What the server reads of `gatehouse.yaml`: a view of the validated ``GatewayConfiguration``, under the names
/// the server's code uses (durations as `TimeInterval`). `gatehouse serve` builds it from the loaded file,
/// tests from ``init(publicURL:)`` (every other key at its default) and then set what they need.
public struct ServerSettings: Sendable {
    /// The configuration this is a view of; the properties below read (and set) it.
    public var configuration: GatewayConfiguration

    // Not keys of `gatehouse.yaml`: fixed for the server, settable for tests.

    /// Longest request target (path and query); longer ones get 414, as nginx's default 8 KiB buffer.
    public var maxURLBytes = 8_192
    /// Lifetime of a handoff code (single use).
    public var handoffLifetime: TimeInterval = 60
    /// Lifetime of a login transaction (gateway `state`).
    public var loginTransactionLifetime: TimeInterval = 600

    public init(configuration: GatewayConfiguration) {
        self.configuration = configuration
        publicURL = configuration.publicURL  // drops a trailing slash
    }

    /// The defaults of every key but `public_url`.
    public init(publicURL: String) {
        self.init(configuration: GatewayConfiguration(publicURL: publicURL))
    }

    /// Issuer of the assertion JWT and base of the callback URLs, without trailing slash.
    public var publicURL: String {
        get { configuration.publicURL }
        set { configuration.publicURL = newValue.hasSuffix("/") ? String(newValue.dropLast()) : newValue }
    }

    /// `host[:port]` of ``publicURL``: what the backend hears as `X-Forwarded-Host` (the relay and the upstream
    /// client keep their copy).
    public var publicAuthority: String {
        var rest = Substring(publicURL)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        return String(rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" })
    }

    /// `sessions.idle_timeout_seconds`.
    public var idleTimeout: TimeInterval {
        get { TimeInterval(configuration.sessions.idleTimeoutSeconds) }
        set { configuration.sessions.idleTimeoutSeconds = Self.seconds(newValue) }
    }
    /// `sessions.absolute_lifetime_seconds`.
    public var absoluteLifetime: TimeInterval {
        get { TimeInterval(configuration.sessions.absoluteLifetimeSeconds) }
        set { configuration.sessions.absoluteLifetimeSeconds = Self.seconds(newValue) }
    }
    /// `sessions.cookie`: the session cookie.
    public var cookie: CookieSettings {
        get { configuration.sessions.cookie }
        set { configuration.sessions.cookie = newValue }
    }
    /// `sessions.dpop:`: binding sessions to a client key.
    public var dpop: DPoPPolicy {
        get { configuration.sessions.dpop }
        set { configuration.sessions.dpop = newValue }
    }
    /// `refresh.skew_seconds`.
    public var refreshSkew: TimeInterval {
        get { TimeInterval(configuration.refresh.skewSeconds) }
        set { configuration.refresh.skewSeconds = Self.seconds(newValue) }
    }
    /// Request bodies up to this size are buffered so a request can be replayed after a refresh.
    public var replayLimitBytes: Int {
        get { configuration.refresh.replayLimitBytes }
        set { configuration.refresh.replayLimitBytes = newValue }
    }
    /// `backend:`: the backend behind `/v1/api/…`.
    public var backend: BackendSettings {
        get { configuration.backend }
        set { configuration.backend = newValue }
    }
    /// `upstreams:`: named upstreams chosen by path prefix, besides ``backend``.
    public var upstreams: [UpstreamSettings] {
        get { configuration.upstreams }
        set { configuration.upstreams = newValue }
    }
    /// `outbound_tls:`: the certificate authorities every outbound call trusts.
    public var outboundTLS: GatewayConfiguration.OutboundTLS {
        get { configuration.outboundTLS }
        set { configuration.outboundTLS = newValue }
    }
    /// `forward_auth.apps:`: applications behind the operator's own proxy, told apart by host on `/v1/authz`.
    public var forwardAuthApps: [GatewayConfiguration.ForwardAuthApp] {
        get { configuration.forwardAuthApps }
        set { configuration.forwardAuthApps = newValue }
    }
    /// Client redirect URIs allowed for every provider.
    public var allowedRedirectURIs: [String] {
        get { configuration.allowedRedirectURIs }
        set { configuration.allowedRedirectURIs = newValue }
    }
    /// `cors.allowed_origins`.
    public var corsAllowedOrigins: [String] {
        get { configuration.cors.allowedOrigins }
        set { configuration.cors.allowedOrigins = newValue }
    }
    /// `access:`: who may sign in and reach which backend path.
    public var access: AccessPolicy {
        get { configuration.access }
        set { configuration.access = newValue }
    }
    /// `limits.max_body_bytes`.
    public var maxBodyBytes: Int {
        get { configuration.limits.maxBodyBytes }
        set { configuration.limits.maxBodyBytes = newValue }
    }
    /// `limits.max_header_bytes`.
    public var maxHeaderBytes: Int {
        get { configuration.limits.maxHeaderBytes }
        set { configuration.limits.maxHeaderBytes = newValue }
    }
    /// `limits.upstream_timeout_seconds`.
    public var upstreamTimeout: TimeInterval {
        get { TimeInterval(configuration.limits.upstreamTimeoutSeconds) }
        set { configuration.limits.upstreamTimeoutSeconds = Self.seconds(newValue) }
    }
    /// Page logins in progress that this instance started (all clients; the state itself is in the store).
    public var pageLogins: Int {
        get { configuration.limits.pageLogins }
        set { configuration.limits.pageLogins = newValue }
    }
    /// Page logins in progress from one client address that this instance started.
    public var pageLoginsPerClient: Int {
        get { configuration.limits.pageLoginsPerClient }
        set { configuration.limits.pageLoginsPerClient = newValue }
    }
    /// `/metrics` is on its own listener (`metrics_listen`), not on the public one.
    public var metricsOnOwnListener: Bool { configuration.metricsListen != nil }
    /// Peers whose `X-Forwarded-*` headers are kept and appended to (``ForwardedFields``).
    public var trustedProxies: TrustedProxies {
        get { configuration.trustedProxies }
        set { configuration.trustedProxies = newValue }
    }
    /// A client connection without a complete request head for this long is closed (idle or too slow).
    public var clientIdleTimeout: TimeInterval {
        get { TimeInterval(configuration.limits.clientIdleTimeoutSeconds) }
        set { configuration.limits.clientIdleTimeoutSeconds = Self.seconds(newValue) }
    }
    /// A request body that makes no progress for this long is cut (408, or `RST_STREAM` on HTTP/2).
    public var clientBodyTimeout: TimeInterval {
        get { TimeInterval(configuration.limits.clientBodyTimeoutSeconds) }
        set { configuration.limits.clientBodyTimeoutSeconds = Self.seconds(newValue) }
    }
    /// A client that takes none of its answer for this long is closed (or its HTTP/2 stream reset).
    public var clientSendTimeout: TimeInterval {
        get { TimeInterval(configuration.limits.clientSendTimeoutSeconds) }
        set { configuration.limits.clientSendTimeoutSeconds = Self.seconds(newValue) }
    }
    /// Open connections from one client address (0: no bound).
    public var maxConnectionsPerClient: Int {
        get { configuration.limits.maxConnectionsPerClient }
        set { configuration.limits.maxConnectionsPerClient = newValue }
    }
    /// An unused keep-alive connection to the backend is closed after this long.
    public var upstreamKeepalive: TimeInterval {
        get { TimeInterval(configuration.limits.upstreamKeepaliveSeconds) }
        set { configuration.limits.upstreamKeepaliveSeconds = Self.seconds(newValue) }
    }
    /// Unused keep-alive connections kept per upstream and event loop.
    public var upstreamIdleConnections: Int {
        get { configuration.limits.upstreamIdleConnections }
        set { configuration.limits.upstreamIdleConnections = newValue }
    }
    /// `logging.access_log`: one line per request.
    public var accessLog: Bool {
        get { configuration.logging.accessLog }
        set { configuration.logging.accessLog = newValue }
    }
    /// `logging.format`: how the access log's lines look (the process's other lines are its log handler's).
    public var logFormat: LogLineFormat {
        get { configuration.logging.format == .json ? .json : .text }
        set { configuration.logging.format = newValue == .json ? .json : .text }
    }

    /// Whole seconds, as `gatehouse.yaml` has them (a fraction rounds up: a timeout is never shortened).
    static func seconds(_ interval: TimeInterval) -> Int {
        Int(interval.rounded(.up))
    }
}

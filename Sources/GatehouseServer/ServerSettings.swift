public import Foundation
public import GatehouseCore

/// Everything the server needs from `gatehouse.yaml`, already validated. The CLI maps the parsed
/// configuration onto this; tests build it directly.
public struct ServerSettings: Sendable {
    /// Issuer of the assertion JWT and base of the callback URLs, without trailing slash.
    public var publicURL: String
    public var idleTimeout: TimeInterval = 3600
    public var absoluteLifetime: TimeInterval = 86_400
    public var cookie = CookieSettings()
    /// `sessions.dpop:`: binding sessions to a client key.
    public var dpop = DPoPPolicy()
    public var refreshSkew: TimeInterval = 30
    /// Request bodies up to this size are buffered so a request can be replayed after a refresh.
    public var replayLimitBytes = 1_048_576
    public var backend = BackendSettings()
    /// `upstreams:`: named upstreams chosen by path prefix, besides ``backend``.
    public var upstreams: [UpstreamSettings] = []
    /// Client redirect URIs allowed for every provider.
    public var allowedRedirectURIs: [String] = []
    public var corsAllowedOrigins: [String] = []
    /// `access:`: who may sign in and reach which backend path.
    public var access = AccessPolicy()
    public var maxBodyBytes = 10_485_760
    public var maxHeaderBytes = 16_384
    /// Longest request target (path and query); longer ones get 414, as nginx's default 8 KiB buffer.
    public var maxURLBytes = 8_192
    public var upstreamTimeout: TimeInterval = 30
    /// Lifetime of a handoff code (single use).
    public var handoffLifetime: TimeInterval = 60
    /// Lifetime of a login transaction (gateway `state`).
    public var loginTransactionLifetime: TimeInterval = 600
    /// Page logins in progress that this instance started (all clients; the state itself is in the store).
    public var pageLogins = 10_000
    /// Page logins in progress from one client address that this instance started.
    public var pageLoginsPerClient = 20
    /// `/metrics` is on its own listener (`metrics_listen`), not on the public one.
    public var metricsOnOwnListener = false
    /// Peers whose `X-Forwarded-*` headers are kept and appended to (``ForwardedFields``).
    public var trustedProxies: TrustedProxies = .none
    /// A client connection without a complete request head for this long is closed (idle or too slow).
    public var clientIdleTimeout: TimeInterval = 60
    /// An unused keep-alive connection to the backend is closed after this long.
    public var upstreamKeepalive: TimeInterval = 60
    /// `logging.access_log`: one line per request.
    public var accessLog = true
    /// `logging.format`: how the access log's lines look (the process's other lines are its log handler's).
    public var logFormat: LogLineFormat = .text

    public init(publicURL: String) {
        self.publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
    }

    /// `host[:port]` of ``publicURL``: what the backend hears as `X-Forwarded-Host`.
    public var publicAuthority: String {
        var rest = Substring(publicURL)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        return String(rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" })
    }

    /// The session cookie.
    public struct CookieSettings: Sendable {
        public var name = "__Host-gatehouse_session"
        public var secure = true
        public var sameSite = "Lax"
        public init() {}
    }

    /// The backend behind `/v1/api/…`.
    public struct BackendSettings: Sendable {
        public var url = "http://127.0.0.1:9000"
        public var audience = "backend"
        public var identityHeaders = true
        public var assertion = true
        public var forwardAccessToken = false
        /// How long it may take to start its answer; `nil`: ``ServerSettings/upstreamTimeout``.
        public var timeout: TimeInterval?
        public init() {}
    }
}

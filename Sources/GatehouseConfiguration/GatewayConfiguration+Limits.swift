import GatehouseCore

extension GatewayConfiguration {
    /// `limits:` — request sizes and upstream patience.
    public struct Limits: Sendable, Equatable {
        /// Largest request body accepted.
        public var maxBodyBytes: Int
        /// Largest request header section accepted.
        public var maxHeaderBytes: Int
        /// How long an upstream (backend, provider API, provider endpoints) may take.
        public var upstreamTimeoutSeconds: Int
        /// Page logins (`acs`, `capture`) in progress on this instance, all clients together.
        public var pageLogins: Int
        /// Page logins in progress from one client address, so that one client cannot use up ``pageLogins``.
        public var pageLoginsPerClient: Int
        /// How long a client connection may wait without a complete request head: idle between requests or
        /// sending its head too slowly (nginx's `client_header_timeout` and `keepalive_timeout` in one).
        public var clientIdleTimeoutSeconds: Int
        /// How long an unused keep-alive connection to the backend is kept (nginx's upstream `keepalive_timeout`).
        public var upstreamKeepaliveSeconds: Int
        /// Unused keep-alive connections kept open to each upstream, per event loop (core): one more is closed
        /// once its answer is in (nginx's upstream `keepalive`). HTTP/2 clients keep many requests in flight on
        /// few connections, and each needs a backend connection of its own while it is.
        public var upstreamIdleConnections: Int
        /// How long a request body may make no progress before the request is cut: 408 on HTTP/1.1, `RST_STREAM`
        /// on HTTP/2 (nginx's `client_body_timeout`).
        public var clientBodyTimeoutSeconds: Int
        /// Open connections from one client address; a new one past it is closed at once. 0: no bound.
        public var maxConnectionsPerClient: Int
        /// How long a client may take none of an answer the gateway is sending it before the connection (HTTP/1.1,
        /// or HTTP/2 when it is the connection that stalls) is closed or the stream (HTTP/2) reset (nginx's
        /// `send_timeout`).
        public var clientSendTimeoutSeconds: Int

        /// - Parameters:
        ///   - maxBodyBytes: 10 MiB by default.
        ///   - maxHeaderBytes: 16384 by default.
        ///   - upstreamTimeoutSeconds: 30 by default.
        ///   - pageLogins: 10,000 by default.
        ///   - pageLoginsPerClient: 20 by default.
        ///   - clientIdleTimeoutSeconds: 60 by default.
        ///   - upstreamKeepaliveSeconds: 60 by default.
        ///   - upstreamIdleConnections: 256 by default.
        ///   - clientBodyTimeoutSeconds: 60 by default.
        ///   - maxConnectionsPerClient: 0 (no bound) by default.
        ///   - clientSendTimeoutSeconds: 60 by default.
        public init(
            maxBodyBytes: Int = 10_485_760, maxHeaderBytes: Int = 16384, upstreamTimeoutSeconds: Int = 30,
            pageLogins: Int = 10_000, pageLoginsPerClient: Int = 20, clientIdleTimeoutSeconds: Int = 60, upstreamKeepaliveSeconds: Int = 60,
            upstreamIdleConnections: Int = 256, clientBodyTimeoutSeconds: Int = 60, maxConnectionsPerClient: Int = 0,
            clientSendTimeoutSeconds: Int = 60
        ) {
            self.maxBodyBytes = maxBodyBytes
            self.maxHeaderBytes = maxHeaderBytes
            self.upstreamTimeoutSeconds = upstreamTimeoutSeconds
            self.pageLogins = pageLogins
            self.pageLoginsPerClient = pageLoginsPerClient
            self.clientIdleTimeoutSeconds = clientIdleTimeoutSeconds
            self.upstreamKeepaliveSeconds = upstreamKeepaliveSeconds
            self.upstreamIdleConnections = upstreamIdleConnections
            self.clientBodyTimeoutSeconds = clientBodyTimeoutSeconds
            self.maxConnectionsPerClient = maxConnectionsPerClient
            self.clientSendTimeoutSeconds = clientSendTimeoutSeconds
        }

        init(_ map: ConfigMap) throws {
            self.init()
            maxBodyBytes = try map.positiveInt("max_body_bytes", unit: "bytes") ?? maxBodyBytes
            maxHeaderBytes = try map.positiveInt("max_header_bytes", unit: "bytes") ?? maxHeaderBytes
            upstreamTimeoutSeconds = try map.positiveInt("upstream_timeout_seconds", unit: "seconds") ?? upstreamTimeoutSeconds
            pageLogins = try map.positiveInt("page_logins", unit: "logins") ?? pageLogins
            pageLoginsPerClient = try map.positiveInt("page_logins_per_client", unit: "logins") ?? pageLoginsPerClient
            clientIdleTimeoutSeconds = try map.positiveInt("client_idle_timeout_seconds", unit: "seconds") ?? clientIdleTimeoutSeconds
            upstreamKeepaliveSeconds = try map.positiveInt("upstream_keepalive_seconds", unit: "seconds") ?? upstreamKeepaliveSeconds
            upstreamIdleConnections = try map.int("upstream_idle_connections", range: 0...65_536) ?? upstreamIdleConnections
            clientBodyTimeoutSeconds = try map.positiveInt("client_body_timeout_seconds", unit: "seconds") ?? clientBodyTimeoutSeconds
            maxConnectionsPerClient = try map.int("max_connections_per_client", range: 0...Int(Int32.max)) ?? maxConnectionsPerClient
            clientSendTimeoutSeconds = try map.positiveInt("client_send_timeout_seconds", unit: "seconds") ?? clientSendTimeoutSeconds
            try map.finish()
        }
    }
}

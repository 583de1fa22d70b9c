import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Keep-alive connections to the backend for the inbound connections of one event loop: made on that loop,
/// used only there, so a relayed request never changes threads. The most recently used is taken first, and a
/// connection unused for `idleTimeout` is closed, so that a burst's connections do not stay open for ever. An
/// `https` upstream's connections speak TLS with the upstream table's context (its trust and client certificate);
/// kept alive, a connection's handshake is paid once for many requests.
final class UpstreamConnectionPool: UpstreamConnectionSource {
    private let eventLoop: any EventLoop
    private let host: String
    private let port: Int
    private let tls: UpstreamPools.Endpoint.TLS?
    private let maxIdle: Int
    private let connectTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    /// Oldest first; each with the time it was released.
    private var idle: [(connection: UpstreamConnection, since: NIODeadline)] = []
    private var expiry: Scheduled<Void>?

    init(
        eventLoop: any EventLoop, host: String, port: Int, tls: UpstreamPools.Endpoint.TLS? = nil, maxIdle: Int, connectTimeout: TimeAmount,
        idleTimeout: TimeAmount
    ) {
        self.eventLoop = eventLoop
        self.host = host
        self.port = port
        self.tls = tls
        self.maxIdle = maxIdle
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
    }

    func takeIdle() -> UpstreamConnection? {
        while let (connection, _) = idle.popLast() {
            if connection.isActive {
                connection.reused = true
                return connection
            }
        }
        return nil
    }

    /// A new connection (none idle, or the retry of a request that a reused one lost).
    func connect() -> EventLoopFuture<UpstreamConnection>.Isolated {
        let tls = tls
        return ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            // At the TCP level (`socketOption` would be SOL_SOCKET, where the number means SO_DEBUG: root only).
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // TLS first: a handshake that fails (an untrusted certificate, no client certificate the upstream
                    // accepts) fails the exchange as an unreachable upstream would, 502.
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls.context, serverHostname: tls.serverName))
                    }
                    // No outbound validation: the relay writes fields llhttp parsed from the client, its own, and
                    // identity values made legal (`BackendIdentityHeaders.fieldValue`).
                    // Bytes after a `101` in the decoder's buffer go on to the tunnel when the decoder is removed.
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(
                        leftOverBytesStrategy: .forwardBytes, enableOutboundHeaderValidation: false)
                    try channel.pipeline.syncOperations.addHandler(UpstreamConnectionHandler())
                }
            }
            .connect(host: host, port: port)
            .assumeIsolated()
            .flatMapThrowing { channel in
                let handler = try channel.pipeline.syncOperations.handler(type: UpstreamConnectionHandler.self)
                return UpstreamConnection(channel: channel, handler: handler)
            }
    }

    /// Takes a connection back after a complete exchange that left it reusable.
    func release(_ connection: UpstreamConnection) {
        connection.handler.receiver = nil
        guard connection.isActive, idle.count < maxIdle else {
            connection.close()
            return
        }
        connection.setReading(true)
        idle.append((connection, .now()))
        scheduleExpiry()
    }

    /// Closes every idle connection (the gateway stops).
    func closeIdle() {
        expiry?.cancel()
        expiry = nil
        for (connection, _) in idle { connection.close() }
        idle.removeAll()
    }

    /// One timer per pool, set for the oldest idle connection's expiry.
    private func scheduleExpiry() {
        guard expiry == nil, let oldest = idle.first else { return }
        expiry = eventLoop.assumeIsolated().scheduleTask(deadline: oldest.since + idleTimeout) { [self] in
            expiry = nil
            let now = NIODeadline.now()
            while let oldest = idle.first, oldest.since + idleTimeout <= now {
                idle.removeFirst().connection.close()
            }
            scheduleExpiry()
        }
    }
}

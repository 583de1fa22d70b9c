import NIOCore
import NIOPosix
import NIOSSL

/// Keep-alive connections to one upstream for the client connections of one event loop: made on that loop, used only
/// there, so a relayed request never changes threads. The most recently released is taken first, and one unused for
/// `idleTimeout` is closed, so that a burst's connections do not stay open for ever. An `https` upstream's connections
/// speak TLS with the upstream table's context (its trust and client certificate); kept alive, a connection's
/// handshake is paid once for many requests. The relay's (``UpstreamConnectionPool``) and the lane's
/// (``LaneConnectionPool``) differ only in what their `Handler` puts behind TLS.
final class BackendConnectionPool<Handler: BackendConnectionHandler> {
    typealias Connection = BackendConnection<Handler>

    private let eventLoop: any EventLoop
    private let endpoint: UpstreamPools.Endpoint
    private let connectTimeout: TimeAmount
    private let maxIdle: Int
    private let idleTimeout: TimeAmount
    /// Oldest first; each with the time it was released.
    private var idle: [(connection: Connection, since: NIODeadline)] = []
    private var expiry: Scheduled<Void>?

    init(eventLoop: any EventLoop, endpoint: UpstreamPools.Endpoint, maxIdle: Int, connectTimeout: TimeAmount, idleTimeout: TimeAmount) {
        self.eventLoop = eventLoop
        self.endpoint = endpoint
        self.connectTimeout = connectTimeout
        self.maxIdle = maxIdle
        self.idleTimeout = idleTimeout
    }

    /// A new connection (none idle, or the retry of a request that a reused one lost).
    func connect() -> EventLoopFuture<Connection>.Isolated {
        let tls = endpoint.tls
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
                    try Handler.install(in: channel.pipeline.syncOperations)
                }
            }
            .connect(host: endpoint.host, port: endpoint.port)
            .assumeIsolated()
            .flatMapThrowing { channel in
                Connection(channel: channel, handler: try channel.pipeline.syncOperations.handler(type: Handler.self))
            }
    }

    /// An idle connection that is still open, marked `reused`; `nil` when there is none (then ``connect()``).
    func takeIdle() -> Connection? {
        while let (connection, _) = idle.popLast() {
            if connection.isActive {
                connection.reused = true
                return connection
            }
        }
        return nil
    }

    /// Takes a connection back after a complete exchange that left it reusable.
    func release(_ connection: Connection) {
        connection.handler.forgetReceiver()
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

import NIOCore
import NIOPosix
import NIOSSL

/// Keep-alive ``LaneConnection``s to one upstream for the client connections of one event loop, as
/// ``UpstreamConnectionPool`` keeps the relay's NIOHTTP1 ones: made on that loop and used only there, the most
/// recently used taken first, one unused for `idleTimeout` closed. An `https` upstream's connections speak TLS with
/// the upstream table's context.
final class LaneConnectionPool {
    private let eventLoop: any EventLoop
    private let endpoint: UpstreamPools.Endpoint
    private let maxIdle: Int
    private let connectTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    /// Oldest first; each with the time it was released.
    private var idle: [(connection: LaneConnection, since: NIODeadline)] = []
    private var expiry: Scheduled<Void>?

    init(eventLoop: any EventLoop, endpoint: UpstreamPools.Endpoint, maxIdle: Int, connectTimeout: TimeAmount, idleTimeout: TimeAmount) {
        self.eventLoop = eventLoop
        self.endpoint = endpoint
        self.maxIdle = maxIdle
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
    }

    /// An idle connection that is still open, marked `reused`; `nil` when there is none (then ``connect()``).
    func takeIdle() -> LaneConnection? {
        while let (connection, _) = idle.popLast() {
            if connection.isActive {
                connection.reused = true
                return connection
            }
        }
        return nil
    }

    /// A new connection (none idle, or the retry of a request that a reused one lost).
    func connect() -> EventLoopFuture<LaneConnection>.Isolated {
        let tls = endpoint.tls
        return ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls.context, serverHostname: tls.serverName))
                    }
                    try channel.pipeline.syncOperations.addHandler(LaneConnectionHandler())
                }
            }
            .connect(host: endpoint.host, port: endpoint.port)
            .assumeIsolated()
            .flatMapThrowing { channel in
                LaneConnection(channel: channel, handler: try channel.pipeline.syncOperations.handler(type: LaneConnectionHandler.self))
            }
    }

    /// Takes a connection back after a complete exchange that left it reusable.
    func release(_ connection: LaneConnection) {
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

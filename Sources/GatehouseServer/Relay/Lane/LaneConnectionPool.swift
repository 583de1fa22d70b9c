import NIOCore
import NIOPosix
import NIOSSL

/// Keep-alive ``LaneConnection``s to one upstream for the client connections of one event loop, as
/// ``UpstreamConnectionPool`` keeps the relay's NIOHTTP1 ones: made on that loop and used only there, its idle ones
/// ``KeptConnections``. An `https` upstream's connections speak TLS with the upstream table's context.
final class LaneConnectionPool {
    private let eventLoop: any EventLoop
    private let endpoint: UpstreamPools.Endpoint
    private let connectTimeout: TimeAmount
    private let kept: KeptConnections<LaneConnectionHandler>

    init(eventLoop: any EventLoop, endpoint: UpstreamPools.Endpoint, maxIdle: Int, connectTimeout: TimeAmount, idleTimeout: TimeAmount) {
        self.eventLoop = eventLoop
        self.endpoint = endpoint
        self.connectTimeout = connectTimeout
        kept = KeptConnections(eventLoop: eventLoop, maxIdle: maxIdle, idleTimeout: idleTimeout)
    }

    /// An idle connection that is still open, marked `reused`; `nil` when there is none (then ``connect()``).
    func takeIdle() -> LaneConnection? {
        kept.takeIdle()
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
        kept.release(connection)
    }

    /// Closes every idle connection (the gateway stops).
    func closeIdle() {
        kept.closeIdle()
    }
}

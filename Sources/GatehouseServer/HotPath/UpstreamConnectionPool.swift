import NIOCore
import NIOHTTP1
import NIOPosix

/// Keep-alive connections to the backend for the inbound connections of one event loop: made on that loop,
/// used only there, so a relayed request never changes threads. Most recently used first.
final class UpstreamConnectionPool {
    private let eventLoop: any EventLoop
    private let host: String
    private let port: Int
    private let maxIdle: Int
    private let connectTimeout: TimeAmount
    private var idle: [UpstreamConnection] = []

    init(eventLoop: any EventLoop, host: String, port: Int, maxIdle: Int, connectTimeout: TimeAmount) {
        self.eventLoop = eventLoop
        self.host = host
        self.port = port
        self.maxIdle = maxIdle
        self.connectTimeout = connectTimeout
    }

    /// An idle connection, or a new one.
    func acquire() -> EventLoopFuture<UpstreamConnection>.Isolated {
        while let connection = idle.popLast() {
            if connection.isActive {
                connection.reused = true
                return eventLoop.assumeIsolated().makeSucceededFuture(connection).assumeIsolated()
            }
        }
        return connect()
    }

    /// A new connection (for the retry of a request that a reused one lost).
    func connect() -> EventLoopFuture<UpstreamConnection>.Isolated {
        ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // No outbound validation: the relay writes fields llhttp parsed from the client, its own, and
                    // identity values it has checked (`APIRelay.isSafeFieldValue`).
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
        idle.append(connection)
    }

    /// Closes every idle connection (the gateway stops).
    func closeIdle() {
        for connection in idle { connection.close() }
        idle.removeAll()
    }
}

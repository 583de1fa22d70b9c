import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Keep-alive connections to the backend for the inbound connections of one event loop: made on that loop,
/// used only there, so a relayed request never changes threads. Its idle ones are ``KeptConnections``. An
/// `https` upstream's connections speak TLS with the upstream table's context (its trust and client certificate);
/// kept alive, a connection's handshake is paid once for many requests.
final class UpstreamConnectionPool: UpstreamConnectionSource {
    private let eventLoop: any EventLoop
    private let host: String
    private let port: Int
    private let tls: UpstreamPools.Endpoint.TLS?
    private let connectTimeout: TimeAmount
    private let kept: KeptConnections<UpstreamConnectionHandler>

    init(
        eventLoop: any EventLoop, host: String, port: Int, tls: UpstreamPools.Endpoint.TLS? = nil, maxIdle: Int, connectTimeout: TimeAmount,
        idleTimeout: TimeAmount
    ) {
        self.eventLoop = eventLoop
        self.host = host
        self.port = port
        self.tls = tls
        self.connectTimeout = connectTimeout
        kept = KeptConnections(eventLoop: eventLoop, maxIdle: maxIdle, idleTimeout: idleTimeout)
    }

    func takeIdle() -> UpstreamConnection? {
        kept.takeIdle()
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
        kept.release(connection)
    }

    /// Closes every idle connection (the gateway stops).
    func closeIdle() {
        kept.closeIdle()
    }
}

import GatehouseConfiguration
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL
import NIOTLS

/// The gateway's HTTPS connection (`tls:`): TLS with the current pair of ``TLSContextStore``, then by ALPN
/// either HTTP/2 (`h2`: each stream a ``GatewayHTTP2StreamChannel``) or HTTP/1.1 (the same
/// ``GatewayHTTPChannel`` as without TLS, `https` requests). Both reach the same relay and router.
struct GatewayTLSChannel: ServerChildChannel, HTTPChannelHandler {
    /// What ALPN chose.
    enum Negotiated: Sendable {
        case http1(GatewayHTTPChannel.Value)
        case http2(NIOHTTP2Handler.AsyncStreamMultiplexer<GatewayHTTPChannel.Value>)
    }

    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<Negotiated>
        let channel: any Channel
    }

    /// The HTTP/1.1 connection (secure), whose request handlers the HTTP/2 streams share.
    let http1: GatewayHTTPChannel
    let contexts: TLSContextStore
    /// HTTP/2 `SETTINGS_MAX_HEADER_LIST_SIZE`: the head limit of HTTP/1.1 (`limits.max_header_bytes`, at least 16 KiB).
    let maxHeaderListSize: Int

    var responder: HTTPChannelHandler.Responder { http1.responder }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(NIOSSLServerHandler(context: contexts.current))
            // A client that never completes its handshake is not kept: the idle limit of a connection applies.
            let handshakeTimeout = channel.eventLoop.scheduleTask(in: http1.clientIdleTimeout) { channel.close(promise: nil) }
            let (http1, streams, maxHeaderListSize) = (http1, GatewayHTTP2StreamChannel(http1: http1), maxHeaderListSize)
            let negotiation = NIOTypedApplicationProtocolNegotiationHandler<Negotiated> { result in
                handshakeTimeout.cancel()
                switch result {
                case .negotiated("h2"):
                    return channel.eventLoop.makeCompletedFuture {
                        let keeper = HTTP2ConnectionKeeper(idleTimeout: http1.clientIdleTimeout)
                        var configuration = NIOHTTP2Handler.Configuration()
                        configuration.connection.initialSettings = [
                            HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
                            HTTP2Setting(parameter: .maxHeaderListSize, value: maxHeaderListSize),
                        ]
                        let multiplexer = try channel.pipeline.syncOperations.configureAsyncHTTP2Pipeline(
                            mode: .server, streamDelegate: keeper.streamDelegate(on: channel.eventLoop), configuration: configuration
                        ) { stream in
                            streams.setup(channel: stream, logger: logger)
                        }
                        try channel.pipeline.syncOperations.addHandler(keeper)
                        return .http2(multiplexer)
                    }
                case .negotiated("http/1.1"), .fallback:
                    return http1.setup(channel: channel, logger: logger).map { .http1($0) }
                case .negotiated:
                    // Only `h2` and `http/1.1` are offered: anything else is a broken client.
                    return channel.close().flatMap { channel.eventLoop.makeFailedFuture(NIOHTTP2Errors.invalidALPNToken()) }
                }
            }
            try pipeline.addHandler(negotiation)
            return Value(negotiated: negotiation.protocolNegotiationResult, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http1(let connection):
                await http1.handle(value: connection, logger: logger)
            case .http2(let multiplexer):
                let streams = GatewayHTTP2StreamChannel(http1: http1)
                try await withThrowingDiscardingTaskGroup { group in
                    for try await stream in multiplexer.inbound {
                        group.addTask { await streams.handle(value: stream, logger: logger) }
                    }
                }
            }
        } catch {
            // A failed handshake, or the connection ended under its streams.
            logger.debug("TLS connection ended", metadata: ["error": "\(error)"])
        }
    }
}

extension HTTPServerBuilder {
    /// The gateway's HTTPS server: ``GatewayTLSChannel``.
    static func gatewayTLS(
        relay: APIRelay?, clientIdleTimeout: TimeAmount, maxURLBytes: Int, maxHeaderBytes: Int, contexts: TLSContextStore
    ) -> HTTPServerBuilder {
        .init { responder in
            GatewayTLSChannel(
                http1: GatewayHTTPChannel(
                    responder: responder, relay: relay, clientIdleTimeout: clientIdleTimeout, maxURLBytes: maxURLBytes, secure: true,
                    hstsSeconds: contexts.configuration.hstsSeconds),
                contexts: contexts, maxHeaderListSize: max(16384, maxHeaderBytes))
        }
    }
}

import GatehouseConfiguration
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL
import NIOTLS

/// The gateway's HTTPS connection (`tls:`): TLS with the current pair of ``TLSContextStore``, then by ALPN
/// either HTTP/2 (`h2`: the relay's ``HTTP2Lane`` for the simple relayed requests' streams, every other stream a
/// ``GatewayHTTP2StreamChannel``) or HTTP/1.1 (the same
/// ``GatewayHTTPChannel`` as without TLS, `https` requests). Both reach the same relay and router.
struct GatewayTLSChannel: Sendable {
    /// What ALPN chose.
    enum Negotiated: Sendable {
        case http1(GatewayHTTPChannel.Value)
        /// The streams whose requests the router serves (the relay answers the others on the event loop).
        case http2(AsyncStream<GatewayHTTPChannel.RouterChannel>)
    }

    /// The HTTP/1.1 connection (secure), whose request handlers the HTTP/2 streams share.
    let http1: GatewayHTTPChannel
    let contexts: TLSContextStore
    /// HTTP/2 `SETTINGS_MAX_HEADER_LIST_SIZE`, which NIOHTTP2 enforces as a connection error: see
    /// ``http2HeaderListBound(maxHeaderBytes:)``.
    let maxHeaderListSize: Int

    /// The header list NIOHTTP2 decodes before the stream's head reaches the handlers. Above
    /// `limits.max_header_bytes`, so that a list over the limit reaches the relay and the router, whose one
    /// judgment (``RequestHeadLimits``) answers that stream alone 431 with the same problem document as HTTP/1.1,
    /// and the connection's other streams go on. Still bounded, as HTTP/1.1's decoder is (80 KiB): a list past
    /// it, an HPACK bomb that expands a small block into a large list among them, ends the connection before it
    /// is held in memory. HTTP/2 counts 32 bytes per field where the limit counts 4 (RFC 7541 §4.1): the bound
    /// is well above the limit, 80 KiB or twice the limit.
    static func http2HeaderListBound(maxHeaderBytes: Int) -> Int { max(80 * 1024, 2 * maxHeaderBytes) }

    /// Sets a connection up and serves it, on its event loop (``GatewayListener``): the handlers up to TLS and the
    /// protocol switch now, the protocol's once ALPN has chosen. A task starts only for the router's requests on
    /// HTTP/1.1, and for an HTTP/2 connection's streams for the router; both end with the connection, which the
    /// graceful shutdown waits for.
    func serve(channel: any Channel, logger: Logger) throws {
        let pipeline = channel.pipeline.syncOperations
        if let limiter = http1.client.connections { try pipeline.addHandler(ClientConnectionLimiter.Handler(limiter: limiter)) }
        try pipeline.addHandler(PlainHTTPRefusal())
        let closeCompletion = TLSCloseCompletion()
        try pipeline.addHandler(closeCompletion.inputEndWatcher())
        try pipeline.addHandler(NIOSSLServerHandler(context: contexts.current))
        try pipeline.addHandler(closeCompletion)
        let (http1, maxHeaderListSize) = (http1, maxHeaderListSize)
        let streams = GatewayHTTP2StreamChannel(http1: http1)
        let protocolSwitch = TLSProtocolSwitch(on: channel.eventLoop, handshakeTimeout: http1.client.idleTimeout) { result, channel in
            switch result {
            case .negotiated("h2"):
                let keeper = HTTP2ConnectionKeeper(idleTimeout: http1.client.idleTimeout, sendTimeout: http1.client.sendTimeout)
                var configuration = NIOHTTP2Handler.Configuration()
                configuration.connection.initialSettings = [
                    HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
                    HTTP2Setting(parameter: .maxHeaderListSize, value: maxHeaderListSize),
                ]
                let (routed, continuation) = AsyncStream<GatewayHTTPChannel.RouterChannel>.makeStream()
                channel.closeFuture.whenComplete { _ in continuation.finish() }
                let handlers = HTTP2StreamHandlers(http1: http1, routed: continuation, logger: logger)
                let loopBound = NIOLoopBound(handlers, eventLoop: channel.eventLoop)
                let pipeline = channel.pipeline.syncOperations
                try pipeline.addHandler(HTTP2FlushCoalescer())
                try pipeline.addHandler(
                    NIOHTTP2Handler(mode: .server, connectionConfiguration: configuration.connection, streamConfiguration: configuration.stream))
                // The lane serves the simple relayed requests' streams before the multiplexer makes a channel for them.
                if let lane = handlers.lane() { try pipeline.addHandler(lane) }
                try pipeline.addHandler(
                    HTTP2StreamMultiplexer(
                        mode: .server, channel: channel, targetWindowSize: configuration.stream.targetWindowSize,
                        outboundBufferSizeHighWatermark: configuration.stream.outboundBufferSizeHighWatermark,
                        outboundBufferSizeLowWatermark: configuration.stream.outboundBufferSizeLowWatermark
                    ) { stream in
                        streams.initialize(channel: stream, handlers: loopBound)
                    })
                try channel.pipeline.syncOperations.addHandler(keeper)
                return .http2(routed)
            case .negotiated("http/1.1"), .fallback:
                return .http1(try http1.configure(channel: channel, logger: logger))
            case .negotiated:
                // Only `h2` and `http/1.1` are offered: anything else is a broken client.
                throw NIOHTTP2Errors.invalidALPNToken()
            }
        }
        try pipeline.addHandler(protocolSwitch)
        protocolSwitch.negotiated.whenComplete { result in
            switch result {
            case .success(.http1(let connection)):
                http1.serve(connection, logger: logger)
            case .success(.http2(let routed)):
                Task { await streams.handle(routed: routed, logger: logger) }
            case .failure(let error):
                // A failed handshake, or the connection ended before ALPN's choice.
                logger.debug("TLS connection ended", metadata: ["error": "\(error)"])
            }
        }
    }
}

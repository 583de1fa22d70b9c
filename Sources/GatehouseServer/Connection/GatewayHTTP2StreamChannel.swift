import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP2

/// One HTTP/2 stream of a ``GatewayTLSChannel`` connection: one more front-end adapter in front of the same
/// handlers as an HTTP/1.1 connection (``GatewayHTTPChannel/addRequestHandlers(to:channel:remoteAddress:malformed:logger:)``),
/// so `/v1/api/…` goes through ``APIRelayHandler`` with its body streamed and its back-pressure kept per stream
/// (the stream's flow-control window only opens as the relay reads), and everything else to the router.
///
/// Pipeline: ``HTTP2RequestTargetCheck`` → `HTTP2FramePayloadToHTTP1ServerCodec` → ``ClientBodyTimeoutHandler`` → ``HTTP2StreamHeadAdapter`` → HSTS → ``APIRelayHandler``
/// → HTTP types codec → Hummingbird's connection state → the router (one request per stream).
struct GatewayHTTP2StreamChannel: Sendable {
    /// The HTTP/1.1 channel whose request handlers each stream gets.
    let http1: GatewayHTTPChannel

    /// Sets up a stream channel.
    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<GatewayHTTPChannel.Value> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(HTTP2RequestTargetCheck())
            try pipeline.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
            // In front of the adapter, which holds a head without framing until the stream says more.
            try pipeline.addHandler(ClientBodyTimeoutHandler(timeout: http1.client.bodyTimeout))
            try pipeline.addHandler(HTTP2StreamHeadAdapter())
            // A stream's own address is its connection's.
            try http1.addRequestHandlers(
                to: pipeline, channel: channel, remoteAddress: channel.parent?.remoteAddress ?? channel.remoteAddress, malformed: nil, logger: logger)
            // No half-closure: a stream's output ends with its answer's END_STREAM.
            return try NIOAsyncChannel(wrappingChannelSynchronously: channel)
        }
    }

    /// Answers the stream's one request (Hummingbird's loop ends when the stream's input does).
    func handle(value: GatewayHTTPChannel.Value, logger: Logger) async {
        await http1.handleHTTP(asyncChannel: value, logger: logger)
    }
}

import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP2

/// One HTTP/2 stream of a ``GatewayTLSChannel`` connection: one more front-end adapter in front of the same
/// handlers as an HTTP/1.1 connection, so `/v1/api/…` goes through ``APIRelayHandler`` with its body streamed and
/// its back-pressure kept per stream (the stream's flow-control window only opens as the relay reads), and
/// everything else to the router.
///
/// A simple relayed request's stream never gets here: the connection's ``HTTP2Lane`` serves it without a channel.
/// Pipeline: ``HTTP2StreamCodec`` (frames to HTTP/1.1 parts, the target check, the body timeout) → HSTS →
/// ``APIRelayHandler`` → ``RouterHandoff``. A stream the relay answers ends there, on its event loop, without a task:
/// the router's handlers (HTTP types codec, Hummingbird's connection state, the async channel) and the task that runs
/// Hummingbird's loop are made only for a stream whose request reaches the hand-off, when it does.
struct GatewayHTTP2StreamChannel: Sendable {
    /// The HTTP/1.1 channel whose request handlers each stream gets.
    let http1: GatewayHTTPChannel

    /// Sets up a stream channel with its connection's ``HTTP2StreamHandlers``: synchronously, on the stream's loop,
    /// answered with the loop's one succeeded future (no future or closure made per stream).
    func initialize(channel: any Channel, handlers: NIOLoopBound<HTTP2StreamHandlers>) -> EventLoopFuture<Void> {
        do {
            try handlers.value.setUp(channel)
            return channel.eventLoop.makeSucceededVoidFuture()
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
    }

    /// Answers the streams the router serves, each in a child task, until the connection ends.
    func handle(routed: AsyncStream<GatewayHTTPChannel.RouterChannel>, logger: Logger) async {
        await withDiscardingTaskGroup { group in
            for await stream in routed {
                // Hummingbird's loop ends when the stream's input does: one request per stream.
                group.addTask { await http1.handleHTTP(asyncChannel: stream, logger: logger) }
            }
        }
    }
}

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
/// Pipeline: ``StreamLane`` alone while it serves a simple relayed request as bytes; for any other request,
/// ``HTTP2StreamCodec`` (frames to HTTP/1.1 parts, the target check, the body timeout) → HSTS →
/// ``APIRelayHandler`` → ``RouterHandoff``, put behind the lane when it leaves. A stream the relay answers ends there, on its event loop, without a
/// task: the router's handlers (HTTP types codec, Hummingbird's connection state, the async channel) and the task that runs Hummingbird's loop are made only for a stream
/// whose request reaches the hand-off, when it does.
struct GatewayHTTP2StreamChannel: Sendable {
    /// The HTTP/1.1 channel whose request handlers each stream gets.
    let http1: GatewayHTTPChannel

    /// Sets up a stream channel; a stream for the router is yielded to `routed` when its request arrives. `memo`
    /// is the connection's, which its streams' relay handlers share.
    func initialize(
        channel: any Channel, routed: AsyncStream<GatewayHTTPChannel.RouterChannel>.Continuation,
        memo: NIOLoopBound<StreamsCredentialMemo>, logger: Logger
    ) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            // A stream's own address is its connection's.
            let remoteAddress = channel.parent?.remoteAddress ?? channel.remoteAddress
            let http1 = http1
            let installHandlers = { (pipeline: ChannelPipeline.SynchronousOperations) throws -> APIRelayHandler? in
                try pipeline.addHandler(HTTP2StreamCodec(bodyTimeout: http1.client.bodyTimeout, sendTimeout: http1.client.sendTimeout))
                let relayHandler = try http1.addRelayHandlers(to: pipeline, remoteAddress: remoteAddress, streamsMemo: memo.value)
                try pipeline.addHandler(
                    RouterHandoff(
                        triggers: .requests,
                        deliver: { stream in
                            guard let stream else { return true }
                            if case .enqueued = routed.yield(stream) { return true }
                            return false
                        }
                    ) { pipeline in
                        try http1.addRouterHandlers(to: pipeline, malformed: nil, logger: logger)
                        // No half-closure: a stream's output ends with its answer's END_STREAM.
                        return try NIOAsyncChannel(wrappingChannelSynchronously: channel)
                    })
                return relayHandler
            }
            guard let relay = http1.relay else {
                _ = try installHandlers(channel.pipeline.syncOperations)
                return
            }
            // The lane serves a simple relayed request alone, and puts the usual handlers behind it for any other.
            try channel.pipeline.syncOperations.addHandler(
                StreamLane(
                    relay: relay, remoteAddress: remoteAddress?.ipAddress, hstsSeconds: http1.hstsSeconds, memo: memo.value,
                    sendTimeout: http1.client.sendTimeout, installHandlers: installHandlers))
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

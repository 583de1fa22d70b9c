import NIOCore
import NIOHTTP1

/// The last handler of an HTTP/2 stream (``GatewayHTTP2StreamChannel``) until a request part reaches it, which
/// happens only when the relay passes the request on to the router. Then, and only then, it adds the router's
/// handlers behind itself, wraps the stream in an async channel, hands that to the connection's task (which runs
/// Hummingbird's loop on it) and passes the part on: the streams the relay answers cost no handlers, no async
/// channel and no task more than they need.
final class HTTP2RouterHandoff: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias Install = (ChannelPipeline.SynchronousOperations) throws -> GatewayHTTPChannel.Value

    private let routed: AsyncStream<GatewayHTTPChannel.Value>.Continuation
    /// Adds the router's handlers and the async channel; nil once done.
    private var install: Install?

    init(routed: AsyncStream<GatewayHTTPChannel.Value>.Continuation, install: @escaping Install) {
        self.routed = routed
        self.install = install
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let install {
            self.install = nil
            do {
                let stream = try install(context.pipeline.syncOperations)
                guard case .enqueued = routed.yield(stream) else {
                    // The connection is ending: nobody would answer.
                    context.close(promise: nil)
                    return
                }
            } catch {
                context.fireErrorCaught(error)
                context.close(promise: nil)
                return
            }
        }
        context.fireChannelRead(data)
    }
}

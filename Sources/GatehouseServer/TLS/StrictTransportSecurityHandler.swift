import NIOCore
import NIOHTTP1

/// Puts `Strict-Transport-Security: max-age=…` on every final answer of an HTTPS connection or HTTP/2 stream
/// (`tls.hsts_seconds`), the relay's and the router's alike: it sits in front of both.
final class StrictTransportSecurityHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let value: String

    /// - Parameter maxAge: seconds the browser keeps to HTTPS.
    init(maxAge: Int) {
        value = "max-age=\(maxAge)"
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .head(var head) = unwrapOutboundIn(data), head.status.code >= 200 else {
            context.write(data, promise: promise)
            return
        }
        head.headers.replaceOrAdd(name: "Strict-Transport-Security", value: value)
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }
}

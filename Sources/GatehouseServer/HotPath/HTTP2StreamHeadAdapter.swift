import NIOCore
import NIOHTTP1

/// Makes an HTTP/2 stream's request head read as the HTTP/1.1 one the handlers behind it know: the relay and
/// the router decide on the same head whichever protocol carried it, and the backend is reached over HTTP/1.1
/// anyway. The version becomes 1.1 (a stream is one request: keep-alive is the stream's business, not the
/// relay's), and the `cookie` fields HTTP/2 may split are joined into one with `; ` (RFC 9113 §8.2.3).
/// `:authority` is already `Host` (``HTTP2FramePayloadToHTTP1ServerCodec``).
final class HTTP2StreamHeadAdapter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        head.version = .http1_1
        let cookies = head.headers["cookie"]
        if cookies.count > 1 {
            head.headers.remove(name: "cookie")
            head.headers.add(name: "Cookie", value: cookies.joined(separator: "; "))
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}

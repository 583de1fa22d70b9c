import NIOCore
import NIOHTTP1

/// Makes an HTTP/2 stream's request head read as the HTTP/1.1 one the handlers behind it know: the relay and
/// the router decide on the same head whichever protocol carried it, and the backend is reached over HTTP/1.1
/// anyway. The version becomes 1.1 (a stream is one request: keep-alive is the stream's business, not the
/// relay's), and the `cookie` fields HTTP/2 may split are joined into one with `; ` (RFC 9113 §8.2.3).
/// `:authority` is already `Host` (``HTTP2FramePayloadToHTTP1ServerCodec``, behind ``HTTP2RequestTargetCheck``).
///
/// The head always says how its body is framed, because an HTTP/1.1 head that says nothing has no body: for
/// `GET`, `HEAD`, `DELETE`, `CONNECT` and `TRACE` without `content-length` the codec adds no framing field yet
/// still passes on any DATA that follows, and bytes written upstream after such a head are a second request
/// to the backend (request smuggling). Such a head is held until the stream's next part says which it is: the
/// stream's end (no body: the head as it is) or DATA (`transfer-encoding: chunked` added, so the relay and the
/// router frame what they send upstream). The wait is no longer than the client's own: HEADERS with
/// END_STREAM come with their end in the same read.
final class HTTP2StreamHeadAdapter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// A head without framing, until the stream's next part.
    private var held: HTTPRequestHead?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(var head):
            head.version = .http1_1
            let cookies = head.headers["cookie"]
            if cookies.count > 1 {
                head.headers.remove(name: "cookie")
                head.headers.add(name: "Cookie", value: cookies.joined(separator: "; "))
            }
            if head.headers.contains(name: "content-length") || head.headers.contains(name: "transfer-encoding") {
                context.fireChannelRead(wrapInboundOut(.head(head)))
            } else {
                held = head
            }
        case .body:
            if var head = held {
                held = nil
                head.headers.add(name: "Transfer-Encoding", value: "chunked")
                context.fireChannelRead(wrapInboundOut(.head(head)))
            }
            context.fireChannelRead(data)
        case .end:
            if let head = held {
                held = nil
                context.fireChannelRead(wrapInboundOut(.head(head)))
            }
            context.fireChannelRead(data)
        }
    }
}

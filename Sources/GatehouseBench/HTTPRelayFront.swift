import NIOCore
import NIOHTTP1

/// The client's side of an ``HTTPRelayCommand`` connection: a request's parts go to the backend as they came.
final class HTTPRelayFront: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    var back: HTTPRelayBack?
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        back = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let back else { return }
        switch unwrapInboundIn(data) {
        case .head(let head): back.write(.head(HTTPRequestHead(version: .http1_1, method: head.method, uri: head.uri, headers: head.headers)))
        case .body(let buffer): back.write(.body(.byteBuffer(buffer)))
        case .end:
            back.write(.end(nil))
            back.flush()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        back?.close()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// An answer's part, from the backend.
    func write(_ part: HTTPServerResponsePart) { context?.write(wrapOutboundOut(part), promise: nil) }

    func flush() { context?.flush() }

    func close() { context?.close(promise: nil) }
}

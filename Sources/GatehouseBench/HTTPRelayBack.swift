import NIOCore
import NIOHTTP1

/// The backend's side of an ``HTTPRelayCommand`` connection: an answer's parts go to the client as they came.
final class HTTPRelayBack: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private weak var front: HTTPRelayFront?
    private var context: ChannelHandlerContext?

    init(front: HTTPRelayFront) {
        self.front = front
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let front else { return }
        switch unwrapInboundIn(data) {
        case .head(let head): front.write(.head(HTTPResponseHead(version: .http1_1, status: head.status, headers: head.headers)))
        case .body(let buffer): front.write(.body(.byteBuffer(buffer)))
        case .end:
            front.write(.end(nil))
            front.flush()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        front?.close()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// A request's part, from the client.
    func write(_ part: HTTPClientRequestPart) { context?.write(wrapOutboundOut(part), promise: nil) }

    func flush() { context?.flush() }

    func close() { context?.close(promise: nil) }
}

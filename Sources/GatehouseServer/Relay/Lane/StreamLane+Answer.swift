import GatehouseCore
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// The client's side of an answer on an HTTP/2 stream: the head as HEADERS (``AnswerFieldsWriter``), the body as
/// DATA, the end as END_STREAM on the last frame, the relay's problem answers as the codec writes them, and a reset
/// stream when the backend fails once the answer started.
extension StreamLane {
    static var passesChunks: Bool { false }

    func writeHead(_ view: ResponseHeadView, of bytes: UnsafeRawBufferPointer, _ exchange: LaneExchange, context: ChannelHandlerContext) {
        guard view.status >= 200 else {
            // An interim answer goes on as it came, without the request's id.
            let block = AnswerFieldsWriter.fields(view, of: bytes, requestID: nil, hsts: nil)
            context.write(wrapOutboundOut(.headers(.init(headers: block))), promise: nil)
            return
        }
        heldHead = AnswerFieldsWriter.fields(view, of: bytes, requestID: exchange.entry.requestID, hsts: hsts)
    }

    func writeBody(_ bytes: ByteBuffer, last: Bool, _ exchange: LaneExchange, context: ChannelHandlerContext) {
        if let head = heldHead {
            heldHead = nil
            // An answer without a body ends on its HEADERS.
            let endsHere = last && bytes.readableBytes == 0
            context.write(wrapOutboundOut(.headers(.init(headers: head, endStream: endsHere))), promise: nil)
            if endsHere { return }
        }
        guard bytes.readableBytes > 0 || last else { return }
        context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(bytes), endStream: last))), promise: nil)
    }

    func flushAnswer(context: ChannelHandlerContext) {
        if let head = heldHead {
            heldHead = nil
            context.write(wrapOutboundOut(.headers(.init(headers: head))), promise: nil)
        }
        context.flush()
    }

    func answerDone(_ exchange: LaneExchange, context: ChannelHandlerContext) {
        // Both ends of the stream are closed now: NIOHTTP2 closes its channel once the last frame is out.
        context.flush()
    }

    func writeProblem(_ error: GatehouseError, _ exchange: LaneExchange, context: ChannelHandlerContext) {
        let (head, body) = problemAnswer(error, exchange, close: false)
        let block = HTTP2StreamCodec.fields(status: head.status.code, head.headers)
        context.write(wrapOutboundOut(.headers(.init(headers: block))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: nil)
    }

    func cut(context: ChannelHandlerContext) {
        // Closing a stream channel resets its stream (RST_STREAM); the connection's other streams go on.
        context.close(promise: nil)
    }
}

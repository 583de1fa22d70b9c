import GatehouseCore
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// The client's side of an answer on an HTTP/2 stream: the head as HEADERS (``AnswerFieldsWriter``), the body as
/// DATA, the end as END_STREAM on the last frame, the relay's problem answers as the codec writes them, and a reset
/// stream when the backend fails once the answer started.
extension LaneStream {
    static var passesChunks: Bool { false }

    func writeHead(_ view: ResponseHeadView, of bytes: UnsafeRawBufferPointer, _ exchange: LaneExchange, context: ChannelHandlerContext) {
        guard view.status >= 200 else {
            // An interim answer goes on as it came, without the request's id.
            let block = AnswerFieldsWriter.fields(view, of: bytes, requestID: nil, hsts: nil)
            write(.headers(.init(headers: block)), context: context)
            return
        }
        heldHead = AnswerFieldsWriter.fields(view, of: bytes, requestID: exchange.entry.requestID, hsts: hsts)
    }

    func writeBody(_ bytes: ByteBuffer, last: Bool, _ exchange: LaneExchange, context: ChannelHandlerContext) {
        if let head = heldHead {
            heldHead = nil
            // An answer without a body ends on its HEADERS.
            let endsHere = last && bytes.readableBytes == 0
            write(.headers(.init(headers: head, endStream: endsHere)), context: context)
            if endsHere { return }
        }
        guard bytes.readableBytes > 0 || last else { return }
        // A last frame the window holds back still counts: its stream is reset if the client never takes it.
        writeData(bytes, endStream: last, context: context)
    }

    func flushAnswer(context: ChannelHandlerContext) {
        if let head = heldHead {
            heldHead = nil
            write(.headers(.init(headers: head)), context: context)
        }
        context.flush()
    }

    func answerDone(_ exchange: LaneExchange, context: ChannelHandlerContext) {
        // Both ends of the stream are closed now: NIOHTTP2 forgets it once the last frame is out.
        context.flush()
    }

    func writeProblem(_ error: GatehouseError, _ exchange: LaneExchange, context: ChannelHandlerContext) {
        let (head, body) = problemAnswer(error, exchange, close: false)
        let block = HTTP2StreamCodec.fields(status: head.status.code, head.headers)
        write(.headers(.init(headers: block)), context: context)
        write(.data(.init(data: .byteBuffer(body), endStream: true)), context: context)
        context.flush()
    }

    func cut(context: ChannelHandlerContext) {
        // The stream is reset (as a stream channel's close resets it); the connection's other streams go on.
        write(.rstStream(.cancel), context: context)
        context.flush()
    }
}

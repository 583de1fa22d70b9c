import GatehouseCore
import NIOCore
import NIOHTTP1

/// The client's side of an answer on an HTTP/1.1 connection: the head written as bytes (``AnswerHeadWriter``), the
/// body passed on in its framing, the relay's problem answers as bytes, and the connection's fate after each.
extension RelayLane {
    static var passesChunks: Bool { true }

    /// Whether the connection ends with `exchange`'s answer: the client's `Connection: close`, or a shutdown that
    /// began since.
    func closes(after exchange: LaneExchange) -> Bool {
        !exchange.clientKeepAlive || quiescing
    }

    func writeHead(_ view: ResponseHeadView, of bytes: UnsafeRawBufferPointer, _ exchange: LaneExchange, context: ChannelHandlerContext) {
        let final = view.status >= 200
        let close = closes(after: exchange)
        var head = context.channel.allocator.buffer(capacity: view.length + 128)
        AnswerHeadWriter.write(
            view, of: bytes, requestID: final ? exchange.entry.requestID : nil, close: final && close, hsts: final ? hsts : nil, into: &head)
        context.write(wrapOutboundOut(head), promise: nil)
    }

    func writeBody(_ bytes: ByteBuffer, last: Bool, _ exchange: LaneExchange, context: ChannelHandlerContext) {
        guard case .untilClose = exchange.answer else {
            if bytes.readableBytes > 0 { context.write(wrapOutboundOut(bytes), promise: nil) }
            return
        }
        // A body that ends with the backend's connection goes to the client in chunks (as NIOHTTP1's encoder sends it).
        if bytes.readableBytes > 0 {
            var size = context.channel.allocator.buffer(capacity: 18)
            size.writeString(String(bytes.readableBytes, radix: 16))
            size.writeStaticString("\r\n")
            context.write(wrapOutboundOut(size), promise: nil)
            context.write(wrapOutboundOut(bytes), promise: nil)
            context.write(wrapOutboundOut(ByteBuffer(staticString: "\r\n")), promise: nil)
        }
        if last { context.write(wrapOutboundOut(ByteBuffer(staticString: "0\r\n\r\n")), promise: nil) }
    }

    func flushAnswer(context: ChannelHandlerContext) {
        context.flush()
    }

    func answerDone(_ exchange: LaneExchange, context: ChannelHandlerContext) {
        connectionGuard.laneAnswerEnded()
        endAnswer(close: closes(after: exchange), context: context)
    }

    func writeProblem(_ error: GatehouseError, _ exchange: LaneExchange, context: ChannelHandlerContext) {
        connectionGuard.laneAnswerEnded()
        let close = closes(after: exchange)
        let (head, body) = problemAnswer(error, exchange, close: close)
        var bytes = context.channel.allocator.buffer(capacity: 512 + body.readableBytes)
        ResponseHeadWriter.write(head, into: &bytes)
        bytes.writeImmutableBuffer(body)
        context.write(wrapOutboundOut(bytes), promise: nil)
        endAnswer(close: close, context: context)
    }

    func cut(context: ChannelHandlerContext) {
        connectionGuard.laneAnswerEnded()
        closeClient(context: context)
    }

    /// Closes the client's connection once the answers written before (a flush may still be due:
    /// ``Channel/flushAfterTurn()``) are flushed.
    func closeClient(context: ChannelHandlerContext) {
        context.flush()
        context.close(promise: nil)
    }

    /// The answer is written: flushed, then the connection ends (`close`), or goes on, here or, when bytes or the
    /// client's half-close came meanwhile, in the pipeline behind.
    private func endAnswer(close: Bool, context: ChannelHandlerContext) {
        guard !close else {
            closingClient = true
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0))).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
            return
        }
        // The channel's flush, not this handler's: a handover may have put the pipeline's own handlers behind it by then.
        context.channel.flushAfterTurn()
        if hasHeldInput { handOver(nil, plan: nil, context: context, inReadCycle: false) }
    }
}

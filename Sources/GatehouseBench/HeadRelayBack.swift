import GatehouseCore
import GatehouseServer
import NIOCore

/// The backend's side of a ``HeadRelayCommand`` connection: it reads the answer's head from the bytes with the
/// gateway's ``ResponseHeadReader``, writes the client's head as bytes with its ``AnswerHeadWriter`` (hop-by-hop
/// fields dropped, `X-Request-Id` added) and passes the body on as it came, to its end by `Content-Length` or by
/// its ``ChunkedBodyScanner``.
final class HeadRelayBack: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Where the answer is: its head still to read, or its body.
    private enum Body {
        case head
        case length(left: Int)
        case chunked(ChunkedBodyScanner)
    }

    private weak var front: HeadRelayFront?
    private var context: ChannelHandlerContext?
    private var pending: ByteBuffer?
    private var body = Body.head
    private var requestID = ""

    init(front: HeadRelayFront) {
        self.front = front
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// A request head, from the client's side.
    func send(_ head: ByteBuffer, requestID: String) {
        self.requestID = requestID
        context?.write(wrapOutboundOut(head), promise: nil)
    }

    func flush() { context?.flush() }

    func close() { context?.close(promise: nil) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        if var kept = pending {
            kept.writeBuffer(&buffer)
            buffer = kept
            pending = nil
        }
        if case .head = body {
            guard readHead(&buffer, context: context) else { return }
        }
        passBody(&buffer, context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) { front?.flush() }

    func channelInactive(context: ChannelHandlerContext) { front?.close() }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }

    /// Reads the answer's head off `buffer` and writes the client's; `false` while it is incomplete (or on an answer
    /// this floor does not take, which closes the connection).
    private func readHead(_ buffer: inout ByteBuffer, context: ChannelHandlerContext) -> Bool {
        guard let front else { return false }
        let requestID = requestID
        let allocator = context.channel.allocator
        let read: (head: ByteBuffer, length: Int, framing: ResponseFraming)?? = buffer.readableBytesView.withUnsafeBytes { bytes in
            switch ResponseHeadReader.read(bytes) {
            case .incomplete: return .some(nil)
            case .declined: return nil
            case .read(let view):
                var head = allocator.buffer(capacity: view.length + 32)
                AnswerHeadWriter.write(view, of: bytes, requestID: requestID, close: false, into: &head)
                return (head, view.length, view.framing)
            }
        }
        guard let read else {
            context.close(promise: nil)
            return false
        }
        guard let (head, length, framing) = read else {
            pending = buffer
            return false
        }
        buffer.moveReaderIndex(forwardBy: length)
        front.write(head)
        switch framing {
        case .bodiless: body = .length(left: 0)
        case .length(let count): body = .length(left: count)
        case .chunked: body = .chunked(ChunkedBodyScanner())
        case .untilClose:
            // Not taken here: the answer would end the backend connection.
            context.close(promise: nil)
            return false
        }
        return true
    }

    private func passBody(_ buffer: inout ByteBuffer, context: ChannelHandlerContext) {
        guard let front else { return }
        let count: Int
        var ended = false
        switch body {
        case .head: return
        case .length(let left):
            count = min(left, buffer.readableBytes)
            ended = left == count
            body = .length(left: left - count)
        case .chunked(var scanner):
            let step = buffer.readableBytesView.withUnsafeBytes { scanner.scan($0) { _ in } }
            body = .chunked(scanner)
            switch step {
            case .needMore: count = buffer.readableBytes
            case .ended(let at):
                count = at
                ended = true
            case .invalid:
                context.close(promise: nil)
                return
            }
        }
        if count > 0, let part = buffer.readSlice(length: count) { front.write(part) }
        guard ended else { return }
        body = .head
        if buffer.readableBytes > 0 { context.close(promise: nil) }  // an answer before its request: not taken here
        front.answerEnded()
    }
}

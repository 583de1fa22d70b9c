import NIOCore

/// The backend's side of a ``HeadRelayCommand`` connection: it reads the answer's head from the bytes, writes the
/// client's head as bytes (hop-by-hop fields dropped, `X-Request-Id` added) and passes the body on by its
/// `Content-Length`.
final class HeadRelayBack: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private weak var front: HeadRelayFront?
    private var context: ChannelHandlerContext?
    private var pending: ByteBuffer?
    /// The answer's body still to come; `nil` while its head is read.
    private var bodyLeft: Int?
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
        if bodyLeft == nil {
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
        var contentLength: Int?
        var head: ByteBuffer?
        let parsed: Int? = buffer.readableBytesView.withUnsafeBytes { bytes in
            guard let length = HeadRelayFields.headLength(bytes) else { return nil }
            head = HeadRelayFields.rewritten(
                bytes, length: length, allocator: context.channel.allocator, extra: "", requestID: requestID
            ) { handling, nameEnd, lineEnd in
                // One `Content-Length` of digits; no `Transfer-Encoding`.
                guard handling == .contentLength, contentLength == nil else { return false }
                var value = 0
                var index = nameEnd + 1
                while index < lineEnd, bytes[index] == 32 { index += 1 }
                while index < lineEnd, (48...57).contains(bytes[index]) {
                    value = value * 10 + Int(bytes[index] - 48)
                    index += 1
                }
                contentLength = value
                return index == lineEnd
            }
            return head == nil ? -1 : length
        }
        guard let length = parsed else {
            pending = buffer
            return false
        }
        guard length > 0, let head, let contentLength else {
            context.close(promise: nil)
            return false
        }
        buffer.moveReaderIndex(forwardBy: length)
        front.write(head)
        bodyLeft = contentLength
        return true
    }

    private func passBody(_ buffer: inout ByteBuffer, context: ChannelHandlerContext) {
        guard let left = bodyLeft, let front else { return }
        let count = min(left, buffer.readableBytes)
        if count > 0, let body = buffer.readSlice(length: count) { front.write(body) }
        bodyLeft = left - count
        guard bodyLeft == 0 else { return }
        bodyLeft = nil
        if buffer.readableBytes > 0 { context.close(promise: nil) }  // an answer before its request: not taken here
        front.answerEnded()
    }
}

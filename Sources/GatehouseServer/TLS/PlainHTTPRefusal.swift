import NIOCore

/// Answers plain HTTP sent to the TLS listener with `400` and a one-line body, as nginx does ("The plain HTTP
/// request was sent to HTTPS port"), instead of the TLS alert or silent close a client would read as an empty
/// reply. It looks at the connection's first byte only: a TLS handshake record starts with 22 (0x16); an HTTP
/// request line starts with a method's capital letter. Anything else goes on to the TLS handler, which refuses it
/// in its own way. Then it leaves the pipeline.
final class PlainHTTPRefusal: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let body = "This port speaks HTTPS only: use an https:// URL.\n"

    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if refused { return }
        let bytes = unwrapInboundIn(data)
        guard let first = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) else {
            context.fireChannelRead(data)
            return
        }
        guard first >= UInt8(ascii: "A"), first <= UInt8(ascii: "Z") else {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        refused = true
        let answer =
            "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(Self.body.utf8.count)\r\n"
            + "Connection: close\r\n\r\n" + Self.body
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: answer))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }
}

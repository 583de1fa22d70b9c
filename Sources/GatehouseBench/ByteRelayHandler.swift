import NIOCore

/// One side of a ``ByteRelayCommand`` connection pair: what its channel reads is written to the partner's, flushed
/// once per read cycle; either side's end closes both. No back-pressure: the bench's answers are small.
final class ByteRelayHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private weak var partner: ByteRelayHandler?
    private var context: ChannelHandlerContext?

    /// The two sides of one relayed connection, each knowing the other (weakly: each pipeline holds its own).
    static func pair() -> (ByteRelayHandler, ByteRelayHandler) {
        let (first, second) = (ByteRelayHandler(), ByteRelayHandler())
        first.partner = second
        second.partner = first
        return (first, second)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner?.context?.write(data, promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        partner?.context?.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner?.context?.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

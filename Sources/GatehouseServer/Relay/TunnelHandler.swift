package import NIOCore

/// One end of a byte tunnel between the client's connection and the backend's, for an upgraded request
/// (WebSocket, RFC 6455) after the backend's `101`: what one side reads, the other writes, unchanged, until
/// either side closes. Each end reads only while its partner can write (back-pressure both ways).
///
/// Both ends live on the same event loop (the backend connection was made on the client connection's loop),
/// so they call each other directly.
///
/// Also the whole of `gatehouse-bench byte-relay` (the floor of a SwiftNIO hop), hence `package`.
package final class TunnelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias OutboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    private var partner: TunnelHandler?
    private var context: ChannelHandlerContext?
    /// A read asked for while the partner could not take more.
    private var pendingRead = false

    private init() {}

    /// Two joined ends: one for each channel.
    package static func pair() -> (TunnelHandler, TunnelHandler) {
        let (first, second) = (TunnelHandler(), TunnelHandler())
        first.partner = second
        second.partner = first
        return (first, second)
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    // MARK: This side

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner?.partnerWrite(unwrapInboundIn(data))
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        partner?.partnerFlush()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        partner?.partnerClose()
        context.fireChannelInactive()
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    package func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { partner?.partnerBecameWritable() }
    }

    package func read(context: ChannelHandlerContext) {
        if partner?.isWritable ?? true {
            context.read()
        } else {
            pendingRead = true
        }
    }

    // MARK: What the partner asks

    private var isWritable: Bool { context?.channel.isWritable ?? false }

    private func partnerWrite(_ buffer: ByteBuffer) {
        context?.write(wrapOutboundOut(buffer), promise: nil)
    }

    private func partnerFlush() {
        context?.flush()
    }

    /// The other side closed: this one closes once what it still has to write is out.
    private func partnerClose() {
        guard let context else { return }
        partner = nil
        // Writes complete in order: the empty one completes after everything written before it.
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0)))
            .assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    private func partnerBecameWritable() {
        guard pendingRead, let context else { return }
        pendingRead = false
        context.read()
    }
}

import NIOCore

/// What an exchange of ``RelayLane`` hears from its backend connection. Called on the connection's event loop.
protocol LaneReceiver: AnyObject {
    /// Bytes of the backend's answer.
    func laneReceived(_ bytes: ByteBuffer)
    func laneReadComplete()
    /// The connection failed or closed before the exchange ended.
    func laneFailed(_ error: any Error)
}

/// The only handler of a ``LaneConnection``'s pipeline (behind TLS): hands its bytes to the current receiver.
final class LaneConnectionHandler: ChannelInboundHandler, BackendConnectionHandler {
    typealias InboundIn = ByteBuffer

    weak var receiver: (any LaneReceiver)?

    /// The backend closed the connection.
    struct Closed: Error {}

    static func install(in pipeline: ChannelPipeline.SynchronousOperations) throws {
        try pipeline.addHandler(LaneConnectionHandler())
    }

    func forgetReceiver() { receiver = nil }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let receiver else {
            // Nothing was asked of an idle connection: whatever this is, the connection cannot be trusted.
            context.close(promise: nil)
            return
        }
        receiver.laneReceived(unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        receiver?.laneReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let receiver = self.receiver
        self.receiver = nil
        context.close(promise: nil)
        receiver?.laneFailed(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        let receiver = self.receiver
        self.receiver = nil
        receiver?.laneFailed(Closed())
    }
}

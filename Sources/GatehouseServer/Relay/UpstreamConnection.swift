import NIOCore
import NIOHTTP1

/// One keep-alive HTTP/1.1 connection to the backend that the relay writes NIOHTTP1's parts to: the
/// ``UpstreamReceiver`` set while a request is under way gets what the backend answers; an idle connection belongs
/// to its ``UpstreamConnectionPool``.
typealias UpstreamConnection = BackendConnection<UpstreamConnectionHandler>

/// The relay's keep-alive connections to one upstream on one event loop.
typealias UpstreamConnectionPool = BackendConnectionPool<UpstreamConnectionHandler>

extension BackendConnectionPool: UpstreamConnectionSource where Handler == UpstreamConnectionHandler {}

extension BackendConnection where Handler == UpstreamConnectionHandler {
    func write(_ part: HTTPClientRequestPart) {
        channel.write(part, promise: nil)
    }
}

/// What an exchange hears from its upstream connection. Called on the connection's event loop.
protocol UpstreamReceiver: AnyObject {
    func upstreamReceived(_ part: HTTPClientResponsePart)
    func upstreamReadComplete()
    func upstreamWritabilityChanged(_ isWritable: Bool)
    /// The connection failed or closed before the exchange ended.
    func upstreamFailed(_ error: any Error)
}

/// The last handler of an upstream connection's pipeline: hands everything to the current receiver.
final class UpstreamConnectionHandler: ChannelInboundHandler, RemovableChannelHandler, BackendConnectionHandler {
    typealias InboundIn = HTTPClientResponsePart

    weak var receiver: (any UpstreamReceiver)?

    /// The backend closed the connection.
    struct Closed: Error {}

    /// NIOHTTP1's client handlers, then this one. No outbound validation: the relay writes fields llhttp parsed from
    /// the client, its own, and identity values made legal (`BackendIdentityHeaders.fieldValue`). Bytes after a `101`
    /// in the decoder's buffer go on to the tunnel when the decoder is removed. Interim answers (`103 Early Hints`)
    /// are read, not dropped (NIOHTTP1's default): a proxy passes them on (RFC 9110 §15.2), as the lane does.
    static func install(in pipeline: ChannelPipeline.SynchronousOperations) throws {
        try pipeline.addHandler(HTTPRequestEncoder())
        try pipeline.addHandler(
            ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes, informationalResponseStrategy: .forward)))
        try pipeline.addHandler(UpstreamConnectionHandler())
    }

    func forgetReceiver() { receiver = nil }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let receiver else {
            // Nothing was asked of an idle connection: whatever this is, the connection cannot be trusted.
            context.close(promise: nil)
            return
        }
        receiver.upstreamReceived(unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        receiver?.upstreamReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        receiver?.upstreamWritabilityChanged(context.channel.isWritable)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let receiver = self.receiver
        self.receiver = nil
        context.close(promise: nil)
        receiver?.upstreamFailed(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        let receiver = self.receiver
        self.receiver = nil
        receiver?.upstreamFailed(Closed())
    }
}

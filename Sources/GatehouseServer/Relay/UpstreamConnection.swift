import NIOCore
import NIOHTTP1

/// One keep-alive HTTP/1.1 connection to the backend, owned by the event loop it was made on. It serves
/// one exchange at a time: the ``UpstreamReceiver`` set while a request is under way gets what the backend
/// answers; an idle connection belongs to its ``UpstreamConnectionPool``.
final class UpstreamConnection {
    let channel: any Channel
    let handler: UpstreamConnectionHandler
    /// Whether it has served an exchange before (a request it loses before any answer may then be retried).
    var reused = false

    init(channel: any Channel, handler: UpstreamConnectionHandler) {
        self.channel = channel
        self.handler = handler
    }

    var isActive: Bool { channel.isActive }

    /// Drops the connection (it will not be reused).
    func close() {
        handler.receiver = nil
        channel.close(promise: nil)
    }

    func write(_ part: HTTPClientRequestPart) {
        channel.write(part, promise: nil)
    }

    func flush() {
        channel.flush()
    }

    var isWritable: Bool { channel.isWritable }

    /// Whether the connection reads from the backend (``setReading(_:)``).
    private(set) var reading = true

    /// Reads from the backend only while the client can take what comes (back-pressure). Changes the
    /// channel only when the wish changes: every change costs an `epoll_ctl`.
    func setReading(_ reading: Bool) {
        guard reading != self.reading else { return }
        self.reading = reading
        try? channel.syncOptions?.setOption(.autoRead, value: reading)
        if reading { channel.read() }
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
final class UpstreamConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    weak var receiver: (any UpstreamReceiver)?

    /// The backend closed the connection.
    struct Closed: Error {}

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

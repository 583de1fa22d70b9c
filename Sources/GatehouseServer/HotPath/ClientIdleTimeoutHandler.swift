import NIOCore
import NIOHTTP1

/// Closes a client connection that has had no complete request head for `timeout`: one idle between requests
/// (nginx's `keepalive_timeout`), and one sending its head too slowly or not at all (`client_header_timeout`,
/// the slowloris defence). A trickle of bytes does not reset it: only a whole head does.
///
/// While a request is in flight (relayed or routed) it does nothing: upstream patience is the relay's and the
/// router's (`upstream_timeout_seconds`). After a `101` the connection is a tunnel and it stops for good.
/// It sits right behind NIO's HTTP server pipeline handler, which hands over one request at a time.
final class ClientIdleTimeoutHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let timeout: TimeAmount
    private var inFlight = 0
    private var upgraded = false
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            inFlight += 1
            disarm()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status == .switchingProtocols:
            upgraded = true
            disarm()
        case .end:
            inFlight = max(0, inFlight - 1)
            if inFlight == 0 { arm(context) }
        default:
            break
        }
        context.write(data, promise: promise)
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard !upgraded, inFlight == 0, timer == nil else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
            timer = nil
            if !upgraded, inFlight == 0 { context.close(promise: nil) }
        }
    }

    private func disarm() {
        timer?.cancel()
        timer = nil
    }
}

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
    /// When the connection last became idle (no request in flight). Kept per request instead of re-arming a
    /// timer per request: the one timer, when it fires, decides from it (this sits on the relay's path).
    private var idleSince = NIODeadline.now()
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { inFlight += 1 }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status == .switchingProtocols:
            upgraded = true
            stop()
        case .end:
            inFlight = max(0, inFlight - 1)
            if inFlight == 0 { idleSince = .now() }
        default:
            break
        }
        context.write(data, promise: promise)
    }

    private func start(_ context: ChannelHandlerContext) {
        idleSince = .now()
        schedule(context, at: idleSince + timeout)
    }

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        guard !upgraded, timer == nil else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            guard !upgraded else { return }
            if inFlight > 0 {
                schedule(context, at: .now() + timeout)  // a request in flight is never cut; look again later
            } else if idleSince + timeout <= .now() {
                context.close(promise: nil)
            } else {
                schedule(context, at: idleSince + timeout)
            }
        }
    }

    private func stop() {
        timer?.cancel()
        timer = nil
    }
}

import NIOCore
import NIOHTTP1

/// Cuts an HTTP/2 stream's request whose body makes no progress for `limits.client_body_timeout_seconds`
/// (``ClientBodyClock``): the stream is reset (`RST_STREAM`), which closing a stream channel sends. An HTTP/1.1
/// connection has the same clock in ``HTTP1ConnectionGuard``, which answers `408` instead.
final class ClientBodyTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private var clock: ClientBodyClock
    /// The request was cut: what the handlers behind still read, write or report is dropped (an error at the
    /// close, an answer the relay or the router would start on a stream that is done).
    private var expired = false
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount) {
        clock = ClientBodyClock(timeout: timeout)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if expired { return }
        clock.read(unwrapInboundIn(data))
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if timer == nil, let deadline = clock.deadline(afterReadAt: context.eventLoop.now) { schedule(context, at: deadline) }
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        clock.asked(at: context.eventLoop.now)
        context.read()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if expired {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !expired { context.fireErrorCaught(error) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            switch clock.verdict(at: context.eventLoop.now) {
            case .done:
                break
            case .later(let deadline):
                schedule(context, at: deadline)
            case .expired:
                expired = true
                context.close(promise: nil)
            }
        }
    }

    private func stop() {
        timer?.cancel()
        timer = nil
    }
}

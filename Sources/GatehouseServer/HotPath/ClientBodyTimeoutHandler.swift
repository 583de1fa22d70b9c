import GatehouseCore
import NIOCore
import NIOHTTP1

/// Cuts a request whose body makes no progress for `limits.client_body_timeout_seconds` (nginx's
/// `client_body_timeout`): a client that declares 100 bytes and sends 1 would otherwise hold its connection,
/// and the relay's or the router's request, for as long as it likes. On HTTP/1.1 the answer is `408` (when no
/// answer has started) and the connection closes; on an HTTP/2 stream the stream is reset (`RST_STREAM`),
/// which closing a stream channel sends.
///
/// Only the client's slowness counts: the clock runs while the gateway has asked for more bytes (a `read`
/// passed towards the socket) and none came. While the relay or the router hold reading back because the
/// backend is slower than the client (back-pressure), nothing is cut. The timer is armed only at the end of a
/// read that leaves a request's body open, so a request whose head and end come in one read (every request
/// without a body) costs no timer; while a body flows, the one timer looks at the time when it fires.
final class ClientBodyTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// How the cut is told to the client.
    enum Cut {
        /// `408` when no answer has started, then the connection closes.
        case answer408
        /// The channel (an HTTP/2 stream) closes: `RST_STREAM`.
        case reset
    }

    private let timeout: TimeAmount
    private let cut: Cut
    /// A request's head came and its end has not.
    private var bodyOpen = false
    /// Since when the gateway has waited for bytes that have not come (a `read` asked and nothing read since).
    private var waitingSince: NIODeadline?
    private var responseStarted = false
    /// The request was cut: what the handlers behind still read, write or report is dropped (the decoder's
    /// error at the close, an answer the relay or the router would start on a connection that is done).
    private var expired = false
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount, cut: Cut) {
        self.timeout = timeout
        self.cut = cut
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if expired { return }
        waitingSince = nil
        switch unwrapInboundIn(data) {
        case .head: bodyOpen = true
        case .body: break
        case .end: bodyOpen = false
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if bodyOpen, timer == nil { schedule(context, at: context.eventLoop.now + timeout) }
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        if bodyOpen, waitingSince == nil { waitingSince = context.eventLoop.now }
        context.read()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if expired {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.code >= 200: responseStarted = true
        case .end: responseStarted = false
        default: break
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
            guard bodyOpen else { return }
            // Not waiting for the client (held back, or bytes came since): look again a whole timeout later.
            guard let waitingSince else {
                schedule(context, at: context.eventLoop.now + timeout)
                return
            }
            let due = waitingSince + timeout
            guard due <= context.eventLoop.now else {
                schedule(context, at: due)
                return
            }
            bodyOpen = false
            expired = true
            expire(context)
        }
    }

    private func expire(_ context: ChannelHandlerContext) {
        guard cut == .answer408, !responseStarted else {
            context.close(promise: nil)
            return
        }
        let seconds = timeout.nanoseconds / 1_000_000_000
        Problem.answerAndClose(
            GatehouseError(code: .requestTimeout, status: 408, detail: "The request body made no progress for \(seconds) seconds."), context: context)
    }

    private func stop() {
        timer?.cancel()
        timer = nil
    }
}

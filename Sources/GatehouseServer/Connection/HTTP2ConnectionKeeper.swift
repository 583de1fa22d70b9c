import NIOCore
import NIOHTTP2

/// Ends an HTTP/2 connection that has had no open stream for `limits.client_idle_timeout_seconds` (what
/// ``HTTP1ConnectionGuard`` is for an HTTP/1.1 one), and, when the server shuts down gracefully, says
/// GOAWAY and closes the connection once its open streams have answered; as it does when the client's input ends.
/// A connection whose client takes nothing it is sent for `limits.client_send_timeout_seconds` is closed
/// (``ClientSendClock``; a single stream whose window stays closed is reset by its ``HTTP2StreamCodec``).
final class HTTP2ConnectionKeeper: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame

    private var context: ChannelHandlerContext?
    private var openStreams = 0
    private var lastStreamID = HTTP2StreamID.rootStream
    /// The connection closes when its last open stream does: the server quiesces, or the client's input has ended.
    private var ending = false
    /// Idle means no open stream.
    private var idle: IdleClock
    private var timer: Scheduled<Void>?
    private var send: ClientSendClock

    init(idleTimeout: TimeAmount, sendTimeout: TimeAmount) {
        idle = IdleClock(timeout: idleTimeout)
        send = ClientSendClock(timeout: sendTimeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        idle.idle()
        scheduleIdleClose(at: idle.deadline)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        send.stop()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        send.stop()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        send.writabilityChanged(context)
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The streams `NIOHTTP2Handler` opens and closes, the lane's and the stream channels' alike.
        if let created = event as? NIOHTTP2StreamCreatedEvent {
            streamCreated(created.streamID)
        } else if event is StreamClosedEvent {
            streamClosed()
        }
        if case ChannelEvent.inputClosed = event {
            // The client sends nothing more, not even a WINDOW_UPDATE: the connection ends with its last open
            // stream, as at a graceful shutdown, without a GOAWAY nobody would read.
            ending = true
            if openStreams == 0 { context.close(promise: nil) }
            return
        }
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        ending = true
        let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil))
        context.writeAndFlush(NIOAny(goAway), promise: nil)
        if openStreams == 0 { context.close(promise: nil) }
    }

    private func streamCreated(_ id: HTTP2StreamID) {
        openStreams += 1
        lastStreamID = max(lastStreamID, id)
    }

    private func streamClosed() {
        openStreams -= 1
        guard openStreams == 0 else { return }
        if ending {
            // `NIOHTTP2Handler` says a stream closed while it takes the stream's last frame, before it has passed
            // the frame on: closing now would drop the end of the last answer (the client saw its stream cut). Once
            // the frame is through, a flush sends it, then the connection closes.
            guard let context else { return }
            context.eventLoop.assumeIsolated().execute {
                context.flush()
                context.close(promise: nil)
            }
        } else {
            idle.idle()
        }
    }

    /// The one timer (``IdleClock``).
    private func scheduleIdleClose(at deadline: NIODeadline) {
        guard let context, timer == nil else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            guard let self else { return }
            self.timer = nil
            switch self.idle.verdict(busy: self.openStreams > 0, at: .now()) {
            case .close: self.context?.close(promise: nil)
            case .later(let deadline): self.scheduleIdleClose(at: deadline)
            }
        }
    }
}

import NIOCore
import NIOHTTP2

/// Ends an HTTP/2 connection that has had no open stream for `limits.client_idle_timeout_seconds` (what
/// ``HTTP1ConnectionGuard`` is for an HTTP/1.1 one), and, when the server shuts down gracefully, says
/// GOAWAY and closes the connection once its open streams have answered.
final class HTTP2ConnectionKeeper: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame

    private let idleTimeout: TimeAmount
    private var context: ChannelHandlerContext?
    private var openStreams = 0
    private var lastStreamID = HTTP2StreamID.rootStream
    private var quiescing = false
    /// When the last open stream closed. Kept per stream instead of re-arming a timer each time the connection
    /// goes idle between streams: the one timer, when it fires, decides from it (as ``HTTP1ConnectionGuard`` does).
    private var idleSince = NIODeadline.now()
    private var timer: Scheduled<Void>?

    init(idleTimeout: TimeAmount) {
        self.idleTimeout = idleTimeout
    }

    /// The stream events of the connection's `NIOHTTP2Handler`, delivered to this handler on its loop.
    func streamDelegate(on eventLoop: any EventLoop) -> any NIOHTTP2StreamDelegate {
        Delegate(keeper: NIOLoopBound(self, eventLoop: eventLoop))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        scheduleIdleClose(at: .now() + idleTimeout)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        quiescing = true
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
        if quiescing {
            context?.close(promise: nil)
        } else {
            idleSince = .now()
        }
    }

    /// The one timer: at `deadline` it closes the connection if it has been idle for the whole timeout, and
    /// otherwise looks again when it could be.
    private func scheduleIdleClose(at deadline: NIODeadline) {
        guard let context, timer == nil else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            guard let self else { return }
            self.timer = nil
            if self.openStreams > 0 {
                self.scheduleIdleClose(at: .now() + self.idleTimeout)  // a stream in flight is never cut
            } else if self.idleSince + self.idleTimeout <= .now() {
                self.context?.close(promise: nil)
            } else {
                self.scheduleIdleClose(at: self.idleSince + self.idleTimeout)
            }
        }
    }

    /// `NIOHTTP2Handler` calls its delegate on the connection's loop: the loop-bound box checks that.
    private struct Delegate: NIOHTTP2StreamDelegate {
        let keeper: NIOLoopBound<HTTP2ConnectionKeeper>

        func streamCreated(_ id: HTTP2StreamID, channel: any Channel) { keeper.value.streamCreated(id) }
        func streamClosed(_ id: HTTP2StreamID, channel: any Channel) { keeper.value.streamClosed() }
    }
}

import NIOCore

/// Ends a TLS connection as a plain one ends: when the gateway closes it, as soon as the client has answered the
/// `close_notify`; when the client's TCP connection ends without one, with the same end of input that the handlers
/// behind see from a plain-HTTP client.
///
/// The gateway's connections allow half-closure (a client's end of input is an event the relay and the HTTP/2
/// keeper judge, not a close). `NIOSSLHandler` honours that in two ways that kept sockets open:
/// - While its own close is under way, a client's `close_notify` read then is passed on as a half-close and does
///   not complete the shutdown, nor does the end of input after it: the connection waited for NIOSSL's shutdown
///   timeout (5 s). A connection closed at SIGTERM held the exit that long.
/// - A TCP end of input with no `close_notify` before it (a killed client, `wrk`, many a mobile stack) is passed on
///   as a half-close, or, after a `close_notify` NIOSSL took as a half-close, not at all. A close the handlers
///   behind then make sends NIOSSL's `close_notify` and waits its shutdown timeout (5 s) for the client's, which
///   cannot come; and a connection not told stayed in CLOSE-WAIT until `limits.client_idle_timeout_seconds`.
///
/// This handler sits right behind `NIOSSLHandler`, and its ``InputEndWatcher`` right in front of it:
/// - A full close that the handlers behind ask for passes here first. From then on the channel no longer allows
///   half-closure, so NIOSSL ends the connection when the client's `close_notify` or end of input arrives.
/// - A TCP end of input that NIOSSL did not pass on is passed on from here, once. A close after it, or while NIOSSL
///   passes it on, sends the `close_notify` and then closes the socket at once: nothing more can come from the
///   client.
final class TLSCloseCompletion: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = Any
    typealias InboundOut = Any
    typealias OutboundIn = Any
    typealias OutboundOut = Any

    private var context: ChannelHandlerContext?
    /// The handlers behind have been told that the client's input has ended.
    private var inputEndPassed = false
    /// The TCP connection's input has ended: the context of ``InputEndWatcher``, in front of NIOSSL.
    private var endedBelow: ChannelHandlerContext?

    /// The handler to put in front of `NIOSSLHandler`.
    func inputEndWatcher() -> InputEndWatcher { InputEndWatcher(completion: self) }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        endedBelow = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            if inputEndPassed { return }
            inputEndPassed = true
        }
        context.fireUserInboundEventTriggered(event)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all else {
            context.close(mode: mode, promise: promise)
            return
        }
        // An error here means the channel is already closed: nothing is left to wait for.
        try? context.channel.syncOptions?.setOption(ChannelOptions.allowRemoteHalfClosure, value: false)
        // NIOSSL writes its close_notify and flushes it, then waits for the client's.
        context.close(mode: .all, promise: promise)
        // No close_notify can come after the TCP connection's end: the socket closes now.
        endedBelow?.close(promise: nil)
    }

    /// The TCP connection's input has ended, and NIOSSL is about to learn it (`watcher` is ``InputEndWatcher``'s
    /// context).
    fileprivate func tcpInputEnding(below watcher: ChannelHandlerContext) { endedBelow = watcher }

    /// NIOSSL has had the TCP connection's end of input: the handlers behind learn it now if NIOSSL did not pass
    /// it on.
    fileprivate func tcpInputEnded() {
        guard let context, !inputEndPassed else { return }
        inputEndPassed = true
        context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
    }

    /// Sees the TCP connection's end of input before `NIOSSLHandler` does, and tells the ``TLSCloseCompletion``
    /// behind NIOSSL once NIOSSL has had it.
    final class InputEndWatcher: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = Any
        typealias InboundOut = Any

        /// Both handlers live on the connection's pipeline and are only called on its event loop.
        private let completion: TLSCloseCompletion

        fileprivate init(completion: TLSCloseCompletion) { self.completion = completion }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            guard case ChannelEvent.inputClosed = event else {
                context.fireUserInboundEventTriggered(event)
                return
            }
            // Known before NIOSSL has the end: NIOSSL may pass it on at once (with an `uncleanShutdown` error), and
            // a close the handlers behind make then must not wait for a `close_notify` that cannot come.
            completion.tcpInputEnding(below: context)
            context.fireUserInboundEventTriggered(event)
            completion.tcpInputEnded()
        }
    }
}

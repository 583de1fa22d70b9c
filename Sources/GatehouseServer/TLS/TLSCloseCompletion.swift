import NIOCore

/// Lets a TLS connection the gateway closes end as soon as its client has answered the `close_notify`.
///
/// The gateway's connections allow half-closure (a client's end of input is an event the relay judges, not a close).
/// `NIOSSLHandler` honours that even while its own close is under way: a client's `close_notify` read then is passed on
/// as a half-close and does not complete the shutdown, nor does the end of input after it. The connection waits for
/// NIOSSL's shutdown timeout (5 s) instead. So a connection closed at SIGTERM held the exit that long, and every
/// connection the gateway closed held its socket that long once its client had closed.
///
/// Sits right behind `NIOSSLHandler`: a full close that the handlers behind ask for passes here first, and from then on
/// the channel no longer allows half-closure. NIOSSL reads the option when the client's `close_notify` or end of input
/// arrives, and ends the connection then. Before the gateway closes, half-closure is as it was.
final class TLSCloseCompletion: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = Any

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .all {
            // An error here means the channel is already closed: nothing is left to wait for.
            try? context.channel.syncOptions?.setOption(ChannelOptions.allowRemoteHalfClosure, value: false)
        }
        context.close(mode: mode, promise: promise)
    }
}

import NIOCore

/// `limits.client_send_timeout_seconds` for one connection or one HTTP/2 stream (nginx's `send_timeout`): a client
/// that takes none of what the gateway is sending it for the timeout has its connection closed (its stream reset, on
/// HTTP/2).
///
/// "Takes none" is read off the channel's writability: a channel becomes unwritable when more than its high-water mark
/// waits to be sent (once the kernel's socket buffer is full, or for an HTTP/2 stream beyond the window its client
/// gave), and writable again once what waits falls below the low-water mark, that is once the client has taken a
/// part of it. The timer runs only while the channel is unwritable, so a client that reads costs nothing: no timer
/// per answer. Without it, a client that stops reading (or never opens its stream's window again) would hold its
/// connection, the answer's backend connection and the part of the answer in buffers for as long as it liked.
struct ClientSendClock {
    let timeout: TimeAmount
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    /// Follows the channel's writability: starts the timer when the channel has become unwritable, stops it when it
    /// is writable again. A channel that stays unwritable for the whole timeout is closed (for an HTTP/2 stream:
    /// `RST_STREAM`).
    mutating func writabilityChanged(_ context: ChannelHandlerContext) {
        follow(writable: context.channel.isWritable, on: context.eventLoop) {
            if !context.channel.isWritable { context.close(promise: nil) }
        }
    }

    /// The same for a client whose writability is not a channel's (an HTTP/2 lane stream, ``LaneStream``): the timer
    /// runs while `writable` is `false`, and `expired` ends what the client holds when it fires.
    mutating func follow(writable: Bool, on eventLoop: any EventLoop, expired: @escaping () -> Void) {
        if writable {
            stop()
        } else if timer == nil {
            timer = eventLoop.assumeIsolated().scheduleTask(in: timeout, expired)
        }
    }

    /// The connection or stream has ended.
    mutating func stop() {
        timer?.cancel()
        timer = nil
    }
}

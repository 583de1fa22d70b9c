import NIOCore

/// One keep-alive connection to a backend that ``RelayLane`` writes and reads as bytes: no HTTP handler in its
/// pipeline but TLS (for an `https` upstream) and its ``LaneConnectionHandler``. Owned by the event loop it was made
/// on; it serves one exchange at a time, and an idle one belongs to its ``LaneConnectionPool``.
final class LaneConnection {
    let channel: any Channel
    let handler: LaneConnectionHandler
    /// Whether it has served an exchange before (a request it loses before any answer may then be sent again).
    var reused = false

    init(channel: any Channel, handler: LaneConnectionHandler) {
        self.channel = channel
        self.handler = handler
    }

    var isActive: Bool { channel.isActive }

    /// Drops the connection (it will not be reused).
    func close() {
        handler.receiver = nil
        channel.close(promise: nil)
    }

    /// Writes and flushes a request head.
    func send(_ bytes: ByteBuffer) {
        channel.writeAndFlush(bytes, promise: nil)
    }

    /// Whether the connection reads from the backend (``setReading(_:)``).
    private(set) var reading = true

    /// Reads from the backend only while the client can take what comes (back-pressure). Changes the channel only
    /// when the wish changes: every change costs an `epoll_ctl`.
    func setReading(_ reading: Bool) {
        guard reading != self.reading else { return }
        self.reading = reading
        try? channel.syncOptions?.setOption(.autoRead, value: reading)
        if reading { channel.read() }
    }
}

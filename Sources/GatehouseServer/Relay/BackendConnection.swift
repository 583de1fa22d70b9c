import NIOCore

/// The last handler of a backend connection's pipeline, which hands what the backend sends to the exchange under
/// way (``UpstreamConnectionHandler`` for NIOHTTP1's parts, ``LaneConnectionHandler`` for bytes).
protocol BackendConnectionHandler: ChannelHandler {
    /// Adds the handlers a new connection needs (behind TLS), this one last: what it is found by.
    static func install(in pipeline: ChannelPipeline.SynchronousOperations) throws
    /// Forgets the exchange it served: what comes from now on is nobody's.
    func forgetReceiver()
}

/// One keep-alive connection to a backend, owned by the event loop it was made on: the relay's
/// (``UpstreamConnection``, NIOHTTP1's parts) or its lane's (``LaneConnection``, bytes). It serves one exchange at a
/// time; an idle one belongs to its pool (``BackendConnectionPool``).
final class BackendConnection<Handler: BackendConnectionHandler> {
    let channel: any Channel
    let handler: Handler
    /// Whether it has served an exchange before (a request it loses before any answer may then be sent again).
    var reused = false

    init(channel: any Channel, handler: Handler) {
        self.channel = channel
        self.handler = handler
    }

    var isActive: Bool { channel.isActive }

    /// Drops the connection (it will not be reused).
    func close() {
        handler.forgetReceiver()
        channel.close(promise: nil)
    }

    func flush() {
        channel.flush()
    }

    var isWritable: Bool { channel.isWritable }

    /// Whether the connection reads from the backend (``setReading(_:)``).
    private(set) var reading = true

    /// Reads from the backend only while the client can take what comes (back-pressure). Changes the
    /// channel only when the wish changes: every change costs an `epoll_ctl`.
    func setReading(_ reading: Bool) {
        guard reading != self.reading else { return }
        self.reading = reading
        try? channel.syncOptions?.setOption(.autoRead, value: reading)
        if reading { channel.read() }
    }
}

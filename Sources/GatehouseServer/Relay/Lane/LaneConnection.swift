import NIOCore

/// One keep-alive connection to a backend that ``RelayLane`` writes and reads as bytes: no HTTP handler in its
/// pipeline but TLS (for an `https` upstream) and its ``LaneConnectionHandler``. An idle one belongs to its
/// ``LaneConnectionPool``.
typealias LaneConnection = BackendConnection<LaneConnectionHandler>

/// The lane's keep-alive connections to one upstream on one event loop.
typealias LaneConnectionPool = BackendConnectionPool<LaneConnectionHandler>

extension BackendConnection where Handler == LaneConnectionHandler {
    /// Writes a request head, flushed once the event loop has handled every connection that was ready in this turn
    /// (``EventLoop/execute(_:)`` runs after them). Each flush wakes the backend; flushed one by one, between the
    /// requests' own work (a DPoP proof's signature: ~55 us), each woke it alone and, with the cores busy, took one
    /// from the gateway. Together they wake it once per turn.
    func send(_ bytes: ByteBuffer) {
        channel.write(bytes, promise: nil)
        let channel = channel
        channel.eventLoop.execute { channel.flush() }
    }
}

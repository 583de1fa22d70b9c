import NIOCore

/// One keep-alive connection to a backend that ``RelayLane`` writes and reads as bytes: no HTTP handler in its
/// pipeline but TLS (for an `https` upstream) and its ``LaneConnectionHandler``. An idle one belongs to its
/// ``LaneConnectionPool``.
typealias LaneConnection = BackendConnection<LaneConnectionHandler>

/// The lane's keep-alive connections to one upstream on one event loop.
typealias LaneConnectionPool = BackendConnectionPool<LaneConnectionHandler>

extension BackendConnection where Handler == LaneConnectionHandler {
    /// Writes a request head, flushed with the turn's others (``Channel/flushAfterTurn()``).
    func send(_ bytes: ByteBuffer) {
        channel.write(bytes, promise: nil)
        channel.flushAfterTurn()
    }
}

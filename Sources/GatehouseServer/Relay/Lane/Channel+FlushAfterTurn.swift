import NIOCore

extension Channel {
    /// Flushes once the event loop has handled every connection that was ready in this turn (``EventLoop/execute(_:)``
    /// runs after them), not now. Each flush wakes the peer; flushed one by one between the requests' own work (a
    /// DPoP proof's signature: ~55 us), each woke it alone and, with the cores busy, took one from the gateway.
    /// Together they wake it once per turn. The relay lane's writes to the backend and to the client use it.
    func flushAfterTurn() {
        eventLoop.execute { self.flush() }
    }
}

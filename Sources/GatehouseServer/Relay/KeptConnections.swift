import NIOCore

/// The idle keep-alive connections of one pool (one upstream, one event loop): the most recently released is taken
/// first, and one unused for `idleTimeout` is closed, so that a burst's connections do not stay open for ever. What
/// ``UpstreamConnectionPool`` and ``LaneConnectionPool`` share; each makes its own connections.
final class KeptConnections<Handler: BackendConnectionHandler> {
    typealias Connection = BackendConnection<Handler>

    private let eventLoop: any EventLoop
    private let maxIdle: Int
    private let idleTimeout: TimeAmount
    /// Oldest first; each with the time it was released.
    private var idle: [(connection: Connection, since: NIODeadline)] = []
    private var expiry: Scheduled<Void>?

    init(eventLoop: any EventLoop, maxIdle: Int, idleTimeout: TimeAmount) {
        self.eventLoop = eventLoop
        self.maxIdle = maxIdle
        self.idleTimeout = idleTimeout
    }

    /// An idle connection that is still open, marked `reused`; `nil` when there is none.
    func takeIdle() -> Connection? {
        while let (connection, _) = idle.popLast() {
            if connection.isActive {
                connection.reused = true
                return connection
            }
        }
        return nil
    }

    /// Takes a connection back after a complete exchange that left it reusable.
    func release(_ connection: Connection) {
        connection.handler.forgetReceiver()
        guard connection.isActive, idle.count < maxIdle else {
            connection.close()
            return
        }
        connection.setReading(true)
        idle.append((connection, .now()))
        scheduleExpiry()
    }

    /// Closes every idle connection (the gateway stops).
    func closeIdle() {
        expiry?.cancel()
        expiry = nil
        for (connection, _) in idle { connection.close() }
        idle.removeAll()
    }

    /// One timer per pool, set for the oldest idle connection's expiry.
    private func scheduleExpiry() {
        guard expiry == nil, let oldest = idle.first else { return }
        expiry = eventLoop.assumeIsolated().scheduleTask(deadline: oldest.since + idleTimeout) { [self] in
            expiry = nil
            let now = NIODeadline.now()
            while let oldest = idle.first, oldest.since + idleTimeout <= now {
                idle.removeFirst().connection.close()
            }
            scheduleExpiry()
        }
    }
}

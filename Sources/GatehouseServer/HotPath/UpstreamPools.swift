import NIOCore
import Synchronization

/// The relay's ``UpstreamConnectionPool``s, one per event loop, made when a loop first needs one.
final class UpstreamPools: Sendable {
    private let pools = Mutex<[ObjectIdentifier: NIOLoopBound<UpstreamConnectionPool>]>([:])
    private let host: String
    private let port: Int
    private let maxIdlePerLoop: Int
    private let connectTimeout: TimeAmount
    private let idleTimeout: TimeAmount

    init(host: String, port: Int, maxIdlePerLoop: Int = 64, connectTimeout: TimeAmount = .seconds(5), idleTimeout: TimeAmount = .seconds(60)) {
        self.host = host
        self.port = port
        self.maxIdlePerLoop = maxIdlePerLoop
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
    }

    /// The pool of `eventLoop`; call on that loop (once per inbound connection, not per request).
    func pool(for eventLoop: any EventLoop) -> NIOLoopBound<UpstreamConnectionPool> {
        pools.withLock { pools in
            if let pool = pools[ObjectIdentifier(eventLoop)] { return pool }
            let pool = NIOLoopBound(
                UpstreamConnectionPool(
                    eventLoop: eventLoop, host: host, port: port, maxIdle: maxIdlePerLoop, connectTimeout: connectTimeout, idleTimeout: idleTimeout),
                eventLoop: eventLoop)
            pools[ObjectIdentifier(eventLoop)] = pool
            return pool
        }
    }

    /// Closes the idle connections of every loop.
    func closeIdle() {
        for pool in pools.withLock({ Array($0.values) }) {
            pool.eventLoop.execute { pool.value.closeIdle() }
        }
    }
}

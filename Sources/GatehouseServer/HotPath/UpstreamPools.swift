import NIOCore
import Synchronization

/// The relay's ``UpstreamConnectionPool``s: one per upstream (`backend` and each of `upstreams:` it can reach)
/// per event loop, made when a loop first needs one.
final class UpstreamPools: Sendable {
    /// An upstream's position in ``UpstreamTable/all`` and an event loop.
    private struct Key: Hashable {
        let upstream: Int
        let loop: ObjectIdentifier
    }

    /// Where each upstream is, by its position; `nil` for one the relay does not reach.
    struct Endpoint: Sendable {
        let host: String
        let port: Int
    }

    private let pools = Mutex<[Key: NIOLoopBound<UpstreamConnectionPool>]>([:])
    private let endpoints: [Endpoint?]
    private let maxIdlePerLoop: Int
    private let connectTimeout: TimeAmount
    private let idleTimeout: TimeAmount

    init(
        endpoints: [Endpoint?], maxIdlePerLoop: Int = 64, connectTimeout: TimeAmount = .seconds(5), idleTimeout: TimeAmount = .seconds(60)
    ) {
        self.endpoints = endpoints
        self.maxIdlePerLoop = maxIdlePerLoop
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
    }

    /// The default upstream's pool of `eventLoop`; call on that loop (once per inbound connection, not per request).
    func pool(for eventLoop: any EventLoop) -> NIOLoopBound<UpstreamConnectionPool> {
        // The relay exists only when `backend` is one it reaches.
        pool(upstream: 0, for: eventLoop)!
    }

    /// The pool of upstream `upstream` (its position) on `eventLoop`; `nil` when the relay does not reach it.
    func pool(upstream: Int, for eventLoop: any EventLoop) -> NIOLoopBound<UpstreamConnectionPool>? {
        guard endpoints.indices.contains(upstream), let endpoint = endpoints[upstream] else { return nil }
        let key = Key(upstream: upstream, loop: ObjectIdentifier(eventLoop))
        return pools.withLock { pools in
            if let pool = pools[key] { return pool }
            let pool = NIOLoopBound(
                UpstreamConnectionPool(
                    eventLoop: eventLoop, host: endpoint.host, port: endpoint.port, maxIdle: maxIdlePerLoop, connectTimeout: connectTimeout,
                    idleTimeout: idleTimeout),
                eventLoop: eventLoop)
            pools[key] = pool
            return pool
        }
    }

    /// Closes the idle connections of every upstream on every loop.
    func closeIdle() {
        for pool in pools.withLock({ Array($0.values) }) {
            pool.eventLoop.execute { pool.value.closeIdle() }
        }
    }
}

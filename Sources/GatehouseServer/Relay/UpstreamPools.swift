import NIOCore
import NIOSSL
import Synchronization

/// The relay's ``UpstreamConnectionPool``s: one per upstream (`backend` and each of `upstreams:` it can reach)
/// per event loop, made when a loop first needs one.
///
/// A pool belongs to an upstream's name and address, not to a table: after a SIGHUP, an upstream whose name and
/// address are unchanged keeps its warm connections, and one that moved gets a new pool. The old pool's idle
/// connections close after the idle timeout, as any idle connection does.
final class UpstreamPools: Sendable {
    /// An upstream's name and address, and an event loop.
    private struct Key: Hashable {
        let name: String
        let host: String
        let port: Int
        /// The TLS context (a reload that re-reads the upstream's files makes a new one, and so a new pool).
        let tls: ObjectIdentifier?
        let loop: ObjectIdentifier
    }

    /// Where an upstream is.
    struct Endpoint: Sendable {
        /// An `https` upstream's connections: the context they are made with and the name sent in SNI.
        struct TLS: Sendable {
            let context: NIOSSLContext
            let serverName: String?
        }

        let host: String
        let port: Int
        var tls: TLS? = nil
    }

    private let pools = Mutex<[Key: NIOLoopBound<UpstreamConnectionPool>]>([:])
    /// The ``RelayLane``'s byte connections, kept apart from the NIOHTTP1 ones (neither can serve the other).
    private let lanePools = Mutex<[Key: NIOLoopBound<LaneConnectionPool>]>([:])
    private let maxIdlePerLoop: Int
    private let connectTimeout: TimeAmount
    private let idleTimeout: TimeAmount

    init(maxIdlePerLoop: Int = 256, connectTimeout: TimeAmount = .seconds(5), idleTimeout: TimeAmount = .seconds(60)) {
        self.maxIdlePerLoop = maxIdlePerLoop
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
    }

    /// The pool of `upstream` on `eventLoop` (call on that loop); `nil` when the relay does not reach it.
    func pool(for upstream: UpstreamRoute, on eventLoop: any EventLoop) -> NIOLoopBound<UpstreamConnectionPool>? {
        Self.lookUp(upstream, on: eventLoop, in: pools) { endpoint in
            UpstreamConnectionPool(
                eventLoop: eventLoop, endpoint: endpoint, maxIdle: maxIdlePerLoop, connectTimeout: connectTimeout, idleTimeout: idleTimeout)
        }
    }

    /// The ``RelayLane``'s pool of `upstream` on `eventLoop` (call on that loop); `nil` when the relay does not reach it.
    func lanePool(for upstream: UpstreamRoute, on eventLoop: any EventLoop) -> NIOLoopBound<LaneConnectionPool>? {
        Self.lookUp(upstream, on: eventLoop, in: lanePools) { endpoint in
            LaneConnectionPool(
                eventLoop: eventLoop, endpoint: endpoint, maxIdle: maxIdlePerLoop, connectTimeout: connectTimeout, idleTimeout: idleTimeout)
        }
    }

    /// The pool of `upstream` on `eventLoop` in `pools`, made by `make` when it is the first.
    private static func lookUp<Pool>(
        _ upstream: UpstreamRoute, on eventLoop: any EventLoop, in pools: borrowing Mutex<[Key: NIOLoopBound<Pool>]>, make: (Endpoint) -> Pool
    ) -> NIOLoopBound<Pool>? {
        guard let endpoint = upstream.relayTarget?.endpoint else { return nil }
        let key = Key(
            name: upstream.name, host: endpoint.host, port: endpoint.port, tls: endpoint.tls.map { ObjectIdentifier($0.context) },
            loop: ObjectIdentifier(eventLoop))
        return pools.withLock { pools in
            if let pool = pools[key] { return pool }
            let pool = NIOLoopBound(make(endpoint), eventLoop: eventLoop)
            pools[key] = pool
            return pool
        }
    }

    /// Closes the idle connections of every upstream on every loop.
    func closeIdle() {
        for pool in pools.withLock({ Array($0.values) }) {
            pool.eventLoop.execute { pool.value.closeIdle() }
        }
        for pool in lanePools.withLock({ Array($0.values) }) {
            pool.eventLoop.execute { pool.value.closeIdle() }
        }
    }
}

import NIOCore

/// The lane's pool for the upstream a connection's last request went to. Found in ``UpstreamPools`` (under its
/// lock, by a hashed key) once per connection and upstream rather than per request: an HTTP/1.1 connection's
/// ``RelayLane`` keeps one, and so does an HTTP/2 connection for all its streams (``HTTP2StreamHandlers``). A route
/// of a table put in force later is another object, and is looked up again.
struct LanePoolMemo {
    private var last: (route: UpstreamRoute?, pool: LaneConnectionPool)?

    /// The pool of `upstream` (the table's default route when `nil`) on `eventLoop`, the caller's; `nil` when the
    /// relay does not reach it.
    mutating func pool(for upstream: UpstreamRoute?, relay: APIRelay, on eventLoop: any EventLoop) -> LaneConnectionPool? {
        if let last, last.route === upstream { return last.pool }
        let route = upstream ?? relay.policy.current.upstreams.fallback
        guard let found = relay.pools.lanePool(for: route, on: eventLoop) else { return nil }
        last = (upstream, found.value)
        return found.value
    }
}

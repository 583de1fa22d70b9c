import NIOCore

/// Where an ``APIRelayHandler`` takes its backend connections from and gives them back: the event loop's
/// ``UpstreamConnectionPool`` in the gateway; in tests, connections over an `EmbeddedChannel`. The handler
/// looks its sources up once per connection (per upstream), not per request.
protocol UpstreamConnectionSource: AnyObject {
    /// An idle connection that is still open, marked `reused`, the most recently released first; `nil` when
    /// there is none (then ``connect()``).
    func takeIdle() -> UpstreamConnection?
    /// A new connection (none idle, or the retry of a request that a reused one lost).
    func connect() -> EventLoopFuture<UpstreamConnection>.Isolated
    /// Takes a connection back after a complete exchange that left it reusable.
    func release(_ connection: UpstreamConnection)
}

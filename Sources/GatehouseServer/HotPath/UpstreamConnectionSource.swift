import NIOCore

/// Where an ``APIRelayHandler`` takes its backend connections from and gives them back: the event loop's
/// ``UpstreamConnectionPool`` in the gateway; in tests, connections over an `EmbeddedChannel`. The handler
/// looks its sources up once per connection (per upstream), not per request.
protocol UpstreamConnectionSource: AnyObject {
    /// An idle connection, or a new one.
    func acquire() -> EventLoopFuture<UpstreamConnection>.Isolated
    /// A new connection (for the retry of a request that a reused one lost).
    func connect() -> EventLoopFuture<UpstreamConnection>.Isolated
    /// Takes a connection back after a complete exchange that left it reusable.
    func release(_ connection: UpstreamConnection)
}

import NIOCore

/// What a client connection may take of the gateway, as every front end (HTTP/1.1, TLS, each HTTP/2 stream)
/// applies it: from `limits:`.
struct ClientLimits: Sendable {
    /// `client_idle_timeout_seconds`: no complete request head for this long closes the connection.
    var idleTimeout: TimeAmount
    /// `client_body_timeout_seconds`: a request body without progress for this long is cut.
    var bodyTimeout: TimeAmount
    /// `client_send_timeout_seconds`: a client that takes none of its answer for this long is closed (its stream
    /// reset, on HTTP/2).
    var sendTimeout: TimeAmount
    /// The request target's bound: a request line over it is 414 even when the decoder gives up on it.
    var maxURLBytes: Int
    /// `max_connections_per_client`; `nil` when there is no bound.
    var connections: ClientConnectionLimiter?

    init(
        idleTimeout: TimeAmount, bodyTimeout: TimeAmount = .seconds(60), sendTimeout: TimeAmount = .seconds(60), maxURLBytes: Int,
        connections: ClientConnectionLimiter? = nil
    ) {
        self.idleTimeout = idleTimeout
        self.bodyTimeout = bodyTimeout
        self.sendTimeout = sendTimeout
        self.maxURLBytes = maxURLBytes
        self.connections = connections
    }
}

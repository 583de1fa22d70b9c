/// The session store cannot be reached (connection refused, dropped or timed out).
///
/// Stores throw it for connectivity faults only; the server answers 503 `store_unavailable` with
/// `Retry-After`, and the request may be retried once the store is back. Nothing is lost.
public struct StoreUnavailableError: Error, Sendable, CustomStringConvertible {
    /// What failed, for logs (never sent to clients).
    public var reason: String

    public init(reason: String) {
        self.reason = reason
    }

    public var description: String { "The session store is unavailable: \(reason)" }
}

/// A store that can answer a token look-up from memory, synchronously, when it holds a trustworthy copy:
/// what lets the event-loop relay resolve a session without leaving its thread.
public protocol CachedSessionLookup: Sendable {
    /// The cached session for `tokenHash`, or `nil` when the caller must ask the store (`session(tokenHash:)`).
    func cachedSession(tokenHash: String) -> SessionRecord?

    /// Changes (before the cache does) whenever a cached copy may have become wrong: a session evicted here or
    /// by another instance, the change feed starting or stopping. A copy obtained while it had one value is
    /// still the cache's answer as long as it keeps that value — what lets a connection remember its last
    /// session without asking again. Cheap to read (no lock).
    var evictionEpoch: UInt64 { get }
}

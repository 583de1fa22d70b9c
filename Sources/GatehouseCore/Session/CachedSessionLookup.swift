/// A store that can answer a token look-up from memory, synchronously, when it holds a trustworthy copy:
/// what lets the event-loop relay resolve a session without leaving its thread.
public protocol CachedSessionLookup: Sendable {
    /// The cached session for `tokenHash`, or `nil` when the caller must ask the store (`session(tokenHash:)`).
    func cachedSession(tokenHash: String) -> SessionRecord?
}

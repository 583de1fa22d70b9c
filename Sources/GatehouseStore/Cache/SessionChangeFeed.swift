/// What a store announces about changes to its sessions, made by this process or another one.
public enum SessionChange: Sendable, Equatable {
    /// This session changed or ended.
    case session(id: String)
    /// Something changed and the store cannot say what (SQLite only knows that another process wrote).
    case unknown
}

/// A store that can tell a ``CachingSessionStore`` when sessions change, so its copies may be served:
/// PostgreSQL by `LISTEN/NOTIFY` (each session, from every instance), SQLite by watching the file's
/// `data_version` (another process wrote), memory trivially (only this process writes, through the cache).
public protocol SessionChangeFeed: Sendable {
    /// Follows changes until cancelled or the store is lost (then throws). Calls `onListening` once it
    /// follows; from then on every change made elsewhere reaches `onChange` within the feed's delay.
    func followSessionChanges(onListening: @Sendable () -> Void, onChange: @Sendable (SessionChange) -> Void) async throws
}

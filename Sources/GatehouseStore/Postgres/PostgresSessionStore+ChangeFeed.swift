extension PostgresSessionStore: SessionChangeFeed {
    /// Every instance announces each session it changes or ends (`pg_notify`); the feed evicts exactly that one.
    public func followSessionChanges(onListening: @Sendable () -> Void, onChange: @Sendable (SessionChange) -> Void) async throws {
        try await followSessionNotifications(onListening: onListening, onChange: { id in onChange(.session(id: id)) })
    }
}

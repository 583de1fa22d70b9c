extension MemorySessionStore: SessionChangeFeed {
    /// Only this process writes, and its writes go through the cache, which evicts them itself: the feed
    /// listens at once and never announces anything.
    public nonisolated func followSessionChanges(onListening: @Sendable () -> Void, onChange: @Sendable (SessionChange) -> Void) async throws {
        onListening()
        while true {
            try await Task.sleep(for: .seconds(3600))
        }
    }
}

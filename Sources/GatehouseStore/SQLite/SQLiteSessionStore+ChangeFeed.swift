import GRDB

extension SQLiteSessionStore: SessionChangeFeed {
    /// How often the file is checked for another process's writes: the bound on how long such a process's
    /// logout can go unseen by this one's cache.
    static let changePollInterval: Duration = .milliseconds(200)

    /// SQLite has no notifications between processes, but `PRAGMA data_version` on one connection changes
    /// exactly when another connection commits. It is read on the writer connection, through which every
    /// write of this process goes, so only other processes' commits change it; then everything cached may
    /// be stale (`.unknown`). A single process never sees a change and keeps its cache; this process's own
    /// writes are evicted by the cache itself.
    public func followSessionChanges(onListening: @Sendable () -> Void, onChange: @Sendable (SessionChange) -> Void) async throws {
        var seen = try await dataVersion()
        onListening()
        while true {
            try await Task.sleep(for: Self.changePollInterval)
            let now = try await dataVersion()
            if now != seen {
                seen = now
                onChange(.unknown)
            }
        }
    }

    private func dataVersion() async throws -> Int {
        try await writerAccess { db in try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0 }
    }
}

public import GatehouseCore

extension MemorySessionStore: SessionListing {
    public func sessions(provider: String?, subject: String?, limit: Int) async throws -> [SessionRecord] {
        Array(
            allSessions
                .filter { (provider == nil || $0.provider == provider) && (subject == nil || $0.subject == subject) }
                .sorted { $0.createdAt > $1.createdAt }
                .prefix(limit))
    }

    public func sessionCount() async throws -> Int { allSessions.count }
}

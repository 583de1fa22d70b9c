/// What `gatehouse sessions list|revoke` needs of a store: the sessions of a provider and/or a subject, newest
/// first. The stores that hold sessions (memory, SQLite, PostgreSQL) offer it; revoking is ``SessionStore/deleteSession(id:)``,
/// which every instance sharing the store honours within the session cache's bound.
public protocol SessionListing: SessionStore {
    /// - Parameters:
    ///   - provider: only this provider's sessions; nil: every provider.
    ///   - subject: only this subject's; nil: every subject.
    ///   - limit: at most this many, newest first.
    func sessions(provider: String?, subject: String?, limit: Int) async throws -> [SessionRecord]

    /// How many sessions the store holds (expired ones not yet swept included): the active-sessions gauge.
    func sessionCount() async throws -> Int
}

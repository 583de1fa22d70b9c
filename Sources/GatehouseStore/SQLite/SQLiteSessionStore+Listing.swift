import GRDB
public import GatehouseCore

extension SQLiteSessionStore: SessionListing {
    public func sessions(provider: String?, subject: String?, limit: Int) async throws -> [SessionRecord] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.sessionColumns) FROM sessions
                    WHERE (? IS NULL OR provider = ?) AND (? IS NULL OR subject = ?)
                    ORDER BY created_at DESC LIMIT ?
                    """,
                arguments: [provider, provider, subject, subject, limit]
            ).map(Self.sessionRecord(from:))
        }
    }

    public func sessionCount() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sessions") ?? 0 }
    }
}

public import GatehouseCore
import PostgresNIO

extension PostgresSessionStore: SessionListing {
    public func sessions(provider: String?, subject: String?, limit: Int) async throws -> [SessionRecord] {
        try await guarded { connection in
            try await self.sessions(
                try await connection.query(
                    """
                    SELECT \(unescaped: Self.sessionColumns) FROM sessions
                    WHERE (\(provider)::text IS NULL OR provider = \(provider)) AND (\(subject)::text IS NULL OR subject = \(subject))
                    ORDER BY created_at DESC LIMIT \(limit)
                    """, logger: self.logger))
        }
    }

    public func sessionCount() async throws -> Int {
        try await guarded { connection in
            var count = 0
            for try await value in try await connection.query("SELECT COUNT(*) FROM sessions", logger: self.logger).decode(Int.self) {
                count = value
            }
            return count
        }
    }
}

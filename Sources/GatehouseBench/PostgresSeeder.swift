import Foundation
import Logging
import PostgresNIO

/// Seeds the `sessions` table of a ``GatehouseStore/PostgresSessionStore`` database through a client of its own.
///
/// Rows come from `generate_series`, one `INSERT … SELECT` per batch of ``SeedRow/batchSize`` with
/// `synchronous_commit = off`, then an `ANALYZE`. The client must be running (`client.run()`) and the
/// store migrated.
struct PostgresSeeder: SessionSeeder {
    let client: PostgresClient
    let logger: Logger

    func storedSessions() async throws -> Int {
        try await scalar("SELECT count(*)::bigint FROM sessions")
    }

    func seed(upTo target: Int) async throws -> Int {
        var stored = try await storedSessions()
        let before = stored
        let now = Date().timeIntervalSince1970
        let expires = now + SeedRow.lifetimeSeconds
        let blobMD5s = SeedRow.sealedCredentialBytes / 16
        while stored < target {
            let count = min(SeedRow.batchSize, target - stored)
            let first = stored + 1
            let last = stored + count
            try await client.withConnection { connection in
                try await connection.query("SET synchronous_commit = off", logger: self.logger)
                try await connection.query(
                    """
                    INSERT INTO sessions (id, token_hash, provider, subject, identity, sealed_credential,
                        credential_version, created_at, last_seen_at, expires_at)
                    SELECT md5(random()::text || i), encode(sha256(convert_to(random()::text || i, 'UTF8')), 'hex'),
                        \(SeedRow.provider), format('user-%s', lpad(i::text, 7, '0')),
                        convert_to(format('{"subject":"user-%1$s","email":"user-%1$s@example.com","name":"Bench User %1$s",'
                            || '"groups":["staff","bench"],"claims":{"locale":"en-GB"}}', lpad(i::text, 7, '0')), 'UTF8'),
                        decode(repeat(md5(random()::text || i), \(blobMD5s)::int), 'hex'), 1, \(now), \(now), \(expires)
                    FROM generate_series(\(first)::bigint, \(last)::bigint) AS i
                    """, logger: self.logger)
            }
            stored += count
        }
        if stored > before {
            try await client.query("ANALYZE sessions", logger: logger)
        }
        return stored - before
    }

    func sampleTokenHashes(count: Int) async throws -> [String] {
        var hashes: [String] = []
        let rows = try await client.query("SELECT token_hash FROM sessions ORDER BY random() LIMIT \(count)", logger: logger)
        for try await hash in rows.decode(String.self) {
            hashes.append(hash)
        }
        return hashes
    }

    func storageBytes() async throws -> Int {
        try await scalar("SELECT pg_total_relation_size('sessions')::bigint")
    }

    private func scalar(_ sql: String) async throws -> Int {
        let rows = try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        for try await value in rows.decode(Int.self) {
            return value
        }
        throw BenchFailure("no answer to \(sql)")
    }
}

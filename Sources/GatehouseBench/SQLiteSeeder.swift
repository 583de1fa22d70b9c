import Foundation
import GRDB

/// Seeds the `sessions` table of a ``GatehouseStore/SQLiteSessionStore`` file through a connection of its own.
///
/// Rows go in with one recursive-CTE `INSERT … SELECT` per batch of ``SeedRow/batchSize``, each batch one
/// transaction, with `synchronous = OFF` and a large page cache on this connection only. Run it after the
/// store's `migrate()`.
struct SQLiteSeeder: SessionSeeder {
    private let queue: DatabaseQueue
    private let path: String

    /// - Parameter path: the store's database file.
    init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // Only this connection: seeding speed, not durability, matters here.
            try db.execute(sql: "PRAGMA synchronous = OFF")
            try db.execute(sql: "PRAGMA cache_size = -262144")
        }
        self.queue = try DatabaseQueue(path: path, configuration: configuration)
        self.path = path
    }

    func storedSessions() async throws -> Int {
        try await queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sessions") ?? 0 }
    }

    func seed(upTo target: Int) async throws -> Int {
        var stored = try await storedSessions()
        let before = stored
        let now = Date().timeIntervalSince1970
        while stored < target {
            let count = min(SeedRow.batchSize, target - stored)
            let first = stored
            try await queue.write { db in
                try db.execute(
                    sql: """
                        WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                        INSERT INTO sessions (id, token_hash, provider, subject, identity, sealed_credential,
                            credential_version, created_at, last_seen_at, expires_at)
                        SELECT lower(hex(randomblob(16))), lower(hex(randomblob(32))), ?, printf('user-%07d', i),
                            CAST(printf('{"subject":"user-%07d","email":"user-%07d@example.com","name":"Bench User %07d",'
                                || '"groups":["staff","bench"],"claims":{"locale":"en-GB"}}', i, i, i) AS BLOB),
                            randomblob(?), 1, ?, ?, ?
                        FROM n
                        """,
                    arguments: [
                        first + 1, first + count, SeedRow.provider, SeedRow.sealedCredentialBytes,
                        now, now, now + SeedRow.lifetimeSeconds,
                    ])
            }
            stored += count
        }
        if stored > before {
            // Fold the WAL back into the file so the lookups start from a settled database.
            try await queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        }
        return stored - before
    }

    func sampleTokenHashes(count: Int) async throws -> [String] {
        try await queue.read { db in
            let maxRowID = try Int.fetchOne(db, sql: "SELECT max(rowid) FROM sessions") ?? 0
            guard maxRowID > 0 else { return [] }
            let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM sessions") ?? 0
            let wanted = min(count, total)
            let statement = try db.makeStatement(sql: "SELECT token_hash FROM sessions WHERE rowid = ?")
            var hashes = Set<String>()
            var attempts = 0
            // Row ids are dense unless sessions were deleted; give up on holes after enough tries.
            while hashes.count < wanted, attempts < wanted * 20 {
                attempts += 1
                if let hash = try String.fetchOne(statement, arguments: [Int.random(in: 1...maxRowID)]) {
                    hashes.insert(hash)
                }
            }
            return Array(hashes)
        }
    }

    func storageBytes() async throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.size] as? NSNumber)?.intValue ?? 0
    }
}

public import Foundation
import GRDB
public import GatehouseCore

/// A ``SessionStore`` in one SQLite file: the embedded default, which survives restarts.
///
/// The database runs in WAL mode through a GRDB `DatabasePool`, so readers never wait for the writer.
/// Several gateway processes may open the same file: every write is one `BEGIN IMMEDIATE` transaction,
/// which SQLite serializes across processes, and a busy connection waits instead of failing.
///
/// ```swift
/// let store = try SQLiteSessionStore(path: "data/gatehouse.sqlite3")
/// try await store.migrate()
/// ```
public final class SQLiteSessionStore: SessionStore {
    static let sessionColumns = """
        id, token_hash, provider, subject, identity, sealed_credential, credential_version, \
        created_at, last_seen_at, expires_at, dpop_jkt, provider_sid
        """

    let pool: DatabasePool
    /// The one-time values: an append-only log in the file and what this process knows of it.
    let onceLog: SQLiteOnceLog
    private let onceRecords: OnceRecordBatcher

    /// Opens (or creates) the database file, creating its parent directories.
    ///
    /// Call ``migrate()`` before use.
    /// - Parameters:
    ///   - path: The SQLite file.
    public init(path: String) throws {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        // Sessions and sealed credentials: readable by the gateway's user only. A directory the gateway creates
        // is 0700; the file is created 0600 before SQLite opens it, and SQLite gives its `-wal` and `-shm`
        // companions the database file's mode.
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
            }
        }
        var configuration = Configuration()
        // Another process may hold the write lock for a moment; wait for it rather than fail the request.
        configuration.busyMode = .timeout(10)
        // WAL with synchronous=NORMAL (SQLite's recommendation for WAL): a commit no longer waits for an fsync
        // of the log; the file stays consistent, and only the last commits before a power loss or OS crash
        // (not a process crash) can be lost. With FULL, every write — a DPoP proof's jti on each request —
        // queued behind one fsync at a time.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        self.pool = pool
        let onceLog = SQLiteOnceLog()
        self.onceLog = onceLog
        // The records that arrive while one batch is written share the next (``OnceRecordBatcher``); each batch
        // is handed to the writer's queue and answered from it: no task on the way.
        onceRecords = OnceRecordBatcher { entries, done in onceLog.write(pool, entries, done: done) }
    }

    /// Runs `body` on the writer connection outside a transaction (for per-connection state such as
    /// `PRAGMA data_version`).
    func writerAccess<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await pool.writeWithoutTransaction(body)
    }

    /// Closes the database connections; any later call throws.
    public func close() throws {
        try pool.close()
    }

    public func migrate() async throws {
        do {
            try await runMigrations()
        } catch {
            // Two instances starting on a fresh file both see no migration applied; the loser fails on the
            // winner's tables. Checking again then finds everything applied. A real failure throws again.
            try await runMigrations()
        }
        // Learn the live one-time values now rather than in the first DPoP request's write.
        try await onceLog.catchUp(pool)
    }

    public func ping() async throws {
        _ = try await pool.unsafeRead { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    // MARK: Sessions

    public func insertSession(_ record: SessionRecord) async throws {
        do {
            try await pool.write { db in
                try db.execute(
                    sql: "INSERT INTO sessions (\(Self.sessionColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    arguments: [
                        record.id, record.tokenHash, record.provider, record.subject, record.identity,
                        record.sealedCredential, record.credentialVersion, record.createdAt.timeIntervalSince1970,
                        record.lastSeenAt.timeIntervalSince1970, record.expiresAt.timeIntervalSince1970, record.dpopThumbprint,
                        record.providerSessionID,
                    ]
                )
            }
        } catch let error as DatabaseError where Self.isDuplicateKey(error) {
            throw SessionStoreError.duplicateSession
        }
    }

    public func session(tokenHash: String) async throws -> SessionRecord? {
        // Called on every proxied request: one cached statement, one probe of the token_hash index. A single
        // SELECT is atomic by itself, so the read needs no surrounding transaction.
        try await pool.unsafeRead { db in
            let statement = try db.cachedStatement(sql: "SELECT \(Self.sessionColumns) FROM sessions WHERE token_hash = ?")
            return try Row.fetchOne(statement, arguments: [tokenHash]).map(Self.sessionRecord(from:))
        }
    }

    public func session(id: String) async throws -> SessionRecord? {
        try await pool.unsafeRead { db in
            let statement = try db.cachedStatement(sql: "SELECT \(Self.sessionColumns) FROM sessions WHERE id = ?")
            return try Row.fetchOne(statement, arguments: [id]).map(Self.sessionRecord(from:))
        }
    }

    public func updateCredential(sessionID: String, sealedCredential: Data, expectedVersion: Int) async throws -> Bool {
        try await pool.write { db in
            // Compare-and-set: of two concurrent refreshes only the one that read the current version lands.
            try db.execute(
                sql: """
                    UPDATE sessions SET sealed_credential = ?, credential_version = credential_version + 1
                    WHERE id = ? AND credential_version = ?
                    """,
                arguments: [sealedCredential, sessionID, expectedVersion]
            )
            return db.changesCount == 1
        }
    }

    public func touchSession(id: String, at: Date) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE sessions SET last_seen_at = ? WHERE id = ?", arguments: [at.timeIntervalSince1970, id])
        }
    }

    public func deleteSession(id: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM refresh_leases WHERE session_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM sessions WHERE id = ?", arguments: [id])
        }
    }

    public func sessionIDs(provider: String, matching match: ProviderSessionMatch) async throws -> [String] {
        try await pool.read { db in
            switch match {
            case .providerSession(let sid, let subject):
                try String.fetchAll(
                    db, sql: "SELECT id FROM sessions WHERE provider = ? AND provider_sid = ? AND (? IS NULL OR subject = ?)",
                    arguments: [provider, sid, subject, subject])
            case .subject(let subject):
                try String.fetchAll(db, sql: "SELECT id FROM sessions WHERE provider = ? AND subject = ?", arguments: [provider, subject])
            }
        }
    }

    @discardableResult
    public func deleteExpired(now: Date, idleCutoff: Date) async throws -> Int {
        let now = now.timeIntervalSince1970
        let idleCutoff = idleCutoff.timeIntervalSince1970
        let removed = try await pool.write { db in
            let expired = "SELECT id FROM sessions WHERE expires_at < ? OR last_seen_at < ?"
            try db.execute(sql: "DELETE FROM refresh_leases WHERE session_id IN (\(expired)) OR until <= ?", arguments: [now, idleCutoff, now])
            try db.execute(sql: "DELETE FROM sessions WHERE expires_at < ? OR last_seen_at < ?", arguments: [now, idleCutoff])
            let count = db.changesCount
            try db.execute(sql: "DELETE FROM pending WHERE expires_at < ?", arguments: [now])
            return count
        }
        try await onceLog.sweep(pool, now: Date(timeIntervalSince1970: now))
        return removed
    }

    // MARK: Pending records

    public func insertPending(_ record: PendingRecord) async throws {
        do {
            try await pool.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO pending (key_hash, purpose, provider, session_id, payload, expires_at, consumed_at)
                        VALUES (?, ?, ?, ?, ?, ?, NULL)
                        """,
                    arguments: [
                        record.keyHash, record.purpose.rawValue, record.provider, record.sessionID, record.payload,
                        record.expiresAt.timeIntervalSince1970,
                    ]
                )
            }
        } catch let error as DatabaseError where Self.isDuplicateKey(error) {
            throw SessionStoreError.duplicatePending
        }
    }

    public func consumePending(keyHash: String, purpose: PendingRecord.Purpose, now: Date) async throws -> Consumption {
        // One IMMEDIATE write transaction holds SQLite's write lock from the read to the update, so no other
        // connection, in this process or another, can read the record as unconsumed in between.
        try await pool.write { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT provider, session_id, payload, expires_at, consumed_at FROM pending WHERE key_hash = ? AND purpose = ?",
                    arguments: [keyHash, purpose.rawValue]
                )
            else { return .unknown }
            let record = PendingRecord(
                keyHash: keyHash,
                purpose: purpose,
                provider: try row.decode(forColumn: "provider"),
                sessionID: try row.decode(forColumn: "session_id"),
                payload: try row.decode(forColumn: "payload"),
                expiresAt: Date(timeIntervalSince1970: try row.decode(forColumn: "expires_at"))
            )
            // The expiry instant itself is already too late, in both stores.
            guard record.expiresAt > now else { return .unknown }
            if try row.decode(Double?.self, forColumn: "consumed_at") != nil {
                return .replayed(record)
            }
            try db.execute(
                sql: "UPDATE pending SET consumed_at = ? WHERE key_hash = ? AND purpose = ?",
                arguments: [now.timeIntervalSince1970, keyHash, purpose.rawValue]
            )
            return .first(record)
        }
    }

    public func pendingRecord(keyHash: String, purpose: PendingRecord.Purpose, now: Date) async throws -> PendingRecord? {
        try await pool.read { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT provider, session_id, payload, expires_at FROM pending
                        WHERE key_hash = ? AND purpose = ? AND consumed_at IS NULL AND expires_at > ?
                        """,
                    arguments: [keyHash, purpose.rawValue, now.timeIntervalSince1970]
                )
            else { return nil }
            return PendingRecord(
                keyHash: keyHash,
                purpose: purpose,
                provider: try row.decode(forColumn: "provider"),
                sessionID: try row.decode(forColumn: "session_id"),
                payload: try row.decode(forColumn: "payload"),
                expiresAt: Date(timeIntervalSince1970: try row.decode(forColumn: "expires_at"))
            )
        }
    }

    public func replacePendingPayload(
        keyHash: String, purpose: PendingRecord.Purpose, expected: Data, with payload: Data, now: Date
    ) async throws -> Bool {
        // One statement compares and writes under SQLite's write lock.
        try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE pending SET payload = ?
                    WHERE key_hash = ? AND purpose = ? AND payload = ? AND consumed_at IS NULL AND expires_at > ?
                    """,
                arguments: [payload, keyHash, purpose.rawValue, expected, now.timeIntervalSince1970]
            )
            return db.changesCount == 1
        }
    }

    public func attachSession(_ sessionID: String, toPending keyHash: String) async throws {
        // The protocol names no purpose; key hashes come from distinct random secrets, so at most one matches.
        try await pool.write { db in
            try db.execute(sql: "UPDATE pending SET session_id = ? WHERE key_hash = ?", arguments: [sessionID, keyHash])
        }
    }

    // MARK: Refresh leases

    public func acquireRefreshLease(sessionID: String, owner: String, until: Date, now: Date) async throws -> Bool {
        try await pool.write { db in
            // One statement decides: insert a free lease, or take over a lapsed or own one. When the WHERE of
            // the upsert is false nothing changes, and another owner keeps the lease.
            try db.execute(
                sql: """
                    INSERT INTO refresh_leases (session_id, owner, until) VALUES (?, ?, ?)
                    ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, until = excluded.until
                    WHERE refresh_leases.until <= ? OR refresh_leases.owner = excluded.owner
                    """,
                arguments: [sessionID, owner, until.timeIntervalSince1970, now.timeIntervalSince1970]
            )
            return db.changesCount == 1
        }
    }

    public func releaseRefreshLease(sessionID: String, owner: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM refresh_leases WHERE session_id = ? AND owner = ?", arguments: [sessionID, owner])
        }
    }

    // MARK: One-time values

    public func recordOnce(_ key: String, until: Date, now: Date) async throws -> Bool {
        try await onceRecords.record(key, until: until, now: now)
    }

    public func recordOnce(_ key: String, until: Date, now: Date, completion: @escaping @Sendable (Result<Bool, any Error>) -> Void) {
        onceRecords.record(key, until: until, now: now, completion: completion)
    }

    // MARK: Helpers

    private func runMigrations() async throws {
        let migrator = SQLiteMigrations.migrator
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            // asyncMigrate keeps the blocking schema work off the cooperative thread pool.
            migrator.asyncMigrate(pool) { result in
                continuation.resume(with: result.map { _ in () })
            }
        }
    }

    /// A primary-key or unique violation; other constraint failures are bugs and stay as they are.
    private static func isDuplicateKey(_ error: DatabaseError) -> Bool {
        error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY || error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE
    }

    static func sessionRecord(from row: Row) throws -> SessionRecord {
        SessionRecord(
            id: try row.decode(forColumn: "id"),
            tokenHash: try row.decode(forColumn: "token_hash"),
            provider: try row.decode(forColumn: "provider"),
            subject: try row.decode(forColumn: "subject"),
            identity: try row.decode(forColumn: "identity"),
            sealedCredential: try row.decode(forColumn: "sealed_credential"),
            credentialVersion: try row.decode(forColumn: "credential_version"),
            createdAt: Date(timeIntervalSince1970: try row.decode(forColumn: "created_at")),
            lastSeenAt: Date(timeIntervalSince1970: try row.decode(forColumn: "last_seen_at")),
            expiresAt: Date(timeIntervalSince1970: try row.decode(forColumn: "expires_at")),
            dpopThumbprint: try row.decode(forColumn: "dpop_jkt"),
            providerSessionID: try row.decode(forColumn: "provider_sid")
        )
    }
}

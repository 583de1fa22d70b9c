public import Foundation
public import GatehouseCore
public import Logging
import PostgresNIO
public import ServiceLifecycle

/// A ``SessionStore`` in PostgreSQL, shared by several gateway instances.
///
/// Built on PostgresNIO's `PostgresClient`, a connection pool that must be running: run the store as a
/// `Service` (its ``run()`` runs the pool) next to the server. Every statement that decides something is
/// a single atomic statement (`UPDATE … RETURNING`, `INSERT … ON CONFLICT`), so instances need no
/// other coordination.
///
/// When PostgreSQL cannot be reached, calls throw ``StoreUnavailableError`` (503 `store_unavailable`)
/// within 1 s: a refused or closed connection opens the circuit breaker at once, and a call on a request's
/// path is given up once no call of this store has had an answer for 750 ms (a paused or unreachable
/// server refuses nothing; see ``StoreLiveness``). While the breaker is open calls fail at once, and a
/// probe closes it when PostgreSQL answers again. Background work (migrations, sweeps) waits up to
/// `operationTimeout` instead.
///
/// ```swift
/// let store = try PostgresSessionStore(url: "postgres://gatehouse@db/gatehouse", poolSize: 20, logger: logger)
/// // run `store` in a ServiceGroup, then:
/// try await store.migrate()
/// ```
public final class PostgresSessionStore: SessionStore, Service {
    static let sessionColumns = """
        id, token_hash, provider, subject, identity, sealed_credential, credential_version, \
        created_at, last_seen_at, expires_at, dpop_jkt, provider_sid
        """

    /// Whose call it is: a request's fails fast when the store goes silent; background work is patient;
    /// the breaker's probe is not turned away by the open breaker it is to close.
    enum CallKind: Sendable {
        case request
        case background
        case probe
    }

    /// How a call ended: with its value, or given up.
    private enum Outcome<T: Sendable>: Sendable {
        case value(T)
        case givenUp(StoreLiveness.Verdict)
    }

    let client: PostgresClient
    let logger: Logger
    private let operationTimeout: Duration
    /// Fails calls fast while PostgreSQL is unreachable, probing in the background.
    let breaker = StoreCircuitBreaker()
    /// When PostgreSQL last answered: tells a silent server from a busy one.
    let liveness: StoreLiveness

    /// - Parameters:
    ///   - url: `postgres://user:password@host:port/database?sslmode=…`.
    ///   - poolSize: the most connections opened.
    ///   - operationTimeout: the longest any operation waits (for a connection, then the server), however
    ///     busy the store; background work waits this long even when PostgreSQL is silent.
    ///   - silenceLimit: how long an operation on a request's path waits while PostgreSQL answers nothing
    ///     at all before it is given up and the breaker opens.
    public init(
        url: String, poolSize: Int, operationTimeout: Duration = .seconds(5), silenceLimit: Duration = .milliseconds(750), logger: Logger
    ) throws {
        let settings = try PostgresConnectionSettings(url: url, poolSize: poolSize)
        let connectFailures = PostgresPoolLogTap.Listener()
        var poolLogger = logger
        poolLogger.handler = PostgresPoolLogTap(base: logger.handler, listener: connectFailures)
        self.client = PostgresClient(configuration: settings.configuration, backgroundLogger: poolLogger)
        self.logger = logger
        self.operationTimeout = operationTimeout
        self.liveness = StoreLiveness(silenceLimit: silenceLimit)
        connectFailures.set { [weak self] reason in self?.connectivityFault(reason) }
    }

    /// Runs the connection pool until the task is cancelled or a graceful shutdown begins.
    public func run() async throws {
        // PostgresClient.run() marks the pool running before its first suspension, and ends on graceful
        // shutdown by itself.
        await client.run()
        breaker.stop()
    }

    public func migrate() async throws {
        // Background: a second instance may hold the migration lock for a while.
        try await guarded(.background) { connection in
            try await connection.withTransaction(logger: self.logger) { connection in
                // Held until COMMIT: a second instance starting at the same moment waits here, then finds
                // every migration applied.
                try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresMigrations.lockKey))", logger: self.logger)
                try await connection.query(
                    "CREATE TABLE IF NOT EXISTS gatehouse_migrations (version bigint PRIMARY KEY, applied_at double precision NOT NULL)",
                    logger: self.logger)
                var applied = Set<Int>()
                for try await version in try await connection.query("SELECT version FROM gatehouse_migrations", logger: self.logger).decode(Int.self)
                {
                    applied.insert(version)
                }
                for migration in PostgresMigrations.all where !applied.contains(migration.version) {
                    for statement in migration.statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: self.logger)
                    }
                    let now = Date().timeIntervalSince1970
                    try await connection.query(
                        "INSERT INTO gatehouse_migrations (version, applied_at) VALUES (\(migration.version), \(now))", logger: self.logger)
                }
            }
        }
    }

    public func ping() async throws {
        // Readiness probes have short timeouts of their own: answer within 2 s either way.
        try await guarded(limit: min(operationTimeout, .seconds(2))) { connection in
            _ = try await connection.query("SELECT 1", logger: self.logger).collect()
        }
    }

    // MARK: Sessions

    public func insertSession(_ record: SessionRecord) async throws {
        do {
            try await guarded { connection in
                try await connection.query(
                    """
                    INSERT INTO sessions (id, token_hash, provider, subject, identity, sealed_credential, credential_version,
                        created_at, last_seen_at, expires_at, dpop_jkt, provider_sid)
                    VALUES (\(record.id), \(record.tokenHash), \(record.provider), \(record.subject), \(record.identity),
                        \(record.sealedCredential), \(record.credentialVersion), \(record.createdAt.timeIntervalSince1970),
                        \(record.lastSeenAt.timeIntervalSince1970), \(record.expiresAt.timeIntervalSince1970), \(record.dpopThumbprint),
                        \(record.providerSessionID))
                    """, logger: self.logger)
            }
        } catch let error as PSQLError where Self.isUniqueViolation(error) {
            throw SessionStoreError.duplicateSession
        }
    }

    public func session(tokenHash: String) async throws -> SessionRecord? {
        // Every authenticated request asks this: a named prepared statement, parsed and planned once per connection.
        try await guarded { connection in
            var found: SessionRecord?
            for try await record in try await connection.execute(SessionByTokenHash(tokenHash: tokenHash), logger: self.logger) {
                found = record
            }
            return found
        }
    }

    public func session(id: String) async throws -> SessionRecord? {
        try await guarded { connection in
            try await self.sessions(
                try await connection.query("SELECT \(unescaped: Self.sessionColumns) FROM sessions WHERE id = \(id)", logger: self.logger)
            ).first
        }
    }

    public func updateCredential(sessionID: String, sealedCredential: Data, expectedVersion: Int) async throws -> Bool {
        try await guarded { connection in
            // Compare-and-set: of two concurrent refreshes, on any instances, only the one that read the current version lands.
            // The notification goes out with the commit, so caches on other instances drop their copy.
            let rows = try await connection.query(
                """
                WITH updated AS (
                    UPDATE sessions SET sealed_credential = \(sealedCredential), credential_version = credential_version + 1
                    WHERE id = \(sessionID) AND credential_version = \(expectedVersion) RETURNING id)
                SELECT pg_notify(\(Self.sessionChangesChannel), id) FROM updated
                """, logger: self.logger
            ).collect()
            return rows.count == 1
        }
    }

    public func touchSession(id: String, at: Date) async throws {
        try await guarded { connection in
            try await connection.query(
                "UPDATE sessions SET last_seen_at = \(at.timeIntervalSince1970) WHERE id = \(id)", logger: self.logger)
        }
    }

    public func deleteSession(id: String) async throws {
        try await guarded { connection in
            try await connection.withTransaction(logger: self.logger) { connection in
                try await connection.query("DELETE FROM refresh_leases WHERE session_id = \(id)", logger: self.logger)
                try await connection.query("DELETE FROM sessions WHERE id = \(id)", logger: self.logger)
                try await connection.query("SELECT pg_notify(\(Self.sessionChangesChannel), \(id))", logger: self.logger)
            }
        }
    }

    public func sessionIDs(provider: String, matching match: ProviderSessionMatch) async throws -> [String] {
        try await guarded { connection in
            let rows: PostgresRowSequence
            switch match {
            case .providerSession(let sid, let subject):
                rows = try await connection.query(
                    """
                    SELECT id FROM sessions WHERE provider = \(provider) AND provider_sid = \(sid)
                        AND (\(subject)::text IS NULL OR subject = \(subject))
                    """, logger: self.logger)
            case .subject(let subject):
                rows = try await connection.query(
                    "SELECT id FROM sessions WHERE provider = \(provider) AND subject = \(subject)", logger: self.logger)
            }
            var ids: [String] = []
            for try await id in rows.decode(String.self) { ids.append(id) }
            return ids
        }
    }

    @discardableResult
    public func deleteExpired(now: Date, idleCutoff: Date) async throws -> Int {
        let now = now.timeIntervalSince1970
        let idleCutoff = idleCutoff.timeIntervalSince1970
        // Safe on every instance at once: each DELETE is idempotent, and rows another instance removed first
        // are simply not counted.
        return try await guarded(.background) { connection in
            try await connection.withTransaction(logger: self.logger) { connection in
                try await connection.query(
                    """
                    DELETE FROM refresh_leases WHERE until <= \(now) OR session_id IN
                        (SELECT id FROM sessions WHERE expires_at < \(now) OR last_seen_at < \(idleCutoff))
                    """, logger: self.logger)
                let deleted = try await connection.query(
                    "DELETE FROM sessions WHERE expires_at < \(now) OR last_seen_at < \(idleCutoff) RETURNING 1", logger: self.logger
                ).collect()
                try await connection.query("DELETE FROM pending WHERE expires_at < \(now)", logger: self.logger)
                try await connection.query("DELETE FROM once_values WHERE expires_at < \(now)", logger: self.logger)
                return deleted.count
            }
        }
    }

    // MARK: Session changes

    /// The `LISTEN/NOTIFY` channel on which every credential update and every end of a session is announced
    /// (payload: the session id), committed together with the change.
    public static let sessionChangesChannel = "gatehouse_session_changes"

    /// Follows the session changes of every instance: `onListening` runs once `LISTEN` is in effect, then
    /// `onChange` for each changed or ended session id, until the connection fails (``StoreUnavailableError``)
    /// or the task is cancelled. Holds one pooled connection while it runs.
    ///
    /// It also ends when the breaker opens: a paused or unreachable server leaves the connection looking
    /// open while notifications are lost, and a cache must not go on trusting it. Once PostgreSQL answers
    /// again, following anew works (the caller retries).
    public func followSessionNotifications(onListening: @Sendable () -> Void, onChange: @Sendable (String) -> Void) async throws {
        try breaker.check()
        do {
            try await client.withConnection { connection in
                let lease = LeasedConnection()
                try lease.hold(connection)
                defer { lease.release() }
                let watcher = Task { [breaker, interval = liveness.breakerCheckInterval] in
                    while !breaker.isOpen { try await Task.sleep(for: interval) }
                    lease.abandon()
                }
                defer { watcher.cancel() }
                try await connection.listen(on: Self.sessionChangesChannel) { notifications in
                    onListening()
                    for try await notification in notifications {
                        onChange(notification.payload)
                    }
                }
            }
        } catch {
            if Task.isCancelled { return }
            guard let reason = PostgresConnectivity.fault(in: error) else { throw error }
            // The server closed the connection (a fast shutdown does so at once): the store is down for
            // every call, not only this one.
            connectivityFault(reason)
            throw StoreUnavailableError(reason: reason)
        }
        if !Task.isCancelled {
            throw StoreUnavailableError(reason: "the session change feed ended")
        }
    }

    // MARK: Pending records

    public func insertPending(_ record: PendingRecord) async throws {
        do {
            try await guarded { connection in
                try await connection.query(
                    """
                    INSERT INTO pending (key_hash, purpose, provider, session_id, payload, expires_at, consumed_at)
                    VALUES (\(record.keyHash), \(record.purpose.rawValue), \(record.provider), \(record.sessionID),
                        \(record.payload), \(record.expiresAt.timeIntervalSince1970), NULL)
                    """, logger: self.logger)
            }
        } catch let error as PSQLError where Self.isUniqueViolation(error) {
            throw SessionStoreError.duplicatePending
        }
    }

    public func consumePending(keyHash: String, purpose: PendingRecord.Purpose, now: Date) async throws -> Consumption {
        let nowSeconds = now.timeIntervalSince1970
        return try await guarded { connection in
            // One statement marks the record used: of two instances redeeming at once, PostgreSQL's row lock
            // lets exactly one see `consumed_at IS NULL`.
            let first = try await self.pendingRecords(
                try await connection.query(
                    """
                    UPDATE pending SET consumed_at = \(nowSeconds)
                    WHERE key_hash = \(keyHash) AND purpose = \(purpose.rawValue) AND consumed_at IS NULL AND expires_at > \(nowSeconds)
                    RETURNING provider, session_id, payload, expires_at
                    """, logger: self.logger),
                keyHash: keyHash, purpose: purpose)
            if let record = first.first { return .first(record) }
            // Not consumed by us: unknown, expired or already used.
            let existing = try await self.pendingRecords(
                try await connection.query(
                    """
                    SELECT provider, session_id, payload, expires_at FROM pending
                    WHERE key_hash = \(keyHash) AND purpose = \(purpose.rawValue) AND consumed_at IS NOT NULL AND expires_at > \(nowSeconds)
                    """, logger: self.logger),
                keyHash: keyHash, purpose: purpose)
            if let record = existing.first { return .replayed(record) }
            return .unknown
        }
    }

    public func pendingRecord(keyHash: String, purpose: PendingRecord.Purpose, now: Date) async throws -> PendingRecord? {
        let nowSeconds = now.timeIntervalSince1970
        return try await guarded { connection in
            try await self.pendingRecords(
                try await connection.query(
                    """
                    SELECT provider, session_id, payload, expires_at FROM pending
                    WHERE key_hash = \(keyHash) AND purpose = \(purpose.rawValue) AND consumed_at IS NULL AND expires_at > \(nowSeconds)
                    """, logger: self.logger),
                keyHash: keyHash, purpose: purpose
            ).first
        }
    }

    public func replacePendingPayload(
        keyHash: String, purpose: PendingRecord.Purpose, expected: Data, with payload: Data, now: Date
    ) async throws -> Bool {
        let nowSeconds = now.timeIntervalSince1970
        return try await guarded { connection in
            // One statement compares and writes: the row lock orders two instances writing at once, and the
            // second sees the first's payload, not `expected`.
            let rows = try await connection.query(
                """
                UPDATE pending SET payload = \(payload)
                WHERE key_hash = \(keyHash) AND purpose = \(purpose.rawValue) AND payload = \(expected)
                    AND consumed_at IS NULL AND expires_at > \(nowSeconds)
                RETURNING key_hash
                """, logger: self.logger)
            var updated = false
            for try await _ in rows { updated = true }
            return updated
        }
    }

    public func attachSession(_ sessionID: String, toPending keyHash: String) async throws {
        try await guarded { connection in
            try await connection.query("UPDATE pending SET session_id = \(sessionID) WHERE key_hash = \(keyHash)", logger: self.logger)
        }
    }

    // MARK: Refresh leases

    public func acquireRefreshLease(sessionID: String, owner: String, until: Date, now: Date) async throws -> Bool {
        try await guarded { connection in
            // One statement decides: insert a free lease, or take over a lapsed or own one. When the WHERE of the
            // upsert is false no row is returned, and the other owner keeps the lease.
            let rows = try await connection.query(
                """
                INSERT INTO refresh_leases (session_id, owner, until) VALUES (\(sessionID), \(owner), \(until.timeIntervalSince1970))
                ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, until = excluded.until
                WHERE refresh_leases.until <= \(now.timeIntervalSince1970) OR refresh_leases.owner = excluded.owner
                RETURNING 1
                """, logger: self.logger
            ).collect()
            return rows.count == 1
        }
    }

    public func releaseRefreshLease(sessionID: String, owner: String) async throws {
        try await guarded { connection in
            try await connection.query(
                "DELETE FROM refresh_leases WHERE session_id = \(sessionID) AND owner = \(owner)", logger: self.logger)
        }
    }

    // MARK: One-time values

    public func recordOnce(_ key: String, until: Date, now: Date) async throws -> Bool {
        let (until, now) = (until.timeIntervalSince1970, now.timeIntervalSince1970)
        // One statement, atomic across instances: a row comes back when the key is new or its entry expired.
        return try await guarded { connection in
            let rows = try await connection.query(
                """
                INSERT INTO once_values (key, expires_at) VALUES (\(key), \(until))
                ON CONFLICT (key) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE once_values.expires_at < \(now)
                RETURNING 1
                """, logger: self.logger
            ).collect()
            return rows.count == 1
        }
    }

    // MARK: Helpers

    /// Runs `body` on a pooled connection, within the call's deadlines; connectivity faults throw
    /// ``StoreUnavailableError``. A refused or closed connection, or silence from PostgreSQL, opens the
    /// ``breaker``, and until a probe gets through every call fails at once.
    @discardableResult
    func guarded<T: Sendable>(
        _ kind: CallKind = .request, limit: Duration? = nil, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        try breaker.check()
        return try await deadlined(kind, limit: limit ?? operationTimeout) { lease in
            try await self.client.withConnection { connection in
                try lease.hold(connection)
                defer { lease.release() }
                return try await body(connection)
            }
        }
    }

    /// `operation` raced against the call's deadlines (``StoreLiveness``): a call given up returns at once
    /// (``CallRace``) and has its connection closed, which ends a statement PostgresNIO cannot cancel.
    /// Records answers; turns faults
    /// into ``StoreUnavailableError`` and opens the breaker on those that show PostgreSQL unreachable.
    private func deadlined<T: Sendable>(
        _ kind: CallKind, limit: Duration, _ operation: @escaping @Sendable (LeasedConnection) async throws -> T
    ) async throws -> T {
        let lease = LeasedConnection()
        let started = ContinuousClock.now
        let outcome: Outcome<T>
        do {
            outcome = try await CallRace.first([
                { .value(try await operation(lease)) },
                { [liveness, breaker] in
                    .givenUp(
                        try await liveness.verdict(
                            callStartedAt: started, limit: limit, givesUpOnSilence: kind == .request,
                            breaker: kind == .probe ? nil : breaker))
                },
            ])
            if case .givenUp = outcome {
                // Close the connection, so the statement fails and the connection leaves the pool.
                lease.abandon()
            }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            guard let reason = PostgresConnectivity.fault(in: error) else {
                // An SQL error, a row that does not decode: PostgreSQL answered.
                liveness.answered()
                throw error
            }
            if !(error is StoreUnavailableError) { connectivityFault(reason) }
            throw StoreUnavailableError(reason: reason)
        }
        let verdict: StoreLiveness.Verdict
        switch outcome {
        case .value(let value):
            liveness.answered()
            return value
        case .givenUp(let given):
            verdict = given
        }
        switch verdict {
        case .silent(let silence):
            let reason = "no answer from PostgreSQL for \(silence)"
            connectivityFault(reason)
            throw StoreUnavailableError(reason: reason)
        case .tooSlow(let limit):
            throw StoreUnavailableError(reason: "no answer from PostgreSQL within \(limit) (it answers other calls)")
        case .breakerOpened:
            try breaker.check()
            throw StoreUnavailableError(reason: "PostgreSQL is unreachable")
        }
    }

    /// PostgreSQL refused or dropped a connection, or went silent: open the breaker, and probe until it answers.
    func connectivityFault(_ reason: String) {
        breaker.trip(reason: reason) { [self] in
            do {
                // Patient, and not behind the breaker it is to close.
                try await deadlined(.probe, limit: .seconds(2)) { lease in
                    try await self.client.withConnection { connection in
                        try lease.hold(connection)
                        defer { lease.release() }
                        _ = try await connection.query("SELECT 1", logger: self.logger).collect()
                    }
                }
                // Logged by the gateway with the outage's count of refused requests, at the next call that gets through.
                return true
            } catch {
                return false
            }
        }
    }

    private static func isUniqueViolation(_ error: PSQLError) -> Bool {
        error.code == .server && error.serverInfo?[.sqlState] == "23505"
    }

    func sessions(_ rows: PostgresRowSequence) async throws -> [SessionRecord] {
        var records: [SessionRecord] = []
        for try await row in rows {
            records.append(try Self.sessionRecord(row))
        }
        return records
    }

    /// A row of ``sessionColumns``.
    static func sessionRecord(_ row: PostgresRow) throws -> SessionRecord {
        let (id, tokenHash, provider, subject, identity, sealed, version, created, lastSeen, expires, jkt, sid) =
            try row.decode((String, String, String, String, Data, Data, Int, Double, Double, Double, String?, String?).self)
        return SessionRecord(
            id: id, tokenHash: tokenHash, provider: provider, subject: subject, identity: identity,
            sealedCredential: sealed, credentialVersion: version,
            createdAt: Date(timeIntervalSince1970: created), lastSeenAt: Date(timeIntervalSince1970: lastSeen),
            expiresAt: Date(timeIntervalSince1970: expires), dpopThumbprint: jkt, providerSessionID: sid)
    }

    private func pendingRecords(_ rows: PostgresRowSequence, keyHash: String, purpose: PendingRecord.Purpose) async throws -> [PendingRecord] {
        var records: [PendingRecord] = []
        for try await row in rows {
            let (provider, sessionID, payload, expires) = try row.decode((String, String?, Data, Double).self)
            records.append(
                PendingRecord(
                    keyHash: keyHash, purpose: purpose, provider: provider, sessionID: sessionID, payload: payload,
                    expiresAt: Date(timeIntervalSince1970: expires)))
        }
        return records
    }
}

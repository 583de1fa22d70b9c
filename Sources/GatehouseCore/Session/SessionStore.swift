public import Foundation

/// Where sessions, login transactions and handoff codes live. Implementations (in GatehouseStore): memory,
/// SQLite and PostgreSQL; `ForwardingSessionStore` subclasses wrap one (the session cache, the migration gate,
/// the server's metrics).
///
/// A store knows nothing of providers or HTTP. Everything that must hold across gateway instances
/// (single-use codes, the refresh lease, logout) goes through it.
///
/// ```swift
/// let store: any SessionStore = try SQLiteSessionStore(path: "data/gatehouse.sqlite3")
/// try await store.migrate()
/// ```
public protocol SessionStore: Sendable {
    /// Creates or upgrades the schema.
    func migrate() async throws
    /// Throws when the store cannot be reached (readiness).
    func ping() async throws

    func insertSession(_ record: SessionRecord) async throws
    func session(tokenHash: String) async throws -> SessionRecord?
    func session(id: String) async throws -> SessionRecord?
    /// Replaces the sealed credential when the stored version is `expectedVersion`; returns false otherwise.
    func updateCredential(sessionID: String, sealedCredential: Data, expectedVersion: Int) async throws -> Bool
    /// Records activity (idle timeout).
    func touchSession(id: String, at: Date) async throws
    func deleteSession(id: String) async throws
    /// The ids of the sessions of `provider` that `match` selects (a provider's back-channel logout); ending them
    /// is ``deleteSession(id:)``, which the session caches of every instance honour.
    func sessionIDs(provider: String, matching match: ProviderSessionMatch) async throws -> [String]
    /// Removes sessions whose absolute end is before `now` or that were idle since before `idleCutoff`,
    /// and expired pending records. Returns how many sessions went.
    @discardableResult
    func deleteExpired(now: Date, idleCutoff: Date) async throws -> Int

    func insertPending(_ record: PendingRecord) async throws
    /// Marks a record used and returns it; the first caller gets `.first`, every later one `.replayed`.
    /// Only a record of the given purpose matches.
    func consumePending(keyHash: String, purpose: PendingRecord.Purpose, now: Date) async throws -> Consumption
    /// The record if it is neither used nor expired, without using it (a page login's state, read on every page).
    func pendingRecord(keyHash: String, purpose: PendingRecord.Purpose, now: Date) async throws -> PendingRecord?
    /// Replaces the payload of an unused, unexpired record if it is still `expected` (compare-and-swap: a sealed
    /// payload has a fresh nonce, so equal bytes mean nobody wrote in between); false otherwise, and the caller
    /// reads again and retries.
    func replacePendingPayload(keyHash: String, purpose: PendingRecord.Purpose, expected: Data, with payload: Data, now: Date) async throws -> Bool
    /// Sets the session a handoff code produced.
    func attachSession(_ sessionID: String, toPending keyHash: String) async throws

    /// Takes the refresh lease of a session for `owner` until `until`, if free or expired. Cross-instance single flight.
    func acquireRefreshLease(sessionID: String, owner: String, until: Date, now: Date) async throws -> Bool
    func releaseRefreshLease(sessionID: String, owner: String) async throws

    /// Records a one-time value (a DPoP proof's key thumbprint and `jti`) until `until`; true the first time,
    /// false when it is already recorded and not yet expired — a replay, on any instance sharing the store.
    /// Expired values are swept by ``deleteExpired(now:idleCutoff:)``.
    func recordOnce(_ key: String, until: Date, now: Date) async throws -> Bool
    /// ``recordOnce(_:until:now:)`` answered through `completion` (exactly once, on any thread): for a caller on
    /// an event loop, which then needs no task of its own. By default a task awaits the `async` form.
    func recordOnce(_ key: String, until: Date, now: Date, completion: @escaping @Sendable (Result<Bool, any Error>) -> Void)
}

extension SessionStore {
    public func recordOnce(_ key: String, until: Date, now: Date, completion: @escaping @Sendable (Result<Bool, any Error>) -> Void) {
        Task {
            do {
                completion(.success(try await recordOnce(key, until: until, now: now)))
            } catch {
                completion(.failure(error))
            }
        }
    }
}

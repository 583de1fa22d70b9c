public import Foundation
public import GatehouseCore
import Synchronization

/// A ``SessionStore`` kept in process memory, for tests and `store.kind: memory`.
///
/// Nothing survives a restart and nothing is shared between gateway instances. The actor serializes every
/// call, which is what makes ``consumePending(keyHash:purpose:now:)`` and
/// ``acquireRefreshLease(sessionID:owner:until:now:)`` atomic.
///
/// ```swift
/// let store = MemorySessionStore()
/// try await store.insertSession(record)
/// ```
public actor MemorySessionStore: SessionStore {
    /// A pending record is identified by its key hash and purpose together.
    private struct PendingKey: Hashable {
        var keyHash: String
        var purpose: PendingRecord.Purpose
    }

    private struct PendingEntry {
        var record: PendingRecord
        var consumedAt: Date?
    }

    private struct Lease {
        var owner: String
        var until: Date
    }

    private var sessions: [String: SessionRecord] = [:]
    /// Every session (for ``SessionListing``).
    var allSessions: Dictionary<String, SessionRecord>.Values { sessions.values }
    /// Token hash → session id, so the per-request lookup is one dictionary hit.
    private var sessionIDByTokenHash: [String: String] = [:]
    private var pending: [PendingKey: PendingEntry] = [:]
    private var leases: [String: Lease] = [:]
    /// ``recordOnce(_:until:now:)``'s values and when each expires: under a lock of their own, outside the
    /// actor, so that an event loop records a DPoP proof's `jti` on its own thread, with no task or hop.
    private nonisolated let onceValues = Mutex<[String: Date]>([:])

    /// Creates an empty store.
    public init() {}

    /// Nothing to create.
    public func migrate() async throws {}

    /// Always reachable.
    public func ping() async throws {}

    public func insertSession(_ record: SessionRecord) async throws {
        guard sessions[record.id] == nil, sessionIDByTokenHash[record.tokenHash] == nil else {
            throw SessionStoreError.duplicateSession
        }
        sessions[record.id] = record
        sessionIDByTokenHash[record.tokenHash] = record.id
    }

    public func session(tokenHash: String) async throws -> SessionRecord? {
        sessionIDByTokenHash[tokenHash].flatMap { sessions[$0] }
    }

    public func session(id: String) async throws -> SessionRecord? {
        sessions[id]
    }

    public func updateCredential(sessionID: String, sealedCredential: Data, expectedVersion: Int) async throws -> Bool {
        guard var record = sessions[sessionID], record.credentialVersion == expectedVersion else { return false }
        record.sealedCredential = sealedCredential
        record.credentialVersion += 1
        sessions[sessionID] = record
        return true
    }

    public func touchSession(id: String, at: Date) async throws {
        sessions[id]?.lastSeenAt = at
    }

    public func deleteSession(id: String) async throws {
        removeSession(id: id)
    }

    public func sessionIDs(provider: String, matching match: ProviderSessionMatch) async throws -> [String] {
        sessions.values.filter { $0.provider == provider && match.matches($0) }.map(\.id)
    }

    @discardableResult
    public func deleteExpired(now: Date, idleCutoff: Date) async throws -> Int {
        let expired = sessions.values.filter { $0.expiresAt < now || $0.lastSeenAt < idleCutoff }
        for record in expired {
            removeSession(id: record.id)
        }
        pending = pending.filter { $0.value.record.expiresAt >= now }
        // A lapsed lease is free anyway; dropping it keeps the table from growing.
        leases = leases.filter { $0.value.until > now }
        onceValues.withLock { values in values = values.filter { $0.value >= now } }
        return expired.count
    }

    public func insertPending(_ record: PendingRecord) async throws {
        let key = PendingKey(keyHash: record.keyHash, purpose: record.purpose)
        guard pending[key] == nil else { throw SessionStoreError.duplicatePending }
        pending[key] = PendingEntry(record: record)
    }

    public func consumePending(keyHash: String, purpose: PendingRecord.Purpose, now: Date) async throws -> Consumption {
        let key = PendingKey(keyHash: keyHash, purpose: purpose)
        // The expiry instant itself is already too late, in both stores.
        guard var entry = pending[key], entry.record.expiresAt > now else { return .unknown }
        if entry.consumedAt != nil { return .replayed(entry.record) }
        entry.consumedAt = now
        pending[key] = entry
        return .first(entry.record)
    }

    public func pendingRecord(keyHash: String, purpose: PendingRecord.Purpose, now: Date) async throws -> PendingRecord? {
        guard let entry = pending[PendingKey(keyHash: keyHash, purpose: purpose)], entry.consumedAt == nil, entry.record.expiresAt > now else {
            return nil
        }
        return entry.record
    }

    public func replacePendingPayload(
        keyHash: String, purpose: PendingRecord.Purpose, expected: Data, with payload: Data, now: Date
    ) async throws -> Bool {
        let key = PendingKey(keyHash: keyHash, purpose: purpose)
        guard var entry = pending[key], entry.consumedAt == nil, entry.record.expiresAt > now, entry.record.payload == expected else { return false }
        entry.record.payload = payload
        pending[key] = entry
        return true
    }

    public func attachSession(_ sessionID: String, toPending keyHash: String) async throws {
        // The protocol names no purpose; key hashes come from distinct random secrets, so at most one matches.
        for (key, var entry) in pending where key.keyHash == keyHash {
            entry.record.sessionID = sessionID
            pending[key] = entry
        }
    }

    public func acquireRefreshLease(sessionID: String, owner: String, until: Date, now: Date) async throws -> Bool {
        if let lease = leases[sessionID], lease.owner != owner, lease.until > now {
            return false
        }
        leases[sessionID] = Lease(owner: owner, until: until)
        return true
    }

    public func releaseRefreshLease(sessionID: String, owner: String) async throws {
        if leases[sessionID]?.owner == owner {
            leases[sessionID] = nil
        }
    }

    public func recordOnce(_ key: String, until: Date, now: Date) async throws -> Bool {
        record(key, until: until, now: now)
    }

    /// Answered on the caller's thread, before this returns.
    public nonisolated func recordOnce(_ key: String, until: Date, now: Date, completion: @escaping @Sendable (Result<Bool, any Error>) -> Void) {
        completion(.success(record(key, until: until, now: now)))
    }

    private nonisolated func record(_ key: String, until: Date, now: Date) -> Bool {
        onceValues.withLock { values in
            if let expiry = values[key], expiry >= now { return false }
            values[key] = until
            return true
        }
    }

    private func removeSession(id: String) {
        guard let record = sessions.removeValue(forKey: id) else { return }
        sessionIDByTokenHash[record.tokenHash] = nil
        leases[id] = nil
    }
}

public import Foundation
public import GatehouseCore

/// A store that hands every call to another one, except the calls it implements itself: the base of the
/// decorators (``MigrationGatedStore``, ``CachingSessionStore``), which then only write what they change.
public protocol ForwardingSessionStore: SessionStore {
    /// Where a call goes; may throw instead (e.g. ``StoreUnavailableError`` while a gate is closed).
    var forwardee: any SessionStore { get throws }
}

extension ForwardingSessionStore {
    public func migrate() async throws { try await forwardee.migrate() }

    public func ping() async throws { try await forwardee.ping() }

    public func insertSession(_ record: SessionRecord) async throws { try await forwardee.insertSession(record) }

    public func session(tokenHash: String) async throws -> SessionRecord? { try await forwardee.session(tokenHash: tokenHash) }

    public func session(id: String) async throws -> SessionRecord? { try await forwardee.session(id: id) }

    public func updateCredential(sessionID: String, sealedCredential: Data, expectedVersion: Int) async throws -> Bool {
        try await forwardee.updateCredential(sessionID: sessionID, sealedCredential: sealedCredential, expectedVersion: expectedVersion)
    }

    public func touchSession(id: String, at date: Date) async throws { try await forwardee.touchSession(id: id, at: date) }

    public func deleteSession(id: String) async throws { try await forwardee.deleteSession(id: id) }

    public func sessionIDs(provider: String, matching match: ProviderSessionMatch) async throws -> [String] {
        try await forwardee.sessionIDs(provider: provider, matching: match)
    }

    public func deleteExpired(now: Date, idleCutoff: Date) async throws -> Int {
        try await forwardee.deleteExpired(now: now, idleCutoff: idleCutoff)
    }

    public func insertPending(_ record: PendingRecord) async throws { try await forwardee.insertPending(record) }

    public func consumePending(keyHash: String, purpose: PendingRecord.Purpose, now: Date) async throws -> Consumption {
        try await forwardee.consumePending(keyHash: keyHash, purpose: purpose, now: now)
    }

    public func pendingRecord(keyHash: String, purpose: PendingRecord.Purpose, now: Date) async throws -> PendingRecord? {
        try await forwardee.pendingRecord(keyHash: keyHash, purpose: purpose, now: now)
    }

    public func replacePendingPayload(
        keyHash: String, purpose: PendingRecord.Purpose, expected: Data, with payload: Data, now: Date
    ) async throws -> Bool {
        try await forwardee.replacePendingPayload(keyHash: keyHash, purpose: purpose, expected: expected, with: payload, now: now)
    }

    public func attachSession(_ sessionID: String, toPending keyHash: String) async throws {
        try await forwardee.attachSession(sessionID, toPending: keyHash)
    }

    public func acquireRefreshLease(sessionID: String, owner: String, until: Date, now: Date) async throws -> Bool {
        try await forwardee.acquireRefreshLease(sessionID: sessionID, owner: owner, until: until, now: now)
    }

    public func releaseRefreshLease(sessionID: String, owner: String) async throws {
        try await forwardee.releaseRefreshLease(sessionID: sessionID, owner: owner)
    }

    public func recordOnce(_ key: String, until: Date, now: Date) async throws -> Bool {
        try await forwardee.recordOnce(key, until: until, now: now)
    }

    public func recordOnce(_ key: String, until: Date, now: Date, completion: @escaping @Sendable (Result<Bool, any Error>) -> Void) {
        do {
            try forwardee.recordOnce(key, until: until, now: now, completion: completion)
        } catch {
            completion(.failure(error))
        }
    }
}

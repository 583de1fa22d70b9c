public import Foundation
public import GatehouseCore
import Synchronization

/// A store whose schema could not be migrated at start-up because the database was unreachable.
///
/// The gateway still starts (liveness passes, `/readyz` fails) and every operation answers
/// ``StoreUnavailableError`` — 503 `store_unavailable` with `Retry-After` — until ``migrate()`` succeeds;
/// from then on each call goes straight to the base store. Nothing is read from or written to an
/// unmigrated schema.
public final class MigrationGatedStore: SessionStore {
    /// The store that does the work once migrated.
    public let base: any SessionStore
    private let migrated = Atomic<Bool>(false)

    public init(base: any SessionStore) {
        self.base = base
    }

    /// Whether the schema has been migrated (and calls pass through).
    public var isMigrated: Bool { migrated.load(ordering: .acquiring) }

    public func migrate() async throws {
        try await base.migrate()
        migrated.store(true, ordering: .releasing)
    }

    private func open() throws -> any SessionStore {
        guard isMigrated else { throw StoreUnavailableError(reason: "the schema is not migrated yet (the store was unreachable at start-up)") }
        return base
    }

    public func ping() async throws { try await open().ping() }

    public func insertSession(_ record: SessionRecord) async throws { try await open().insertSession(record) }

    public func session(tokenHash: String) async throws -> SessionRecord? { try await open().session(tokenHash: tokenHash) }

    public func session(id: String) async throws -> SessionRecord? { try await open().session(id: id) }

    public func updateCredential(sessionID: String, sealedCredential: Data, expectedVersion: Int) async throws -> Bool {
        try await open().updateCredential(sessionID: sessionID, sealedCredential: sealedCredential, expectedVersion: expectedVersion)
    }

    public func touchSession(id: String, at date: Date) async throws { try await open().touchSession(id: id, at: date) }

    public func deleteSession(id: String) async throws { try await open().deleteSession(id: id) }

    public func deleteExpired(now: Date, idleCutoff: Date) async throws -> Int {
        try await open().deleteExpired(now: now, idleCutoff: idleCutoff)
    }

    public func insertPending(_ record: PendingRecord) async throws { try await open().insertPending(record) }

    public func consumePending(keyHash: String, purpose: PendingRecord.Purpose, now: Date) async throws -> Consumption {
        try await open().consumePending(keyHash: keyHash, purpose: purpose, now: now)
    }

    public func attachSession(_ sessionID: String, toPending keyHash: String) async throws {
        try await open().attachSession(sessionID, toPending: keyHash)
    }

    public func acquireRefreshLease(sessionID: String, owner: String, until: Date, now: Date) async throws -> Bool {
        try await open().acquireRefreshLease(sessionID: sessionID, owner: owner, until: until, now: now)
    }

    public func releaseRefreshLease(sessionID: String, owner: String) async throws {
        try await open().releaseRefreshLease(sessionID: sessionID, owner: owner)
    }
}

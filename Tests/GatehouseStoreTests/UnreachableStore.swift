import Foundation
import GatehouseCore

/// A store whose every call fails as a database that is down does.
struct UnreachableStore: SessionStore {
    private func down() -> StoreUnavailableError { StoreUnavailableError(reason: "connection refused (test)") }

    func migrate() async throws { throw down() }
    func ping() async throws { throw down() }
    func insertSession(_ record: SessionRecord) async throws { throw down() }
    func session(tokenHash: String) async throws -> SessionRecord? { throw down() }
    func session(id: String) async throws -> SessionRecord? { throw down() }
    func updateCredential(sessionID: String, sealedCredential: Data, expectedVersion: Int) async throws -> Bool { throw down() }
    func touchSession(id: String, at: Date) async throws { throw down() }
    func deleteSession(id: String) async throws { throw down() }
    func deleteExpired(now: Date, idleCutoff: Date) async throws -> Int { throw down() }
    func insertPending(_ record: PendingRecord) async throws { throw down() }
    func consumePending(keyHash: String, purpose: PendingRecord.Purpose, now: Date) async throws -> Consumption { throw down() }
    func attachSession(_ sessionID: String, toPending keyHash: String) async throws { throw down() }
    func acquireRefreshLease(sessionID: String, owner: String, until: Date, now: Date) async throws -> Bool { throw down() }
    func releaseRefreshLease(sessionID: String, owner: String) async throws { throw down() }
}

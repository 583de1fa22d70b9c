import Foundation
import GatehouseCore
import GatehouseStore
import Synchronization

/// A memory store whose `session(tokenHash:)` waits, once started, until the test releases it.
final class SlowStore: SessionStore {
    private let base: MemorySessionStore
    private let reading: AsyncStream<Void>
    private let readingSignal: AsyncStream<Void>.Continuation
    private let gate: AsyncStream<Void>
    private let gateSignal: AsyncStream<Void>.Continuation

    init(base: MemorySessionStore) {
        self.base = base
        (reading, readingSignal) = AsyncStream<Void>.makeStream()
        (gate, gateSignal) = AsyncStream<Void>.makeStream()
    }

    /// Returns once a read has begun.
    func waitUntilReading() async {
        for await _ in reading { return }
    }

    /// Lets the waiting read finish.
    func release() { gateSignal.finish() }

    func session(tokenHash: String) async throws -> SessionRecord? {
        let record = try await base.session(tokenHash: tokenHash)
        readingSignal.yield()
        for await _ in gate {}
        return record
    }

    func migrate() async throws { try await base.migrate() }
    func ping() async throws { try await base.ping() }
    func insertSession(_ record: SessionRecord) async throws { try await base.insertSession(record) }
    func session(id: String) async throws -> SessionRecord? { try await base.session(id: id) }
    func updateCredential(sessionID: String, sealedCredential: Data, expectedVersion: Int) async throws -> Bool {
        try await base.updateCredential(sessionID: sessionID, sealedCredential: sealedCredential, expectedVersion: expectedVersion)
    }
    func touchSession(id: String, at: Date) async throws { try await base.touchSession(id: id, at: at) }
    func deleteSession(id: String) async throws { try await base.deleteSession(id: id) }
    func deleteExpired(now: Date, idleCutoff: Date) async throws -> Int { try await base.deleteExpired(now: now, idleCutoff: idleCutoff) }
    func insertPending(_ record: PendingRecord) async throws { try await base.insertPending(record) }
    func consumePending(keyHash: String, purpose: PendingRecord.Purpose, now: Date) async throws -> Consumption {
        try await base.consumePending(keyHash: keyHash, purpose: purpose, now: now)
    }
    func attachSession(_ sessionID: String, toPending keyHash: String) async throws { try await base.attachSession(sessionID, toPending: keyHash) }
    func acquireRefreshLease(sessionID: String, owner: String, until: Date, now: Date) async throws -> Bool {
        try await base.acquireRefreshLease(sessionID: sessionID, owner: owner, until: until, now: now)
    }
    func releaseRefreshLease(sessionID: String, owner: String) async throws { try await base.releaseRefreshLease(sessionID: sessionID, owner: owner) }
}

import Foundation
import GatehouseCore
import GatehouseStore
import Testing

@Suite struct MigrationGatedStoreTests {
    private func record(_ id: String) -> SessionRecord {
        let now = Date()
        return SessionRecord(
            id: id, tokenHash: "hash-\(id)", provider: "p", subject: "s", identity: Data("{}".utf8),
            sealedCredential: Data([1, 2, 3]), createdAt: now, lastSeenAt: now, expiresAt: now.addingTimeInterval(60))
    }

    @Test func everyCallIsUnavailableUntilMigratedThenPassesThrough() async throws {
        let base = MemorySessionStore()
        let gated = MigrationGatedStore(base: base)
        #expect(!gated.isMigrated)
        await #expect(throws: StoreUnavailableError.self) { try await gated.ping() }
        await #expect(throws: StoreUnavailableError.self) { try await gated.insertSession(record("a")) }
        await #expect(throws: StoreUnavailableError.self) { _ = try await gated.session(tokenHash: "hash-a") }
        await #expect(throws: StoreUnavailableError.self) {
            _ = try await gated.acquireRefreshLease(sessionID: "a", owner: "o", until: Date(), now: Date())
        }
        #expect(try await base.session(id: "a") == nil, "nothing reached the base store")

        try await gated.migrate()
        #expect(gated.isMigrated)
        try await gated.ping()
        try await gated.insertSession(record("a"))
        #expect(try await base.session(tokenHash: "hash-a")?.id == "a")
        #expect(try await gated.session(id: "a")?.id == "a")
    }

    @Test func aFailedMigrationKeepsTheGateClosed() async throws {
        let gated = MigrationGatedStore(base: UnreachableStore())
        await #expect(throws: StoreUnavailableError.self) { try await gated.migrate() }
        #expect(!gated.isMigrated)
        await #expect(throws: StoreUnavailableError.self) { try await gated.deleteSession(id: "a") }
    }
}

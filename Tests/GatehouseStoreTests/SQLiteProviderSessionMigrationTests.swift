import Foundation
import GRDB
import GatehouseCore
import Testing

@testable import GatehouseStore

/// The v4 migration (the provider's session of each session, for back-channel logout) on a database made before it.
@Suite struct SQLiteProviderSessionMigrationTests {
    @Test func aSessionStoredBeforeTheUpgradeIsKeptWithoutAProviderSession() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.appendingPathComponent("gatehouse.sqlite3").path
            let old = try DatabaseQueue(path: path)
            try SQLiteMigrations.migrator.migrate(old, upTo: "v3")
            let record = Fixtures.session(id: "old")
            try await old.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO sessions (id, token_hash, provider, subject, identity, sealed_credential, credential_version,
                            created_at, last_seen_at, expires_at, dpop_jkt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        record.id, record.tokenHash, record.provider, record.subject, record.identity, record.sealedCredential, 1,
                        record.createdAt.timeIntervalSince1970, record.lastSeenAt.timeIntervalSince1970, record.expiresAt.timeIntervalSince1970, nil,
                    ])
            }
            try old.close()

            let store = try SQLiteSessionStore(path: path)
            defer { try? store.close() }
            try await store.migrate()
            #expect(try await store.session(tokenHash: record.tokenHash) == record)
            #expect(try await store.sessionIDs(provider: record.provider, matching: .subject(record.subject)) == ["old"])
            #expect(try await store.sessionIDs(provider: record.provider, matching: .providerSession(sid: "x", subject: nil)).isEmpty)
        }
    }
}

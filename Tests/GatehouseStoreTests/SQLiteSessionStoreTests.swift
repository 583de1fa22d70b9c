import Foundation
import GatehouseCore
import GatehouseStore
import Testing

/// What only a file-backed store can do: survive a restart and be shared by several gateway instances.
@Suite struct SQLiteSessionStoreTests {
    @Test func initCreatesMissingParentDirectories() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.appendingPathComponent("a/b/gatehouse.sqlite3").path
            let store = try SQLiteSessionStore(path: path)
            defer { try? store.close() }
            try await store.migrate()

            #expect(FileManager.default.fileExists(atPath: path))
        }
    }

    @Test func migratingTwiceIsHarmless() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try SQLiteSessionStore(path: directory.appendingPathComponent("gatehouse.sqlite3").path)
            defer { try? store.close() }
            try await store.migrate()
            try await store.insertSession(Fixtures.session(id: "s1"))

            try await store.migrate()

            #expect(try await store.session(id: "s1") != nil)
        }
    }

    @Test func dataSurvivesClosingAndReopeningTheFile() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.appendingPathComponent("gatehouse.sqlite3").path
            let record = Fixtures.session(id: "s1")
            let pending = Fixtures.pending()

            let before = try SQLiteSessionStore(path: path)
            try await before.migrate()
            try await before.insertSession(record)
            try await before.insertPending(pending)
            #expect(try await before.consumePending(keyHash: pending.keyHash, purpose: .handoffCode, now: Fixtures.at(1)) == .first(pending))
            #expect(try await before.acquireRefreshLease(sessionID: "s1", owner: "a", until: Fixtures.at(30), now: Fixtures.t0))
            try before.close()

            let after = try SQLiteSessionStore(path: path)
            defer { try? after.close() }
            try await after.migrate()
            #expect(try await after.session(tokenHash: record.tokenHash) == record)
            #expect(try await after.consumePending(keyHash: pending.keyHash, purpose: .handoffCode, now: Fixtures.at(2)) == .replayed(pending))
            #expect(try await after.acquireRefreshLease(sessionID: "s1", owner: "b", until: Fixtures.at(30), now: Fixtures.at(1)) == false)
        }
    }

    @Test func subsecondDatesRoundTripWithinAMicrosecond() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try SQLiteSessionStore(path: directory.appendingPathComponent("gatehouse.sqlite3").path)
            defer { try? store.close() }
            try await store.migrate()
            let now = Date()
            try await store.insertSession(Fixtures.session(id: "s1", lastSeenAt: now))

            let stored = try #require(try await store.session(id: "s1"))
            #expect(abs(stored.lastSeenAt.timeIntervalSince(now)) < 1e-6)
        }
    }

    @Test func twoStoresOnOneFileSeeEachOthersWrites() async throws {
        try await StoreFactory.withTwoSQLiteStores { _, first, second in
            // Read before the write too, so a reader connection exists and must notice the new data.
            #expect(try await second.session(tokenHash: "hash-of-s1") == nil)
            try await first.insertSession(Fixtures.session(id: "s1"))
            #expect(try await second.session(tokenHash: "hash-of-s1") != nil)

            #expect(try await second.updateCredential(sessionID: "s1", sealedCredential: Data("new".utf8), expectedVersion: 1))
            #expect(try await first.updateCredential(sessionID: "s1", sealedCredential: Data("stale".utf8), expectedVersion: 1) == false)
            #expect(try await first.session(id: "s1")?.sealedCredential == Data("new".utf8))

            #expect(try await first.acquireRefreshLease(sessionID: "s1", owner: "instance-1", until: Fixtures.at(30), now: Fixtures.t0))
            #expect(try await second.acquireRefreshLease(sessionID: "s1", owner: "instance-2", until: Fixtures.at(30), now: Fixtures.t0) == false)

            try await second.deleteSession(id: "s1")
            #expect(try await first.session(id: "s1") == nil)
        }
    }

    @Test func onlyOneOfTwoStoresOnOneFileWinsAConcurrentConsume() async throws {
        try await StoreFactory.withTwoSQLiteStores { _, first, second in
            try await first.insertPending(Fixtures.pending())

            let results = try await withThrowingTaskGroup(of: Consumption.self) { group in
                for index in 0..<20 {
                    let store = index.isMultiple(of: 2) ? first : second
                    group.addTask { try await store.consumePending(keyHash: "code-hash", purpose: .handoffCode, now: Fixtures.at(1)) }
                }
                return try await group.reduce(into: [Consumption]()) { $0.append($1) }
            }

            #expect(results.count { if case .first = $0 { true } else { false } } == 1)
            #expect(results.count { if case .replayed = $0 { true } else { false } } == 19)
        }
    }

    @Test func twoStoresMigratingAFreshFileAtOnceBothSucceed() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.appendingPathComponent("gatehouse.sqlite3").path
            let first = try SQLiteSessionStore(path: path)
            defer { try? first.close() }
            let second = try SQLiteSessionStore(path: path)
            defer { try? second.close() }

            async let migratedFirst: Void = first.migrate()
            async let migratedSecond: Void = second.migrate()
            _ = try await (migratedFirst, migratedSecond)

            try await first.insertSession(Fixtures.session(id: "s1"))
            #expect(try await second.session(id: "s1") != nil)
        }
    }
}

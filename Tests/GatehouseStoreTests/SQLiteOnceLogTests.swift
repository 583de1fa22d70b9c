import Foundation
import GRDB
import Testing

@testable import GatehouseStore

/// The SQLite store's one-time values (DPoP `jti`s) as two gateway processes sharing one file see them: two
/// store instances on one real file, each with its own memory of the log, as two processes would have.
@Suite struct SQLiteOnceLogTests {
    private func record(_ store: SQLiteSessionStore, _ key: String, until: TimeInterval = 60, at now: TimeInterval = 0) async throws -> Bool {
        try await store.recordOnce(key, until: Fixtures.at(until), now: Fixtures.at(now))
    }

    private func logRowCount(_ path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM once_log") ?? 0 }
    }

    @Test func aKeyRecordedByOneStoreIsAReplayForTheOther() async throws {
        try await StoreFactory.withTwoSQLiteStores { _, first, second throws in
            // Both stores have read the (empty) log at start-up: only reading it again in the write can tell
            // each about the other's record.
            #expect(try await record(first, "dpop k j1"))
            #expect(try await record(second, "dpop k j1") == false)
            #expect(try await record(second, "dpop k j2"))
            #expect(try await record(first, "dpop k j2") == false)
            #expect(try await record(first, "dpop k j1") == false)
        }
    }

    @Test func concurrentRecordsOnBothStoresAcceptEachKeyExactlyOnce() async throws {
        try await StoreFactory.withTwoSQLiteStores { _, first, second throws in
            let keys = 200
            let wins = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
                // Each key three times on each store, all at once: both batchers write concurrently.
                for attempt in 0..<6 {
                    for key in 0..<keys {
                        let store = attempt.isMultiple(of: 2) ? first : second
                        group.addTask { (key, try await record(store, "dpop k many-\(key)")) }
                    }
                }
                return try await group.reduce(into: [Int: Int]()) { $0[$1.0, default: 0] += $1.1 ? 1 : 0 }
            }
            #expect(wins.count == keys)
            #expect(wins.values.allSatisfy { $0 == 1 }, "\(wins.filter { $0.value != 1 })")
        }
    }

    @Test func anExpiredKeyMayBeRecordedAgainAndTheNewRecordIsSharedToo() async throws {
        try await StoreFactory.withTwoSQLiteStores { _, first, second throws in
            #expect(try await record(first, "dpop k j1", until: 60, at: 0))
            #expect(try await record(second, "dpop k j1", until: 60, at: 60) == false, "the expiry instant itself is still live")
            #expect(try await record(second, "dpop k j1", until: 200, at: 61))
            // The first store's own record expired; the second's, which only the log tells it of, is live.
            #expect(try await record(first, "dpop k j1", until: 200, at: 62) == false)
            #expect(try await record(second, "dpop k j1", until: 300, at: 201))
        }
    }

    @Test func aRestartedStoreRefusesAKeyRecordedBeforeTheRestart() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.appendingPathComponent("gatehouse.sqlite3").path
            let before = try SQLiteSessionStore(path: path)
            try await before.migrate()
            #expect(try await record(before, "dpop k j1"))
            #expect(try await record(before, "dpop k j2", until: 5))
            try before.close()

            let after = try SQLiteSessionStore(path: path)
            defer { try? after.close() }
            try await after.migrate()
            #expect(after.onceLog.knownCount == 2, "the live records are loaded at start-up")
            #expect(try await record(after, "dpop k j1", at: 30) == false)
            #expect(try await record(after, "dpop k j2", at: 30), "expired before the restart")
            #expect(try await record(after, "dpop k j3", at: 30))
        }
    }

    @Test func theSweepDeletesExpiredRowsButTheNewestAndMemoryForgetsThem() async throws {
        try await StoreFactory.withTwoSQLiteStores { path, first, second throws in
            #expect(try await record(first, "dpop k a", until: 10))
            #expect(try await record(first, "dpop k b", until: 100))
            #expect(try await record(first, "dpop k c", until: 20))
            #expect(try await record(first, "dpop k d", until: 5))
            #expect(try logRowCount(path) == 4)

            _ = try await first.deleteExpired(now: Fixtures.at(50), idleCutoff: Fixtures.t0)

            // b lives on; d, the newest row, stays although expired (see the next test).
            #expect(try logRowCount(path) == 2)
            #expect(try await record(second, "dpop k b", at: 50) == false)
            #expect(try await record(second, "dpop k a", until: 110, at: 50))
            // The memory forgets a second per write after the sweep: three writes, three expired seconds gone.
            #expect(first.onceLog.knownCount == 4)
            #expect(try await record(first, "dpop k e", until: 110, at: 50))
            #expect(try await record(first, "dpop k f", until: 110, at: 50))
            #expect(try await record(first, "dpop k g", until: 110, at: 50))
            // b, and a (recorded again by the other store), e, f, g.
            #expect(first.onceLog.knownCount == 5)
            #expect(try await record(first, "dpop k a", until: 110, at: 51) == false)
            #expect(try await record(first, "dpop k c", until: 110, at: 51))
        }
    }

    /// SQLite gives a new row the highest id plus one. Were the newest row swept, the next append would reuse an
    /// id that a store has already read past, and that store would never learn of it.
    @Test func aRecordAppendedAfterASweepOfEveryRowIsStillSeenByTheOtherStore() async throws {
        try await StoreFactory.withTwoSQLiteStores { _, first, second throws in
            #expect(try await record(first, "dpop k a", until: 10))
            #expect(try await record(first, "dpop k b", until: 10))
            _ = try await first.deleteExpired(now: Fixtures.at(50), idleCutoff: Fixtures.t0)

            #expect(try await record(second, "dpop k c", until: 100, at: 50))
            #expect(try await record(first, "dpop k c", until: 100, at: 50) == false)
        }
    }

    @Test func aFailedWriteFailsItsWholeBatchAndLeavesNothingBehind() async throws {
        try await StoreFactory.withTwoSQLiteStores { path, first, second throws in
            // A trigger makes the append of the second entry fail, after the first entry was appended.
            let queue = try DatabaseQueue(path: path)
            defer { try? queue.close() }
            let doomed = Fixtures.at(4242).timeIntervalSince1970
            try queue.write { db in
                try db.execute(
                    sql: "CREATE TRIGGER refuse AFTER INSERT ON once_log WHEN NEW.expires_at = \(doomed) BEGIN SELECT RAISE(ABORT, 'refused'); END")
            }
            let entries = [
                OnceRecordBatcher.Entry(key: "dpop k good", until: Fixtures.at(60), now: Fixtures.t0),
                OnceRecordBatcher.Entry(key: "dpop k doomed", until: Fixtures.at(4242), now: Fixtures.t0),
            ]
            let result = await withCheckedContinuation { continuation in
                first.onceLog.write(first.pool, entries) { continuation.resume(returning: $0) }
            }
            #expect(throws: DatabaseError.self) { try result.get() }
            try queue.write { db in try db.execute(sql: "DROP TRIGGER refuse") }

            // Neither the file nor the failed store's memory holds the good entry.
            #expect(try logRowCount(path) == 0)
            #expect(try await record(first, "dpop k good"))
            #expect(try await record(second, "dpop k good") == false)
        }
    }

    @Test func anUpgradeCarriesTheLiveValuesOfTheOldTableOver() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.appendingPathComponent("gatehouse.sqlite3").path
            let old = try DatabaseQueue(path: path)
            try SQLiteMigrations.migrator.migrate(old, upTo: "v2")
            try await old.write { db in
                try db.execute(
                    sql: "INSERT INTO once_values (key, expires_at) VALUES (?, ?)",
                    arguments: ["dpop k spent", Fixtures.at(60).timeIntervalSince1970])
            }
            try old.close()

            let store = try SQLiteSessionStore(path: path)
            defer { try? store.close() }
            try await store.migrate()
            #expect(try await record(store, "dpop k spent", until: 90, at: 30) == false)
            #expect(try await record(store, "dpop k spent", until: 90, at: 61))
            let tables = try await store.pool.read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") }
            #expect(!tables.contains("once_values"))
        }
    }
}

import Foundation
import GatehouseCore
import GatehouseStore
import Synchronization
import Testing

/// The session cache on the default store: two `SQLiteSessionStore`s on one file are two processes (each
/// has its own connections). What one of them writes reaches the other's cache within the poll interval;
/// what a process writes itself never flushes its own cache.
@Suite struct SQLiteChangeFeedTests {
    final class Counter: Sendable {
        private let count = Mutex(0)
        func increment() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    /// Follows `store`'s feed into `cache` until the returned task is cancelled; counts the announcements.
    private func follow(_ store: SQLiteSessionStore, into cache: CachingSessionStore, changes: Counter) async throws -> Task<Void, any Error> {
        let (listening, signal) = AsyncStream<Void>.makeStream()
        let task = Task {
            defer { signal.finish() }
            try await store.followSessionChanges(
                onListening: {
                    cache.feedStarted()
                    signal.yield()
                },
                onChange: { change in
                    changes.increment()
                    cache.apply(change)
                })
        }
        for await _ in listening { break }
        return task
    }

    @Test func anotherProcessesLogoutReachesTheCacheWithinOneSecond() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.appendingPathComponent("shared.sqlite3").path
            let mine = try SQLiteSessionStore(path: path)
            let other = try SQLiteSessionStore(path: path)
            try await mine.migrate()
            try await other.migrate()
            let cache = CachingSessionStore(base: mine, timeToLive: 60)
            let changes = Counter()
            let feed = try await follow(mine, into: cache, changes: changes)
            try #require(cache.isSynchronized, "the feed did not start")

            try await other.insertSession(Fixtures.session(id: "s1"))
            // The feed sees the other process's insert (and drops what little was cached) before we go on.
            let inserted = ContinuousClock.now
            while changes.value == 0, ContinuousClock.now - inserted < .seconds(10) { try await Task.sleep(for: .milliseconds(20)) }
            #expect(changes.value >= 1)
            #expect(try await cache.session(tokenHash: "hash-of-s1")?.id == "s1")
            #expect(cache.cachedCount == 1)

            // This process's own writes (through the cache) flush nothing: the copy stays.
            let before = changes.value
            try await cache.insertSession(Fixtures.session(id: "s2"))
            try await cache.touchSession(id: "s1", at: Fixtures.at(30))
            try await Task.sleep(for: .milliseconds(600))
            #expect(changes.value == before)
            #expect(cache.cachedCount == 1)

            // The other process ends the session: refused here within 1 s.
            try await other.deleteSession(id: "s1")
            let ended = ContinuousClock.now
            while try await cache.session(tokenHash: "hash-of-s1") != nil {
                // 0.2 s polls; the bound is loose here because this process shares its threads with every other
                // test (Tests/ScaleOut holds two real gateway processes to 1 s).
                #expect(ContinuousClock.now - ended < .seconds(3), "the ended session is still served after 3 s")
                if ContinuousClock.now - ended > .seconds(4) { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(changes.value > before)
            feed.cancel()
            _ = await feed.result
            try mine.close()
            try other.close()
        }
    }
}

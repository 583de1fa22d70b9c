import Foundation
import GatehouseCore
import GatehouseStore
import Synchronization
import Testing

/// The cache in front of a shared store, over an in-memory base whose rows the tests change behind the
/// cache's back, as another instance would.
@Suite struct CachingSessionStoreTests {
    final class ManualClock: Sendable {
        private let current = Mutex(Fixtures.t0)
        var source: TimeSource { TimeSource { [self] in current.withLock { $0 } } }
        func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
    }

    private func make(timeToLive: TimeInterval = 30, clock: ManualClock = ManualClock()) async throws -> (CachingSessionStore, MemorySessionStore) {
        let base = MemorySessionStore()
        try await base.migrate()
        let cache = CachingSessionStore(base: base, timeToLive: timeToLive, clock: clock.source)
        return (cache, base)
    }

    @Test func servesACopyOnlyWhileTheFeedListens() async throws {
        let (cache, base) = try await make()
        try await base.insertSession(Fixtures.session(id: "s1"))

        // Feed not yet listening: every read goes to the base, nothing is kept.
        #expect(try await cache.session(tokenHash: "hash-of-s1")?.id == "s1")
        #expect(cache.cachedCount == 0)

        cache.feedStarted()
        #expect(try await cache.session(tokenHash: "hash-of-s1")?.id == "s1")
        #expect(cache.cachedCount == 1)
        // Ended behind the cache's back (another instance) and no notification yet: the copy is served.
        try await base.deleteSession(id: "s1")
        #expect(try await cache.session(tokenHash: "hash-of-s1")?.id == "s1")
        // The notification arrives: gone at once.
        cache.sessionChanged(id: "s1")
        #expect(try await cache.session(tokenHash: "hash-of-s1") == nil)
    }

    @Test func losingTheFeedDropsEveryCopy() async throws {
        let (cache, base) = try await make()
        cache.feedStarted()
        try await base.insertSession(Fixtures.session(id: "s1"))
        _ = try await cache.session(tokenHash: "hash-of-s1")
        try await base.deleteSession(id: "s1")

        cache.feedStopped()
        #expect(!cache.isSynchronized)
        #expect(try await cache.session(tokenHash: "hash-of-s1") == nil, "a copy may have missed its notification")
    }

    @Test func aCopyLivesNoLongerThanItsTimeToLive() async throws {
        let clock = ManualClock()
        let (cache, base) = try await make(timeToLive: 5, clock: clock)
        cache.feedStarted()
        try await base.insertSession(Fixtures.session(id: "s1"))
        _ = try await cache.session(tokenHash: "hash-of-s1")
        try await base.deleteSession(id: "s1")

        clock.advance(4)
        #expect(try await cache.session(tokenHash: "hash-of-s1") != nil)
        clock.advance(2)
        #expect(try await cache.session(tokenHash: "hash-of-s1") == nil)
    }

    @Test func ownWritesEvictAndOwnActivityIsKept() async throws {
        let (cache, base) = try await make()
        cache.feedStarted()
        try await cache.insertSession(Fixtures.session(id: "s1"))
        let first = try #require(try await cache.session(tokenHash: "hash-of-s1"))

        #expect(try await cache.updateCredential(sessionID: "s1", sealedCredential: Data([9]), expectedVersion: first.credentialVersion))
        #expect(try await cache.session(tokenHash: "hash-of-s1")?.credentialVersion == first.credentialVersion + 1)

        try await cache.touchSession(id: "s1", at: Fixtures.at(500))
        try await base.deleteSession(id: "s1")
        #expect(try await cache.session(tokenHash: "hash-of-s1")?.lastSeenAt == Fixtures.at(500), "the touched copy is still served")

        try await cache.deleteSession(id: "s1")
        #expect(try await cache.session(tokenHash: "hash-of-s1") == nil)
    }

    @Test func aReadThatRacedAnEvictionIsNotKept() async throws {
        // A read begins, the session changes elsewhere and is evicted, then the (stale) read completes:
        // its result must not become the cached copy.
        let base = MemorySessionStore()
        try await base.migrate()
        try await base.insertSession(Fixtures.session(id: "s1"))
        let gate = SlowStore(base: base)
        let cache = CachingSessionStore(base: gate, timeToLive: 30)
        cache.feedStarted()

        async let read = cache.session(tokenHash: "hash-of-s1")
        await gate.waitUntilReading()
        cache.sessionChanged(id: "s1")
        gate.release()
        #expect(try await read?.id == "s1")
        #expect(cache.cachedCount == 0)
    }
}

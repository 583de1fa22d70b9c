public import Foundation
public import GatehouseCore
import Synchronization

/// A ``SessionStore`` that keeps recently resolved sessions in memory, so a request does not read the shared
/// database to resolve its token.
///
/// Only `session(tokenHash:)` is served from memory, and only while the store's ``SessionChangeFeed`` is
/// listening: every credential update or end of a session, on any instance, evicts it here within the
/// feed's delay (PostgreSQL `LISTEN/NOTIFY`: milliseconds; SQLite: ``SQLiteSessionStore/changePollInterval``).
/// This instance's own changes are evicted at once, by the writes below.
/// While the feed is down every call goes to the database. A copy is also dropped after `timeToLive`, a
/// bound on staleness should a notification ever be lost. Everything else — `session(id:)` (the refresh
/// path re-reads under its lease), writes, codes, leases — always goes to the base store.
/// The sweeper's deletions need no eviction: a copy of a swept session fails the same expiry checks.
public final class CachingSessionStore: ForwardingSessionStore, CachedSessionLookup {
    /// The store that owns the data.
    public let base: any SessionStore
    private let timeToLive: TimeInterval
    private let clock: TimeSource
    private let cache: Mutex<SessionCache>
    /// ``evictionEpoch``: moved inside the lock, before the change it announces.
    private let epoch = Atomic<UInt64>(0)

    /// - Parameters:
    ///   - base: the shared store.
    ///   - timeToLive: the longest a copy is served without reading the database again.
    ///   - capacity: the most sessions kept.
    ///   - clock: the time source (tests move it).
    public init(base: any SessionStore, timeToLive: TimeInterval, capacity: Int = 100_000, clock: TimeSource = .system) {
        self.base = base
        self.timeToLive = timeToLive
        self.clock = clock
        self.cache = Mutex(SessionCache(capacity: capacity))
    }

    // MARK: The change feed

    /// The feed listens: copies may be served from now on (starting empty).
    public func feedStarted() {
        cache.withLock {
            announceEviction()
            $0.setSynchronized(true)
        }
    }

    /// The feed stopped (connection lost): drop every copy and read the database until it listens again.
    public func feedStopped() {
        cache.withLock {
            announceEviction()
            $0.setSynchronized(false)
        }
    }

    /// A session changed or ended (here or on another instance).
    public func sessionChanged(id: String) {
        cache.withLock {
            announceEviction()
            $0.evict(sessionID: id)
        }
    }

    /// What the feed announced: one session, or anything (then every copy goes).
    public func apply(_ change: SessionChange) {
        switch change {
        case .session(let id): sessionChanged(id: id)
        case .unknown:
            cache.withLock {
                announceEviction()
                $0.evictAll()
            }
        }
    }

    public var evictionEpoch: UInt64 { epoch.load(ordering: .acquiring) }

    private func announceEviction() {
        epoch.wrappingAdd(1, ordering: .releasing)
    }

    /// Whether copies are being served.
    public var isSynchronized: Bool { cache.withLock { $0.isSynchronized } }

    /// How many sessions are cached.
    public var cachedCount: Int { cache.withLock { $0.count } }

    // MARK: SessionStore (what is not here goes to the base store)

    public var forwardee: any SessionStore { base }

    public func cachedSession(tokenHash: String) -> SessionRecord? {
        let now = clock.now()
        return cache.withLock { $0.record(tokenHash: tokenHash, now: now) }
    }

    public func session(tokenHash: String) async throws -> SessionRecord? {
        let now = clock.now()
        let (cached, epoch) = cache.withLock { ($0.record(tokenHash: tokenHash, now: now), $0.epoch) }
        if let cached { return cached }
        guard let record = try await base.session(tokenHash: tokenHash) else { return nil }
        let until = now.addingTimeInterval(timeToLive)
        cache.withLock { $0.insert(record, until: until, readAt: epoch) }
        return record
    }

    public func updateCredential(sessionID: String, sealedCredential: Data, expectedVersion: Int) async throws -> Bool {
        defer { sessionChanged(id: sessionID) }
        return try await base.updateCredential(sessionID: sessionID, sealedCredential: sealedCredential, expectedVersion: expectedVersion)
    }

    public func deleteSession(id: String) async throws {
        defer { sessionChanged(id: id) }
        try await base.deleteSession(id: id)
    }

    public func touchSession(id: String, at date: Date) async throws {
        try await base.touchSession(id: id, at: date)
        cache.withLock { $0.touch(sessionID: id, at: date) }
    }
}

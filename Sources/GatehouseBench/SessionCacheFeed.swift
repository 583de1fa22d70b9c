import GatehouseStore
import Synchronization

/// Keeps a ``GatehouseStore/CachingSessionStore`` in step with PostgreSQL's session-change feed, as the gateway's
/// `SessionCacheSynchronizer` does (without its reconnect loop): `feedStarted()` once the feed listens,
/// `sessionChanged(id:)` for every notification, `feedStopped()` when it ends. Counts the notifications, so a
/// measurement can tell whether anything was evicted while it ran.
final class SessionCacheFeed: Sendable {
    let cache: CachingSessionStore
    private let task: Task<Void, any Error>
    private let changes: ChangeCounter

    private init(cache: CachingSessionStore, task: Task<Void, any Error>, changes: ChangeCounter) {
        self.cache = cache
        self.task = task
        self.changes = changes
    }

    /// Starts following `feed` for `cache` and returns once the feed listens.
    /// - Throws: the feed's error, or ``BenchFailure`` if it ended before listening.
    static func follow(_ feed: PostgresSessionStore, into cache: CachingSessionStore) async throws -> SessionCacheFeed {
        let (listening, signal) = AsyncStream<Void>.makeStream()
        let changes = ChangeCounter()
        let task = Task {
            defer {
                cache.feedStopped()
                signal.finish()
            }
            try await feed.followSessionNotifications(
                onListening: {
                    cache.feedStarted()
                    signal.yield()
                },
                onChange: { id in
                    changes.increment()
                    cache.sessionChanged(id: id)
                })
        }
        for await _ in listening {
            return SessionCacheFeed(cache: cache, task: task, changes: changes)
        }
        try await task.value
        throw BenchFailure("the session change feed ended before it listened")
    }

    /// Notifications received so far.
    var changeCount: Int { changes.value }

    /// Stops following and waits until the feed has ended.
    func stop() async {
        task.cancel()
        _ = await task.result
    }
}

/// A counter shared with the feed's callbacks.
private final class ChangeCounter: Sendable {
    private let count = Atomic<Int>(0)

    func increment() { count.add(1, ordering: .relaxed) }

    var value: Int { count.load(ordering: .relaxed) }
}

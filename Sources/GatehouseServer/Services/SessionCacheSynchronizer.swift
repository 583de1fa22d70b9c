import GatehouseStore
import Logging
import ServiceLifecycle

/// Keeps a ``CachingSessionStore`` in step with every instance: follows the store's ``SessionChangeFeed`` and
/// evicts what it announces; while the feed is down the cache is bypassed, and it reconnects every second.
struct SessionCacheSynchronizer: Service {
    let cache: CachingSessionStore
    let feed: any SessionChangeFeed
    let logger: Logger
    var retryDelay: Duration = .seconds(1)

    func run() async throws {
        await cancelWhenGracefulShutdown { await followUntilCancelled() }
    }

    private func followUntilCancelled() async {
        while !Task.isCancelled {
            do {
                try await feed.followSessionChanges(
                    onListening: { [cache, logger] in
                        cache.feedStarted()
                        logger.info("session cache synchronized: following session changes")
                    },
                    onChange: { [cache] change in cache.apply(change) })
            } catch {
                if !Task.isCancelled {
                    logger.warning("session change feed lost; the cache is bypassed until it returns", metadata: ["error": "\(error)"])
                }
            }
            cache.feedStopped()
            do {
                try await Task.sleep(for: retryDelay)
            } catch {
                return
            }
        }
    }
}

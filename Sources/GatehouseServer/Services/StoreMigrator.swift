import GatehouseCore
import GatehouseStore
import Logging
import ServiceLifecycle

/// Migrates a store that was unreachable at start-up as soon as it answers, retrying with a capped
/// backoff, then opens its gate. Runs on every instance: migrations take an advisory lock.
struct StoreMigrator: Service {
    let store: MigrationGatedStore
    let logger: Logger
    var firstDelay: Duration = .milliseconds(500)
    var maximumDelay: Duration = .seconds(5)

    func run() async throws {
        // SIGTERM is a graceful shutdown, not a cancellation: without this the retries would go on and hold
        // the whole gateway up while the store is down.
        try? await cancelWhenGracefulShutdown { try await retry() }
        // A service that returns would stop the whole group: stay until shutdown.
        try? await gracefulShutdown()
    }

    private func retry() async throws {
        var delay = firstDelay
        while !store.isMigrated {
            do {
                try await store.migrate()
                logger.notice("session store reachable again: schema migrated, serving requests")
            } catch {
                if Task.isCancelled { return }
                logger.warning("session store still unreachable", metadata: ["error": "\(error)", "retry_in": "\(delay)"])
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    return
                }
                delay = min(delay * 2, maximumDelay)
            }
        }
    }
}

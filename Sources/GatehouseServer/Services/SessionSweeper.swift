import Foundation
import GatehouseCore
import Logging
import Prometheus
import ServiceLifecycle

/// Deletes expired sessions and pending records once a minute, and then sets the active-sessions gauge
/// (`gatehouse_active_sessions`) from the store's count, where the store can count (``SessionListing``).
struct SessionSweeper: Service {
    let store: any SessionStore
    let clock: TimeSource
    let idleTimeout: TimeInterval
    let logger: Logger
    var interval: Duration = .seconds(60)
    /// The store that counts (the configured one, below any cache or gate), and where the count goes.
    var counting: (store: any SessionListing, metrics: GatewayMetrics)?

    func run() async throws {
        try await cancelWhenGracefulShutdown { try await sweepForever() }
    }

    private func sweepForever() async throws {
        await count()
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
            let now = clock.now()
            do {
                let removed = try await store.deleteExpired(now: now, idleCutoff: now.addingTimeInterval(-idleTimeout))
                if removed > 0 { logger.debug("expired sessions removed", metadata: ["count": "\(removed)"]) }
            } catch {
                logger.warning("session sweep failed", metadata: ["error": "\(error)"])
            }
            await count()
        }
    }

    private func count() async {
        guard let counting, let sessions = try? await counting.store.sessionCount() else { return }
        counting.metrics.activeSessions.set(Double(sessions))
    }
}

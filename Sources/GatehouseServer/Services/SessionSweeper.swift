import Foundation
import GatehouseCore
import Logging
import ServiceLifecycle

/// Deletes expired sessions and pending records once a minute.
struct SessionSweeper: Service {
    let store: any SessionStore
    let clock: TimeSource
    let idleTimeout: TimeInterval
    let logger: Logger
    var interval: Duration = .seconds(60)

    func run() async throws {
        try await cancelWhenGracefulShutdown { try await sweepForever() }
    }

    private func sweepForever() async throws {
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
        }
    }
}

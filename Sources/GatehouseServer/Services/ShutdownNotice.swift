import Logging
import ServiceLifecycle

/// Says in the log that the gateway is stopping (SIGTERM, SIGINT) before anything stops: it is the first
/// service the group shuts down, so the line comes before the listener closes.
struct ShutdownNotice: Service {
    let logger: Logger

    func run() async throws {
        // Cancelled rather than shut down (another service failed): nothing to announce.
        guard (try? await gracefulShutdown()) != nil else { return }
        logger.notice("shutting down", metadata: ["event": "shutting_down"])
    }
}

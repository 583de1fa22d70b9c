import GatehouseCore
import Logging
import ServiceLifecycle
import UnixSignals

/// Reloads the provider files on SIGHUP; a set that does not validate is refused and the old one kept.
struct ProviderReloader: Service {
    let providers: ProviderSet
    let load: @Sendable () throws -> [any AuthProvider]
    let logger: Logger

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in signals {
                do {
                    let loaded = try load()
                    providers.replace(with: loaded)
                    logger.notice("providers reloaded", metadata: ["count": "\(loaded.count)"])
                } catch {
                    logger.error("provider reload refused; keeping the previous set", metadata: ["errors": "\(error)"])
                }
            }
        }
    }
}

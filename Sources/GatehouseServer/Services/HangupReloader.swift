import Logging
import ServiceLifecycle
import UnixSignals

/// The one SIGHUP listener: on each signal it runs the reloads in order (the provider files and access rules,
/// then the TLS pair when there is one). Each reload validates what it reads and keeps the old state when
/// that is refused, logging either way.
struct HangupReloader: Service {
    let reloads: [@Sendable () -> Void]

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in signals {
                for reload in reloads { reload() }
            }
        }
    }
}

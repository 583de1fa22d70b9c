import Foundation
import Logging
import Synchronization

/// Logs the outages of the hosts providers are reached at as ``StoreOutageReporter`` logs the store's
/// (``OutageLog``), one log per origin (`scheme://host:port`): a warning when a call to it first fails, with the
/// cause and the request it was made for; then at most one line per 10 s with the number of failed calls
/// meanwhile (each written at `debug` with its own cause and request id); and a notice when it answers again.
/// Without it, a provider that is down wrote one warning per request that needed it.
final class ProviderOutageReporter: Sendable {
    private let logs: Mutex<[String: OutageLog]>
    /// Whether any origin is down: the lock is taken on a success only then.
    private let anyDown = Atomic<Bool>(false)
    private let logger: Logger
    private let interval: Duration
    private let clock = ContinuousClock()

    init(logger: Logger, interval: Duration = .seconds(10)) {
        self.logger = logger
        self.interval = interval
        self.logs = Mutex([:])
    }

    /// A call to `url` failed with `cause`; `metadata` says which request it was for.
    func failed(_ url: String, cause: String, metadata: Logger.Metadata) {
        let origin = Self.origin(of: url)
        let now = clock.now
        let line = logs.withLock { logs in
            var log = logs[origin] ?? OutageLog(interval: interval)
            let line = log.refused(cause: cause, at: now)
            logs[origin] = log
            anyDown.store(true, ordering: .relaxed)
            return line
        }
        var fields = metadata
        fields["provider_origin"] = "\(origin)"
        switch line {
        case .down?:
            logger.warning("provider unreachable: the calls that need it fail until it answers", metadata: fields)
        case .stillDown(let failed, let downFor)?:
            logger.warning(
                "provider still unreachable",
                metadata: ["provider_origin": "\(origin)", "failed": "\(failed)", "down_seconds": "\(downFor.components.seconds)"])
        case .back?, nil:
            logger.debug("provider call failed", metadata: fields)
        }
    }

    /// A call to `url` got an answer.
    func answered(_ url: String) {
        guard anyDown.load(ordering: .relaxed) else { return }
        let origin = Self.origin(of: url)
        let now = clock.now
        let line = logs.withLock { logs -> OutageLog.Line? in
            guard var log = logs[origin] else { return nil }
            let line = log.answered(at: now)
            logs[origin] = nil
            if logs.values.allSatisfy({ !$0.isDown }) { anyDown.store(false, ordering: .relaxed) }
            return line
        }
        if case .back(let failed, let downFor)? = line {
            logger.notice(
                "provider reachable again",
                metadata: ["provider_origin": "\(origin)", "failed": "\(failed)", "down_seconds": "\(downFor.components.seconds)"])
        }
    }

    /// `scheme://authority` of `url` (its path, query and any user info left out).
    static func origin(of url: String) -> String {
        guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host else { return "unknown" }
        return components.port.map { "\(scheme)://\(host):\($0)" } ?? "\(scheme)://\(host)"
    }
}

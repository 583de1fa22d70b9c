import GatehouseCore
import Logging
import Synchronization

/// Logs the session store's outages as operators want to read them (``OutageLog``): one warning when it stops
/// answering, with the cause; then at most one line per 10 s with the number of store calls refused meanwhile
/// (each a request answered 503 `store_unavailable`, which the access log still records); and one notice when it
/// answers again. ``InstrumentedSessionStore`` tells it about every call.
final class StoreOutageReporter: Sendable {
    private let log: Mutex<OutageLog>
    /// Read without the lock on every call that succeeds: the lock is taken only while the store is down.
    private let down = Atomic<Bool>(false)
    private let logger: Logger
    private let clock = ContinuousClock()

    /// - Parameters:
    ///   - logger: where the lines go.
    ///   - interval: at most one "still unavailable" line this often.
    init(logger: Logger, interval: Duration = .seconds(10)) {
        self.logger = logger
        self.log = Mutex(OutageLog(interval: interval))
    }

    /// A store call failed because the store is unavailable.
    func refused(_ error: StoreUnavailableError) {
        let now = clock.now
        let line = log.withLock { log in
            let line = log.refused(cause: error.reason, at: now)
            down.store(true, ordering: .relaxed)
            return line
        }
        if let line { write(line) }
    }

    /// A store call made at `started` got an answer (one made before the outage was noticed does not end it).
    func answered(started: ContinuousClock.Instant) {
        guard down.load(ordering: .relaxed) else { return }
        let now = clock.now
        let line = log.withLock { log in
            let line = log.answered(at: now, started: started)
            down.store(log.isDown, ordering: .relaxed)
            return line
        }
        if let line { write(line) }
    }

    private func write(_ line: OutageLog.Line) {
        switch line {
        case .down(let cause):
            logger.warning(
                "session store unavailable: requests that need it are answered 503 store_unavailable until it is back",
                metadata: ["cause": "\(cause)"])
        case .stillDown(let refused, let downFor):
            logger.warning(
                "session store still unavailable",
                metadata: ["refused": "\(refused)", "down_seconds": "\(Self.seconds(downFor))"])
        case .back(let refused, let downFor):
            logger.notice(
                "session store reachable again",
                metadata: ["refused": "\(refused)", "down_seconds": "\(Self.seconds(downFor))"])
        }
    }

    /// Whole seconds.
    private static func seconds(_ duration: Duration) -> Int64 {
        duration.components.seconds
    }
}

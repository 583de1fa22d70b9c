import GatehouseCore
import Synchronization

/// Fails fast while a store is unreachable.
///
/// Without it, every request that needs an unreachable database waits for its own deadline before its
/// 503. The first connectivity fault opens the breaker (a refused or closed connection, or a store gone
/// silent): calls fail at once with ``StoreUnavailableError`` (503 `store_unavailable` with
/// `Retry-After`), calls already waiting give up (they watch ``isOpen``), and a background probe tries
/// the store every ``probeInterval``. The first probe that succeeds closes the breaker; calls go through
/// again.
public final class StoreCircuitBreaker: Sendable {
    private enum State {
        case closed
        case open(reason: String, probe: Task<Void, Never>)
        case stopped
    }

    private let state = Mutex<State>(.closed)
    /// How often the probe tries while the breaker is open.
    public let probeInterval: Duration

    public init(probeInterval: Duration = .milliseconds(500)) {
        self.probeInterval = probeInterval
    }

    /// Throws at once while the breaker is open.
    public func check() throws {
        let reason: String? = state.withLock { state in
            if case .open(let reason, _) = state { return reason }
            return nil
        }
        if let reason { throw StoreUnavailableError(reason: "\(reason) (failing fast until the store answers again)") }
    }

    /// Whether calls fail fast now.
    public var isOpen: Bool {
        state.withLock { state in
            if case .open = state { return true }
            return false
        }
    }

    /// A call found the store unreachable: open, and probe with `probe` until it succeeds.
    public func trip(reason: String, probe: @escaping @Sendable () async -> Bool) {
        state.withLock { state in
            guard case .closed = state else { return }
            let interval = probeInterval
            let task = Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    if Task.isCancelled { return }
                    if await probe() {
                        self?.close()
                        return
                    }
                }
            }
            state = .open(reason: reason, probe: task)
        }
    }

    /// Stops probing for good (the store shuts down); calls are no longer refused by the breaker.
    public func stop() {
        state.withLock { state in
            if case .open(_, let probe) = state { probe.cancel() }
            state = .stopped
        }
    }

    private func close() {
        state.withLock { state in
            if case .open = state { state = .closed }
        }
    }
}

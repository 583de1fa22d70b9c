import GatehouseCore
import GatehouseStore
import Synchronization

/// A memory store that can be switched off: every call then throws ``StoreUnavailableError``, as a store behind an
/// open circuit breaker does.
final class SwitchableStore: ForwardingSessionStore {
    private let base = MemorySessionStore()
    private let down = Mutex(false)
    let cause: String

    init(cause: String = "cannot connect: PSQLError(code: connectionError, … Connection refused)") {
        self.cause = cause
    }

    var forwardee: any SessionStore {
        get throws {
            if down.withLock({ $0 }) { throw StoreUnavailableError(reason: cause) }
            return base
        }
    }

    /// Switches the store off (`true`) or on.
    func setDown(_ value: Bool) {
        down.withLock { $0 = value }
    }
}

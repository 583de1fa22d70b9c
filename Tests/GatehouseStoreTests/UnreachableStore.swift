import GatehouseCore
import GatehouseStore

/// A store whose every call fails as a database that is down does.
struct UnreachableStore: ForwardingSessionStore {
    var forwardee: any SessionStore {
        get throws { throw StoreUnavailableError(reason: "connection refused (test)") }
    }
}

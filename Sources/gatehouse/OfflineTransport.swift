import GatehouseCore

/// A transport that never connects: `check` and `providers` build adapters without talking to anyone.
struct OfflineTransport: HTTPTransport {
    func send(_ request: TransportRequest) async throws -> TransportResponse {
        throw TransportError("offline: no provider calls from this command")
    }
}

/// Runs `body` with the offline transport.
func withOfflineTransport<T>(_ body: (any HTTPTransport) throws -> T) rethrows -> T {
    try body(OfflineTransport())
}

import GatehouseCore

/// A transport for tests that never reach a provider.
struct NoTransport: HTTPTransport {
    struct Unused: Error {}

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        throw Unused()
    }
}

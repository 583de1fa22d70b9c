import AsyncHTTPClient
import ServiceLifecycle

/// Owns the upstream HTTP client and shuts it down when the service group stops.
struct HTTPClientService: Service {
    let client: HTTPClient

    func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }
}

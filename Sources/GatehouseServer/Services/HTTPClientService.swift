import AsyncHTTPClient
import ServiceLifecycle

/// Owns the upstream HTTP client (and the clients of upstreams with a `server_name`) and shuts them down when the
/// service group stops.
struct HTTPClientService: Service {
    let client: HTTPClient
    var serverNames: ServerNameClients? = nil

    func run() async throws {
        try? await gracefulShutdown()
        await serverNames?.shutdown()
        try await client.shutdown()
    }
}

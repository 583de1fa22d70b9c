import AsyncHTTPClient
import Synchronization

/// The clients of upstreams with a `server_name`: AsyncHTTPClient sends as SNI and checks in the certificate the
/// URL's host, so such a request is addressed to the name and the client connects the name to the upstream's
/// host (`dnsOverride`), one client per name and host. Made at first use; shut down with the gateway.
final class ServerNameClients: Sendable {
    private let clients = Mutex<[String: HTTPClient]>([:])
    private let configuration: HTTPClient.Configuration

    /// - Parameter configuration: the shared upstream client's (pool, timeouts, redirects).
    init(configuration: HTTPClient.Configuration) {
        self.configuration = configuration
    }

    /// The client that connects `name` to `host`.
    func client(name: String, host: String) -> HTTPClient {
        clients.withLock { clients in
            let key = "\(name) \(host)"
            if let client = clients[key] { return client }
            var configuration = self.configuration
            configuration.dnsOverride = [name: host]
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[key] = client
            return client
        }
    }

    /// Shuts every client down (the gateway stops).
    func shutdown() async {
        let all = clients.withLock { clients in
            defer { clients = [:] }
            return Array(clients.values)
        }
        for client in all { try? await client.shutdown() }
    }
}

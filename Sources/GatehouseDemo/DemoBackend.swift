public import Logging

/// The demo backend behind the gateway: it answers every request with what it received, so tests and
/// newcomers can see exactly which method, path, headers and body the gateway forwarded.
///
/// - `GET /stream?bytes=N[&chunk=M]`: N bytes (`a`…`z` repeating) in chunks of M (default 16 KiB),
///   without a `Content-Length`, for streaming tests.
/// - `GET /status/{code}`: answers with that status (200–599) and a small JSON body.
/// - Anything else, any method: 200 JSON `{"method", "path", "query", "headers": {lowercased name: value},
///   "body_bytes", "body_sha256"}` after reading the whole body; repeated headers are joined with `, `.
public final class DemoBackend: Sendable {
    let logger: Logger
    private let listener = LoopbackListener()
    private let requestedPort: Int
    let counter = RequestCounter()

    /// Creates a stopped backend.
    /// - Parameters:
    ///   - port: the port to bind; 0 picks a free one.
    ///   - logger: where Hummingbird logs; defaults to warnings only.
    public init(port: Int = 0, logger: Logger? = nil) {
        self.requestedPort = port
        self.logger = logger ?? .standInQuiet(label: "gatehouse.demo.backend")
    }

    /// Starts listening on 127.0.0.1 and returns the bound port.
    @discardableResult
    public func start() async throws -> Int {
        try await listener.start(port: requestedPort, responder: DemoBackendResponder(counter: counter), logger: logger)
    }

    /// Stops listening.
    public func stop() async {
        await listener.stop()
    }

    /// The bound port, or nil before `start()`.
    public var port: Int? { listener.port }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: String { "http://\(listener.host):\(port ?? requestedPort)" }

    /// How many requests the backend has answered so far (to check that a request was or was not replayed).
    public var requestCount: Int { counter.value }
}

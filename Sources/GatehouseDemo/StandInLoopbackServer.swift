import Hummingbird

/// A stand-in server on 127.0.0.1: starting, stopping, its port and its base URL come from here.
public protocol StandInLoopbackServer: Sendable {
    /// The listener the server runs on.
    var loopback: StandInLoopback<Self> { get }
}

extension StandInLoopbackServer {
    /// Starts listening on 127.0.0.1 and returns the bound port (ephemeral unless a port was configured).
    /// Starting a running server returns its port.
    @discardableResult
    public func start() async throws -> Int {
        try await loopback.listener.start(
            port: loopback.requestedPort,
            responder: loopback.makeRouter(self).buildResponder(),
            logger: loopback.logger
        )
    }

    /// Stops listening; what the server holds (tokens, counters, …) is kept, so a restarted server still knows it.
    public func stop() async {
        await loopback.listener.stop()
    }

    /// The bound port, or nil before `start()`.
    public var port: Int? { loopback.listener.port }

    /// `http://127.0.0.1:<port>`. Before `start()` the port reads as the configured one.
    public var baseURL: String { "http://\(loopback.listener.host):\(port ?? loopback.requestedPort)" }
}

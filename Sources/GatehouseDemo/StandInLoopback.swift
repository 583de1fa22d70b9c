import Hummingbird
import Logging

/// Where a stand-in server listens: its loopback listener, the port it asks for, its logger and its routes.
///
/// Only the stand-ins in this module make one; it is public because the default implementations of
/// ``StandInLoopbackServer`` reach it, and has nothing to call from outside.
public final class StandInLoopback<Server>: Sendable {
    let listener = LoopbackListener()
    let requestedPort: Int
    let logger: Logger
    let makeRouter: @Sendable (Server) -> Router<BasicRequestContext>

    /// - Parameters:
    ///   - port: the port to bind; 0 for an ephemeral one.
    ///   - logger: where Hummingbird logs; nil for a logger labelled `label` that logs warnings only.
    ///   - makeRouter: the server's routes, built on each start.
    init(port: Int, logger: Logger?, label: String, makeRouter: @escaping @Sendable (Server) -> Router<BasicRequestContext>) {
        self.requestedPort = port
        self.logger = logger ?? .standInQuiet(label: label)
        self.makeRouter = makeRouter
    }
}

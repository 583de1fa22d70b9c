import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
public import ServiceLifecycle

/// The gateway's application: its services, and the listener (``GatewayListener``) whose connections reach the
/// relay first and the router for what the relay passes on.
///
/// Hummingbird's `Application` would run its own server, which accepts every connection on one event loop and
/// hands it to a task; the gateway serves each connection on the loop that accepted it instead. The router's
/// answers are those of Hummingbird's application: its responder, a `Date` and `Server: gatehouse` on every
/// answer, a bare `500` for an error no middleware turned into an answer.
public struct GatewayApplication: Service {
    /// How a connection is set up and served, given the router's responder.
    typealias Connection = @Sendable (@escaping HTTPChannelHandler.Responder) -> @Sendable (any Channel, Logger) throws -> Void

    /// The router's responder: every request the relay passes on.
    let router: RouterResponder<GatehouseRequestContext>
    let connection: Connection
    let host: String
    let port: Int
    let services: [any Service]
    let onServerRunning: @Sendable (Int) async -> Void
    let logger: Logger

    public func run() async throws {
        let serve = connection(Self.responder(router, logger: logger))
        let listener = GatewayListener(
            // A burst of new connections (a thousand clients at once) waits in the kernel's queue rather than being
            // refused or left to retransmit their SYN; the kernel caps it at net.core.somaxconn (as for nginx and Go).
            host: host, port: port, backlog: 4096, group: .singleton, setup: { try serve($0, logger) }, onRunning: onServerRunning,
            logger: logger)
        // Services stop in the reverse order: the listener first.
        try await ServiceGroup(configuration: .init(services: services + [listener], logger: logger)).run()
    }

    /// The router's answer to a request that reaches it, written to the client.
    private static func responder(_ router: RouterResponder<GatehouseRequestContext>, logger: Logger) -> HTTPChannelHandler.Responder {
        let date = HTTPDate()
        return { request, writer, channel in
            var response: Response
            do {
                response = try await router.respond(to: request, context: GatehouseRequestContext(source: .init(channel: channel, logger: logger)))
            } catch let error as HTTPParserError {
                throw error
            } catch {
                logger.debug("Unrecognised Error", metadata: ["error.type": "\(error)"])
                response = Response(status: .internalServerError, body: .init())
            }
            response.headers[.date] = date.now
            response.headers[.server] = "gatehouse"
            do {
                try await writer.write(response: response.head, body: response.body)
            } catch is HTTPParserError {
                // Not the parser's error itself: the connection's loop would answer it with one answer more.
                throw ParseErrorWhileWriting()
            }
        }
    }

    private struct ParseErrorWhileWriting: Error {}
}

import Logging
import NIOCore
import NIOExtras
import NIOPosix
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The gateway's listener: one listening socket per event loop, all bound to the same address (`SO_REUSEPORT`),
/// so that the kernel spreads new connections over the loops and each loop accepts, sets up and serves its own.
///
/// A connection never leaves the loop that accepted it, from its `accept` to its close. A single listening
/// socket whose loop hands each connection to another loop costs, per connection, the hops between the two loops
/// (registration, setup, the setup's result, the close's bookkeeping); a server that also hands each connection
/// to a task wakes a thread of the task pool for it, and another hop back to the loop. With one request per
/// connection (a client that does not keep connections alive, a new TLS handshake each time) those hops cost more
/// than the request.
///
/// Shutdown: at the graceful shutdown, every listening socket closes (no new connection is accepted) and every open
/// connection is asked to end once the answer it is sending is sent (`ChannelShouldQuiesceEvent`); the service
/// returns when the last one has closed. Cancelled, it closes the listening sockets and returns at once.
struct GatewayListener: Service {
    /// The address to bind: a host name or address and a port (0: any free one, the same for every socket).
    let host: String
    let port: Int
    /// The kernel's queue of connections not yet accepted, per socket.
    let backlog: Int
    let group: MultiThreadedEventLoopGroup
    /// Sets up an accepted connection, on its event loop, before it reads anything.
    let setup: @Sendable (any Channel) throws -> Void
    /// Called with the bound port once every socket listens.
    let onRunning: @Sendable (Int) async -> Void
    let logger: Logger

    func run() async throws {
        let (boundPort, listening) = try await listen()
        logger.info("Server started and listening on \(host):\(boundPort)")
        await onRunning(boundPort)
        guard (try? await gracefulShutdown()) != nil else {
            // Cancelled: stop accepting; the connections end with their clients or the process.
            for (channel, _) in listening { try? await channel.close() }
            return
        }
        let drained = listening.map { channel, quiescing in
            let promise = channel.eventLoop.makePromise(of: Void.self)
            quiescing.initiateShutdown(promise: promise)
            return promise.futureResult
        }
        for connections in drained { try? await connections.get() }
    }

    /// Binds one socket per event loop, all to one port. With port 0 the port is the free one a first socket got,
    /// which another process can take before the loops' sockets bind it: then another free port, up to three times.
    private func listen() async throws -> (port: Int, sockets: [(channel: any Channel, quiescing: ServerQuiescingHelper)]) {
        var attempt = 1
        while true {
            let boundPort = try await claim()
            var listening: [(channel: any Channel, quiescing: ServerQuiescingHelper)] = []
            do {
                for loop in group.makeIterator() {
                    let quiescing = ServerQuiescingHelper(group: loop)
                    listening.append((try await bootstrap(on: loop, quiescing: quiescing).bind(host: host, port: boundPort).get(), quiescing))
                }
                return (boundPort, listening)
            } catch {
                for (channel, _) in listening { try? await channel.close() }
                guard port == 0, (error as? IOError)?.errnoCode == EADDRINUSE, attempt < 3 else { throw error }
                attempt += 1
            }
        }
    }

    /// The port every socket binds, once a socket without `SO_REUSEPORT` could bind the address: as without the
    /// option, an address another process listens on is refused ("address already in use"), even when that
    /// process allows the port's sharing too. Port 0: the free port that socket got.
    private func claim() async throws -> Int {
        let probe = try await ServerBootstrap(group: group.next())
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: host, port: port).get()
        let claimed = probe.localAddress?.port ?? port
        try await probe.close()
        return claimed
    }

    private func bootstrap(on loop: any EventLoop, quiescing: ServerQuiescingHelper) -> ServerBootstrap {
        let setup = setup
        return ServerBootstrap(group: loop, childGroup: loop)
            .serverChannelOption(.backlog, value: Int32(clamping: backlog))
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.socketOption(NIOBSDSocket.Option(rawValue: SO_REUSEPORT)), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiescing.makeServerChannelHandler(channel: channel))
                }
            }
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try setup(channel) }
            }
    }
}

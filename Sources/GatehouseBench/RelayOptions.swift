import ArgumentParser
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// What ``ByteRelayCommand`` and ``HTTPRelayCommand`` share: where they listen, the backend, and the gateway's way of
/// listening (one socket per event loop, each connection served on the loop that accepted it).
struct RelayOptions: ParsableArguments {
    @Option(help: "The port to listen on (127.0.0.1).")
    var port: Int

    @Option(help: "The backend's port (127.0.0.1).")
    var backendPort: Int

    @Option(help: "Event loops (the gateway runs one per core).")
    var threads = System.coreCount

    func validate() throws {
        guard (1...65535).contains(port), (1...65535).contains(backendPort) else { throw ValidationError("ports are 1-65535") }
        guard threads > 0 else { throw ValidationError("--threads must be positive") }
    }

    /// Listens until killed; each accepted connection gets a connection of its own to the backend, made on its loop,
    /// and `join` adds the handlers that relay between the two.
    func serve(name: String, join: @escaping @Sendable (_ client: any Channel, _ backend: any Channel) throws -> Void) throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let backendPort = backendPort
        let servers = try group.makeIterator().map { loop in
            try ServerBootstrap(group: loop, childGroup: loop)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .serverChannelOption(.socketOption(NIOBSDSocket.Option(rawValue: SO_REUSEPORT)), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { client in
                    ClientBootstrap(group: client.eventLoop)
                        .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                        .connect(host: "127.0.0.1", port: backendPort)
                        .flatMapThrowing { backend in try join(client, backend) }
                }
                .bind(host: "127.0.0.1", port: port).wait()
        }
        print("\(name) on 127.0.0.1:\(port) -> 127.0.0.1:\(backendPort), \(threads) event loops")
        try servers.first?.closeFuture.wait()
    }
}

import ArgumentParser
import GatehouseServer
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// `gatehouse-bench byte-relay`: the floor of a SwiftNIO proxy hop on this machine. Each client connection gets one
/// connection to the backend on the same event loop, joined by the gateway's own WebSocket tunnel (``TunnelHandler``):
/// every byte read on one side is written to the other, flushed once per read cycle, with back-pressure both ways. No
/// HTTP parsing, no policy, no logging, no metrics. `bench/run.sh` runs it beside
/// the gateway's bearer row, so that a row's cost splits into what any SwiftNIO hop pays here (event loop,
/// syscalls, the kernel's loopback) and what the gateway adds.
///
/// ```sh
/// gatehouse-bench byte-relay --port 8090 --backend-port 8080
/// ```
struct ByteRelayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "byte-relay", abstract: "Relay bytes between clients and a backend on 127.0.0.1 (a proxy hop's floor); runs until killed.")

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

    func run() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let backendPort = backendPort
        // As the gateway listens: one socket per event loop, each connection served on the loop that accepted it.
        let servers = try group.makeIterator().map { loop in
            try ServerBootstrap(group: loop, childGroup: loop)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .serverChannelOption(.socketOption(NIOBSDSocket.Option(rawValue: SO_REUSEPORT)), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { client in
                    ClientBootstrap(group: client.eventLoop)
                        .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                        .connect(host: "127.0.0.1", port: backendPort)
                        .flatMapThrowing { backend in
                            let (toBackend, toClient) = TunnelHandler.pair()
                            try client.pipeline.syncOperations.addHandler(toBackend)
                            try backend.pipeline.syncOperations.addHandler(toClient)
                        }
                }
                .bind(host: "127.0.0.1", port: port).wait()
        }
        print("byte relay on 127.0.0.1:\(port) -> 127.0.0.1:\(backendPort), \(threads) event loops")
        try servers.first?.closeFuture.wait()
    }
}

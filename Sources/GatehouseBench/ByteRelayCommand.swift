import ArgumentParser
import GatehouseServer
import NIOCore

/// `gatehouse-bench byte-relay`: the floor of a SwiftNIO proxy hop on this machine. Each client connection gets one
/// connection to the backend on the same event loop, joined by the gateway's own WebSocket tunnel (``TunnelHandler``):
/// every byte read on one side is written to the other, flushed once per read cycle, with back-pressure both ways. No
/// HTTP parsing, no policy, no logging, no metrics. `bench/run.sh` runs it beside the gateway's bearer row, so that a
/// row's cost splits into what any SwiftNIO hop pays here (event loop, syscalls, the kernel's loopback) and what the
/// gateway adds.
///
/// ```sh
/// gatehouse-bench byte-relay --port 8090 --backend-port 8080
/// ```
struct ByteRelayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "byte-relay", abstract: "Relay bytes between clients and a backend on 127.0.0.1 (a proxy hop's floor); runs until killed.")

    @OptionGroup var relay: RelayOptions

    func run() throws {
        try relay.serve(name: "byte relay") { client, backend in
            let (toBackend, toClient) = TunnelHandler.pair()
            try client.pipeline.syncOperations.addHandler(toBackend)
            try backend.pipeline.syncOperations.addHandler(toClient)
        }
    }
}

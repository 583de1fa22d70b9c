import ArgumentParser
import GatehouseServer
import NIOCore
import NIOHTTP1

/// `gatehouse-bench http-relay`: the floor of a SwiftNIO *HTTP/1.1* proxy hop on this machine, between
/// ``ByteRelayCommand``'s and the gateway's. Each client connection gets one keep-alive connection to the backend on
/// the same event loop; NIOHTTP1 decodes and encodes on both sides (with the gateway's pipelining assistance and its ``ReadInterestKeeper``), and
/// the parts are passed on as they are, head fields included. No decision, no header rewriting, no log, no metrics.
///
/// ```sh
/// gatehouse-bench http-relay --port 8090 --backend-port 8080
/// ```
struct HTTPRelayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "http-relay", abstract: "Relay HTTP/1.1 parts between clients and a backend on 127.0.0.1 (NIOHTTP1's floor); runs until killed.")

    @OptionGroup var relay: RelayOptions

    func run() throws {
        try relay.serve(name: "HTTP/1.1 relay") { client, backend in
            let front = HTTPRelayFront()
            let back = HTTPRelayBack(front: front)
            front.back = back
            let pipeline = client.pipeline.syncOperations
            try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: false)
            // As the gateway does: without it, the pipelining assistance costs two `epoll_ctl` calls a request.
            try pipeline.addHandler(ReadInterestKeeper(), position: .before(try pipeline.handler(type: HTTPServerPipelineHandler.self)))
            try client.pipeline.syncOperations.addHandler(front)
            try backend.pipeline.syncOperations.addHTTPClientHandlers()
            try backend.pipeline.syncOperations.addHandler(back)
        }
    }
}

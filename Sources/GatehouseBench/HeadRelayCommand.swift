import ArgumentParser
import NIOCore

/// `gatehouse-bench head-relay`: what an HTTP/1.1 proxy hop costs here when it reads heads from the bytes and writes
/// them as bytes, as nginx's proxy does, instead of through NIOHTTP1's parts (``HTTPRelayCommand``). Each client
/// connection gets one keep-alive connection to the backend on the same event loop. A request head is parsed
/// (request line, field lines), written upstream with the fields a gateway rewrites (`Host`, hop-by-hop fields,
/// `X-Request-Id`); the answer's head is parsed likewise, its body passed on by `Content-Length`.
///
/// A measuring floor, not a proxy: it takes bodiless requests and `Content-Length` answers, one exchange at a
/// time, and closes the connection on anything else.
///
/// ```sh
/// gatehouse-bench head-relay --port 8090 --backend-port 8080
/// ```
struct HeadRelayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "head-relay",
        abstract: "Relay HTTP/1.1 exchanges with heads parsed from and written as bytes (a floor); runs until killed.")

    @OptionGroup var relay: RelayOptions

    func run() throws {
        let authority = "127.0.0.1:\(relay.backendPort)"
        try relay.serve(name: "head relay") { client, backend in
            let front = HeadRelayFront(authority: authority)
            let back = HeadRelayBack(front: front)
            front.back = back
            try client.pipeline.syncOperations.addHandler(front)
            try backend.pipeline.syncOperations.addHandler(back)
        }
    }
}

import ArgumentParser
import NIOCore

/// `gatehouse-bench head-relay`: what an HTTP/1.1 proxy hop costs here when it reads heads from the bytes and writes
/// them as bytes, as nginx's proxy does, instead of through NIOHTTP1's parts (``HTTPRelayCommand``). Each client
/// connection gets one keep-alive connection to the backend on the same event loop. A request head is parsed
/// (request line, field lines), written upstream with the fields a gateway rewrites (`Host`, hop-by-hop fields,
/// `X-Request-Id`); the answer's head is parsed likewise, its body passed on by `Content-Length`.
///
/// A measuring floor, not a proxy: it takes bodiless requests, one exchange at a time, and closes the connection on
/// anything else. `--as-gateway` makes each upstream head as the gateway's decision does (from NIOHTTP1's head, as
/// strings), to show what that costs over copying the field lines.
///
/// ```sh
/// gatehouse-bench head-relay --port 8090 --backend-port 8080
/// ```
struct HeadRelayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "head-relay",
        abstract: "Relay HTTP/1.1 exchanges with heads parsed from and written as bytes (a floor); runs until killed.")

    @OptionGroup var relay: RelayOptions

    @Flag(
        help: """
            Make the request heads as the gateway's decision would: the head as NIOHTTP1's (the strings the decision \
            reads), an upstream head built from it, written by the gateway's UpstreamHeadWriter.
            """)
    var asGateway = false

    func run() throws {
        let authority = "127.0.0.1:\(relay.backendPort)"
        let asGateway = asGateway
        try relay.serve(name: asGateway ? "head relay (heads as the gateway makes them)" : "head relay") { client, backend in
            let front = HeadRelayFront(authority: authority, asGateway: asGateway)
            let back = HeadRelayBack(front: front)
            front.back = back
            try client.pipeline.syncOperations.addHandler(front)
            try backend.pipeline.syncOperations.addHandler(back)
        }
    }
}

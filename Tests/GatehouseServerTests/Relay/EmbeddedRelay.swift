import NIOCore
import NIOEmbedded
import NIOHTTP1

@testable import GatehouseServer

/// An ``APIRelayHandler`` on an `EmbeddedChannel`, behind the pipelining handler as on a gateway connection,
/// with its backend connections from ``EmbeddedUpstreams``; the parts it hands on come out of the channel as
/// the router would get them. Used from one thread: no `await` between its calls.
final class EmbeddedRelay {
    let loop = EmbeddedEventLoop()
    let client: EmbeddedChannel
    let upstreams: EmbeddedUpstreams
    /// The reads the relay asks of the client's connection.
    let reads = ReadCounter()
    private let token: String

    init(relay: APIRelay, token: String) throws {
        self.token = token
        upstreams = EmbeddedUpstreams(loop: loop)
        client = EmbeddedChannel(loop: loop)
        let pipeline = client.pipeline.syncOperations
        try pipeline.addHandler(reads)
        try pipeline.addHandler(HTTPServerPipelineHandler())
        try pipeline.addHandler(APIRelayHandler(relay: relay, connections: upstreams, remoteAddress: nil))
        client.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 40000), promise: nil)
    }

    /// A request head, with the signed-in user's token unless `anonymous`.
    func head(_ method: HTTPMethod = .GET, _ uri: String, _ fields: [(String, String)] = [], anonymous: Bool = false) -> HTTPServerRequestPart {
        var headers = HTTPHeaders([("Host", "127.0.0.1")] + fields)
        if !anonymous { headers.add(name: "Authorization", value: "Bearer \(token)") }
        return .head(HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: headers))
    }

    /// The client sends `parts`, each in a read of its own.
    func send(_ parts: HTTPServerRequestPart...) throws {
        for part in parts { try client.writeInbound(part) }
    }

    /// The parts of answers the client got since the last call.
    func received() throws -> [HTTPServerResponsePart] {
        var parts: [HTTPServerResponsePart] = []
        while let part = try client.readOutbound(as: HTTPServerResponsePart.self) { parts.append(part) }
        return parts
    }

    /// The statuses and bodies of the answers the client got since the last call.
    func answers() throws -> [(status: Int, body: String, head: HTTPResponseHead)] {
        var answers: [(status: Int, body: String, head: HTTPResponseHead)] = []
        for part in try received() {
            switch part {
            case .head(let head): answers.append((Int(head.status.code), "", head))
            case .body(.byteBuffer(var buffer)): answers[answers.count - 1].body += buffer.readString(length: buffer.readableBytes) ?? ""
            case .body, .end: break
            }
        }
        return answers
    }

    /// The parts that went on to the router since the last call.
    func routed() throws -> [HTTPServerRequestPart] {
        var parts: [HTTPServerRequestPart] = []
        while let part = try client.readInbound(as: HTTPServerRequestPart.self) { parts.append(part) }
        return parts
    }
}

import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import GatehouseServer

/// ``ReadInterestKeeper`` in front of NIO's `HTTPServerPipelineHandler`, as on a gateway connection: when the
/// channel is asked to read, what the handlers behind get, and when.
@Suite("ReadInterestKeeper on EmbeddedChannel")
struct ReadInterestKeeperTests {
    /// The channel with its reads counted, the keeper, the pipeline handler, and what the router's side gets.
    private final class Connection {
        let channel = EmbeddedChannel()
        let reads = ReadCounter()
        let keeper = ReadInterestKeeper()
        let behind = Behind()

        init() throws {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(reads)
            try pipeline.addHandler(keeper)
            try pipeline.addHandler(HTTPServerPipelineHandler())
            try pipeline.addHandler(behind)
            channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 40000), promise: nil)
        }

        /// One read cycle of the socket that brings `parts`.
        func cycle(_ parts: HTTPServerRequestPart...) {
            for part in parts { channel.pipeline.syncOperations.fireChannelRead(NIOAny(part)) }
            channel.pipeline.syncOperations.fireChannelReadComplete()
        }

        /// The channel ends the read cycle as NIO's socket channel does with `autoRead`: it asks for the next read.
        func readIfNeeded() { channel.pipeline.syncOperations.read() }

        func answer(_ status: HTTPResponseStatus = .ok) throws {
            try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: status)))
            try channel.writeOutbound(HTTPServerResponsePart.end(nil))
            while try channel.readOutbound(as: HTTPServerResponsePart.self) != nil {}
        }

        static func head(_ uri: String, _ fields: [(String, String)] = []) -> HTTPServerRequestPart {
            .head(HTTPRequestHead(version: .http1_1, method: .GET, uri: uri, headers: HTTPHeaders([("Host", "gw")] + fields)))
        }
    }

    /// The handlers behind the pipeline handler (the relay, the router): what reached them, and a read gate
    /// (the relay holds the client's reads while its backend connection is full).
    private final class Behind: ChannelDuplexHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundIn = HTTPServerResponsePart
        var uris: [String] = []
        var inputClosed = 0
        var holding = false

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .head(let head) = unwrapInboundIn(data) { uris.append(head.uri) }
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case ChannelEvent.inputClosed = event { inputClosed += 1 }
        }

        func read(context: ChannelHandlerContext) {
            if !holding { context.read() }
        }
    }

    @Test("while a whole request waits for its answer, the connection's read stays asked for, once; the next request is read as before")
    func keepsTheReadAskedFor() throws {
        let connection = try Connection()
        connection.cycle(Connection.head("/v1/api/a"), .end(nil))
        // The pipeline handler holds the read until the answer; the keeper asks for one in its place.
        #expect(connection.keeper.readsAhead == 1)
        let reads = connection.reads.reads
        connection.readIfNeeded()
        #expect(connection.reads.reads == reads)  // held: the read ahead is still the only one
        try connection.answer()
        #expect(connection.reads.reads == reads + 1)  // the pipeline handler's released read
        connection.cycle(Connection.head("/v1/api/b"), .end(nil))
        #expect(connection.keeper.readsAhead == 2)
        #expect(connection.behind.uris == ["/v1/api/a", "/v1/api/b"])
    }

    @Test("a pipelining client gets one read cycle more while it waits, then nothing is read until the answer")
    func pipeliningIsBounded() throws {
        let connection = try Connection()
        connection.cycle(Connection.head("/v1/api/a"), .end(nil))
        #expect(connection.keeper.readsAhead == 1)
        // The read ahead brings a pipelined request: it waits in the pipeline handler, and no read is asked for.
        let reads = connection.reads.reads
        connection.cycle(Connection.head("/v1/api/b"), .end(nil))
        connection.readIfNeeded()
        #expect(connection.reads.reads == reads)
        #expect(connection.keeper.readsAhead == 1)
        #expect(connection.behind.uris == ["/v1/api/a"])
        try connection.answer()
        #expect(connection.behind.uris == ["/v1/api/a", "/v1/api/b"])
    }

    @Test("an end of input the read ahead finds reaches the handlers behind only when they ask for a read")
    func holdsTheHalfClose() throws {
        let connection = try Connection()
        connection.cycle(Connection.head("/v1/api/a"), .end(nil))
        #expect(connection.keeper.readsAhead == 1)
        connection.channel.pipeline.syncOperations.fireChannelReadComplete()
        connection.channel.pipeline.syncOperations.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(connection.behind.inputClosed == 0)
        try connection.answer()
        #expect(connection.behind.inputClosed == 1)
        // Asked for by the handlers behind, an end of input goes straight on.
        let other = try Connection()
        other.readIfNeeded()
        other.channel.pipeline.syncOperations.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(other.behind.inputClosed == 1)
    }

    @Test("no read ahead while a body is coming and the relay holds the client's reads")
    func respectsBackPressure() throws {
        let connection = try Connection()
        connection.behind.holding = true
        connection.cycle(.head(HTTPRequestHead(version: .http1_1, method: .PUT, uri: "/v1/api/f", headers: ["Content-Length": "6"])))
        connection.cycle(.body(ByteBuffer(string: "abc")))
        let reads = connection.reads.reads
        connection.readIfNeeded()
        #expect(connection.reads.reads == reads)
        #expect(connection.keeper.readsAhead == 0)
        connection.behind.holding = false
        connection.readIfNeeded()
        #expect(connection.reads.reads == reads + 1)
    }

    @Test("no read ahead after an upgrade or CONNECT request: the bytes after it belong to a tunnel")
    func stopsAtUpgrades() throws {
        let upgrade = try Connection()
        upgrade.cycle(Connection.head("/v1/api/ws", [("Connection", "Upgrade"), ("Upgrade", "websocket")]), .end(nil))
        #expect(upgrade.keeper.readsAhead == 0)
        let connect = try Connection()
        connect.cycle(.head(HTTPRequestHead(version: .http1_1, method: .CONNECT, uri: "example.com:443")), .end(nil))
        #expect(connect.keeper.readsAhead == 0)
    }
}

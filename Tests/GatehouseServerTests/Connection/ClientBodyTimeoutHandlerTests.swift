import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import Testing

@testable import GatehouseServer

/// The client body timeout (``ClientBodyClock``) on `EmbeddedChannel`, whose clock moves only when the test
/// says: on an HTTP/1.1 connection (``HTTP1ConnectionGuard``, `408`) and on an HTTP/2 stream
/// (``HTTP2StreamCodec``, `RST_STREAM`).
@Suite("Client body timeout")
struct ClientBodyTimeoutHandlerTests {
    /// How the cut is told to the client.
    enum Cut {
        /// HTTP/1.1: `408` when no answer has started, then the connection closes.
        case answer408
        /// An HTTP/2 stream: the channel closes (`RST_STREAM`).
        case reset
    }

    private static func channel(_ cut: Cut) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        let handler: any ChannelHandler =
            switch cut {
            // The idle timeout far beyond the body timeout: only the body's clock is looked at.
            case .answer408: HTTP1ConnectionGuard(idleTimeout: .hours(1), bodyTimeout: .seconds(60), sendTimeout: .seconds(60))
            case .reset: HTTP2StreamCodec(bodyTimeout: .seconds(60), sendTimeout: .seconds(60))
            }
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    private static let head = HTTPServerRequestPart.head(
        .init(version: .http1_1, method: .POST, uri: "/v1/session", headers: ["content-length": "100"]))

    @Test("a body that stops: 408 and the connection closed after the timeout, not before")
    func cut() throws {
        let channel = try Self.channel(.answer408)
        try channel.writeInbound(Self.head)
        channel.read()
        channel.embeddedEventLoop.advanceTime(by: .seconds(59))
        #expect(try channel.readOutbound(as: HTTPServerResponsePart.self) == nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        guard case .head(let answer) = try channel.readOutbound(as: HTTPServerResponsePart.self) else {
            Issue.record("no 408")
            return
        }
        #expect(answer.status == .requestTimeout)
        #expect(!channel.isActive)
    }

    @Test("progress starts the clock again; a request's end stops it")
    func progress() throws {
        let channel = try Self.channel(.answer408)
        try channel.writeInbound(Self.head)
        channel.read()
        channel.embeddedEventLoop.advanceTime(by: .seconds(50))
        try channel.writeInbound(HTTPServerRequestPart.body(ByteBuffer(string: "{")))
        channel.read()
        channel.embeddedEventLoop.advanceTime(by: .seconds(50))
        #expect(channel.isActive)
        try channel.writeInbound(HTTPServerRequestPart.end(nil))
        channel.embeddedEventLoop.advanceTime(by: .seconds(600))
        #expect(channel.isActive)
        #expect(try channel.readOutbound(as: HTTPServerResponsePart.self) == nil)
    }

    @Test("held back (no read asked: the backend is slower than the client): never cut")
    func backPressure() throws {
        let channel = try Self.channel(.answer408)
        try channel.writeInbound(Self.head)
        channel.embeddedEventLoop.advanceTime(by: .seconds(600))
        #expect(channel.isActive)
        // Reading again starts the clock.
        channel.read()
        channel.embeddedEventLoop.advanceTime(by: .seconds(61))
        #expect(!channel.isActive)
    }

    /// An HTTP/2 request's HEADERS frame, without END_STREAM.
    private static func headers(_ method: String, _ fields: [(String, String)] = []) -> HTTP2Frame.FramePayload {
        .headers(
            .init(headers: HPACKHeaders([(":method", method), (":path", "/v1/session"), (":scheme", "https"), (":authority", "a.test")] + fields)))
    }

    @Test("an HTTP/2 stream is closed (RST_STREAM), not answered; an answer under way is not followed by a 408")
    func reset() throws {
        let stream = try Self.channel(.reset)
        try stream.writeInbound(Self.headers("POST", [("content-length", "100")]))
        #expect(try stream.readInbound(as: HTTPServerRequestPart.self) != nil)
        stream.read()
        stream.embeddedEventLoop.advanceTime(by: .seconds(59))
        #expect(stream.isActive)
        try stream.writeInbound(HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(ByteBuffer(string: "{")))))
        stream.read()
        stream.embeddedEventLoop.advanceTime(by: .seconds(59))
        #expect(stream.isActive)
        stream.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(try stream.readOutbound(as: HTTP2Frame.FramePayload.self) == nil)
        #expect(!stream.isActive)

        let answering = try Self.channel(.answer408)
        try answering.writeInbound(Self.head)
        try answering.writeOutbound(HTTPServerResponsePart.head(.init(version: .http1_1, status: .ok)))
        _ = try answering.readOutbound(as: HTTPServerResponsePart.self)
        answering.read()
        answering.embeddedEventLoop.advanceTime(by: .seconds(61))
        #expect(try answering.readOutbound(as: HTTPServerResponsePart.self) == nil)
        #expect(!answering.isActive)
    }

    @Test("an HTTP/2 GET whose HEADERS leave the stream open and nothing follows: the held head does not stop the clock")
    func heldHead() throws {
        let stream = try Self.channel(.reset)
        try stream.writeInbound(Self.headers("GET"))
        #expect(try stream.readInbound(as: HTTPServerRequestPart.self) == nil)  // held until the stream says more
        stream.read()
        stream.embeddedEventLoop.advanceTime(by: .seconds(61))
        #expect(!stream.isActive)
    }
}

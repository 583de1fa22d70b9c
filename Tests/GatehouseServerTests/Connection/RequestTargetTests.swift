import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import Testing

@testable import GatehouseServer

/// The request's target and framing as the handlers behind the front ends see them: ``HTTP1ConnectionGuard`` (absolute form),
/// ``HTTP2StreamCodec``.
@Suite("Request target and framing")
struct RequestTargetTests {
    @Test(
        "absolute form: the authority and the origin-form target; anything else refused",
        arguments: [
            ("https://admin.test/v1/api/x?q=1", "admin.test", "/v1/api/x?q=1"),
            ("HTTP://Admin.Test:8080", "Admin.Test:8080", "/"),
            ("http://h?x", "h", "/?x"),
            ("https://h/p#frag", "h", "/p"),
        ])
    func absoluteForm(uri: String, authority: String, target: String) throws {
        let form = try #require(HTTP1ConnectionGuard.originForm(of: uri))
        #expect(form.authority == authority)
        #expect(form.target == target)
    }

    @Test("absolute forms that are refused", arguments: ["ftp://h/x", "https:///x", "https://user@h/x", "v1/api/x", "h:443"])
    func refusedForms(uri: String) {
        #expect(HTTP1ConnectionGuard.originForm(of: uri) == nil)
    }

    private static func http1Channel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            HTTP1ConnectionGuard(idleTimeout: .seconds(60), bodyTimeout: .seconds(60), sendTimeout: .seconds(60)))
        return channel
    }

    @Test("HTTP/1.1: an absolute target becomes origin form with its authority as Host; a Host that disagrees is 400 and closes")
    func http1() throws {
        let channel = try Self.http1Channel()
        try channel.writeInbound(
            HTTPServerRequestPart.head(
                .init(
                    version: .http1_1, method: .GET, uri: "https://admin.test/v1/api/x", headers: ["Host": "ADMIN.test"])))
        guard case .head(let head) = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no head")
            return
        }
        #expect(head.uri == "/v1/api/x")
        #expect(head.headers["host"] == ["admin.test"])

        let refused = try Self.http1Channel()
        try refused.writeInbound(
            HTTPServerRequestPart.head(
                .init(
                    version: .http1_1, method: .GET, uri: "https://admin.test/v1/api/x", headers: ["Host": "127.0.0.1"])))
        try refused.writeInbound(HTTPServerRequestPart.end(nil))
        #expect(try refused.readInbound(as: HTTPServerRequestPart.self) == nil)
        guard case .head(let answer) = try refused.readOutbound(as: HTTPServerResponsePart.self) else {
            Issue.record("no answer")
            return
        }
        #expect(answer.status == .badRequest)
        #expect(answer.headers["connection"] == ["close"])
    }

    /// HTTP/2 request heads and whether ``HTTP2StreamCodec`` refuses them.
    private static let targets: [(fields: [(String, String)], refused: Bool)] = [
        ([(":method", "GET"), (":path", "/x"), (":authority", "a.test"), ("host", "b.test")], true),
        ([(":method", "GET"), (":path", "/x"), (":authority", "A.test"), ("host", "a.TEST")], false),
        ([(":method", "GET"), (":path", "/x"), ("host", "b.test")], false),
        ([(":method", "GET"), (":path", "https://a.test/x"), (":authority", "a.test")], true),
        ([(":method", "GET"), (":path", "x"), (":authority", "a.test")], true),
        ([(":method", "OPTIONS"), (":path", "*"), (":authority", "a.test")], false),
        ([(":method", "GET"), (":path", "*"), (":authority", "a.test")], true),
    ]

    @Test("HTTP/2: a host that is not the :authority, or a :path that is not origin form, is a problem", arguments: 0..<7)
    func http2Target(index: Int) {
        let (fields, refused) = Self.targets[index]
        #expect((HTTP2StreamCodec.problem(with: HPACKHeaders(fields)) != nil) == refused)
    }

    private static func streamChannel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(HTTP2StreamCodec(bodyTimeout: .seconds(60), sendTimeout: .seconds(60)))
        return channel
    }

    private static func headers(_ method: String, _ fields: [(String, String)] = [], end: Bool = false) -> HTTP2Frame.FramePayload {
        .headers(
            .init(
                headers: HPACKHeaders([(":method", method), (":path", "/v1/api/x"), (":scheme", "https"), (":authority", "a.test")] + fields),
                endStream: end))
    }

    private static func data(_ text: String, end: Bool = false) -> HTTP2Frame.FramePayload {
        .data(.init(data: .byteBuffer(ByteBuffer(string: text)), endStream: end))
    }

    @Test("HTTP/2: a head without framing waits for the stream's next part: DATA makes it chunked, the end leaves it bodiless")
    func http2Framing() throws {
        let data = try Self.streamChannel()
        try data.writeInbound(Self.headers("GET"))
        #expect(try data.readInbound(as: HTTPServerRequestPart.self) == nil)  // held
        try data.writeInbound(Self.data("GET /smuggled HTTP/1.1\r\n\r\n"))
        guard case .head(let head) = try data.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no head")
            return
        }
        #expect(head.version == .http1_1)
        #expect(head.headers["transfer-encoding"] == ["chunked"])
        #expect(head.headers["host"] == ["a.test"])
        guard case .body = try data.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no body")
            return
        }

        let bodiless = try Self.streamChannel()
        try bodiless.writeInbound(Self.headers("DELETE"))
        try bodiless.writeInbound(Self.data("", end: true))
        guard case .head(let plain) = try bodiless.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no head")
            return
        }
        #expect(!plain.headers.contains(name: "transfer-encoding") && !plain.headers.contains(name: "content-length"))
        guard case .end = try bodiless.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no end")
            return
        }

        // A head that says its length goes on at once; a split cookie is one field again (RFC 9113 §8.2.3).
        let framed = try Self.streamChannel()
        try framed.writeInbound(Self.headers("POST", [("content-length", "3"), ("cookie", "a=1"), ("cookie", "b=2")]))
        guard case .head(let posted) = try framed.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("held")
            return
        }
        #expect(posted.headers["cookie"] == ["a=1; b=2"])

        // A method whose requests have a body, without a length: chunked at once, or no body if the stream ended.
        let streamed = try Self.streamChannel()
        try streamed.writeInbound(Self.headers("PUT"))
        guard case .head(let put) = try streamed.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("held")
            return
        }
        #expect(put.headers["transfer-encoding"] == ["chunked"])
        let ended = try Self.streamChannel()
        try ended.writeInbound(Self.headers("POST", end: true))
        guard case .head(let empty) = try ended.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("held")
            return
        }
        #expect(empty.headers["content-length"] == ["0"])
    }

    @Test("HTTP/2: a host that is not the :authority is answered 400 on the stream; nothing reaches the handlers behind")
    func http2Refused() throws {
        let stream = try Self.streamChannel()
        try stream.writeInbound(Self.headers("GET", [("host", "b.test")], end: true))
        #expect(try stream.readInbound(as: HTTPServerRequestPart.self) == nil)
        guard case .headers(let answer) = try stream.readOutbound(as: HTTP2Frame.FramePayload.self) else {
            Issue.record("no answer")
            return
        }
        #expect(answer.headers.first(name: ":status") == "400")
    }

    @Test("HTTP/2: an answer's head loses the connection-specific fields and is in lower case")
    func http2Answer() throws {
        let fields = HTTP2StreamCodec.fields(
            status: 200,
            [
                "Content-Type": "text/plain", "Connection": "close, X-Hop", "X-Hop": "1", "Keep-Alive": "timeout=5", "Transfer-Encoding": "chunked",
                "Set-Cookie": "s=1",
            ])
        #expect(fields.map(\.name) == [":status", "content-type", "set-cookie"])
    }

    @Test("HTTP/2: an answer's end rides on its last frame when nothing was flushed between; after a flush, an empty DATA ends it")
    func http2AnswerFrames() throws {
        func frames(_ parts: [HTTPServerResponsePart?]) throws -> [(kind: String, end: Bool, bytes: Int)] {
            let stream = try Self.streamChannel()
            for part in parts {
                if let part { stream.write(part, promise: nil) } else { stream.flush() }
            }
            stream.flush()
            var seen: [(String, Bool, Int)] = []
            while let frame = try stream.readOutbound(as: HTTP2Frame.FramePayload.self) {
                switch frame {
                case .headers(let headers): seen.append(("HEADERS", headers.endStream, 0))
                case .data(let data): seen.append(("DATA", data.endStream, data.data.readableBytes))
                default: seen.append(("other", false, 0))
                }
            }
            return seen
        }
        let head = HTTPServerResponsePart.head(.init(version: .http1_1, status: .ok))
        let body = HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: "abc")))
        let whole = try frames([head, body, .end(nil)])
        #expect(whole.map(\.kind) == ["HEADERS", "DATA"] && whole.map(\.end) == [false, true] && whole[1].bytes == 3)
        let bodiless = try frames([head, .end(nil)])
        #expect(bodiless.map(\.kind) == ["HEADERS"] && bodiless[0].end)
        let flushed = try frames([head, body, nil, .end(nil)])
        #expect(flushed.map(\.kind) == ["HEADERS", "DATA", "DATA"] && flushed.map(\.end) == [false, false, true] && flushed[2].bytes == 0)
    }

    @Test("HTTP/2: the answer to a HEAD carries no DATA, whatever body is written for it; the end rides on its HEADERS")
    func http2HeadAnswer() throws {
        let stream = try Self.streamChannel()
        try stream.writeInbound(Self.headers("HEAD", end: true))
        stream.write(HTTPServerResponsePart.head(.init(version: .http1_1, status: .unauthorized, headers: ["content-length": "5"])), promise: nil)
        stream.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: "nope!"))), promise: nil)
        stream.write(HTTPServerResponsePart.end(nil), promise: nil)
        stream.flush()
        guard case .headers(let headers) = try stream.readOutbound(as: HTTP2Frame.FramePayload.self) else {
            Issue.record("no HEADERS")
            return
        }
        #expect(headers.endStream && headers.headers.first(name: "content-length") == "5")
        #expect(try stream.readOutbound(as: HTTP2Frame.FramePayload.self) == nil)
    }

    @Test("connections per client: admitted up to the bound, one more refused, admitted again once one ends")
    func connectionLimiter() {
        let limiter = ClientConnectionLimiter(maxPerClient: 2)
        #expect(limiter.admit("10.0.0.1"))
        #expect(limiter.admit("10.0.0.1"))
        #expect(!limiter.admit("10.0.0.1"))
        #expect(limiter.admit("10.0.0.2"))
        limiter.release("10.0.0.1")
        #expect(limiter.admit("10.0.0.1"))
        limiter.release("10.0.0.1")
        limiter.release("10.0.0.1")
        #expect(limiter.count(of: "10.0.0.1") == 0)
    }
}

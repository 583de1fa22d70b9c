import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP1
import Testing

@testable import GatehouseServer

/// The request's target and framing as the handlers behind the front ends see them: ``HTTP1ConnectionGuard`` (absolute form),
/// ``HTTP2RequestTargetCheck``, ``HTTP2StreamHeadAdapter``.
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
        try channel.pipeline.syncOperations.addHandler(HTTP1ConnectionGuard(idleTimeout: .seconds(60), bodyTimeout: .seconds(60)))
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

    /// HTTP/2 request heads and whether ``HTTP2RequestTargetCheck`` refuses them.
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
        #expect((HTTP2RequestTargetCheck.problem(with: HPACKHeaders(fields)) != nil) == refused)
    }

    private static func streamChannel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(HTTP2StreamHeadAdapter())
        return channel
    }

    private static func head(_ method: HTTPMethod, _ fields: HTTPHeaders = ["host": "a.test"]) -> HTTPServerRequestPart {
        .head(.init(version: .init(major: 2, minor: 0), method: method, uri: "/v1/api/x", headers: fields))
    }

    @Test("HTTP/2: a head without framing waits for the stream's next part: DATA makes it chunked, the end leaves it bodiless")
    func http2Framing() throws {
        let data = try Self.streamChannel()
        try data.writeInbound(Self.head(.GET))
        #expect(try data.readInbound(as: HTTPServerRequestPart.self) == nil)  // held
        try data.writeInbound(HTTPServerRequestPart.body(ByteBuffer(string: "GET /smuggled HTTP/1.1\r\n\r\n")))
        guard case .head(let head) = try data.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no head")
            return
        }
        #expect(head.version == .http1_1)
        #expect(head.headers["transfer-encoding"] == ["chunked"])
        guard case .body = try data.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no body")
            return
        }

        let bodiless = try Self.streamChannel()
        try bodiless.writeInbound(Self.head(.DELETE))
        try bodiless.writeInbound(HTTPServerRequestPart.end(nil))
        guard case .head(let plain) = try bodiless.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no head")
            return
        }
        #expect(!plain.headers.contains(name: "transfer-encoding") && !plain.headers.contains(name: "content-length"))
        guard case .end = try bodiless.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no end")
            return
        }

        // A head that says its length goes on at once.
        let framed = try Self.streamChannel()
        try framed.writeInbound(Self.head(.POST, ["host": "a.test", "content-length": "3"]))
        guard case .head = try framed.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("held")
            return
        }
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

import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import GatehouseServer

/// ``UpstreamHeadWriter``: for the heads the relay sends upstream, and heads its framing rules would correct, the
/// bytes it writes are NIOHTTP1's `HTTPRequestEncoder`'s, byte for byte.
@Suite("UpstreamHeadWriter")
struct UpstreamHeadWriterTests {
    private static let identity: [(String, String)] = [
        ("Host", "backend.internal:8080"), ("Authorization", "Bearer abc"), ("X-Gatehouse-Subject", "alice"),
        ("X-Forwarded-For", "127.0.0.1"), ("X-Request-Id", "01J0-rid"), ("Accept", "*/*"), ("X-Empty", ""), ("x-lower", "v a l"),
    ]

    @Test(
        "writes the relay's upstream heads as NIOHTTP1's encoder does",
        arguments: [
            (HTTPMethod.GET, "/items?x=1&y=%20", [(String, String)]()),
            (.DELETE, "/items/7", []),
            (.HEAD, "/", []),
            (.OPTIONS, "/items", [("Origin", "https://app.example")]),
            (.POST, "/items", [("Content-Length", "0")]),
            (.POST, "/items", [("Content-Length", "12"), ("Content-Type", "application/json")]),
            (.PUT, "/items/7", [("Transfer-Encoding", "chunked")]),
            (.PATCH, "/items/7", [("Content-Length", "3")]),
            (.GET, "/ws", [("Connection", "Upgrade"), ("Upgrade", "websocket"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")]),
            (.RAW(value: "PROPFIND"), "/dav", []),
            (.POST, "/items", [("Transfer-Encoding", "chunked"), ("X-After", "1")]),
            (.POST, "/items", []),
            (.TRACE, "/", [("Content-Length", "3"), ("Transfer-Encoding", "chunked")]),
            (.GET, "/items", [("Content-Length", "3"), ("Transfer-Encoding", "chunked")]),
            (.GET, "/items", [("Transfer-Encoding", "chunked")]),
        ])
    func writesAsTheEncoder(_ method: HTTPMethod, _ uri: String, _ fields: [(String, String)]) throws {
        let head = HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: HTTPHeaders(Self.identity + fields))
        var written = ByteBuffer()
        UpstreamHeadWriter.write(head, into: &written)
        let channel = EmbeddedChannel(handler: HTTPRequestEncoder())
        defer { _ = try? channel.finish() }
        try channel.writeOutbound(HTTPClientRequestPart.head(head))
        var encoded = ByteBuffer()
        while var part = try channel.readOutbound(as: ByteBuffer.self) { encoded.writeBuffer(&part) }
        #expect(String(buffer: written) == String(buffer: encoded))
    }
}

import NIOHTTP1
import Testing

@testable import GatehouseServer

@Suite("The backend's 101 must complete the WebSocket handshake")
struct WebSocketHandshakeTests {
    static let key = "dGhlIHNhbXBsZSBub25jZQ=="

    func response(_ fields: [(String, String)], status: HTTPResponseStatus = .switchingProtocols) -> HTTPResponseHead {
        HTTPResponseHead(version: .http1_1, status: status, headers: HTTPHeaders(fields))
    }

    @Test("RFC 6455 §1.3's example: the key's accept value")
    func rfcVector() {
        #expect(WebSocketHandshake.accept(forKey: Self.key) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: HTTPHeaders([("Sec-WebSocket-Key", Self.key)]))
        #expect(WebSocketHandshake.expectedAccept(of: request) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        let twoKeys = HTTPRequestHead(
            version: .http1_1, method: .GET, uri: "/", headers: HTTPHeaders([("Sec-WebSocket-Key", Self.key), ("Sec-WebSocket-Key", "eA==")]))
        #expect(WebSocketHandshake.expectedAccept(of: twoKeys) == nil)
    }

    @Test("only Upgrade: websocket with the matching accept completes it")
    func completes() {
        let accept = WebSocketHandshake.accept(forKey: Self.key)
        #expect(WebSocketHandshake.completes(response([("Upgrade", "websocket"), ("Sec-WebSocket-Accept", accept)]), expectedAccept: accept))
        #expect(WebSocketHandshake.completes(response([("Upgrade", "WebSocket"), ("Sec-WebSocket-Accept", accept)]), expectedAccept: accept))
        let refused: [[(String, String)]] = [
            [],
            [("Upgrade", "websocket")],
            [("Sec-WebSocket-Accept", accept)],
            [("Upgrade", "h2c"), ("Sec-WebSocket-Accept", accept)],
            [("Upgrade", "websocket"), ("Sec-WebSocket-Accept", WebSocketHandshake.accept(forKey: "b3RoZXI="))],
            [("Upgrade", "websocket"), ("Upgrade", "h2c"), ("Sec-WebSocket-Accept", accept)],
            [("Upgrade", "websocket"), ("Sec-WebSocket-Accept", accept), ("Sec-WebSocket-Accept", accept)],
        ]
        for fields in refused {
            #expect(!WebSocketHandshake.completes(response(fields), expectedAccept: accept), "\(fields)")
        }
        #expect(!WebSocketHandshake.completes(response([("Upgrade", "websocket"), ("Sec-WebSocket-Accept", accept)]), expectedAccept: nil))
        #expect(
            !WebSocketHandshake.completes(
                response([("Upgrade", "websocket"), ("Sec-WebSocket-Accept", accept)], status: .ok), expectedAccept: accept))
    }
}

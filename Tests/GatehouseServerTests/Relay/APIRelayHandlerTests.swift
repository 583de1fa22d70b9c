import GatehouseConfiguration
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import GatehouseServer

/// ``APIRelayHandler`` on `EmbeddedChannel`s, the client's and the backend's: what it hands on, what it
/// sends, when it reads, on a real ``APIRelay`` whose user's session is in memory.
@Suite("APIRelayHandler on EmbeddedChannel")
struct APIRelayHandlerTests {
    /// Runs `scenario` (on one thread: no `await`) with a relay of a fresh gateway.
    private func withRelay(
        configure: (inout ServerSettings) -> Void = { _ in }, _ scenario: (EmbeddedRelay, APIRelay) throws -> Void
    ) async throws {
        try await RelayFixture.with(configure: configure) { fixture in
            let gateway = fixture.gateway
            // One call through the gateway puts the session and its assertion in memory: the relay decides on the loop.
            let warm = try await gateway.http.send(.GET, gateway.url("/v1/api/echo"), headers: gateway.bearer(fixture.token))
            try #require(warm.status == 200)
            let relay = try #require(APIRelay(gateway: gateway.gateway))
            try scenario(try EmbeddedRelay(relay: relay, token: fixture.token), relay)
        }
    }

    private static func body(_ text: String) -> HTTPServerRequestPart { .body(ByteBuffer(string: text)) }

    @Test("requests the relay does not take go on to the router untouched; one it refuses is answered here; no backend connection")
    func passesThrough() async throws {
        try await withRelay { relay, _ in
            try relay.send(relay.head(.GET, "/healthz"), .end(nil))
            let routed = try relay.routed()
            #expect(routed.count == 2)
            guard case .head(let head) = routed.first else { throw Unexpected.part }
            #expect(head.uri == "/healthz")
            try relay.client.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .noContent)))
            try relay.client.writeOutbound(HTTPServerResponsePart.end(nil))
            #expect(try relay.answers().map(\.status) == [204])
            // No credential: the relay's own 401, the connection kept.
            try relay.send(relay.head(.GET, "/v1/api/echo", anonymous: true), .end(nil))
            let refused = try relay.answers()
            #expect(refused.map(\.status) == [401])
            #expect(refused.first?.body.contains("\"code\":\"invalid_session\"") == true)
            #expect(try relay.routed().isEmpty)
            #expect(relay.upstreams.connections.isEmpty)
            #expect(relay.client.isActive)
        }
    }

    @Test("a relayed request goes out rewritten, its answer comes back with the request id, the connection back to the pool")
    func forwards() async throws {
        try await withRelay { relay, _ in
            try relay.send(relay.head(.GET, "/v1/api/echo?q=1", [("X-Gatehouse-Subject", "mallory")]), .end(nil))
            #expect(relay.upstreams.connections.count == 1)
            let sent = try relay.upstreams.sent(0)
            #expect(sent.hasPrefix("GET ") && sent.contains("/echo?q=1 HTTP/1.1\r\n"))
            #expect(sent.lowercased().contains("x-gatehouse-subject: alice"))
            #expect(!sent.contains("mallory") && !sent.lowercased().contains("authorization"))
            try relay.upstreams.answer(0, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
            let answers = try relay.answers()
            #expect(answers.map(\.status) == [200])
            #expect(answers.first?.body == "hello")
            #expect(answers.first?.head.headers.contains(name: "x-request-id") == true)
            #expect(relay.upstreams.released == 1)
            #expect(try relay.routed().isEmpty)

            // An unreachable backend (once the request is read): 502, and the client's connection stays usable.
            relay.upstreams.holdConnects = true
            relay.upstreams.channel(0).close(promise: nil)
            try relay.send(relay.head(.GET, "/v1/api/echo"), .end(nil))
            relay.upstreams.completeConnect(failing: true)
            let refused = try relay.answers()
            #expect(refused.map(\.status) == [502])
            #expect(refused.first?.body.contains("\"code\":\"bad_gateway\"") == true)
            #expect(relay.client.isActive)
        }
    }

    @Test("a table put in force (SIGHUP) takes the next request on the same connection: the new backend's path, host and identity settings")
    func followsAReplacedTable() async throws {
        try await withRelay { relay, api in
            try relay.send(relay.head(.GET, "/v1/api/echo"), .end(nil))
            let before = try relay.upstreams.sent(0)
            #expect(before.lowercased().contains("x-gatehouse-subject: alice"))
            try relay.upstreams.answer(0, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            #expect(try relay.answers().map(\.status) == [200])

            var moved = ServerSettings.BackendSettings()
            moved.url = "http://127.0.0.1:9999/moved"
            moved.identityHeaders = false
            moved.assertion = false
            api.policy.replace(
                with: PolicySnapshot(access: api.policy.current.access, upstreams: UpstreamTable(backend: moved, upstreams: [], defaultTimeout: 30)))
            try relay.send(relay.head(.GET, "/v1/api/echo?q=2"), .end(nil))
            let after = try relay.upstreams.sent(relay.upstreams.connections.count - 1)
            #expect(after.hasPrefix("GET /moved/echo?q=2 HTTP/1.1\r\n"), "\(after)")
            #expect(after.lowercased().contains("host: 127.0.0.1:9999\r\n"))
            #expect(!after.lowercased().contains("x-gatehouse-subject") && !after.lowercased().contains("x-gatehouse-assertion"))
            #expect(relay.client.isActive)
        }
    }

    @Test("bodies stream both ways: the client is read only while the backend can take more, the backend only while the client can")
    func streamsWithBackPressure() async throws {
        try await withRelay { relay, _ in
            try relay.send(relay.head(.PUT, "/v1/api/files/x", [("Content-Length", "6")]))
            let upstream = relay.upstreams.channel(0)
            #expect(try relay.upstreams.sent(0).hasPrefix("PUT "))

            // The backend connection is full: a read the channel asks for waits.
            upstream.isWritable = false
            upstream.pipeline.syncOperations.fireChannelWritabilityChanged()
            let reads = relay.reads.reads
            relay.client.read()
            #expect(relay.reads.reads == reads)
            upstream.isWritable = true
            upstream.pipeline.syncOperations.fireChannelWritabilityChanged()
            #expect(relay.reads.reads == reads + 1)

            try relay.send(Self.body("abc"), Self.body("def"), .end(nil))
            #expect(try relay.upstreams.sent(0) == "abcdef")

            // The answer streams; while the client's connection is full, the backend is not read.
            try relay.upstreams.answer(0, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabc")
            #expect(try relay.answers().map(\.body) == ["abc"])
            relay.client.isWritable = false
            relay.client.pipeline.syncOperations.fireChannelWritabilityChanged()
            #expect(!relay.upstreams.connections[0].reading)
            relay.client.isWritable = true
            relay.client.pipeline.syncOperations.fireChannelWritabilityChanged()
            #expect(relay.upstreams.connections[0].reading)
            try relay.upstreams.answer(0, "def")
            let rest = try relay.received()
            #expect(rest.count == 2)
            guard case .body(.byteBuffer(let buffer)) = rest.first, case .end = rest.last else { throw Unexpected.part }
            #expect(String(buffer: buffer) == "def")
            #expect(relay.upstreams.released == 1)
        }
    }

    @Test("a request a reused connection loses is sent again on a new one when idempotent (GET), never otherwise (POST → 502)")
    func retries() async throws {
        try await withRelay { relay, _ in
            try relay.send(relay.head(.GET, "/v1/api/a"), .end(nil))
            try relay.upstreams.answer(0, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            #expect(try relay.answers().map(\.status) == [200])

            // The kept-alive connection closes as the next request goes out on it: a new one gets it.
            try relay.send(relay.head(.GET, "/v1/api/b"), .end(nil))
            #expect(relay.upstreams.connections.count == 1)
            #expect(try relay.upstreams.sent(0).contains("/b HTTP/1.1"))
            relay.upstreams.channel(0).close(promise: nil)
            #expect(relay.upstreams.connections.count == 2)
            #expect(try relay.upstreams.sent(1).contains("/b HTTP/1.1"))
            try relay.upstreams.answer(1, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            #expect(try relay.answers().map(\.body) == ["ok"])

            // A POST is never sent twice.
            try relay.send(relay.head(.POST, "/v1/api/d", [("Content-Length", "2")]), Self.body("{}"), .end(nil))
            #expect(try relay.upstreams.sent(1).hasPrefix("POST "))
            relay.upstreams.channel(1).close(promise: nil)
            #expect(relay.upstreams.connections.count == 2)
            #expect(try relay.answers().map(\.status) == [502])
        }
    }

    @Test("a backend that does not start its answer within upstream_timeout: 504 then, its connection closed, the client's usable")
    func timesOut() async throws {
        try await withRelay { relay, gatewayRelay in
            let timeout = TimeAmount.milliseconds(Int64(gatewayRelay.policy.current.upstreams.fallback.timeout * 1000))
            try relay.send(relay.head(.GET, "/v1/api/slow"), .end(nil))
            relay.loop.advanceTime(by: timeout - .milliseconds(100))
            #expect(try relay.received().isEmpty)
            relay.loop.advanceTime(by: .milliseconds(200))
            let answers = try relay.answers()
            #expect(answers.map(\.status) == [504])
            #expect(answers.first?.body.contains("\"code\":\"upstream_timeout\"") == true)
            #expect(!relay.upstreams.channel(0).isActive)
            try relay.send(relay.head(.GET, "/healthz"), .end(nil))
            #expect(try relay.routed().count == 2)
        }
    }

    @Test("a body past max_body_bytes: 413 while it streams, the rest never sent on, both connections closed")
    func refusesOversizedBodies() async throws {
        try await withRelay(configure: { $0.maxBodyBytes = 1000 }) { relay, _ in
            let chunk = String(repeating: "x", count: 600)
            try relay.send(relay.head(.PUT, "/v1/api/files/big", [("Transfer-Encoding", "chunked")]), Self.body(chunk))
            #expect(try relay.upstreams.sent(0).contains(chunk))
            try relay.send(Self.body(chunk))
            let answers = try relay.answers()
            #expect(answers.map(\.status) == [413])
            #expect(answers.first?.head.headers.first(name: "connection")?.lowercased() == "close")
            #expect(try relay.upstreams.sent(0).isEmpty)
            #expect(!relay.upstreams.channel(0).isActive)
            #expect(!relay.client.isActive)
        }
    }

    @Test("a WebSocket handshake the backend completes becomes a tunnel; a 101 to anything else is a 502")
    func tunnels() async throws {
        try await withRelay { relay, _ in
            let handshake: [(String, String)] = [
                ("Connection", "Upgrade"), ("Upgrade", "websocket"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
                ("Sec-WebSocket-Version", "13"),
            ]
            try relay.send(relay.head(.GET, "/v1/api/socket", handshake), .end(nil))
            #expect(try relay.upstreams.sent(0).lowercased().contains("upgrade: websocket"))
            try relay.upstreams.answer(
                0,
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
            )
            relay.loop.run()
            #expect(try relay.answers().map(\.status) == [101])
            try relay.client.writeInbound(ByteBuffer(string: "ping"))
            #expect(try relay.upstreams.channel(0).readOutbound(as: ByteBuffer.self).map { String(buffer: $0) } == "ping")
            try relay.upstreams.channel(0).writeInbound(ByteBuffer(string: "pong"))
            #expect(try relay.client.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) } == "pong")
        }
        // The attack: a backend that switches a plain request's connection to another protocol.
        try await withRelay { relay, _ in
            try relay.send(relay.head(.GET, "/v1/api/plain"), .end(nil))
            try relay.upstreams.answer(0, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: raw\r\nConnection: Upgrade\r\n\r\n")
            #expect(try relay.answers().map(\.status) == [502])
            #expect(!relay.upstreams.channel(0).isActive)
        }
    }

    @Test("pipelined requests, relayed and the router's, go on one at a time, answered in the order they came")
    func pipelines() async throws {
        try await withRelay { relay, _ in
            try relay.send(
                relay.head(.GET, "/v1/api/echo?n=1"), .end(nil), relay.head(.GET, "/healthz"), .end(nil), relay.head(.GET, "/v1/api/echo?n=2"),
                .end(nil))
            #expect(try relay.upstreams.sent(0).contains("n=1"))
            #expect(try relay.routed().isEmpty)
            try relay.upstreams.answer(0, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1")
            #expect(try relay.answers().map(\.body) == ["1"])
            // The router's request now; the third waits for its answer.
            #expect(try relay.routed().count == 2)
            #expect(try relay.upstreams.sent(0).isEmpty)
            try relay.client.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .noContent)))
            try relay.client.writeOutbound(HTTPServerResponsePart.end(nil))
            #expect(try relay.answers().map(\.status) == [204])
            #expect(try relay.upstreams.sent(0).contains("n=2"))
            try relay.upstreams.answer(0, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n2")
            #expect(try relay.answers().map(\.body) == ["2"])
            #expect(relay.upstreams.connections.count == 1)
        }
    }

    @Test("a client that leaves mid-exchange, or while connecting, takes the backend connection with it")
    func clientDisconnects() async throws {
        try await withRelay { relay, _ in
            try relay.send(relay.head(.GET, "/v1/api/slow"), .end(nil))
            #expect(relay.upstreams.channel(0).isActive)
            relay.client.pipeline.syncOperations.fireChannelInactive()
            #expect(!relay.upstreams.channel(0).isActive)
        }
        try await withRelay { relay, _ in
            relay.upstreams.holdConnects = true
            try relay.send(relay.head(.GET, "/v1/api/slow"), .end(nil))
            relay.client.pipeline.syncOperations.fireChannelInactive()
            relay.upstreams.completeConnect()
            #expect(!relay.upstreams.channel(0).isActive)
            #expect(try relay.upstreams.sent(0).isEmpty)
        }
    }

    private enum Unexpected: Error { case part }
}

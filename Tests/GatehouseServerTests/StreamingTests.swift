import Crypto
import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseDemo
import GatehouseServer
import NIOHTTP1
import Testing

/// Large bodies pass through the proxy in both directions, beyond the replay buffer.
@Suite("Streaming")
struct StreamingTests {
    @Test("a large upstream response and a large upload pass through byte-identical")
    func largeBodies() async throws {
        // Sessions in a plain store, read off the loop: the relay's asynchronous decision path.
        try await RelayFixture.with(cached: false) { fixture in
            let (gw, token) = (fixture.gateway, fixture.token)
            let download = try await gw.http.send(.GET, gw.url("/v1/api/stream?bytes=2000000&chunk=65536"), headers: gw.bearer(token))
            #expect(download.status == 200)
            #expect(download.body.count == 2_000_000)
            #expect(download.body.prefix(3) == Data("abc".utf8))

            // 2 MiB: above the 1 MiB replay limit, so it is streamed, not buffered.
            let upload = Data((0..<2 * 1_048_576).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let echoed = try await gw.http.send(.PUT, gw.url("/v1/api/files/big"), headers: gw.bearer(token), body: upload)
            #expect(echoed.status == 200)
            #expect(echoed.json?["body_bytes"]?.doubleValue == Double(upload.count))
            let digest = SHA256.hash(data: upload).map { String(format: "%02x", $0) }.joined()
            #expect(echoed.json?["body_sha256"]?.stringValue == digest)
        }
    }

    @Test("upstream status codes and errors come back as they are, an unreachable upstream as 502")
    func upstreamStatuses() async throws {
        try await RelayFixture.with(cached: false) { fixture in
            let (gw, token) = (fixture.gateway, fixture.token)
            let teapot = try await gw.http.send(.GET, gw.url("/v1/api/status/418"), headers: gw.bearer(token))
            #expect(teapot.status == 418)
        }
        try await RelayFixture.with(cached: false, configure: { $0.backend.url = "http://127.0.0.1:1" }) { fixture in
            let (gw, token) = (fixture.gateway, fixture.token)
            let down = try await gw.http.send(.GET, gw.url("/v1/api/x"), headers: gw.bearer(token))
            #expect(down.status == 502)
            #expect(down.problemCode == "bad_gateway")
        }
    }
}

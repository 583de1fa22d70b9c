import Foundation
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import GatehouseServer

/// A gateway connection's handlers (``GatewayHTTPChannel``) on an `EmbeddedChannel`: with the relay, a connection
/// starts with the lane, the guard and the router's hand-off alone, and gets NIOHTTP1's handlers, in the order the
/// relay and the router need them, only when the lane hands it over; the request that made the hand-over is answered
/// by them.
@Suite("The HTTP/1.1 handlers made at the hand-over")
struct LazyHTTPPipelineTests {
    /// The connection's handlers, front to back, by type name.
    private static func handlers(_ channel: EmbeddedChannel) -> [String] {
        channel.pipeline.debugDescription.split(separator: "\n").dropFirst(2).compactMap { line in
            var text = String(line)
            if let name = text.range(of: " [", options: .backwards) { text = String(text[..<name.lowerBound]) }
            return text.components(separatedBy: "↓↑").map { $0.trimmingCharacters(in: .whitespaces) }.first { !$0.isEmpty }
        }
    }

    /// The short names of the handlers the order is checked on.
    private static func shortNames(_ names: [String]) -> [String] {
        names.map { name in
            if name.hasPrefix("ByteToMessageHandler") { return "decoder" }
            if name.hasPrefix("HTTPResponseEncoder") { return "encoder" }
            return name.components(separatedBy: "<").first ?? name
        }
    }

    private static func connection(relay: APIRelay?) throws -> EmbeddedChannel {
        let http1 = GatewayHTTPChannel(
            responder: { _, _, _ in }, relay: relay, client: ClientLimits(idleTimeout: .seconds(60), maxURLBytes: 8192), hstsSeconds: 60)
        let channel = EmbeddedChannel()
        try channel.connect(to: .init(ipAddress: "127.0.0.1", port: 40000)).wait()
        _ = try http1.configure(channel: channel, logger: Logger(label: "lazy-pipeline"))
        return channel
    }

    private static let full = [
        "RequestLineWatcher", "encoder", "decoder", "Boundaries", "ReadInterestKeeper", "HTTPServerPipelineHandler", "HTTP1ConnectionGuard",
        "StrictTransportSecurityHandler", "APIRelayHandler", "RouterHandoff",
    ]

    @Test("a new connection has the lane, the guard and the hand-off; a request the lane does not forward brings the rest, in order")
    func theHandlersComeWithTheHandOver() async throws {
        try await RelayFixture.with { fixture in
            let relay = try #require(APIRelay(gateway: fixture.gateway.gateway))
            let channel = try Self.connection(relay: relay)
            defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
            #expect(Self.shortNames(Self.handlers(channel)) == ["RelayLane", "HTTP1ConnectionGuard", "RouterHandoff"])

            // No credential: the lane's decision is a refusal, which the relay's handler answers behind it.
            try channel.writeInbound(ByteBuffer(string: "GET /v1/api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
            #expect(Self.shortNames(Self.handlers(channel)) == Self.full)
            var answer = ""
            while var bytes = try channel.readOutbound(as: ByteBuffer.self) { answer += bytes.readString(length: bytes.readableBytes) ?? "" }
            #expect(answer.hasPrefix("HTTP/1.1 401 "), "\(answer)")
            #expect(answer.contains("invalid_session") || answer.contains("unauthorized"), "\(answer)")
            #expect(answer.lowercased().contains("strict-transport-security: max-age=60"), "\(answer)")
        }
    }

    @Test("without the relay, a connection has every handler from the start")
    func withoutTheRelayEveryHandlerIsThereFromTheStart() throws {
        let channel = try Self.connection(relay: nil)
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        #expect(Self.shortNames(Self.handlers(channel)) == Self.full.filter { $0 != "APIRelayHandler" })
    }
}

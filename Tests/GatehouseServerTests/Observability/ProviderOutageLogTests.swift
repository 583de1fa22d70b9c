import AsyncHTTPClient
import GatehouseCore
import Logging
import Testing

@testable import GatehouseServer

/// SPEC "Operators' signals under faults", for providers: while a provider's host is unreachable the log has one
/// line when it goes down (with the cause and the request), at most one per 10 s with the count, one when it is back.
struct ProviderOutageLogTests {
    @Test("a hundred failed calls to one host are one warning and one notice; another host has its own account")
    func summarized() {
        let captured = CapturedLog()
        let outages = ProviderOutageReporter(logger: captured.logger)
        for index in 0..<100 {
            outages.failed(
                "https://idp.example.com/token?x=1", cause: "POST https://idp.example.com/token: refused", metadata: ["request_id": "r\(index)"])
        }
        outages.answered("https://other.example.com/userinfo")
        outages.failed("https://other.example.com:8443/jwks", cause: "GET …: timeout", metadata: [:])
        outages.answered("https://idp.example.com/userinfo")

        let lines = captured.lines.filter { $0.level > .debug }
        #expect(
            lines.map(\.message) == [
                "provider unreachable: the calls that need it fail until it answers",
                "provider unreachable: the calls that need it fail until it answers",
                "provider reachable again",
            ])
        #expect(lines[0].metadata["provider_origin"] == "https://idp.example.com")
        #expect(lines[0].metadata["request_id"] == "r0")
        #expect(lines[1].metadata["provider_origin"] == "https://other.example.com:8443")
        #expect(lines[2].metadata["failed"] == "99")
        // Each failure is still there for whoever looks at debug level, with its request id.
        #expect(captured.lines.filter { $0.level == .debug }.count == 99)
    }

    @Test("through the transport: calls to a closed port log one warning, not one per call")
    func transport() async throws {
        let captured = CapturedLog()
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let transport = AsyncHTTPTransport(
            client: client, timeout: 0.5, logger: captured.logger, outages: ProviderOutageReporter(logger: captured.logger))
        let started = ContinuousClock.now
        for _ in 0..<10 {
            await #expect(throws: TransportError.self) { try await transport.send(TransportRequest(url: "http://127.0.0.1:1/token")) }
        }
        let elapsed = ContinuousClock.now - started
        try await client.shutdown()
        let warnings = captured.lines.filter { $0.level >= .warning }
        #expect(warnings.filter { $0.message.hasPrefix("provider unreachable") }.count == 1)
        // The rest, if the calls took that long, are the summaries at most every 10 s.
        #expect(warnings.count <= 1 + Int(elapsed.components.seconds / 10), "\(warnings.map(\.message))")
    }
}

import Foundation
import GatehouseCore
import Testing

@testable import GatehouseProviders

@Suite struct ProviderHTTPTests {
    static let url = "https://idp.example.test/endpoint"

    @Test("a transport failure is unavailable with the call site's reason")
    func unreachable() async {
        let http = ProviderHTTP(transport: FakeTransport([.failure(TransportError("connection refused"))]))
        await #expect(throws: ProviderError.unavailable("the thing could not be reached (connection refused)")) {
            try await http.send(TransportRequest(url: Self.url), unreachable: "the thing could not be reached")
        }
    }

    @Test("a 5xx is unavailable only when the call site asks; other answers come back as they are")
    func serverErrors() async throws {
        let transport = FakeTransport([.json("{}", status: 503), .json("{}", status: 503), .json("{}", status: 404), .json("{}", status: 500)])
        let http = ProviderHTTP(transport: transport)
        await #expect(throws: ProviderError.unavailable("the thing answered 503")) {
            try await http.send(TransportRequest(url: Self.url), unreachable: "unreachable", serverError: { "the thing answered \($0)" })
        }
        #expect(try await http.send(TransportRequest(url: Self.url), unreachable: "unreachable").status == 503)
        #expect(try await http.send(TransportRequest(url: Self.url), unreachable: "unreachable", serverError: { "answered \($0)" }).status == 404)
        await #expect(throws: ProviderError.unavailable("answered 500")) {
            try await http.send(TransportRequest(url: Self.url), unreachable: "unreachable", serverError: { "answered \($0)" })
        }
    }

    @Test("an adapter's OutgoingRequest goes out as a GET with its URL and headers; jsonRequest asks for JSON")
    func requests() async throws {
        let transport = FakeTransport([.json("{}"), .json("{}")])
        let http = ProviderHTTP(transport: transport)
        _ = try await http.send(OutgoingRequest(url: Self.url + "?oauth_token=t", headers: [("X-Test", "1")]), unreachable: "unreachable")
        _ = try await http.send(ProviderHTTP.jsonRequest(Self.url), unreachable: "unreachable")
        let sent = transport.requests
        #expect(sent.map(\.method) == ["GET", "GET"])
        #expect(sent.map(\.url) == [Self.url + "?oauth_token=t", Self.url])
        #expect(sent[0].header("X-Test") == "1")
        #expect(sent[1].header("Accept") == "application/json")
    }

    @Test("a deadline turns a provider that does not answer into unavailable; an answer in time is returned")
    func deadline() async throws {
        let slow = ProviderHTTP(transport: SlowTransport(), timeout: .milliseconds(50))
        await #expect(throws: ProviderError.unavailable("too slow (timed out after 0.05 seconds)")) {
            try await slow.send(TransportRequest(url: Self.url), unreachable: "too slow")
        }
        let fast = ProviderHTTP(transport: FakeTransport([.json("{\"a\":1}")]), timeout: .seconds(5))
        #expect(try await fast.send(TransportRequest(url: Self.url), unreachable: "too slow").status == 200)
    }

    @Test("jsonObject returns the members of a JSON object and refuses anything else as invalidResponse")
    func jsonObject() throws {
        let object = TransportResponse(status: 200, body: Data("{\"sub\":\"u-1\"}".utf8))
        #expect(try ProviderHTTP.jsonObject(of: object, otherwise: "not an object")["sub"]?.stringValue == "u-1")
        for body in ["[1,2]", "\"text\"", "<html>", ""] {
            #expect(throws: ProviderError.invalidResponse("not an object")) {
                try ProviderHTTP.jsonObject(of: TransportResponse(status: 200, body: Data(body.utf8)), otherwise: "not an object")
            }
        }
    }
}

/// A provider that answers 200, but only after 30 s (or fails when the request is cancelled first).
private struct SlowTransport: HTTPTransport {
    func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await Task.sleep(for: .seconds(30))
        return TransportResponse(status: 200)
    }
}

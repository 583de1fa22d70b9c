import NIOHTTP1
import Testing

@testable import GatehouseServer

@Suite("Trace context fields")
struct TraceHeadersTests {
    @Test("one traceparent is read whatever its casing; a repeated one is no trace context")
    func extract() {
        let parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        #expect(TraceHeaders.shared.extract(key: "traceparent", from: HTTPHeaders([("TraceParent", parent)])) == parent)
        #expect(TraceHeaders.shared.extract(key: "traceparent", from: HTTPHeaders([("traceparent", parent), ("traceparent", parent)])) == nil)
        #expect(TraceHeaders.shared.extract(key: "traceparent", from: HTTPHeaders()) == nil)
    }

    @Test("injecting replaces the client's field")
    func inject() {
        var headers = HTTPHeaders([("traceparent", "00-client"), ("Host", "x")])
        TraceHeaders.shared.inject("00-gateway", forKey: "traceparent", into: &headers)
        #expect(headers["traceparent"] == ["00-gateway"])
        #expect(headers["host"] == ["x"])
    }
}

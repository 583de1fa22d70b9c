import NIOHTTP1
import Testing
import Tracing

@testable import GatehouseServer

@Suite("The sampling decision")
struct TraceSamplingTests {
    static let sampledParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    static let unsampledParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"

    @Test("parent-based: the client's flag decides whatever the ratio")
    func parentBased() {
        let sampled = TraceParent(Self.sampledParent)
        let unsampled = TraceParent(Self.unsampledParent)
        for ratio in [0.0, 0.01, 1.0] {
            let sampler = TraceSampler(ratio: ratio)
            #expect(sampler.samples(parent: sampled, draw: .max))
            #expect(!sampler.samples(parent: unsampled, draw: 0))
        }
    }

    @Test("without a parent, the ratio decides")
    func ratio() {
        #expect(!TraceSampler(ratio: 0).samples(parent: nil, draw: 0))
        #expect(TraceSampler(ratio: 1).samples(parent: nil, draw: .max))
        let onePercent = TraceSampler(ratio: 0.01)
        #expect(onePercent.samples(parent: nil, draw: 0))
        #expect(!onePercent.samples(parent: nil, draw: UInt64.max / 50))
        // Drawn from the gateway's generator, about 1 % of 100 000.
        let random = TraceRandom()
        let sampled = (0..<100_000).count(where: { _ in onePercent.samples(parent: nil, draw: random.draw().0) })
        #expect((700...1300).contains(sampled), "\(sampled)")
    }

    @Test("the generator does not repeat itself")
    func unique() {
        let random = TraceRandom(seed: 42)
        var seen = Set<UInt64>()
        for _ in 0..<10_000 {
            let (a, b, c, d) = random.draw()
            for value in [a, b, c, d] { seen.insert(value) }
        }
        #expect(seen.count == 40_000)
    }

    static func tracing(ratio: Double) -> GatewayTracing {
        GatewayTracing(tracer: NoOpTracer(), sampler: TraceSampler(ratio: ratio))
    }

    @Test("an unsampled client trace context passes on unchanged, with its trace id for the log")
    func unsampledParentPasses() throws {
        let trace = Self.tracing(ratio: 1).begin(headers: HTTPHeaders([("traceparent", Self.unsampledParent)]), operation: "GET")
        guard case .unsampled(let unsampled) = trace else {
            Issue.record("sampled")
            return
        }
        #expect(unsampled.started == nil)
        #expect(unsampled.traceID == "0af7651916cd43dd8448eb211c80319c")
        var headers = HTTPHeaders([("traceparent", Self.unsampledParent), ("tracestate", "a=1")])
        GatewayTracing.pass(unsampled, into: &headers)
        #expect(headers["traceparent"] == [Self.unsampledParent])
        #expect(headers["tracestate"] == ["a=1"])
    }

    @Test(
        "no parent (or a malformed or repeated one) at ratio 0: a new unsampled trace replaces the client's fields",
        arguments: [
            [], [("traceparent", "00-garbage")], [("traceparent", sampledParent), ("traceparent", sampledParent)],
        ])
    func newUnsampledTrace(_ fields: [(String, String)]) throws {
        let trace = Self.tracing(ratio: 0).begin(headers: HTTPHeaders(fields + [("tracestate", "a=1")]), operation: "GET")
        guard case .unsampled(let unsampled) = trace else {
            Issue.record("sampled")
            return
        }
        let started = try #require(unsampled.started)
        let parsed = try #require(TraceParent(started))
        #expect(!parsed.sampled)
        #expect(String(parsed.traceID) == unsampled.traceID)
        #expect(unsampled.traceparent == started)
        var headers = HTTPHeaders(fields + [("tracestate", "a=1")])
        GatewayTracing.pass(unsampled, into: &headers)
        #expect(headers["traceparent"] == [started])
        #expect(headers["tracestate"].isEmpty)
        // Each request its own trace.
        guard case .unsampled(let other) = Self.tracing(ratio: 0).begin(headers: HTTPHeaders(), operation: "GET") else { return }
        #expect(other.traceID != unsampled.traceID)
    }

    @Test("a sampled parent, or ratio 1 without one: a span")
    func sampled() {
        let fromParent = Self.tracing(ratio: 0).begin(headers: HTTPHeaders([("traceparent", Self.sampledParent)]), operation: "GET")
        guard case .sampled = fromParent else {
            Issue.record("not sampled")
            return
        }
        guard case .sampled = Self.tracing(ratio: 1).begin(headers: HTTPHeaders(), operation: "GET") else {
            Issue.record("not sampled")
            return
        }
    }
}

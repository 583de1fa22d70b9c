import NIOHTTP1
import Tracing

/// W3C trace context in NIO's `HTTPHeaders` (the relay's heads, AsyncHTTPClient's requests).
struct TraceHeaders: Extractor, Injector {
    static let shared = TraceHeaders()
    static let traceparent = "traceparent"
    static let tracestate = "tracestate"

    func extract(key: String, from carrier: HTTPHeaders) -> String? {
        // Only the trace context is read; a repeated field is not a trace context (W3C Trace Context §3.2).
        let values = carrier[key]
        return values.count == 1 ? values[0] : nil
    }

    func inject(_ value: String, forKey key: String, into carrier: inout HTTPHeaders) {
        carrier.replaceOrAdd(name: key, value: value)
    }
}

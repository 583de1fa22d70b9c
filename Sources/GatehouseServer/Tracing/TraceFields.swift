import HTTPTypes
import Tracing

/// W3C trace context in `HTTPFields` (the router's requests).
struct TraceFields: Extractor, Injector {
    static let shared = TraceFields()
    static let traceparent = HTTPField.Name("traceparent")!
    static let tracestate = HTTPField.Name("tracestate")!

    func extract(key: String, from carrier: HTTPFields) -> String? {
        guard let name = HTTPField.Name(key) else { return nil }
        let values = carrier[values: name]
        return values.count == 1 ? values[0] : nil
    }

    func inject(_ value: String, forKey key: String, into carrier: inout HTTPFields) {
        guard let name = HTTPField.Name(key) else { return }
        carrier[name] = value
    }
}

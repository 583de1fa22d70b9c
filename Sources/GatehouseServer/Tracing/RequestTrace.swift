import Tracing

/// How a request is traced, decided once at its start (``GatewayTracing/begin(headers:operation:)``): a sampled
/// request has its server span (and its children get their own); an unsampled one has no span object at all, only
/// the trace context it passes on.
enum RequestTrace: Sendable {
    case sampled(any Span)
    case unsampled(UnsampledTrace)
}

/// The trace context of a request the gateway does not sample: the client's `traceparent` (passed on unchanged), or a
/// new trace's (`00-{trace}-{parent}-00`) when none came or it did not parse.
struct UnsampledTrace: Sendable {
    /// The trace id, for the access log.
    let traceID: String
    /// A new trace's `traceparent`, which replaces the client's fields; nil: the client's fields pass on as they came.
    let started: String?
    /// The field to give a provider call: the new one or the client's.
    let traceparent: String

    /// The unsampled request a task works for (the router's requests, the relay's reads); provider and upstream calls
    /// read it where no span is in the context.
    @TaskLocal static var current: UnsampledTrace?
}

import OTel
import Tracing

/// What a request's server span carries, on both front ends: the method, the route template (never the path or
/// its query), the status, the provider and the upstream's name, the request id. Never a token, cookie or header value.
enum RequestSpan {
    /// Sets the span's name and attributes and ends it.
    static func finish(
        _ span: any Span, method: String, route: String, status: Int, provider: String?, upstream: String?, requestID: String,
        at instant: some TracerInstant = DefaultTracerClock.now
    ) {
        span.operationName = method + " " + route
        span.updateAttributes { attributes in
            attributes["http.request.method"] = method
            attributes["http.route"] = route
            attributes["http.response.status_code"] = status
            attributes["gatehouse.request_id"] = requestID
            if let provider { attributes["gatehouse.provider"] = provider }
            if let upstream { attributes["gatehouse.upstream"] = upstream }
        }
        if status >= 500 { span.setStatus(SpanStatus(code: .error)) }
        span.end(at: instant)
    }

    /// The span's trace id (32 hex digits), for the access log; sampled or not.
    static func traceID(of span: any Span) -> String? {
        span.context.otelTraceID
    }
}

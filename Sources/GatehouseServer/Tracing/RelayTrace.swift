import NIOHTTP1
import Tracing

/// The spans of one request the event-loop relay carries (made only when tracing is on): the request's server
/// span, the access decision's and the upstream call's, whose context the backend gets as its `traceparent`.
/// A class: the relay's entry carries one reference, so that with tracing off it grows by a word and nothing more.
final class RelayTrace: Sendable {
    let request: any Span
    /// The call to the backend; nil for a refusal.
    let upstream: (any Span)?

    private init(request: any Span, upstream: (any Span)?) {
        self.request = request
        self.upstream = upstream
    }

    /// A forwarded request: the request span (continuing the client's trace context), the decision (done) and
    /// the upstream call (its context replaces the client's `traceparent` in `upstreamHeaders`).
    static func forwarded(
        _ tracing: GatewayTracing, head: HTTPRequestHead, upstream name: String, upstreamHeaders: inout HTTPHeaders
    ) -> RelayTrace {
        let request = tracing.startRequest(head.method.rawValue, headers: head.headers)
        tracing.decided("forward", under: request.context)
        let call = tracing.startChild("upstream " + name, of: request.context, kind: .client)
        call.attributes["gatehouse.upstream"] = name
        tracing.inject(call.context, into: &upstreamHeaders)
        return RelayTrace(request: request, upstream: call)
    }

    /// A request the relay answers itself (a refusal, `/v1/authz`): the request span and the decision.
    static func answered(_ tracing: GatewayTracing, head: HTTPRequestHead, verdict: String) -> RelayTrace {
        let request = tracing.startRequest(head.method.rawValue, headers: head.headers)
        tracing.decided(verdict, under: request.context)
        return RelayTrace(request: request, upstream: nil)
    }

    /// Ends the spans with the answer's status; the trace id for the access log.
    func finish(method: String, route: String, status: Int, provider: String?, upstream: String?, requestID: String) -> String? {
        if let call = self.upstream {
            call.attributes["http.response.status_code"] = status
            if status >= 500 { call.setStatus(SpanStatus(code: .error)) }
            call.end()
        }
        RequestSpan.finish(request, method: method, route: route, status: status, provider: provider, upstream: upstream, requestID: requestID)
        return RequestSpan.traceID(of: request)
    }
}

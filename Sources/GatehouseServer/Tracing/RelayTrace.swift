import NIOHTTP1
import ServiceContextModule
import Tracing

/// The trace of one request the event-loop relay carries (made only when tracing is on): for a sampled request its
/// server span, the access decision's and the upstream call's, whose context the backend gets as its `traceparent`;
/// for an unsampled one no span, only the trace id and the trace context passed on.
/// A class: the relay's entry carries one reference, so that with tracing off it grows by a word and nothing more.
final class RelayTrace: Sendable {
    /// The request's server span; nil when not sampled.
    let request: (any Span)?
    /// The call to the backend; nil for a refusal or an unsampled request.
    let upstream: (any Span)?
    /// An unsampled request's trace id (a sampled one's is read from its span at the end).
    let unsampledTraceID: String?

    private init(request: (any Span)?, upstream: (any Span)?, unsampledTraceID: String?) {
        self.request = request
        self.upstream = upstream
        self.unsampledTraceID = unsampledTraceID
    }

    /// The trace begun when the request left the event loop (``during(_:_:)``): its reads, verifications and provider
    /// calls are children of its span, which the answer then ends.
    @TaskLocal private static var begun: RequestTrace?

    /// Runs `body` (the relay's work off the event loop for a request) with the request's trace begun: its span in
    /// the context when sampled, so that store reads and provider calls are its children.
    static func during<T>(_ trace: RequestTrace, isolation: isolated (any Actor)? = #isolation, _ body: () async -> T) async -> T {
        await $begun.withValue(trace) {
            switch trace {
            case .sampled(let span): await ServiceContext.withValue(span.context) { await body() }
            case .unsampled(let unsampled): await UnsampledTrace.$current.withValue(unsampled) { await body() }
            }
        }
    }

    /// Runs `body`, a new decision for a request already decided once (a DPoP proof found spent after the
    /// decision), in the request span `earlier` began: the new decision's spans are its, and its answer ends it
    /// (the upstream call `earlier` began is never made, so never ended nor exported).
    static func continuing<T>(_ earlier: RelayTrace?, _ body: () -> T) -> T {
        guard let request = earlier?.request else { return body() }
        return $begun.withValue(.sampled(request)) { body() }
    }

    /// The request's trace: the one begun (``during(_:_:)``, ``continuing(_:_:)``), else decided now.
    private static func begin(_ tracing: GatewayTracing, head: HTTPRequestHead) -> RequestTrace {
        begun ?? tracing.begin(headers: head.headers, operation: head.method.rawValue)
    }

    /// A forwarded request: when sampled, the request span (continuing the client's trace context), the decision
    /// (done) and the upstream call, whose context replaces the client's `traceparent` in `upstreamHeaders`; when
    /// not, the client's trace context passes on, or a new unsampled one replaces it (``GatewayTracing/pass(_:into:)``).
    static func forwarded(
        _ tracing: GatewayTracing, head: HTTPRequestHead, upstream name: String, upstreamHeaders: inout HTTPHeaders
    ) -> RelayTrace {
        switch begin(tracing, head: head) {
        case .unsampled(let trace):
            GatewayTracing.pass(trace, into: &upstreamHeaders)
            return RelayTrace(request: nil, upstream: nil, unsampledTraceID: trace.traceID)
        case .sampled(let request):
            tracing.decided("forward", under: request.context)
            let call = tracing.startChild("upstream " + name, of: request.context, kind: .client)
            call.attributes["gatehouse.upstream"] = name
            tracing.inject(call.context, into: &upstreamHeaders)
            return RelayTrace(request: request, upstream: call, unsampledTraceID: nil)
        }
    }

    /// A request the relay answers itself (a refusal, `/v1/authz`): the request span and the decision, when sampled.
    static func answered(_ tracing: GatewayTracing, head: HTTPRequestHead, verdict: String) -> RelayTrace {
        switch begin(tracing, head: head) {
        case .unsampled(let trace):
            return RelayTrace(request: nil, upstream: nil, unsampledTraceID: trace.traceID)
        case .sampled(let request):
            tracing.decided(verdict, under: request.context)
            return RelayTrace(request: request, upstream: nil, unsampledTraceID: nil)
        }
    }

    /// Ends the spans with the answer's status; the trace id for the access log.
    func finish(method: String, route: String, status: Int, provider: String?, upstream: String?, requestID: String) -> String? {
        guard let request else { return unsampledTraceID }
        if let call = self.upstream {
            call.attributes["http.response.status_code"] = status
            if status >= 500 { call.setStatus(SpanStatus(code: .error)) }
            call.end()
        }
        RequestSpan.finish(request, method: method, route: route, status: status, provider: provider, upstream: upstream, requestID: requestID)
        return RequestSpan.traceID(of: request)
    }
}

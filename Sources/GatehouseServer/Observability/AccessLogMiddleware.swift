import GatehouseCore
import HTTPTypes
import Hummingbird
import Logging
import ServiceContextModule
import Tracing

/// The router's outermost layer: gives each request its id (``RequestIdentifier``) — in every log line of
/// the request, in the answer's `X-Request-Id` and, through the context, upstream and in problem bodies —
/// and writes its access-log line and request metrics once the answer is made (``AccessLog``).
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    let log: AccessLog
    let trustedProxies: TrustedProxies
    /// The tracer when tracing is on (``GatewayTracing``): the request's sampling decision, its span; the trace id goes into the line.
    var tracing: GatewayTracing? = nil

    static let requestIDField = HTTPField.Name("X-Request-Id")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var context = context
        let id = RequestIdentifier.of(
            incoming: request.headers[Self.requestIDField], fromTrustedProxy: trustedProxies.trusts(context.remoteAddress))
        context.requestID = id
        context.logger[metadataKey: "request_id"] = .string(id)
        let fields = context.logFields
        // Sampling is decided here, once: an unsampled request makes no span (``RequestTrace``).
        let trace = tracing?.begin(fields: request.headers, operation: request.method.rawValue)
        var response: Response
        do {
            response = try await RequestScope.$requestID.withValue(id) {
                switch trace {
                case nil: return try await next(request, context)
                case .sampled(let span): return try await ServiceContext.withValue(span.context) { try await next(request, context) }
                case .unsampled(let unsampled): return try await UnsampledTrace.$current.withValue(unsampled) { try await next(request, context) }
                }
            }
        } catch {
            // Only an error no inner layer answered (ProblemMiddleware answers everything it sees).
            record(request, context, status: 500, started: started, fields: fields, trace: trace)
            throw error
        }
        response.headers[Self.requestIDField] = id
        record(request, context, status: response.status.code, started: started, fields: fields, trace: trace)
        return response
    }

    private func record(
        _ request: Request, _ context: Context, status: Int, started: ContinuousClock.Instant, fields: RequestLogFields, trace: RequestTrace?
    ) {
        let route = context.endpointPath ?? AccessLog.unmatchedRoute
        var traceID: String?
        switch trace {
        case nil: break
        case .unsampled(let unsampled): traceID = unsampled.traceID
        case .sampled(let span):
            RequestSpan.finish(
                span, method: request.method.rawValue, route: route, status: status, provider: fields.provider, upstream: fields.upstream,
                requestID: context.requestID)
            traceID = RequestSpan.traceID(of: span)
        }
        log.record(
            method: request.method.rawValue, route: route, status: status,
            duration: ContinuousClock.now - started, provider: fields.provider, sessionID: fields.sessionID, requestID: context.requestID,
            upstream: fields.upstream, traceID: traceID)
    }
}

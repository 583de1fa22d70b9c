import Foundation
import GatehouseConfiguration
import HTTPTypes
import Logging
import NIOHTTP1
import OTel
import ServiceContextModule
import ServiceLifecycle
import Tracing

/// The gateway's tracer (`tracing:`), exporting over OTLP/HTTP; nil wherever tracing is off, so that the
/// request paths test one optional and do nothing else.
///
/// It is not bootstrapped as the process's `InstrumentationSystem` tracer: AsyncHTTPClient traces every call of a
/// client made after such a bootstrap, with the URL's query (a provider's `oauth_token`) as an attribute. The request
/// span's context carries it instead (``ServiceContext/gatewayTracing``), so that provider and store calls made for
/// a request find it there.
struct GatewayTracing: Sendable {
    let tracer: any Tracer

    /// The tracer and the exporter's service (it batches spans and sends the rest at shutdown); nil when tracing is off.
    static func make(_ configuration: GatewayConfiguration.Tracing, logger: Logger) throws -> (GatewayTracing, any Service)? {
        guard let url = configuration.tracesURL else { return nil }
        // swift-otel reads the standard variables over what it is given; the gateway's own keys win (the standard
        // endpoint variable was already read into `configuration` when they are not set). At start-up, before any
        // other thread reads the environment.
        unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT")
        unsetenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        var otel = OTel.Configuration.default
        otel.serviceName = configuration.serviceName
        otel.logs.enabled = false
        otel.metrics.enabled = false
        otel.propagators = [.traceContext]
        otel.diagnosticLogger = .custom(logger)
        otel.traces.exporter = .otlp
        otel.traces.otlpExporter.protocol = .httpProtobuf
        otel.traces.otlpExporter.endpoint = url
        // Parent-based: a client's sampled traceparent is followed, an unsampled one is not; new traces by ratio.
        otel.traces.sampler = .parentBasedTraceIDRatio(ratio: configuration.sampleRatio) ?? .parentBasedAlwaysOff
        let (tracer, service) = try OTel.makeTracingBackend(configuration: otel)
        return (GatewayTracing(tracer: tracer), service)
    }

    /// The server span of a request: a child of the client's `traceparent` (and `tracestate`), else a new trace.
    func startRequest(_ operation: String, headers: HTTPHeaders, at instant: some TracerInstant = DefaultTracerClock.now) -> any Span {
        var context = ServiceContext.topLevel
        tracer.extract(headers, into: &context, using: TraceHeaders.shared)
        context.gatewayTracing = self
        return tracer.startSpan(operation, context: context, ofKind: .server, at: instant)
    }

    /// The same for the router's requests.
    func startRequest(_ operation: String, fields: HTTPFields) -> any Span {
        var context = ServiceContext.topLevel
        tracer.extract(fields, into: &context, using: TraceFields.shared)
        context.gatewayTracing = self
        return tracer.startSpan(operation, context: context, ofKind: .server)
    }

    /// A child span of `parent`'s context.
    func startChild(_ operation: String, of parent: ServiceContext, kind: SpanKind = .internal) -> any Span {
        tracer.startSpan(operation, context: parent, ofKind: kind)
    }

    /// A finished `access decision` span under `parent`, with the decision's verdict (`forward`, `refuse`, `allow`).
    func decided(_ verdict: String, under parent: ServiceContext) {
        let decision = tracer.startSpan("access decision", context: parent, ofKind: .internal)
        decision.attributes["gatehouse.decision"] = verdict
        decision.end()
    }

    /// The same under the current request's span, when it is traced.
    static func decided(_ verdict: String) {
        guard let current = ServiceContext.current, let tracing = current.gatewayTracing else { return }
        tracing.decided(verdict, under: current)
    }

    /// Replaces the client's `traceparent` and `tracestate` with `context`'s (the next hop's parent is the gateway's span).
    func inject(_ context: ServiceContext, into headers: inout HTTPHeaders) {
        headers.remove(name: TraceHeaders.traceparent)
        headers.remove(name: TraceHeaders.tracestate)
        tracer.inject(context, into: &headers, using: TraceHeaders.shared)
    }

    /// The same for fields.
    func inject(_ context: ServiceContext, into fields: inout HTTPFields) {
        fields[TraceFields.traceparent] = nil
        fields[TraceFields.tracestate] = nil
        tracer.inject(context, into: &fields, using: TraceFields.shared)
    }

    /// Runs `body` in a child span of the current request's span (`kind`, named `operation`); without a traced
    /// request, `body` alone with nil.
    static func withSpan<T>(
        _ operation: String, ofKind kind: SpanKind = .internal, isolation: isolated (any Actor)? = #isolation,
        _ body: (_ span: (any Span)?) async throws -> T
    ) async rethrows -> T {
        guard let context = ServiceContext.current, let tracing = context.gatewayTracing else { return try await body(nil) }
        let span = tracing.tracer.startSpan(operation, context: context, ofKind: kind)
        defer { span.end() }
        do {
            return try await ServiceContext.withValue(span.context) { try await body(span) }
        } catch {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }
}

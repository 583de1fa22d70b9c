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
///
/// Sampling is decided once per request, here (``begin(headers:operation:)``): an unsampled request makes no span
/// object, so that its child calls find no tracer in the context and cost one optional test.
struct GatewayTracing: Sendable {
    let tracer: any Tracer
    let sampler: TraceSampler
    let random: TraceRandom

    init(tracer: any Tracer, sampler: TraceSampler, random: TraceRandom = TraceRandom()) {
        self.tracer = tracer
        self.sampler = sampler
        self.random = random
    }

    /// How long one export may take, at shutdown too (the rest of the batch is dropped): a collector that is down
    /// or drops packets delays `SIGTERM` by at most about twice this (the export under way, then the final flush).
    static let exportTimeout = Duration.seconds(3)

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
        otel.traces.otlpExporter.timeout = exportTimeout
        otel.traces.batchSpanProcessor.exportTimeout = exportTimeout
        // swift-otel exports one batch per tick: with its defaults (a batch of 512 every 5 s) a gateway sampling
        // 1 % of 25,000 requests a second fills the queue (2,048) and drops spans. Every second, all that waits.
        otel.traces.batchSpanProcessor.scheduleDelay = .seconds(1)
        otel.traces.batchSpanProcessor.maxExportBatchSize = otel.traces.batchSpanProcessor.maxQueueSize
        // The gateway decides (``begin(headers:operation:)``) and starts spans only for sampled requests.
        otel.traces.sampler = .parentBasedAlwaysOn
        let (tracer, service) = try OTel.makeTracingBackend(configuration: otel)
        return (GatewayTracing(tracer: tracer, sampler: TraceSampler(ratio: configuration.sampleRatio)), service)
    }

    /// The sampling decision of a request with these fields, and its server span when sampled (`operation`, a child
    /// of the client's trace context when one parses), else the trace context it passes on.
    func begin(headers: HTTPHeaders, operation: String) -> RequestTrace {
        var parent: TraceParent?
        // Only when there is one: a repeated field is not a trace context (W3C Trace Context §3.2).
        if let value = headers.first(name: TraceHeaders.traceparent), headers[TraceHeaders.traceparent].count == 1 {
            parent = TraceParent(value)
        }
        return begin(parent: parent) { context in
            if parent != nil { tracer.extract(headers, into: &context, using: TraceHeaders.shared) }
            return tracer.startSpan(operation, context: context, ofKind: .server)
        }
    }

    /// The same for the router's requests.
    func begin(fields: HTTPFields, operation: String) -> RequestTrace {
        var parent: TraceParent?
        if let value = fields[TraceFields.traceparent], fields[values: TraceFields.traceparent].count == 1 {
            parent = TraceParent(value)
        }
        return begin(parent: parent) { context in
            if parent != nil { tracer.extract(fields, into: &context, using: TraceFields.shared) }
            return tracer.startSpan(operation, context: context, ofKind: .server)
        }
    }

    private func begin(parent: TraceParent?, start: (inout ServiceContext) -> any Span) -> RequestTrace {
        if let parent {
            // The client's flag decides: nothing to draw.
            if sampler.samples(parent: parent, draw: 0) { return sampled(start) }
            return .unsampled(UnsampledTrace(traceID: String(parent.traceID), started: nil, traceparent: parent.value))
        }
        let (decision, high, low, id) = random.draw()
        if sampler.samples(parent: nil, draw: decision) { return sampled(start) }
        // A new trace nobody records: its ids only tie the hops' logs together (``TraceRandom``).
        let started = TraceParent.write(traceID: high, low == 0 && high == 0 ? 1 : low, parentID: id == 0 ? 1 : id, sampled: false)
        return .unsampled(UnsampledTrace(traceID: String(started.dropFirst(3).prefix(32)), started: started, traceparent: started))
    }

    private func sampled(_ start: (inout ServiceContext) -> any Span) -> RequestTrace {
        var context = ServiceContext.topLevel
        context.gatewayTracing = self
        return .sampled(start(&context))
    }

    /// Puts an unsampled request's new trace context into `headers` in place of the client's; nothing when the
    /// client's passes on.
    static func pass(_ trace: UnsampledTrace, into headers: inout HTTPHeaders) {
        guard let started = trace.started else { return }
        headers.remove(name: TraceHeaders.tracestate)
        headers.replaceOrAdd(name: TraceHeaders.traceparent, value: started)
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

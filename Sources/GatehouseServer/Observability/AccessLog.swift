import Logging

/// The access log and the request metrics: one line and one count per answered request, from the router
/// (``AccessLogMiddleware``) and from the event-loop relay alike. Never a token, never a query string.
///
/// A line is built only when it will be written (`logging.access_log` on and the logger at `info` or
/// below), and written off the event loop in batches (``AccessLogWriter``).
struct AccessLog: Sendable {
    let metrics: GatewayMetrics
    /// `nil`: no lines (`logging.access_log: false`, or a logger above `info`); the metrics are counted either way.
    let writer: AccessLogWriter?

    init(logger: Logger, metrics: GatewayMetrics, enabled: Bool, format: LogLineFormat) {
        self.metrics = metrics
        writer = enabled && logger.logLevel <= .info ? AccessLogWriter(format: format, label: logger.label) : nil
    }

    /// The route of requests no route matched (a 404 or 405).
    static let unmatchedRoute = "unmatched"

    /// Records one answer. `route` is the route template (`/v1/api/**`), never the path itself.
    /// `upstream`: the upstream a `/v1/api` request went to (its name; `backend` for the default).
    func record(
        method: String, route: String, status: Int, duration: Duration, provider: String?, sessionID: String?, requestID: String,
        upstream: String? = nil, traceID: String? = nil
    ) {
        metrics.request(route: route, method: method, status: status, duration: duration)
        guard let writer else { return }
        writer.append(
            .init(
                time: LogTime.now(), method: method, route: route, status: status, duration: duration, provider: provider,
                sessionID: sessionID, requestID: requestID, upstream: upstream, traceID: traceID))
    }

    /// Writes the lines not yet written (at shutdown).
    func flush() {
        writer?.flush()
    }
}
